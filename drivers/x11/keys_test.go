package x11

import (
	"errors"
	"slices"
	"testing"

	"github.com/jezek/xgb/xproto"
)

func TestParseChord(t *testing.T) {
	t.Parallel()
	const (
		ctrl  = 0xffe3
		shift = 0xffe1
		alt   = 0xffe9
		super = 0xffeb
	)
	tests := []struct {
		in   string
		mods []xproto.Keysym
		key  xproto.Keysym
	}{
		{"Return", nil, 0xff0d},
		{"return", nil, 0xff0d},
		{"enter", nil, 0xff0d},
		{"ctrl+l", []xproto.Keysym{ctrl}, 'l'},
		{"Control+L", []xproto.Keysym{ctrl}, 'L'},
		{"shift+Tab", []xproto.Keysym{shift}, 0xff09},
		{"alt+F4", []xproto.Keysym{alt}, 0xffc1},
		{"SUPER+a", []xproto.Keysym{super}, 'a'},
		{"ctrl+shift+Escape", []xproto.Keysym{ctrl, shift}, 0xff1b},
		{"a", nil, 'a'},
		{"A", nil, 'A'},
		{"space", nil, ' '},
		{" ", nil, ' '},
		{"BackSpace", nil, 0xff08},
		{"Up", nil, 0xff52},
		{"KP_Enter", nil, 0xff8d},
		{"pagedown", nil, 0xff56},
		{"+", nil, '+'},
		{"ctrl++", []xproto.Keysym{ctrl}, '+'},
		{"eacute", nil, 0xe9},
		{"é", nil, 0xe9},
		{"€", nil, 0x10020ac},
		{"EuroSign", nil, 0x20ac},
	}
	for _, tt := range tests {
		got, err := parseChord(tt.in)
		if err != nil {
			t.Errorf("parseChord(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.mods, tt.mods) || got.key != tt.key {
			t.Errorf("parseChord(%q) = %v %#x, want %v %#x", tt.in, got.mods, got.key, tt.mods, tt.key)
		}
	}
}

func TestParseChordUnknown(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, key string }{
		{"NoSuchKey", "NoSuchKey"},
		{"ctrl+Nope", "Nope"},
		{"hyper+a", "hyper"},
		{"ctrl+", ""},
		{"", ""},
	}
	for _, tt := range tests {
		_, err := parseChord(tt.in)
		var uk *UnknownKeyError
		if !errors.As(err, &uk) || uk.Key != tt.key || !errors.Is(err, ErrUnknownKey) {
			t.Errorf("parseChord(%q) error %v, want unknown key %q", tt.in, err, tt.key)
		}
	}
}

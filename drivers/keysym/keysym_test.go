package keysym

import (
	"errors"
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/desktop"
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
		mods []uint32
		key  uint32
	}{
		{"Return", nil, 0xff0d},
		{"return", nil, 0xff0d},
		{"enter", nil, 0xff0d},
		{"ctrl+l", []uint32{ctrl}, 'l'},
		{"Control+L", []uint32{ctrl}, 'L'},
		{"shift+Tab", []uint32{shift}, 0xff09},
		{"alt+F4", []uint32{alt}, 0xffc1},
		{"SUPER+a", []uint32{super}, 'a'},
		{"ctrl+shift+Escape", []uint32{ctrl, shift}, 0xff1b},
		{"a", nil, 'a'},
		{"A", nil, 'A'},
		{"space", nil, ' '},
		{" ", nil, ' '},
		{"BackSpace", nil, 0xff08},
		{"Up", nil, 0xff52},
		{"KP_Enter", nil, 0xff8d},
		{"pagedown", nil, 0xff56},
		{"+", nil, '+'},
		{"ctrl++", []uint32{ctrl}, '+'},
		{"eacute", nil, 0xe9},
		{"é", nil, 0xe9},
		{"€", nil, 0x10020ac},
		{"EuroSign", nil, 0x20ac},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !slices.Equal(got.Mods, tt.mods) || got.Key != tt.key {
			t.Errorf("Parse(%q) = %v %#x, want %v %#x", tt.in, got.Mods, got.Key, tt.mods, tt.key)
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
		_, err := Parse(tt.in)
		var uk *desktop.UnknownKeyError
		if !errors.As(err, &uk) || uk.Key != tt.key || !errors.Is(err, desktop.ErrUnknownKey) {
			t.Errorf("Parse(%q) error %v, want unknown key %q", tt.in, err, tt.key)
		}
	}
}

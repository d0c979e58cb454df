package engine

import (
	"testing"
)

// TestTruncateAndTail tables the two cuts the engine makes of text it
// reports: at most n bytes, on a character boundary, marked when cut.
func TestTruncateAndTail(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in    string
		n           int
		trunc, tail string
	}{
		{"shorter", "abc", 5, "abc", "abc"},
		{"exactly n", "abcde", 5, "abcde", "abcde"},
		{"one over", "abcdef", 5, "abcde…", "bcdef"},
		{"spaces trimmed before cutting", "  abc  ", 3, "abc", " abc  "[3:]},
		{"multi-byte runes are not split", "héllo", 2, "h…", "lo"},
		{"a cut inside a rune moves to its start", "ééé", 3, "é…", "é"},
		{"no character starts in the kept bytes", "\x80\x80\x80", 2, "…", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := truncate(c.in, c.n); got != c.trunc {
				t.Errorf("truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.trunc)
			}
			if got := tail(c.in, c.n); got != c.tail {
				t.Errorf("tail(%q, %d) = %q, want %q", c.in, c.n, got, c.tail)
			}
		})
	}
}

// TestParseArgs tables how a model's arguments are read: empty is no
// arguments, JSON null is none, anything but an object is an error.
func TestParseArgs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		raw     string
		keys    int
		wantErr bool
	}{
		{"", 0, false},
		{"  ", 0, false},
		{"null", 0, false},
		{`{"key": "Return"}`, 1, false},
		{`["Return"]`, 0, true},
		{`{"key":`, 0, true},
	}
	for _, c := range cases {
		args, err := parseArgs(c.raw)
		if (err != nil) != c.wantErr || err == nil && (args == nil || len(args) != c.keys) {
			t.Errorf("parseArgs(%q) = %v, %v", c.raw, args, err)
		}
	}
}

// TestCanonicalJSON checks that the stuck detector sees the same call in
// different spellings as one.
func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	if a, b := canonicalJSON(`{"b": 1, "a": 2}`), canonicalJSON(`{"a":2,"b":1}`); a != b {
		t.Errorf("%s != %s", a, b)
	}
	if got := canonicalJSON("not json"); got != "not json" {
		t.Errorf("canonicalJSON(not json) = %q", got)
	}
}

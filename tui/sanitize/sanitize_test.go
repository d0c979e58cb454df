package sanitize

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, text, line string }{
		{"plain", "observed the screen (640x400)", "observed the screen (640x400)", "observed the screen (640x400)"},
		{"unicode kept", "ünïcødé → ✓ 漢字", "ünïcødé → ✓ 漢字", "ünïcødé → ✓ 漢字"},
		{"tabs and newlines", "a\tb\nc", "a\tb\nc", `a` + "\t" + `b\nc`},
		{"title and clear screen", "\x1b]0;pwned\x07\x1b[2J", `\x1b]0;pwned\x07\x1b[2J`, `\x1b]0;pwned\x07\x1b[2J`},
		{"hyperlink", "\x1b]8;;http://evil\x1b\\x\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\x\x1b]8;;\x1b\`, `\x1b]8;;http://evil\x1b\x\x1b]8;;\x1b\`},
		{"carriage return overwrites", "ok\rFAILED", `ok\x0dFAILED`, `ok\x0dFAILED`},
		{"backspace and del", "a\bb\x7f", `a\x08b\u007f`, `a\x08b\u007f`},
		{"C1 CSI", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
		{"raw C1 byte", "x\x9b2J", `x\x9b2J`, `x\x9b2J`},
		{"bidi override", "pass\u202eliaf", `pass\u202eliaf`, `pass\u202eliaf`},
		{"bidi isolate", "a\u2066b\u2069", `a\u2066b\u2069`, `a\u2066b\u2069`},
		{"invalid UTF-8", "a\xffb", `a\xffb`, `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Text(tt.in); got != tt.text {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := Line(tt.in); got != tt.line {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.line)
			}
		})
	}
}

// TestWriterSplitSequence: a C1 control cut between two writes does not
// reach the terminal whole.
func TestWriterSplitSequence(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewWriter(&out)
	csi := "\u009b"
	for _, p := range []string{"a" + csi[:1], csi[1:] + "2J", "\x1b[31mred\n"} {
		if n, err := w.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	got := out.String()
	if strings.Contains(got, csi) || strings.ContainsRune(got, 0x1b) || !utf8.ValidString(got) {
		t.Fatalf("wrote %q", got)
	}
	if want := `a\xc2\x9b2J\x1b[31mred` + "\n"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// FuzzText: whatever goes in, what comes out is valid UTF-8 with no
// character a terminal acts on but newlines and tabs.
func FuzzText(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\u009b", "\u202e", "\xc2", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Text(s), Line(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q: output %q is not UTF-8", s, out)
			}
			for _, r := range out {
				if unsafe(r) {
					t.Fatalf("%q: output %q keeps %U", s, out, r)
				}
			}
		}
		if strings.Contains(Line(s), "\n") {
			t.Fatalf("%q: Line kept a newline", s)
		}
	})
}

// Package sanitize makes untrusted text safe to print on a terminal. Tool
// names and arguments from the model, tool output, application lines,
// questions, error bodies and scenario text can all hold control
// sequences — a title change, a cleared screen, a hyperlink, reversed
// text — that must reach the operator's terminal as visible characters,
// never as commands. The console and the replay draw through their own
// renderer; everything else kasmrt prints (--headless, replay --print,
// validate, error messages) passes through here.
package sanitize

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Text neutralises every control character of s except newlines and tabs:
// ESC (and so every CSI, OSC, DCS and APC sequence), the other C0
// controls, DEL, the C1 controls, the bidirectional overrides and
// isolates, and bytes that are not UTF-8 become visible escapes such as
// \x1b, \u009b or \u202e. Text that needs none of this is returned as it
// is.
func Text(s string) string { return neutralise(s, false) }

// Line is Text that also neutralises newlines, for a value printed inside
// one line of output, so it cannot forge the lines after it.
func Line(s string) string { return neutralise(s, true) }

func neutralise(s string, oneLine bool) string {
	if clean(s, oneLine) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && oneLine:
			b.WriteString(`\n`)
		case unsafe(r):
			// C0 controls as \xNN; DEL and above as \uNNNN, which is also
			// JSON's escape for them, so JSON text stays the same JSON
			// (its encoder escapes C0 itself but leaves DEL, C1 and bidi
			// controls raw).
			if r < 0x20 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean reports whether s has nothing to neutralise.
func clean(s string, oneLine bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			if c == '\t' || c == '\n' && !oneLine {
				continue
			}
			return false
		}
		if c >= 0x80 {
			return cleanUTF8(s[i:])
		}
	}
	return true
}

func cleanUTF8(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r != '\t' && r != '\n' && unsafe(r) {
			return false
		}
		i += size
	}
	return true
}

// unsafe reports whether a terminal could act on r rather than show it.
func unsafe(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // letter and direction marks
		r >= 0x202a && r <= 0x202e, // embeddings and overrides
		r >= 0x2066 && r <= 0x2069: // isolates
		return true
	}
	return false
}

// Writer passes everything written to it through Text before writing it
// to the underlying writer. Each write is neutralised on its own: a UTF-8
// sequence cut between two writes shows as two escaped bytes, so not even
// a C1 control split in halves reaches the terminal.
type Writer struct{ w io.Writer }

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) Writer { return Writer{w: w} }

// Write neutralises p and writes it. It reports len(p) on success: the
// caller's bytes were all consumed.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, Text(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

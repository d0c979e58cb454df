package redact

import (
	"io"
	"strings"
	"sync"
)

// Stream redacts a byte stream written in pieces, such as an application's
// output read through a pipe. A secret split across two writes is masked
// whole: the stream holds back the bytes that may be the start of a secret
// until the next write shows how they continue (at most the longest
// secret's length), and Close writes what is left.
type Stream struct {
	red *Redactor
	dst io.Writer
	// keep is how many trailing bytes may start an unfinished match.
	keep int
	// newlineSafe is set when no form contains a newline, so a write that
	// ends a line can be emitted whole.
	newlineSafe bool

	mu      sync.Mutex
	pending []byte
	err     error
}

// Stream returns a writer that redacts what is written to it and passes it
// on to dst. Writes to dst happen only from Write and Close.
func (r *Redactor) Stream(dst io.Writer) *Stream {
	s := &Stream{red: r, dst: dst, newlineSafe: true}
	if r != nil {
		for _, f := range r.forms {
			s.keep = max(s.keep, len(f)-1)
			if strings.ContainsRune(f, '\n') {
				s.newlineSafe = false
			}
		}
	}
	return s
}

// Write redacts p together with what earlier writes held back. It reports
// len(p) written unless dst failed.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.keep == 0 {
		// Every form is one byte long: no match can span two writes.
		return s.emit([]byte(s.red.String(string(p))), len(p))
	}
	s.pending = append(s.pending, p...)
	cut := s.safeCut()
	if cut == 0 {
		return len(p), nil
	}
	out := s.red.String(string(s.pending[:cut]))
	s.pending = append(s.pending[:0], s.pending[cut:]...)
	return s.emit([]byte(out), len(p))
}

func (s *Stream) emit(b []byte, n int) (int, error) {
	if len(b) == 0 {
		return n, nil
	}
	if _, err := s.dst.Write(b); err != nil {
		s.err = err
		return 0, err
	}
	return n, nil
}

// safeCut returns how much of pending can be redacted and written now: a
// prefix whose end falls inside no match, and after which no match can
// start that the bytes still to come might complete.
func (s *Stream) safeCut() int {
	n := len(s.pending)
	if s.newlineSafe && n > 0 && s.pending[n-1] == '\n' {
		return n
	}
	cut := n - s.keep
	if cut <= 0 {
		return 0
	}
	// Walk the matches the way the replacer finds them (leftmost, longest
	// first at a position, never overlapping); a match that starts before
	// the cut lies wholly inside pending. If one runs past the cut, cut at
	// its start instead, so it is redacted whole next time.
	text := string(s.pending)
	next := make([]int, len(s.red.forms))
	for k := range next {
		next[k] = -2 // not searched yet
	}
	for i := 0; i < cut; {
		at, length := s.nextMatch(text, i, next)
		if at < 0 || at >= cut {
			break
		}
		if at+length > cut {
			return at
		}
		i = at + length
	}
	return cut
}

// nextMatch finds the leftmost match at or after i, preferring the longest
// form at that position, and returns its start and length (-1 when none).
// next caches each form's next occurrence (-1: none left) so a text with
// many matches is not searched again from every one of them.
func (s *Stream) nextMatch(text string, i int, next []int) (at, length int) {
	at = -1
	for k, f := range s.red.forms {
		if next[k] == -2 || (next[k] >= 0 && next[k] < i) {
			next[k] = -1
			if j := strings.Index(text[i:], f); j >= 0 {
				next[k] = i + j
			}
		}
		// Forms are longest first, so an equal start keeps the longer one.
		if next[k] >= 0 && (at < 0 || next[k] < at) {
			at, length = next[k], len(f)
		}
	}
	return at, length
}

// Close redacts and writes what was held back. It does not close dst.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || len(s.pending) == 0 {
		return s.err
	}
	out := s.red.String(string(s.pending))
	s.pending = nil
	_, err := s.emit([]byte(out), 0)
	return err
}

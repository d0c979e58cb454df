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
	s := &Stream{dst: dst}
	s.use(r)
	return s
}

// Use redacts what is written from now on, and what earlier writes held
// back, with r: a redactor that masks more than the stream's did (see
// Redactor.With), for a secret learned while the stream is open. Bytes
// already passed on are not taken back.
func (s *Stream) Use(r *Redactor) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.use(r)
}

func (s *Stream) use(r *Redactor) {
	s.red, s.keep, s.newlineSafe = r, 0, true
	if r != nil {
		for _, f := range r.forms {
			s.keep = max(s.keep, len(f)-1)
			if strings.ContainsRune(f, '\n') {
				s.newlineSafe = false
			}
		}
	}
}

// Write redacts p together with what earlier writes held back. It reports
// len(p) written unless dst failed.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if s.keep == 0 && len(s.pending) == 0 {
		// Every form is one byte long: no match can span two writes.
		return s.emit(s.red.Bytes(p), len(p))
	}
	s.pending = append(s.pending, p...)
	out, cut := s.redactPrefix(s.limit())
	s.pending = append(s.pending[:0], s.pending[cut:]...)
	return s.emit(out, len(p))
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

// limit is how far into pending a match may start and still be decided
// now: every form starting before it ends within pending. A write that
// ends a line is decided whole when no form spans lines.
func (s *Stream) limit() int {
	n := len(s.pending)
	if s.newlineSafe && n > 0 && s.pending[n-1] == '\n' {
		return n
	}
	return max(0, n-s.keep)
}

// redactPrefix redacts pending up to a cut at or before limit and returns
// the redacted text and the cut (see redactUpTo).
func (s *Stream) redactPrefix(limit int) ([]byte, int) {
	out, cut := s.red.redactUpTo(string(s.pending), limit)
	if out == nil {
		out = append([]byte(nil), s.pending[:cut]...)
	}
	return out, cut
}

// Close redacts and writes what was held back. It does not close dst.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || len(s.pending) == 0 {
		return s.err
	}
	out, _ := s.redactPrefix(len(s.pending))
	s.pending = nil
	_, err := s.emit(out, 0)
	return err
}

// Longest is the length of the longest form a secret is matched in (0
// without secrets): text cut anywhere may hold up to Longest()-1 bytes of
// a secret at either side of the cut that redaction cannot recognise.
func (r *Redactor) Longest() int {
	if r == nil || len(r.forms) == 0 {
		return 0
	}
	return len(r.forms[0])
}

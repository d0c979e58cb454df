package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// SkippedLines is the error Read returns with the events when it had to
// skip lines that are not events: damage in the middle of the stream, or
// a last line torn by a run killed while writing it.
type SkippedLines struct {
	Lines []SkippedLine
}

// SkippedLine is one line Read skipped, and why.
type SkippedLine struct {
	N    int // 1-based line number
	Torn bool
	Err  error
}

func (s *SkippedLines) Error() string {
	parts := make([]string, len(s.Lines))
	for i, l := range s.Lines {
		if l.Torn {
			parts[i] = fmt.Sprintf("line %d is torn (the run was stopped while writing it)", l.N)
		} else {
			parts[i] = fmt.Sprintf("line %d is not an event (%v)", l.N, l.Err)
		}
	}
	return "skipped " + strings.Join(parts, "; ")
}

// ReadFile reads a report's events.jsonl. It reads past damage: a line
// that does not parse — torn by a killed run, or corrupted later — is
// skipped, and the events are returned with a *SkippedLines error naming
// each skipped line. Blank lines are ignored.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read events: %w", err)
	}
	defer f.Close()
	evs, err := Read(f)
	if err != nil {
		return evs, fmt.Errorf("read events %s: %w", path, err)
	}
	return evs, nil
}

// Read reads events in JSON Lines form from r with ReadFile's tolerance.
// An error that is not a *SkippedLines means r itself failed; the events
// read until then are returned with it.
func Read(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		evs     []Event
		skipped []SkippedLine
		lineNo  int
	)
	for {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return evs, fmt.Errorf("line %d: %w", lineNo+1, readErr)
		}
		if len(line) == 0 {
			// ReadBytes returns no bytes only with an error, here io.EOF
			// after the last line.
			break
		}
		lineNo++
		if len(bytes.TrimSpace(line)) > 0 {
			var e Event
			if err := json.Unmarshal(line, &e); err != nil {
				// A last line without its newline was still being written.
				torn := readErr != nil && !bytes.HasSuffix(line, []byte("\n"))
				skipped = append(skipped, SkippedLine{N: lineNo, Torn: torn, Err: err})
			} else {
				evs = append(evs, e)
			}
		}
		if readErr != nil {
			break
		}
	}
	if len(skipped) > 0 {
		return evs, &SkippedLines{Lines: skipped}
	}
	return evs, nil
}

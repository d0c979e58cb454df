package events

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadFile reads a report's events.jsonl. It is tolerant of runs that were
// killed while writing: a last line that does not parse (torn, or with no
// newline yet) is dropped, and blank lines are skipped. A line in the middle
// that does not parse is damage rather than an interrupted write, so it is
// an error naming the line; the events before it are returned with it.
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
func Read(r io.Reader) ([]Event, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		evs     []Event
		pending error // a bad line, fatal only if another line follows
		lineNo  int
	)
	for {
		line, readErr := br.ReadBytes('\n')
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			return evs, fmt.Errorf("line %d: %w", lineNo+1, readErr)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			lineNo++
			if pending != nil {
				return evs, pending
			}
			var e Event
			if err := json.Unmarshal(line, &e); err != nil {
				pending = fmt.Errorf("line %d: %w", lineNo, err)
			} else {
				evs = append(evs, e)
			}
		} else if len(line) > 0 {
			lineNo++
		}
		if readErr != nil {
			return evs, nil
		}
	}
}

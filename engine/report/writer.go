package report

import (
	"encoding/json"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// Writer owns a report directory. Events are appended to events.jsonl as
// they happen (so a killed process leaves a readable stream), screens are
// written once as PNG files, and report.json is replaced atomically.
type Writer struct {
	dir    string
	redact func(string) string

	mu      sync.Mutex
	events  *os.File
	appLog  *os.File
	appCap  *cappedLog // bounds what reaches appLog
	screens int
	// queue takes screens to write in the background (SaveFrame);
	// written closes when the writer goroutine has written them all.
	queue   chan pendingScreen
	written chan struct{}
	closed  bool
	err     error // the first write error, reported by Close
	builder *Builder
	// encoder encodes the run's screens one after another, compressing
	// again only what changed since the screen before.
	encoder screenpng.Encoder
}

// Create makes dir (and dir/screens) and opens events.jsonl and app.log.
// redact is applied to every string value of every event and of
// report.json before it is encoded, and to every line of app.log (nil:
// none).
func Create(dir string, redact func(string) string) (*Writer, error) {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o755); err != nil {
		return nil, fmt.Errorf("create report directory: %w", err)
	}
	ev, err := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create events.jsonl: %w", err)
	}
	log, err := os.OpenFile(filepath.Join(dir, "app.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		ev.Close()
		return nil, fmt.Errorf("create app.log: %w", err)
	}
	return &Writer{dir: dir, redact: redact, events: ev, appLog: log, appCap: newCappedLog(log, 0), builder: NewBuilder()}, nil
}

// Dir is the report directory.
func (w *Writer) Dir() string { return w.dir }

// Event appends one event to events.jsonl and folds it into the report.
// It is a bus sink: events arrive in order, and already redacted; the
// values are redacted once more (a no-op then) so no caller can write a
// secret. The encoded text is never edited: a secret that looks like a
// number, a key or JSON syntax cannot damage the line.
func (w *Writer) Event(e events.Event) {
	e = events.Redact(e, w.redact)
	line, err := json.Marshal(e)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.builder.Event(e)
	if err != nil {
		w.fail(fmt.Errorf("encode event %d: %w", e.Seq, err))
		return
	}
	line = append(line, '\n')
	// One write per line: a crash leaves at most one torn last line.
	if _, err := w.events.Write(line); err != nil {
		w.fail(fmt.Errorf("write events.jsonl: %w", err))
	}
}

func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// SaveScreen writes img as the next screens/NNNN.png now and returns its
// path relative to the report directory, and the PNG bytes (so a caller
// that needs them too does not encode the image again). A run's steps use
// SaveFrame, which writes in the background.
func (w *Writer) SaveScreen(img image.Image) (string, []byte, error) {
	data, err := screenpng.Bytes(img)
	if err != nil {
		return "", nil, fmt.Errorf("encode screen: %w", err)
	}
	w.mu.Lock()
	w.screens++
	rel := fmt.Sprintf("screens/%04d.png", w.screens)
	w.mu.Unlock()
	if err := os.WriteFile(filepath.Join(w.dir, rel), data, 0o644); err != nil {
		return "", nil, fmt.Errorf("write %s: %w", rel, err)
	}
	return rel, data, nil
}

// AppLog is where the application's stdout and stderr go, redacted and
// capped (LimitAppLog). Each write is redacted on its own: a caller whose
// writes may split a secret redacts the stream before (redact.Stream).
func (w *Writer) AppLog() io.Writer { return appLogWriter{w} }

type appLogWriter struct{ w *Writer }

func (a appLogWriter) Write(p []byte) (int, error) {
	a.w.mu.Lock()
	defer a.w.mu.Unlock()
	if _, err := a.w.appCap.Write([]byte(a.w.redact(string(p)))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Report returns the report folded from the events so far.
func (w *Writer) Report() Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.builder.Report()
}

// WriteReport writes report.json atomically (a temporary file renamed over
// the old one), from the events so far.
func (w *Writer) WriteReport() error {
	r := w.Report()
	return WriteJSON(w.dir, r, w.redact)
}

// WriteJSON writes r, its string values redacted, as dir/report.json
// atomically.
func WriteJSON(dir string, r Report, redact func(string) string) error {
	b, err := json.MarshalIndent(r.Redacted(redact), "", "  ")
	if err != nil {
		return fmt.Errorf("encode report.json: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".report-*.json")
	if err != nil {
		return fmt.Errorf("write report.json: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write report.json: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write report.json: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write report.json: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, "report.json")); err != nil {
		return fmt.Errorf("write report.json: %w", err)
	}
	return nil
}

// Close waits for the screens still being written, closes the files and
// returns the first write error, if any.
func (w *Writer) Close() error {
	w.flushScreens()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.appCap.finish(); err != nil {
		w.fail(fmt.Errorf("write app.log: %w", err))
	}
	for _, f := range []*os.File{w.events, w.appLog} {
		if err := f.Close(); err != nil {
			w.fail(err)
		}
	}
	return w.err
}

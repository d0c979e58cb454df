package page

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/themes"
)

//go:embed assets
var assets embed.FS

// FileName is the page's name in a report directory.
const FileName = "report.html"

// appLogTailBytes is how much of app.log's end the page shows; the whole
// log is the file next to it.
const appLogTailBytes = 16 << 10

var (
	pageTemplate  = template.Must(template.ParseFS(assets, "assets/report.html.tmpl"))
	indexTemplate = template.Must(template.ParseFS(assets, "assets/index.html.tmpl"))
)

// Options say how a page is written.
type Options struct {
	// Redact is applied to every string the page shows, over the redaction
	// the report's files already had (nil: none more).
	Redact func(string) string
}

// Write (re)writes dir/report.html from the report directory's
// events.jsonl and app.log. A stream with damaged lines still gives a
// page, which says what was skipped.
func Write(dir string, opts Options) error {
	evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
	warning := ""
	if err != nil {
		var skipped *events.SkippedLines
		if !errors.As(err, &skipped) {
			return fmt.Errorf("write %s: %w", FileName, err)
		}
		warning = "events.jsonl: " + skipped.Error()
	}
	tail, note, err := appLogTail(filepath.Join(dir, "app.log"))
	if err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	v := build(evs, tail, note, warning, opts.Redact)
	var buf bytes.Buffer
	if err := render(&buf, pageTemplate, v); err != nil {
		return fmt.Errorf("write %s: %w", FileName, err)
	}
	return writeAtomically(filepath.Join(dir, FileName), buf.Bytes())
}

// render executes t with the page's own style and script, and a policy
// that lets nothing else run or load: no script but this one (pinned by
// its hash), images only from the report itself, no network.
func render(w io.Writer, t *template.Template, v any) error {
	css, err := styleSheet()
	if err != nil {
		return err
	}
	script, err := assets.ReadFile("assets/page.js")
	if err != nil {
		return err
	}
	csp := fmt.Sprintf("default-src 'none'; img-src 'self' data:; style-src '%s'; script-src '%s'; base-uri 'none'; form-action 'none'",
		digest(css), digest(string(script)))
	return t.Execute(w, struct {
		CSP    string
		CSS    template.CSS
		Script template.JS
		V      any
	}{CSP: csp, CSS: template.CSS(css), Script: template.JS(script), V: v})
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// styleSheet is the page's CSS in the console's dark palette, with the
// light one for readers whose system prefers it.
func styleSheet() (string, error) {
	raw, err := assets.ReadFile("assets/page.css")
	if err != nil {
		return "", err
	}
	dark, _ := themes.Builtin(themes.Dark)
	light, _ := themes.Builtin(themes.Light)
	var pairs []string
	for _, p := range []struct {
		prefix string
		pal    themes.Palette
	}{{"", dark}, {"L_", light}} {
		for name, c := range map[string]color.Color{
			"BG": p.pal.Background, "FG": p.pal.Foreground, "MUTED": p.pal.Muted, "SUBTLE": p.pal.Subtle,
			"BORDER": p.pal.Border, "ACCENT": p.pal.Accent, "PRIMARY": p.pal.Primary, "OK": p.pal.OK,
			"WARN": p.pal.Warn, "ERROR": p.pal.Error, "REFUSAL": p.pal.Refusal, "GROUNDING": p.pal.Grounding,
			"QUESTION": p.pal.Question, "SELECTION": p.pal.Selection,
		} {
			pairs = append(pairs, "{{"+p.prefix+name+"}}", hex(c))
		}
	}
	return strings.NewReplacer(pairs...).Replace(string(raw)), nil
}

func hex(c color.Color) string {
	if c == nil {
		return "inherit"
	}
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02x%02x%02x", r>>8, g>>8, b>>8)
}

// appLogTail reads the end of app.log, starting at a line.
func appLogTail(path string) (tail, note string, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", "The report has no app.log.", nil
	}
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", "", err
	}
	if !st.Mode().IsRegular() {
		return "", "app.log is not a regular file.", nil
	}
	off := max(0, st.Size()-appLogTailBytes)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return "", "", err
	}
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
		note = fmt.Sprintf("The last %d of %d bytes; app.log has all of it.", len(buf), st.Size())
	}
	if len(buf) == 0 {
		note = "The application wrote nothing."
	}
	return string(buf), note, nil
}

// writeAtomically writes b as path through a temporary file renamed over
// it, so a reader never sees half a page.
func writeAtomically(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".page-*.html")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Package ocr reads the text on a screen image with Debian's tesseract:
// the words, each with its box and tesseract's confidence.
package ocr

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Command is the tesseract executable looked up in PATH.
const Command = "tesseract"

// ErrNotInstalled is returned when tesseract is not on PATH.
var ErrNotInstalled = errors.New("tesseract is not installed (Debian packages tesseract-ocr and tesseract-ocr-eng)")

// Word is one word tesseract read.
type Word struct {
	Text string
	// Box is where the word is, in the pixels of the image it was read
	// from (offset by the image's bounds).
	Box image.Rectangle
	// Confidence is tesseract's, from 0 to 100.
	Confidence float64
	// Line numbers the text lines across the image, so words on one
	// line share it.
	Line int
}

// Reader runs tesseract, at most a fixed number at a time: each run takes
// a core, and the machine is shared with the application and the model.
// With kasmrt-ocr installed it keeps one long-lived tesseract and reads
// through it (helper.go); otherwise, or once that helper failed, it runs
// the tesseract command for each read. Close ends the helper.
type Reader struct {
	slots chan struct{}

	helperOnce sync.Once
	helper     *helper
	// helperPath, when set, is the helper to use instead of looking for
	// one; "-" uses none.
	helperPath string
}

// NewReader returns a Reader that runs at most n tesseract reads at once
// (at least one). Reads through the long-lived helper take turns.
func NewReader(n int) *Reader {
	return &Reader{slots: make(chan struct{}, max(n, 1))}
}

// NewReaderWith is NewReader with the helper to use named: a path to a
// kasmrt-ocr, or "-" for the tesseract command on every read.
func NewReaderWith(n int, helperPath string) *Reader {
	r := NewReader(n)
	r.helperPath = helperPath
	return r
}

// Close stops the long-lived helper, if one runs. The Reader can still
// read afterwards, with the tesseract command.
func (r *Reader) Close() error {
	r.helperOnce.Do(func() {}) // no helper starts after Close
	if r.helper != nil {
		r.helper.close()
	}
	return nil
}

// longLived returns the running helper, starting it on first use, or nil
// when there is none to use.
func (r *Reader) longLived() *helper {
	r.helperOnce.Do(func() {
		path := r.helperPath
		if path == "" {
			path = findHelper()
		}
		if path == "" || path == "-" {
			return
		}
		h, err := startHelper(path)
		if err == nil {
			r.helper = h
		}
	})
	if r.helper == nil || r.helper.dead.Load() {
		return nil
	}
	return r.helper
}

// upscale is how much a small capture (a window, a region) is enlarged
// before reading: tesseract expects 300 dpi print, and a 96 dpi widget
// label read at twice its size is read far more often. Images larger than
// upscaleUpTo pixels are read as they are, since reading costs about
// linearly in pixels (docs/benchmarks.md).
const (
	upscale     = 2
	upscaleUpTo = 800 * 600
)

// Read returns the words on img. An image with no text has no words; that
// is an answer, not an error.
func (r *Reader) Read(ctx context.Context, img image.Image) ([]Word, error) {
	path, err := exec.LookPath(Command)
	if err != nil {
		return nil, ErrNotInstalled
	}
	b := img.Bounds()
	if b.Empty() {
		return nil, nil
	}
	scale := 1
	if b.Dx()*b.Dy() <= upscaleUpTo {
		scale = upscale
	}
	big := image.NewRGBA(image.Rect(0, 0, b.Dx()*scale, b.Dy()*scale))
	draw.ApproxBiLinear.Scale(big, big.Bounds(), img, b, draw.Src, nil)
	select {
	case r.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("read text: wait for tesseract: %w", ctx.Err())
	}
	defer func() { <-r.slots }()
	var tsv []byte
	if h := r.longLived(); h != nil {
		tsv, err = h.read(ctx, big)
		if err != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("read text: %w", ctx.Err())
		}
		// A helper that failed is stopped; the command reads instead.
	}
	if tsv == nil {
		if tsv, err = runTesseract(ctx, path, big); err != nil {
			return nil, err
		}
	}
	words, err := parseTSV(tsv)
	if err != nil {
		return nil, fmt.Errorf("read text with tesseract: %w", err)
	}
	for i := range words {
		w := &words[i]
		w.Box = image.Rect(w.Box.Min.X/scale, w.Box.Min.Y/scale,
			(w.Box.Max.X+scale-1)/scale, (w.Box.Max.Y+scale-1)/scale).Add(b.Min)
	}
	return words, nil
}

// runTesseract reads img with one run of the tesseract command.
func runTesseract(ctx context.Context, path string, big *image.RGBA) ([]byte, error) {
	var in bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&in, big); err != nil {
		return nil, fmt.Errorf("read text: encode the image: %w", err)
	}
	var out, stderr bytes.Buffer
	// psm 11 finds sparse text anywhere, as on a screen, rather than
	// assuming one column of page text.
	cmd := exec.CommandContext(ctx, path, "stdin", "stdout", "-l", "eng", "--psm", "11", "tsv")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	cmd.Env = tesseractEnv()
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read text: %w", ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return nil, fmt.Errorf("read text with tesseract: %v: %s", err, msg)
	}
	return out.Bytes(), nil
}

// parseTSV reads tesseract's TSV output: a header, then one row per page,
// block, paragraph, line and word; only word rows (level 5) with text are
// kept.
func parseTSV(data []byte) ([]Word, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var words []Word
	lines := map[[3]int]int{}
	row := 0
	for sc.Scan() {
		row++
		if row == 1 {
			continue // the header
		}
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 || f[0] != "5" {
			continue
		}
		text := strings.TrimSpace(f[11])
		if text == "" {
			continue
		}
		var n [10]int
		for i := range 10 {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				return nil, fmt.Errorf("TSV row %d column %d: %q is not a number", row, i+1, f[i])
			}
			n[i] = v
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		if err != nil {
			return nil, fmt.Errorf("TSV row %d: confidence %q is not a number", row, f[10])
		}
		key := [3]int{n[2], n[3], n[4]} // block, paragraph, line
		line, seen := lines[key]
		if !seen {
			line = len(lines) + 1
			lines[key] = line
		}
		words = append(words, Word{Text: text, Box: image.Rect(n[6], n[7], n[6]+n[8], n[7]+n[9]), Confidence: conf, Line: line})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return inRows(words), nil
}

// inRows renumbers Line by the rows words sit on and puts the words in
// reading order: with sparse-text segmentation tesseract may split one row
// of a screen into blocks listed out of order ("Ada Lovelace!" before
// "Hello,"). A word joins a row when its vertical centre lies within the
// row's first word's height.
func inRows(words []Word) []Word {
	sorted := slices.Clone(words)
	slices.SortStableFunc(sorted, func(a, b Word) int { return a.Box.Min.Y - b.Box.Min.Y })
	var rows [][]Word
	for _, w := range sorted {
		centre := (w.Box.Min.Y + w.Box.Max.Y) / 2
		placed := false
		for i := range rows {
			first := rows[i][0].Box
			if centre >= first.Min.Y && centre < first.Max.Y {
				rows[i] = append(rows[i], w)
				placed = true
				break
			}
		}
		if !placed {
			rows = append(rows, []Word{w})
		}
	}
	out := make([]Word, 0, len(words))
	for i, row := range rows {
		slices.SortStableFunc(row, func(a, b Word) int { return a.Box.Min.X - b.Box.Min.X })
		for _, w := range row {
			w.Line = i + 1
			out = append(out, w)
		}
	}
	return out
}

// Text lays words out as text: one line per line read, words separated by
// a space.
func Text(words []Word) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			if w.Line != words[i-1].Line {
				b.WriteByte('\n')
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(w.Text)
	}
	return b.String()
}

// Match is one place a phrase was read.
type Match struct {
	Text string
	Box  image.Rectangle
	// Confidence is the lowest of its words'.
	Confidence float64
}

// Find returns every place phrase appears as consecutive words of one
// line, compared without case and without the punctuation around words
// ("Save…" and "save" match "Save").
func Find(words []Word, phrase string) []Match {
	want := strings.Fields(phrase)
	for i := range want {
		want[i] = fold(want[i])
	}
	if len(want) == 0 {
		return nil
	}
	var found []Match
	for i := 0; i+len(want) <= len(words); i++ {
		m := Match{Box: words[i].Box, Confidence: words[i].Confidence}
		texts := make([]string, 0, len(want))
		ok := true
		for j, wt := range want {
			w := words[i+j]
			if w.Line != words[i].Line || fold(w.Text) != wt {
				ok = false
				break
			}
			m.Box = m.Box.Union(w.Box)
			m.Confidence = min(m.Confidence, w.Confidence)
			texts = append(texts, w.Text)
		}
		if ok {
			m.Text = strings.Join(texts, " ")
			found = append(found, m)
		}
	}
	return found
}

func fold(s string) string {
	t := strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
	if t == "" {
		// A word of punctuation only ("=", "…") is matched as it is.
		t = s
	}
	return strings.ToLower(t)
}

// tesseractEnv is the environment tesseract runs with, as the command or
// the helper: a helper's (proc.HelperEnv), since the runtime's may hold a
// run's secrets, with the model's folder when one is set, and one thread,
// which is several times faster on a shared machine than tesseract's
// default of one per core.
func tesseractEnv() []string {
	env := []string{"OMP_THREAD_LIMIT=1"}
	if dir, ok := os.LookupEnv("TESSDATA_PREFIX"); ok {
		env = append(env, "TESSDATA_PREFIX="+dir)
	}
	return proc.HelperEnv(env...)
}

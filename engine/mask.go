package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	"image/color"
	"image/draw"
	"strings"
	"time"
	"unicode"

	"github.com/kasmrt/kasmrt/drivers/ocr"
)

// secretsOnScreen is where the run's secret values may show on the screen.
// Every capture the run keeps passes through keepScreen, which blacks those
// places out, so the saved screens, the images the model gets, the console
// and report.html never show a secret (docs/security.md, "The screen").
type secretsOnScreen struct {
	// fields are the places a secret was typed or filled into.
	fields []secretField
	// watched are the secret values the application was given (typed,
	// filled, or passed in its command line or environment), by ref: OCR
	// looks for them on every kept screen.
	watched map[string]string
	// typedBefore is the screen just before a secret was typed where no
	// field is known; the next kept screen's change from it is where the
	// secret went.
	typedBefore *image.RGBA
	typedRef    string

	// The last OCR look, kept for a screen that has not changed.
	seed      maphash.Seed
	readHash  uint64
	readBoxes []image.Rectangle
	readRefs  []string
	// reported are the refs whose display is a concern already.
	reported map[string]bool
}

// any reports whether a kept screen may have a secret masked on it: a
// secret went into the application.
func (m *secretsOnScreen) any() bool {
	return len(m.fields) > 0 || len(m.watched) > 0 || m.typedBefore != nil
}

// secretField is one place a secret went into.
type secretField struct {
	ref string
	box image.Rectangle
	// place reads where the field is now; false means it is gone or
	// hidden, and nothing is masked for it until it shows again. Without
	// place the box stays masked for the rest of the run.
	place func(ctx context.Context) (image.Rectangle, bool, error)
}

// maskMargin is how far a mask reaches past the box it covers: OCR boxes
// are tight and a field's frame may hold the caret or a glyph's edge.
const maskMargin = 3

// placeTimeout bounds the reading of one field's place, so a stalled
// accessibility bus or page cannot hold a capture.
const placeTimeout = time.Second

// keepScreen masks the secrets on img and writes it to the report as the
// next screen: the one way a capture becomes a kept screen. img is masked
// in place, so the caller's image (the model's, the judge's) is the saved
// one.
func (a *actor) keepScreen(ctx context.Context, img *image.RGBA) (string, []byte, error) {
	shown := a.env.maskSecrets(ctx, img)
	rel, data, err := a.rep.SaveScreen(img)
	if err != nil {
		return "", nil, err
	}
	a.reportShown(shown, rel)
	return rel, data, nil
}

// reportShown raises a concern, once per secret, for the secrets OCR read
// on the screen saved as rel.
func (a *actor) reportShown(shown []string, rel string) {
	for _, ref := range shown {
		if a.env.onScreen.reported[ref] {
			continue
		}
		if a.env.onScreen.reported == nil {
			a.env.onScreen.reported = map[string]bool{}
		}
		a.env.onScreen.reported[ref] = true
		a.concern(fmt.Sprintf("the application displayed the secret %q on the screen (first in %s); it is blacked out in every saved screen and every image the model gets", ref, rel))
	}
}

// maskSecrets blacks out every place on img where a secret may show: the
// fields secrets went into, whatever a secret typed with no known field
// changed, and wherever OCR reads a secret value the application was
// given. It returns the refs OCR read. A run that gave the application no
// secret costs nothing here (BenchmarkMaskSecrets).
func (e *environment) maskSecrets(ctx context.Context, img *image.RGBA) []string {
	m := &e.onScreen
	if !m.any() {
		return nil
	}
	if m.typedBefore != nil {
		if box := changedBox(m.typedBefore, img); !box.Empty() {
			m.fields = append(m.fields, secretField{ref: m.typedRef, box: box})
		}
		m.typedBefore, m.typedRef = nil, ""
	}
	var boxes []image.Rectangle
	for i := range m.fields {
		f := &m.fields[i]
		if f.place != nil {
			pctx, cancel := context.WithTimeout(ctx, placeTimeout)
			box, ok, err := f.place(pctx)
			cancel()
			switch {
			case err != nil:
				// Not knowing where the field went, the last place stays
				// masked.
			case !ok:
				// Hidden or gone: nothing to mask now, but a field shown
				// again shows the secret again.
				continue
			case !box.Empty():
				f.box = box
			}
		}
		boxes = append(boxes, f.box)
	}
	var shown []string
	if len(m.watched) > 0 {
		var read []image.Rectangle
		read, shown = e.readSecrets(ctx, img)
		boxes = append(boxes, read...)
	}
	blackOut(img, boxes)
	return shown
}

// blackOut paints each box, widened by maskMargin, black on img.
func blackOut(img *image.RGBA, boxes []image.Rectangle) {
	black := image.NewUniform(color.RGBA{A: 0xff})
	for _, b := range boxes {
		r := b.Inset(-maskMargin).Intersect(img.Bounds())
		if !r.Empty() {
			draw.Draw(img, r, black, image.Point{}, draw.Src)
		}
	}
}

// changedBox is the smallest rectangle holding every pixel that differs
// between before and after (empty when none does, or when the two are
// not the same size).
func changedBox(before, after *image.RGBA) image.Rectangle {
	b := after.Bounds()
	if before.Bounds() != b {
		return image.Rectangle{}
	}
	box := image.Rectangle{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := after.Pix[after.PixOffset(b.Min.X, y) : after.PixOffset(b.Max.X-1, y)+4]
		old := before.Pix[before.PixOffset(b.Min.X, y) : before.PixOffset(b.Max.X-1, y)+4]
		// last is set whenever first is, so its start value is never read.
		first, last := -1, 0
		for i := 0; i < len(row); i += 4 {
			if row[i] != old[i] || row[i+1] != old[i+1] || row[i+2] != old[i+2] {
				if first < 0 {
					first = i / 4
				}
				last = i / 4
			}
		}
		if first >= 0 {
			box = box.Union(image.Rect(b.Min.X+first, y, b.Min.X+last+1, y+1))
		}
	}
	return box
}

// readSecrets reads the application's windows and returns the boxes of
// the words that spell a watched secret, and the refs found. A screen
// that has not changed since the last read is not read again.
func (e *environment) readSecrets(ctx context.Context, img *image.RGBA) ([]image.Rectangle, []string) {
	m := &e.onScreen
	if m.seed == (maphash.Seed{}) {
		m.seed = maphash.MakeSeed()
	}
	sum := maphash.Bytes(m.seed, img.Pix)
	if sum == m.readHash && m.readBoxes != nil {
		return m.readBoxes, m.readRefs
	}
	var boxes []image.Rectangle
	found := map[string]bool{}
	reader := e.textReader()
	for _, area := range e.secretReadAreas(img.Bounds()) {
		words, err := reader.ReadText(ctx, img.SubImage(area))
		if err != nil {
			// Unread, the area cannot be cleared: it is masked whole
			// rather than risk showing a secret.
			e.log("read the screen for secrets: %v", err)
			boxes = append(boxes, area)
			continue
		}
		for ref, value := range m.watched {
			spelled := secretWords(words, value)
			if len(spelled) > 0 {
				found[ref] = true
				boxes = append(boxes, spelled...)
			}
		}
	}
	refs := sortedKeys(found)
	m.readHash, m.readBoxes, m.readRefs = sum, append([]image.Rectangle{}, boxes...), refs
	return boxes, refs
}

// secretReadAreas is where OCR looks for secrets: each of the
// application's mapped windows (read apart, each small enough to be read
// at twice its size), or the whole screen when they are not known.
func (e *environment) secretReadAreas(screen image.Rectangle) []image.Rectangle {
	if e.web.PageIsTheScreen() || e.desk == nil || !e.hasWin {
		return []image.Rectangle{screen}
	}
	ws, err := e.desk.Windows()
	if err != nil {
		return []image.Rectangle{screen}
	}
	var areas []image.Rectangle
	for _, w := range ws {
		if !w.Viewable || !e.isAppWindow(w) {
			continue
		}
		if a := image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height).Intersect(screen); !a.Empty() {
			areas = append(areas, a)
		}
	}
	if len(areas) == 0 {
		return []image.Rectangle{screen}
	}
	return areas
}

// secretWords returns the boxes of the words that spell value: one word
// or a run of consecutive words (a secret with spaces, or one wrapped onto
// the next line) that holds it, allowing the few misreadings OCR makes on
// a long value (secretTolerance).
func secretWords(words []ocr.Word, value string) []image.Rectangle {
	want := []rune(foldSecret(value))
	if len(want) < minReadSecret {
		return nil
	}
	if len(want) < 8 {
		return shortSecretWords(words, string(want))
	}
	k := secretTolerance(len(want))
	var boxes []image.Rectangle
	for i := 0; i < len(words); i++ {
		// A run that starts at word i holds the value's start in that
		// word, wherever in it: the words after it are joined until they
		// could hold the rest, however long the first word is (a URL
		// ending in "?passphrase=correct" before "horse battery staple").
		first := len([]rune(foldSecret(words[i].Text)))
		var joined []rune
		for j := i; j < len(words) && len(joined) < first+len(want)+k; j++ {
			joined = append(joined, []rune(foldSecret(words[j].Text))...)
			if len(joined) < len(want)-k || !approxContains(joined, want, k) {
				continue
			}
			// The run may have begun with words before the value.
			start := i
			for start < j && approxContains(foldWords(words[start+1:j+1]), want, k) {
				start++
			}
			for _, w := range words[start : j+1] {
				boxes = append(boxes, w.Box)
			}
			i = j
			break
		}
	}
	return boxes
}

func foldWords(words []ocr.Word) []rune {
	var out []rune
	for _, w := range words {
		out = append(out, []rune(foldSecret(w.Text))...)
	}
	return out
}

// minReadSecret is the shortest value OCR looks for: one or two
// characters are in any text on a screen. The field it went into is
// masked all the same.
const minReadSecret = 3

// shortSecretWords returns the boxes of words that are exactly a short
// value (the punctuation around them aside), alone or with the words
// after it: inside longer words a short value is ordinary text.
func shortSecretWords(words []ocr.Word, want string) []image.Rectangle {
	var boxes []image.Rectangle
	for i := range words {
		joined := ""
		for j := i; j < len(words) && len(joined) < len(want); j++ {
			joined += foldSecret(strings.TrimFunc(words[j].Text, unicode.IsPunct))
			if joined != want {
				continue
			}
			for _, w := range words[i : j+1] {
				boxes = append(boxes, w.Box)
			}
			break
		}
	}
	return boxes
}

// secretTolerance is how many characters of a long secret (eight or
// more) OCR may misread and still count as reading it: one in five.
func secretTolerance(n int) int { return n / 5 }

// foldSecret puts a value and what OCR read in one form: no spaces, lower
// case, and the glyphs OCR confuses on screen fonts taken as one (O and 0,
// l, I and 1, S and 5, Z and 2, B and 8).
func foldSecret(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case ' ', '\t', '\n', '\r':
			continue
		case 'o':
			r = '0'
		case 'l', 'i', '|', '!':
			r = '1'
		case 's':
			r = '5'
		case 'z':
			r = '2'
		case 'b':
			r = '8'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// approxContains reports whether pattern occurs in text with at most k
// edits (Sellers' approximate substring match).
func approxContains(text, pattern []rune, k int) bool {
	m := len(pattern)
	col := make([]int, m+1)
	for i := range col {
		col[i] = i
	}
	if col[m] <= k {
		return true
	}
	for _, t := range text {
		diag := col[0] // a match may start anywhere: the top row stays 0
		for i := 1; i <= m; i++ {
			cost := 1
			if pattern[i-1] == t {
				cost = 0
			}
			next := min(col[i]+1, col[i-1]+1, diag+cost)
			diag, col[i] = col[i], next
		}
		if col[m] <= k {
			return true
		}
	}
	return false
}

// secretGoesIn records that a secret is about to be typed or filled into
// the application: OCR watches for its value from now on, and the place it
// goes into is masked — the cdp_fill target's box (selector), the page's
// focused element, the focused accessible's extents, or, where none is
// known, whatever the typing changes on the screen.
func (e *environment) secretGoesIn(ctx context.Context, ref, value, selector string) {
	m := &e.onScreen
	if m.watched == nil {
		m.watched = map[string]string{}
	}
	m.watched[ref] = value
	if e.web != nil {
		sel := selector
		if sel == "" {
			sel = ":focus"
		}
		if place := e.pageBox(sel); place != nil {
			pctx, cancel := context.WithTimeout(ctx, placeTimeout)
			box, ok, err := place(pctx)
			cancel()
			if err == nil && ok {
				f := secretField{ref: ref, box: box}
				if selector != "" {
					// A named target is followed as the page moves.
					f.place = place
					m.fields = append(m.fields, f)
					return
				}
				// The page's focus is not followed, since it leaves the
				// field; and type_text types into whichever window has
				// the focus, which may not be the page's, so what the
				// typing changes is masked too.
				m.fields = append(m.fields, f)
			}
		}
	} else if acc, ok := e.focusedAccessible(ctx); ok && !acc.Extents.Empty() {
		m.fields = append(m.fields, secretField{ref: ref, box: acc.Extents, place: acc.Place})
		return
	}
	if e.desk == nil {
		return
	}
	var before *image.RGBA
	var err error
	if e.web.PageIsTheScreen() {
		before, err = e.web.Screenshot(ctx)
	} else {
		before, err = e.desk.Capture(ctx)
	}
	if err != nil {
		e.log("capture the screen before typing a secret: %v", err)
		return
	}
	m.typedBefore, m.typedRef = before, ref
}

// boxReader is what masking needs of a browser tab: where an element is.
type boxReader interface {
	Box(ctx context.Context, selector string) (image.Rectangle, bool, error)
}

// pageBox reads a page element's box in the coordinates of the run's
// captures, or is nil when they cannot be related (an attached or
// headless browser whose page is not the screen).
func (e *environment) pageBox(selector string) func(ctx context.Context) (image.Rectangle, bool, error) {
	br, ok := e.web.Tab.(boxReader)
	if !ok {
		return nil
	}
	if !e.pageOnScreen() {
		return nil
	}
	return func(ctx context.Context) (image.Rectangle, bool, error) {
		box, ok, err := br.Box(ctx, selector)
		if err != nil || !ok {
			return box, ok, err
		}
		origin := e.screenPoint(ctx, image.Point{})
		if origin == nil {
			return image.Rectangle{}, false, errors.New("the page's place on the screen cannot be read")
		}
		return box.Add(image.Pt(origin.X, origin.Y)), true, nil
	}
}

// watchGivenSecrets starts OCR's watch for secrets the application gets at
// launch, in its command line or environment: it may print them.
func (e *environment) watchGivenSecrets() {
	a := e.files.Scenario.App
	if a == nil {
		return
	}
	given := strings.Join(a.Command, "\x00")
	for _, v := range a.Env {
		given += "\x00" + v
	}
	watch := func(ref, value string) {
		if e.onScreen.watched == nil {
			e.onScreen.watched = map[string]string{}
		}
		e.onScreen.watched[ref] = value
	}
	for ref := range e.files.Scenario.Provides {
		value, secret, _ := e.files.Scenario.Value(ref)
		if secret && value != "" && strings.Contains(given, value) {
			watch(ref, value)
		}
	}
	// A scenario may pass on a variable the operator file also names
	// (app.env: {TOKEN: ${HOOK_TOKEN}}): the credential is then the
	// application's to print, and is looked for like a secret.
	if e.files.Operator == nil {
		return
	}
	for i, value := range e.files.Operator.Credentials() {
		if len(value) >= minReadSecret && strings.Contains(given, value) {
			watch(fmt.Sprintf("operator credential %d", i+1), value)
		}
	}
}

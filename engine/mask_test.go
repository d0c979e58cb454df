package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/scenarios"
)

// maskSecret is what the masking tests type; OCR reads its words well on
// a terminal font, so a leak would be seen.
const maskSecret = "Quokka-Velvet-8342"

// maskTrace reports whether the text read holds a trace of value: any
// seven consecutive characters of it, compared as foldSecret compares
// them. The masking itself matches whole values; the check is stricter.
func maskTrace(read, value string) bool {
	text, want := foldSecret(read), []rune(foldSecret(value))
	for i := 0; i+7 <= len(want); i++ {
		if strings.Contains(text, string(want[i:i+7])) {
			return true
		}
	}
	return false
}

// maskReader reads screens as the masking tests check them, once per
// distinct image: a settled screen and the observation after it are the
// same pixels, and each read costs a tesseract run.
type maskReader struct {
	ocr  *ocr.Reader
	read map[[32]byte]string
}

func newMaskReader() *maskReader {
	return &maskReader{ocr: ocr.NewReader(1), read: map[[32]byte]string{}}
}

// maskRead reads img with tesseract at twice its size, so the check sees
// small text at least as well as the masking does; a terminal on Xvfb's
// black root is read alone, as tesseract misses most of its words beside
// a large black area.
func maskRead(t *testing.T, r *maskReader, img image.Image) string {
	t.Helper()
	sum := maskPixelSum(img)
	if text, ok := r.read[sum]; ok {
		return text
	}
	b := img.Bounds()
	if white := loopWhiteBox(img); !white.Empty() {
		b = white
	}
	big := image.NewRGBA(image.Rect(0, 0, b.Dx()*2, b.Dy()*2))
	draw.CatmullRom.Scale(big, big.Bounds(), img, b, draw.Src, nil)
	words, err := r.ocr.Read(context.Background(), big)
	if err != nil {
		t.Fatalf("read an image: %v", err)
	}
	r.read[sum] = ocr.Text(words)
	return r.read[sum]
}

// maskPixelSum is the SHA-256 of an image's size and colours.
func maskPixelSum(img image.Image) [32]byte {
	h := sha256.New()
	b := img.Bounds()
	fmt.Fprintf(h, "%v\n", b)
	row := make([]byte, 0, 8*b.Dx())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row = row[:0]
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			row = append(row, byte(r>>8), byte(r), byte(g>>8), byte(g), byte(bl>>8), byte(bl), byte(a>>8), byte(a))
		}
		h.Write(row)
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// maskScreens reads every saved screen of a report.
func maskScreens(t *testing.T, dir string) map[string]image.Image {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "screens", "*.png"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no screens in %s (%v)", dir, err)
	}
	out := map[string]image.Image{}
	for _, p := range paths {
		img := readScreen(t, p)
		out[filepath.Base(p)] = img
	}
	return out
}

// An xterm echoes a typed secret twice (the terminal's echo, then the
// program's own line): no saved screen and no image the model received
// shows a trace of it, while the name typed the same way is read, so the
// check can see; a concern says the app displayed the secret.
func TestSecretMaskedOnScreen(t *testing.T) {
	t.Parallel()
	loopNeed(t, "xterm", "tesseract")
	r := loopRun(t, loopCase{
		scenario: `name: echoing terminal
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh, -c, 'printf "name: "; read -r n; printf "password: "; read -r p; echo "welcome $n"; echo "your password is $p"; sleep 3600']
goal: Log in.
provides:
  visitor: Ada Lovelace
  password: {secret: {env: TERM_PASSWORD}}
`,
		env: map[string]string{"TERM_PASSWORD": maskSecret},
		script: []mt.Exchange{
			mt.Call("observe_screen", `{}`),
			mt.Call("type_text", `{"ref": "visitor"}`),
			mt.Call("observe_screen", `{}`),
			mt.Call("press_key", `{"key": "Return"}`),
			mt.Call("observe_screen", `{}`),
			mt.Call("type_text", `{"ref": "password"}`),
			mt.Call("observe_screen", `{}`),
			mt.Call("press_key", `{"key": "Return"}`),
			mt.Call("observe_screen", `{}`),
			mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "logged in"}`),
		},
	})
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 10, 0)
	if !loopHasConcern(r.rep, `the application displayed the secret "password" on the screen`) {
		t.Errorf("concerns %q lack the displayed secret", r.rep.Concerns)
	}
	reader := newMaskReader()
	nameRead := false
	for name, img := range maskScreens(t, r.dir) {
		read := maskRead(t, reader, img)
		if maskTrace(read, maskSecret) {
			t.Errorf("%s shows the secret: %q", name, read)
		}
		nameRead = nameRead || maskTrace(read, "Ada Lovelace")
	}
	if !nameRead {
		t.Error("no saved screen shows the typed name: the check cannot read this terminal")
	}
	sent := 0
	for _, req := range r.reqs {
		imgs, err := req.Images()
		if err != nil {
			t.Fatalf("request %d: %v", req.N, err)
		}
		for i, img := range imgs {
			sent++
			if read := maskRead(t, reader, img); maskTrace(read, maskSecret) {
				t.Errorf("request %d image %d shows the secret: %q", req.N, i+1, read)
			}
		}
	}
	if sent < 5 {
		t.Errorf("the model received %d images, want one per observation", sent)
	}
}

// A secret filled into a plain text field of a page in a headful Chromium
// is masked by the field's box, and a value filled the same way is not.
func TestSecretMaskedInBrowserField(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	scriptNeed(t, "tesseract")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><title>Codes</title>
<style>body{margin:20px;font:24px sans-serif} input{font:24px monospace;width:600px}</style></head>
<body><p>Name <input id="name"></p><p>Code <input id="code"></p></body></html>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: code field
browser:
  start_url: ` + srv.URL + `/
provides:
  visitor: Ada Lovelace
  code: {secret: {env: FIELD_CODE}}
cdp_targets:
  name: "#name"
  code: "#code"
steps:
  - cdp_fill: {target: name, ref: visitor}
  - cdp_fill: {target: code, ref: code}
  - observe_screen: {}
`,
		operator: "session: {width: 800, height: 600}\n",
		env:      map[string]string{"FIELD_CODE": maskSecret},
	})
	// The field shows what was filled, so OCR may also read the secret
	// there (a concern) or miss it; the field's box is masked either way.
	if o.res.Verdict != events.VerdictPass && o.res.Verdict != events.VerdictPassConcerns {
		t.Fatalf("verdict %s/%s, want pass; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	reader := newMaskReader()
	screens := maskScreens(t, o.info.reportDir)
	nameRead := false
	for name, img := range screens {
		read := maskRead(t, reader, img)
		if maskTrace(read, maskSecret) {
			t.Errorf("%s shows the secret: %q", name, read)
		}
		nameRead = nameRead || maskTrace(read, "Ada Lovelace")
	}
	if !nameRead {
		t.Error("no saved screen shows the filled name: the check cannot read this page")
	}
	// The field is 600 pixels wide, the secret's words far narrower: only
	// the field's box blacks out a row that long.
	for _, st := range o.rep.Steps[1:] {
		if run := maskLongestBlackRun(screens[filepath.Base(st.Screen)]); run < 590 {
			t.Errorf("step %d's screen %s: the longest black row is %d pixels, want the 600-pixel field masked", st.N, st.Screen, run)
		}
	}
}

// maskLongestBlackRun is the length of the longest row of black pixels
// between pixels of other colours: Xvfb's black root showing at an edge
// is not a mask.
func maskLongestBlackRun(img image.Image) int {
	if img == nil {
		return 0
	}
	b := img.Bounds()
	longest := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		run := -1 // -1 until a pixel of another colour starts the row
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			switch {
			case r|g|bl != 0:
				longest = max(longest, run)
				run = 0
			case run >= 0:
				run++
			}
		}
	}
	return longest
}

// The place a secret was typed into is masked by what the typing changed,
// whatever OCR reads; nothing else of the screen is touched.
func TestMaskTypedChange(t *testing.T) {
	t.Parallel()
	before := image.NewRGBA(image.Rect(0, 0, 200, 100))
	for i := range before.Pix {
		before.Pix[i] = 0xff
	}
	after := image.NewRGBA(before.Bounds())
	copy(after.Pix, before.Pix)
	typed := image.Rect(40, 30, 90, 42)
	for y := typed.Min.Y; y < typed.Max.Y; y++ {
		for x := typed.Min.X; x < typed.Max.X; x++ {
			after.Set(x, y, color.RGBA{R: 0x40, G: 0x40, B: 0x40, A: 0xff})
		}
	}
	s := &runState{}
	s.env.onScreen.typedBefore, s.env.onScreen.typedRef = before, "pin"
	if shown := s.env.maskSecrets(context.Background(), after); shown != nil {
		t.Errorf("maskSecrets read %v with no value watched", shown)
	}
	masked := typed.Inset(-maskMargin)
	for y := 0; y < 100; y++ {
		for x := 0; x < 200; x++ {
			c := after.RGBAAt(x, y)
			black := c.R == 0 && c.G == 0 && c.B == 0
			if in := image.Pt(x, y).In(masked); in != black {
				t.Fatalf("pixel (%d, %d) black=%v, want %v: the mask covers %v", x, y, black, in, masked)
			}
		}
	}
	// The place stays masked on the next screen.
	next := image.NewRGBA(before.Bounds())
	copy(next.Pix, before.Pix)
	s.env.maskSecrets(context.Background(), next)
	if c := next.RGBAAt(50, 35); c.R != 0 {
		t.Errorf("the next screen is not masked where the secret was typed: %v", c)
	}
}

// TestMaskTypedChangeEdges: what typing changed is found up to the
// screen's first and last columns, and a change that starts at the first
// column is not taken to start at its next changed pixel.
func TestMaskTypedChangeEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		changed []image.Point
		want    image.Rectangle
	}{
		{"nothing", nil, image.Rectangle{}},
		{"the last column", []image.Point{{199, 10}}, image.Rect(199, 10, 200, 11)},
		{"the first two columns", []image.Point{{0, 10}, {1, 10}}, image.Rect(0, 10, 2, 11)},
		{"two rows apart", []image.Point{{5, 3}, {9, 7}}, image.Rect(5, 3, 10, 8)},
	}
	for _, tt := range tests {
		before := image.NewRGBA(image.Rect(0, 0, 200, 20))
		after := image.NewRGBA(before.Bounds())
		for _, p := range tt.changed {
			after.Set(p.X, p.Y, color.RGBA{R: 0xff, A: 0xff})
		}
		if got := changedBox(before, after); got != tt.want {
			t.Errorf("%s: changedBox = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// maskDrawText writes text in black on img, in Go Mono at 16 px with its
// baseline starting at dot: a screen font OCR reads well.
func maskDrawText(t *testing.T, img draw.Image, dot image.Point, text string) {
	t.Helper()
	f, err := opentype.Parse(gomono.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: 16, DPI: 72})
	if err != nil {
		t.Fatal(err)
	}
	(&font.Drawer{Dst: img, Src: image.Black, Face: face, Dot: fixed.P(dot.X, dot.Y)}).DrawString(text)
}

// TestSecretWordsOnScreen: a value the application was given is looked
// for with OCR on every kept screen; where it is read it is reported and
// blacked out, while the text beside it stays.
func TestSecretWordsOnScreen(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	screen := func(text string) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 320, 40))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		maskDrawText(t, img, image.Pt(10, 26), text)
		return img
	}
	img := screen("password: " + maskSecret)
	s := &runState{}
	s.env.onScreen.watched = map[string]string{"password": maskSecret}
	if shown := s.env.maskSecrets(context.Background(), img); len(shown) != 1 || shown[0] != "password" {
		t.Errorf("maskSecrets read %v, want the password", shown)
	}
	// The next screen is another one: it is read again, not taken for
	// the last one read.
	if shown := s.env.maskSecrets(context.Background(), screen("password: ********")); len(shown) != 0 {
		t.Errorf("maskSecrets read %v on a screen without the secret", shown)
	}
	words, err := ocr.NewReader(1).Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if text := ocr.Text(words); maskTrace(text, maskSecret) || !strings.Contains(text, "password") {
		t.Errorf("the masked screen reads %q: want the label and no trace of the secret", text)
	}
}

// TestSecretWordsAfterALongPrefix: a passphrase at the end of a long URL
// on one line is read by OCR as a long first word and the words after it;
// it is found and blacked out all the same, the text before the URL's
// query left readable.
func TestSecretWordsAfterALongPrefix(t *testing.T) {
	t.Parallel()
	scriptNeed(t, ocr.Command)
	img := image.NewRGBA(image.Rect(0, 0, 900, 40))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	maskDrawText(t, img, image.Pt(10, 26), "Open https://example.test/login?passphrase="+maskPassphrase)
	s := &runState{}
	s.env.onScreen.watched = map[string]string{"passphrase": maskPassphrase}
	if shown := s.env.maskSecrets(context.Background(), img); len(shown) != 1 || shown[0] != "passphrase" {
		t.Errorf("maskSecrets read %v, want the passphrase", shown)
	}
	words, err := ocr.NewReader(1).Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	text := ocr.Text(words)
	for _, w := range strings.Fields(maskPassphrase) {
		if strings.Contains(strings.ToLower(text), w) {
			t.Errorf("the masked screen reads %q: %q of the passphrase is left", text, w)
		}
	}
	// Read alone, as tesseract misses words beside a large black area.
	before, err := ocr.NewReader(1).Read(context.Background(), img.SubImage(image.Rect(0, 0, 70, 40)))
	if err != nil {
		t.Fatal(err)
	}
	if text := ocr.Text(before); !strings.Contains(text, "Open") {
		t.Errorf("the masked screen's start reads %q: want the word before the URL", text)
	}
}

// TestSecretWordsUnread: where OCR cannot read (here it is stopped before
// it starts), each of the application's windows is blacked out whole,
// since a watched secret might show there; the other clients' windows and
// the root are left as they are. Without a known window the whole screen
// is blacked out.
func TestSecretWordsUnread(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := image.Rect(450, 20, 550, 120)
	dialog := image.Rect(100, 300, 200, 380)
	f := &fakeMachine{others: []desktop.Window{
		{ID: 0x500001, Class: "Other", Instance: "other", X: other.Min.X, Y: other.Min.Y, Width: other.Dx(), Height: other.Dy(), Viewable: true},
		{ID: 0x400002, Class: "Fake", Instance: "fake", X: dialog.Min.X, Y: dialog.Min.Y, Width: dialog.Dx(), Height: dialog.Dy(), Viewable: true},
	}}
	if _, err := f.StartDisplayServer(context.Background(), desktop.DisplayOptions{}); err != nil {
		t.Fatal(err)
	}
	white := func() *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 640, 400))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		return img
	}
	state := func(desk stage.Desktop) *runState {
		bus := events.NewBus(func(s string) string { return s })
		s := &runState{bus: bus, env: environment{bus: bus}}
		s.env.desk = desk
		s.env.onScreen.watched = map[string]string{"password": maskSecret}
		if desk != nil {
			s.env.win, _ = f.window()
			s.env.hasWin = true
		}
		return s
	}
	t.Run("the application's windows", func(t *testing.T) {
		t.Parallel()
		img := white()
		state(f).env.maskSecrets(ctx, img)
		for _, c := range []struct {
			at    image.Point
			black bool
		}{
			{fakeWindowBox().Min, true}, {fakeWindowBox().Max.Sub(image.Pt(1, 1)), true},
			{dialog.Min, true}, {dialog.Max.Sub(image.Pt(1, 1)), true},
			{other.Min.Add(image.Pt(10, 10)), false}, {image.Pt(5, 5), false}, {image.Pt(630, 390), false},
		} {
			if got := img.RGBAAt(c.at.X, c.at.Y).R == 0; got != c.black {
				t.Errorf("pixel %v black = %v, want %v", c.at, got, c.black)
			}
		}
	})
	t.Run("no window known", func(t *testing.T) {
		t.Parallel()
		img := white()
		state(nil).env.maskSecrets(ctx, img)
		for _, p := range []image.Point{{0, 0}, {639, 399}, {500, 50}} {
			if img.RGBAAt(p.X, p.Y).R != 0 {
				t.Errorf("pixel %v is not blacked out", p)
			}
		}
	})
}

// maskPassphrase is a secret of several words.
const maskPassphrase = "correct horse battery staple"

// secretWords finds a value in what OCR read: in one word, across words,
// with the misreadings allowed on a long value, and not in other words.
func TestSecretWords(t *testing.T) {
	t.Parallel()
	w := func(text string, x, line int) ocr.Word {
		return ocr.Word{Text: text, Box: image.Rect(x, line*20, x+len(text)*8, line*20+16), Line: line}
	}
	tests := []struct {
		name  string
		words []ocr.Word
		value string
		boxes int
	}{
		{"in one word", []ocr.Word{w("password:", 0, 1), w("Quokka-Velvet-8342", 80, 1)}, maskSecret, 1},
		{"inside a longer word", []ocr.Word{w("pw=Quokka-Velvet-8342;", 0, 1)}, maskSecret, 1},
		{"misread twice", []ocr.Word{w("Qu0kka-VeIvet-B342", 0, 1)}, maskSecret, 1},
		{"misread too often", []ocr.Word{w("Qxxkka-Vexxet-8342", 0, 1)}, maskSecret, 0},
		{"wrapped onto the next line", []ocr.Word{w("your", 0, 1), w("Quokka-Vel", 40, 1), w("vet-8342", 0, 2)}, maskSecret, 2},
		{"glued to its label and wrapped", []ocr.Word{w("pw:Quokka-Velvet", 0, 1), w("-8342", 0, 2)}, maskSecret, 2},
		{"after a long label and wrapped", []ocr.Word{w("secret:Quokka-Velvet", 0, 1), w("-8342", 0, 2)}, maskSecret, 2},
		{"cut short by as many as may be misread", []ocr.Word{w("Quokka-Velvet-8", 0, 1)}, maskSecret, 1},
		{"with spaces", []ocr.Word{w("say", 0, 1), w("open", 40, 1), w("sesame", 80, 1), w("now", 140, 1)}, "open sesame", 2},
		{"with spaces after a long word", []ocr.Word{w("https://example.test/login?passphrase=correct", 0, 1), w("horse", 380, 1), w("battery", 430, 1), w("staple", 500, 1)}, maskPassphrase, 4},
		{"with spaces after long words", []ocr.Word{w("https://example.test/a/very/long/path/login", 0, 1), w("passphrase:correct", 380, 1), w("horse", 530, 1), w("battery", 580, 1), w("staple", 650, 1), w("here", 710, 1)}, maskPassphrase, 4},
		{"a short value exactly", []ocr.Word{w("PIN", 0, 1), w("4711.", 40, 1)}, "4711", 1},
		{"a short value misread", []ocr.Word{w("PIN", 0, 1), w("4712", 40, 1)}, "4711", 0},
		{"a short value inside a longer word", []ocr.Word{w("screen", 0, 1), w("1280x800", 60, 1)}, "1280", 0},
		{"three characters, the shortest looked for", []ocr.Word{w("PIN", 0, 1), w("471", 40, 1)}, "471", 1},
		{"eight characters misread once", []ocr.Word{w("Wombal77", 0, 1)}, "Wombat77", 1},
		{"a short value's start at the end", []ocr.Word{w("PIN", 0, 1), w("47", 40, 1)}, "4711", 0},
		{"one letter", []ocr.Word{w("a", 0, 1), w("cat", 20, 1)}, "a", 0},
		{"absent", []ocr.Word{w("nothing", 0, 1), w("here", 80, 1)}, maskSecret, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := secretWords(tt.words, tt.value); len(got) != tt.boxes {
				t.Errorf("secretWords = %v, want %d boxes", got, tt.boxes)
			}
		})
	}
}

// TestSecretWordsApprox: the approximate match allows up to k edits,
// exactly k included, anywhere in the text; a pattern no longer than k
// matches anything.
func TestSecretWordsApprox(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text, pattern string
		k             int
		want          bool
	}{
		{"", "ab", 2, true},
		{"x", "abc", 2, false},
		{"xxabcdefghijxx", "abcdefghij", 0, true},
		{"abXdefghij", "abcdefghij", 1, true},
		{"abXdeYghij", "abcdefghij", 1, false},
		{"abXdeYghij", "abcdefghij", 2, true},
	} {
		if got := approxContains([]rune(c.text), []rune(c.pattern), c.k); got != c.want {
			t.Errorf("approxContains(%q, %q, %d) = %v, want %v", c.text, c.pattern, c.k, got, c.want)
		}
	}
}

// BenchmarkMaskSecrets measures what masking adds to each kept screen of
// 1280x800: nothing to mask (no secret given to the app), and one field to
// black out.
func BenchmarkMaskSecrets(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	b.Run("nothing to mask", func(b *testing.B) {
		s := &runState{}
		for b.Loop() {
			s.env.maskSecrets(context.Background(), img)
		}
	})
	b.Run("one field", func(b *testing.B) {
		s := &runState{}
		s.env.onScreen.fields = []secretField{{ref: "password", box: image.Rect(300, 200, 700, 240)}}
		for b.Loop() {
			s.env.maskSecrets(context.Background(), img)
		}
	})
}

// A secret typed into a GTK entry is masked by the entry's extents over
// AT-SPI, the whole field, and not only where the typing changed pixels.
func TestSecretMaskedInGTKEntry(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "Xvfb", "zenity", "dbus-daemon", "tesseract")
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: zenity entry
app:
  command: [zenity, --entry, --title=Code, "--text=Enter the code", --width=600]
  env: {GSETTINGS_BACKEND: memory}
  window: {pid: true, title: Code}
  startup_timeout_s: 15
provides:
  code: {secret: {env: ENTRY_CODE}}
steps:
  - type_text: code
  - observe_screen: {}
`,
		env: map[string]string{"ENTRY_CODE": maskSecret},
	})
	if o.res.Verdict != events.VerdictPass && o.res.Verdict != events.VerdictPassConcerns {
		t.Fatalf("verdict %s/%s; reasons %q; steps %+v", o.res.Verdict, o.res.Outcome, o.res.Reasons, o.rep.Steps)
	}
	reader := newMaskReader()
	screens := maskScreens(t, o.info.reportDir)
	for _, st := range o.rep.Steps {
		img := screens[filepath.Base(st.Screen)]
		if read := maskRead(t, reader, img); maskTrace(read, maskSecret) {
			t.Errorf("%s shows the secret: %q", st.Screen, read)
		}
		// The entry spans most of the 600-pixel dialog; the typed text
		// a quarter of it.
		if run := maskLongestBlackRun(img); run < 450 {
			t.Errorf("step %d's screen %s: the longest black row is %d pixels, want the entry masked", st.N, st.Screen, run)
		}
	}
}

// TestWatchGivenCredentials: a credential of the operator file that the
// scenario passes on to the application itself is looked for on the
// screen like a secret it was given; one it does not pass on is not.
func TestWatchGivenCredentials(t *testing.T) {
	t.Parallel()
	const token = "hook-Tok3n-77aa"
	lookup := func(k string) (string, bool) { return token, k == "HOOK" }
	op, ps := scenarios.ParseOperator("op.yaml", []byte("inbox:\n  session_token: s3cret-console-token\n  notify:\n    webhook:\n      url: https://hooks.example/x\n      headers: {Authorization: 'Bearer ${HOOK}'}\n"), lookup)
	if ps != nil {
		t.Fatal(ps)
	}
	for _, c := range []struct {
		name, app string
		watched   bool
	}{
		{"passed on", "app:\n  command: [fake-app]\n  env: {TOKEN: '${HOOK}'}\n", true},
		{"not passed on", "app:\n  command: [fake-app]\n", false},
	} {
		sc, ps := scenarios.ParseScenario("s.yaml", []byte("name: watch\ngoal: Look.\n"+c.app), lookup)
		if ps != nil {
			t.Fatal(ps)
		}
		s := &runState{env: environment{files: &scenarios.Files{Scenario: sc, Operator: op}}}
		s.env.watchGivenSecrets()
		var values []string
		for _, v := range s.env.onScreen.watched {
			values = append(values, v)
		}
		if got := slices.Contains(values, token); got != c.watched {
			t.Errorf("%s: OCR watches %q, want the token watched %v", c.name, values, c.watched)
		}
	}
}

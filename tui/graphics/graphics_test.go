package graphics

import (
	"bytes"
	"encoding/base64"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi/kitty"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func loadFrame(tb testing.TB, name string) *image.RGBA {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatalf("open frame: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatalf("decode frame %s: %v", name, err)
	}
	return toRGBA(img)
}

// gradient is a small synthetic image with hard edges and smooth ramps.
func gradient(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x * 255 / max(1, w-1)), uint8(y * 255 / max(1, h-1)), 128, 255}
			if x < w/4 && y < h/4 {
				c = color.RGBA{255, 255, 255, 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Mode
		err  bool
	}{
		{"auto", Auto, false}, {"", Auto, false}, {"kitty", Kitty, false}, {"SIXEL", Sixel, false},
		{"blocks", Blocks, false}, {"none", None, false}, {"iterm", Auto, true},
	} {
		got, err := ParseMode(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
		if err == nil && tc.in != "" && !strings.EqualFold(got.String(), tc.in) {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	sixelDA1 := Reply{DA1: []int{62, 4, 22}}
	plainDA1 := Reply{DA1: []int{62, 22}}
	kittyOK := Reply{Kitty: true, KittyOK: true}
	kittyErr := Reply{Kitty: true}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		replies []Reply
		want    Mode
		probe   bool
	}{
		{"no TERM", map[string]string{}, nil, None, false},
		{"dumb", map[string]string{"TERM": "dumb"}, []Reply{sixelDA1}, None, false},
		{"linux console", map[string]string{"TERM": "linux"}, nil, Blocks, false},
		{"unknown xterm, no reply", map[string]string{"TERM": "xterm-256color"}, nil, Blocks, true},
		{"xterm DA1 sixel", map[string]string{"TERM": "xterm-256color"}, []Reply{sixelDA1}, Sixel, true},
		{"xterm DA1 without sixel", map[string]string{"TERM": "xterm-256color"}, []Reply{plainDA1}, Blocks, true},
		{"kitty reply wins over sixel", map[string]string{"TERM": "xterm-256color"}, []Reply{sixelDA1, kittyOK}, Kitty, true},
		{"kitty error reply", map[string]string{"TERM": "xterm-256color"}, []Reply{kittyErr, plainDA1}, Blocks, true},
		{"kitty by env", map[string]string{"TERM": "xterm-kitty", "KITTY_WINDOW_ID": "1"}, nil, Kitty, true},
		{"ghostty by env", map[string]string{"TERM": "xterm-ghostty", "TERM_PROGRAM": "ghostty"}, nil, Kitty, true},
		{"wezterm by env", map[string]string{"TERM": "xterm-256color", "WEZTERM_EXECUTABLE": "/usr/bin/wezterm"}, nil, Sixel, true},
		{"foot", map[string]string{"TERM": "foot"}, nil, Sixel, true},
		{"apple terminal", map[string]string{"TERM": "xterm-256color", "TERM_PROGRAM": "Apple_Terminal"}, nil, Blocks, false},
		{"tmux ignores leaked kitty env", map[string]string{"TERM": "tmux-256color", "TMUX": "/tmp/tmux-0/default,1,0", "KITTY_WINDOW_ID": "3"}, nil, Blocks, true},
		{"tmux with sixel reply", map[string]string{"TERM": "tmux-256color", "TMUX": "/tmp/t,1,0"}, []Reply{sixelDA1}, Sixel, true},
		{"NO_COLOR drops blocks", map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, nil, None, true},
		{"NO_COLOR keeps kitty", map[string]string{"TERM": "xterm-kitty", "NO_COLOR": "1"}, nil, Kitty, true},
		{"unknown terminal", map[string]string{"TERM": "vt100"}, nil, Blocks, false},
	} {
		env := func(k string) string { return tc.env[k] }
		if got := Detect(env, tc.replies...); got != tc.want {
			t.Errorf("%s: Detect = %v, want %v", tc.name, got, tc.want)
		}
		if got := ShouldProbe(env); got != tc.probe {
			t.Errorf("%s: ShouldProbe = %v, want %v", tc.name, got, tc.probe)
		}
	}
}

func TestParseReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Reply
		ok   bool
	}{
		{"\x1b[?62;4;22c", Reply{DA1: []int{62, 4, 22}}, true},
		{"\x1b[?1;2c", Reply{DA1: []int{1, 2}}, true},
		{"\x1b[?1;xc", Reply{}, false},
		{"\x1b_Gi=31;OK\x1b\\", Reply{Kitty: true, KittyOK: true}, true},
		{"\x1b_Gi=31;ENOTSUPPORTED:no\x1b\\", Reply{Kitty: true}, true},
		{"\x1b_Gi=7;OK\x1b\\", Reply{}, false},
		{"\x1b[>1;2c", Reply{}, false},
		{"garbage", Reply{}, false},
	} {
		got, ok := ParseReply([]byte(tc.in))
		if ok != tc.ok || !equalReply(got, tc.want) {
			t.Errorf("ParseReply(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func equalReply(a, b Reply) bool {
	return a.Kitty == b.Kitty && a.KittyOK == b.KittyOK && slices.Equal(a.DA1, b.DA1)
}

func TestFit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		w, h, cols, rows, cw, ch int
		wantW, wantH             int
	}{
		{1280, 800, 100, 30, 10, 20, 960, 600},
		{1280, 800, 100, 30, 0, 0, 960, 600},
		{640, 400, 100, 30, 10, 20, 640, 400}, // fits already: not upscaled
		{1280, 800, 40, 50, 10, 20, 400, 250},
		{1280, 800, 100, 30, 1, 2, 96, 60},
	} {
		got := Fit(image.NewRGBA(image.Rect(0, 0, tc.w, tc.h)), tc.cols, tc.rows, tc.cw, tc.ch)
		if got.Rect.Dx() != tc.wantW || got.Rect.Dy() != tc.wantH {
			t.Errorf("Fit(%dx%d into %dx%d cells of %dx%d) = %v, want %dx%d", tc.w, tc.h, tc.cols, tc.rows, tc.cw, tc.ch, got.Rect, tc.wantW, tc.wantH)
		}
	}
	// Averaging keeps the colour of a uniform area exactly.
	src := image.NewRGBA(image.Rect(0, 0, 300, 200))
	for i := range src.Pix {
		src.Pix[i] = []uint8{10, 200, 30, 255}[i%4]
	}
	if c := Fit(src, 7, 3, 10, 20).RGBAAt(13, 17); c != (color.RGBA{10, 200, 30, 255}) {
		t.Errorf("uniform area scaled to %v", c)
	}
}

func TestSixelRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		img     *image.RGBA
		palette SixelPalette
		maxErr  float64
	}{
		{"gradient adaptive", gradient(97, 61), PaletteAdaptiveOnce, 12},
		{"gradient uniform", gradient(97, 61), PaletteUniform, 16},
		{"screen adaptive", Fit(loadFrame(t, "frame-1280x800.png"), 100, 30, 10, 20), PaletteAdaptiveOnce, 3},
		{"screen uniform", Fit(loadFrame(t, "frame-640x400.png"), 100, 30, 10, 20), PaletteUniform, 12},
		{"one pixel", gradient(1, 1), PaletteAdaptiveOnce, 1},
		{"seven rows", gradient(5, 7), PaletteAdaptiveOnce, 12},
	} {
		enc := NewSixelEncoder(tc.palette)
		out := enc.Encode(tc.img)
		if !strings.HasPrefix(out, "\x1bPq\"1;1;") || !strings.HasSuffix(out, "\x1b\\") {
			t.Errorf("%s: not framed as DCS q ... ST: %q...", tc.name, out[:min(20, len(out))])
		}
		got, err := decodeSixel([]byte(out))
		if err != nil {
			t.Fatalf("%s: decode: %v", tc.name, err)
		}
		if got.Rect != tc.img.Rect {
			t.Fatalf("%s: decoded %v, want %v", tc.name, got.Rect, tc.img.Rect)
		}
		if e := meanError(got, tc.img); e > tc.maxErr {
			t.Errorf("%s: mean error %.2f > %.2f", tc.name, e, tc.maxErr)
		}
		// A second frame reuses the palette and gives the same bytes.
		if again := enc.Encode(tc.img); again != out {
			t.Errorf("%s: second encode differs", tc.name)
		}
	}
}

// TestSixelAgainstLibsixel decodes img2sixel's output and ours for the same
// screen and checks both decode to the frame and ours is no worse than
// libsixel's by more than a little (we do not dither; it does).
func TestSixelAgainstLibsixel(t *testing.T) {
	t.Parallel()
	testkit.SkipIntegration(t)
	bin, err := exec.LookPath("img2sixel")
	if err != nil {
		t.Skip("img2sixel (libsixel-bin) is not installed")
	}
	for _, name := range []string{"frame-1280x800.png", "frame-640x400.png"} {
		frame := Fit(loadFrame(t, name), 100, 30, 10, 20)
		path := filepath.Join(t.TempDir(), "fitted.png")
		var b bytes.Buffer
		if err := png.Encode(&b, frame); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		ref, err := exec.Command(bin, path).Output()
		if err != nil {
			t.Fatalf("img2sixel: %v", err)
		}
		theirs, err := decodeSixel(ref)
		if err != nil {
			t.Fatalf("%s: decode libsixel output: %v", name, err)
		}
		ours, err := decodeSixel([]byte(NewSixelEncoder(PaletteAdaptiveOnce).Encode(frame)))
		if err != nil {
			t.Fatalf("%s: decode our output: %v", name, err)
		}
		if theirs.Rect != frame.Rect || ours.Rect != frame.Rect {
			t.Fatalf("%s: sizes libsixel %v, ours %v, frame %v", name, theirs.Rect, ours.Rect, frame.Rect)
		}
		libErr, ourErr := meanError(theirs, frame), meanError(ours, frame)
		t.Logf("%s: mean error libsixel %.2f, ours %.2f; bytes libsixel %d, ours %d", name, libErr, ourErr, len(ref), len(NewSixelEncoder(PaletteAdaptiveOnce).Encode(frame)))
		if ourErr > libErr+2 {
			t.Errorf("%s: our mean error %.2f is worse than libsixel's %.2f", name, ourErr, libErr)
		}
		if d := meanError(ours, theirs); d > 8 {
			t.Errorf("%s: decoded images differ by %.2f on average", name, d)
		}
	}
}

func TestSixelConcurrent(t *testing.T) {
	t.Parallel()
	enc := NewSixelEncoder(PaletteAdaptiveOnce)
	img := gradient(64, 40)
	want := enc.Encode(img)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := enc.Encode(img); got != want {
				t.Error("concurrent encode gave different output")
			}
		})
	}
	wg.Wait()
}

func TestKittyTransmitChunks(t *testing.T) {
	t.Parallel()
	data, err := EncodePNG(Fit(loadFrame(t, "frame-640x400.png"), 40, 12, 10, 20))
	if err != nil {
		t.Fatal(err)
	}
	seq := KittyTransmit(42, data, 40, 12)
	chunk := regexp.MustCompile("\x1b_G([^;]*);([^\x1b]*)\x1b\\\\")
	parts := chunk.FindAllStringSubmatch(seq, -1)
	if len(parts) < 2 {
		t.Fatalf("want several chunks for %d bytes of PNG, got %d", len(data), len(parts))
	}
	if strings.Join(chunk.FindAllString(seq, -1), "") != seq {
		t.Fatal("transmit contains bytes outside the graphics escapes")
	}
	var payload strings.Builder
	for i, p := range parts {
		keys, body := p[1], p[2]
		if len(body) > KittyChunkSize {
			t.Errorf("chunk %d carries %d bytes, over %d", i, len(body), KittyChunkSize)
		}
		if i < len(parts)-1 && len(body) != KittyChunkSize {
			t.Errorf("chunk %d carries %d bytes; only the last may be short", i, len(body))
		}
		last := i == len(parts)-1
		if want := map[bool]string{true: "m=0", false: "m=1"}[last]; !strings.Contains(keys, want) {
			t.Errorf("chunk %d keys %q lack %s", i, keys, want)
		}
		if i == 0 {
			for _, k := range []string{"a=T", "U=1", "f=100", "q=2", "i=42", "c=40", "r=12"} {
				if !strings.Contains(keys+",", k+",") {
					t.Errorf("first chunk keys %q lack %s", keys, k)
				}
			}
		}
		payload.WriteString(body)
	}
	raw, err := base64.StdEncoding.DecodeString(payload.String())
	if err != nil || !bytes.Equal(raw, data) {
		t.Fatalf("chunks do not reassemble into the PNG (err %v)", err)
	}
	if got := KittyDelete(42); got != "\x1b_Ga=d,d=I,q=2,i=42\x1b\\" {
		t.Errorf("KittyDelete = %q", got)
	}
}

func TestKittyPlaceholders(t *testing.T) {
	t.Parallel()
	const id = 0x0a0b0c
	out := KittyPlaceholders(id, 3, 2)
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want 2", len(lines))
	}
	for r, line := range lines {
		if !strings.HasPrefix(line, "\x1b[38;2;10;11;12m") || !strings.HasSuffix(line, "\x1b[39m") {
			t.Errorf("line %d does not carry the id as foreground: %q", r, line)
		}
		cells := []rune(strings.TrimSuffix(strings.TrimPrefix(line, "\x1b[38;2;10;11;12m"), "\x1b[39m"))
		if len(cells) != 9 {
			t.Fatalf("line %d has %d runes, want 3 cells of 3", r, len(cells))
		}
		for c := range 3 {
			if cells[3*c] != kitty.Placeholder || cells[3*c+1] != kitty.Diacritic(r) || cells[3*c+2] != kitty.Diacritic(c) {
				t.Errorf("cell (%d,%d) = %U", r, c, cells[3*c:3*c+3])
			}
		}
	}
}

func TestPositioned(t *testing.T) {
	t.Parallel()
	if got := Positioned(3, 41, "IMG"); got != "\x1b7\x1b[3;41HIMG\x1b8" {
		t.Errorf("Positioned = %q", got)
	}
	if got := TmuxPassthrough("\x1b_Ga=d\x1b\\"); got != "\x1bPtmux;\x1b\x1b_Ga=d\x1b\x1b\\\x1b\\" {
		t.Errorf("TmuxPassthrough = %q", got)
	}
}

func TestRenderBlocksGolden(t *testing.T) {
	t.Parallel()
	img := gradient(24, 16)
	for _, tc := range []struct {
		name    string
		profile colorprofile.Profile
	}{
		{"truecolor", colorprofile.TrueColor},
		{"ansi256", colorprofile.ANSI256},
		{"ansi", colorprofile.ANSI},
		{"notty", colorprofile.NoTTY},
	} {
		got := RenderBlocks(img, 16, 6, tc.profile)
		path := filepath.Join("testdata", "blocks-"+tc.name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: read golden (run with -update to create): %v", tc.name, err)
		}
		if got != string(want) {
			t.Errorf("%s: output differs from %s:\n got %q\nwant %q", tc.name, path, got, want)
		}
		lines := strings.Split(got, "\n")
		if len(lines) != 6 {
			t.Errorf("%s: %d lines, want 6", tc.name, len(lines))
		}
		for i, l := range lines {
			if w := ansiWidth(l); w != 16 {
				t.Errorf("%s: line %d is %d cells wide, want 16", tc.name, i, w)
			}
		}
	}
}

var sgrPattern = regexp.MustCompile("\x1b\\[[0-9;]*m")

func ansiWidth(s string) int { return len([]rune(sgrPattern.ReplaceAllString(s, ""))) }

func TestReplyFromMsg(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		msg  any
		want Reply
		ok   bool
	}{
		{"DA1 event", uv.PrimaryDeviceAttributesEvent{62, 4}, Reply{DA1: []int{62, 4}}, true},
		{"kitty OK", uv.KittyGraphicsEvent{Options: kitty.Options{ID: 31}, Payload: []byte("OK")}, Reply{Kitty: true, KittyOK: true}, true},
		{"kitty error", uv.KittyGraphicsEvent{Options: kitty.Options{ID: 31}, Payload: []byte("EINVAL")}, Reply{Kitty: true}, true},
		{"other image id", uv.KittyGraphicsEvent{Options: kitty.Options{ID: 5}, Payload: []byte("OK")}, Reply{}, false},
		{"unrelated", "key press", Reply{}, false},
	} {
		got, ok := ReplyFromMsg(tc.msg)
		if ok != tc.ok || !equalReply(got, tc.want) {
			t.Errorf("%s: ReplyFromMsg = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

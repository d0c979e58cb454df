package vision

import (
	"context"
	"image"
	"image/png"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

func loadScreen(tb testing.TB) *image.RGBA {
	tb.Helper()
	f, err := os.Open("testdata/screen-1280x800.png")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Bounds(), img, image.Point{}, draw.Src)
	return rgba
}

// meanAbsDiff is the mean absolute difference per colour channel, and the
// largest.
func meanAbsDiff(a, b *image.RGBA) (mean float64, most int) {
	var sum int
	for i := range a.Pix {
		if i%4 == 3 {
			continue
		}
		d := int(a.Pix[i]) - int(b.Pix[i])
		if d < 0 {
			d = -d
		}
		sum += d
		most = max(most, d)
	}
	return float64(sum) / float64(len(a.Pix)/4*3), most
}

// TestResampleMatchesCatmullRom compares the tabulated resampler with
// x/image/draw's Catmull-Rom on a real screen, for every profile's size
// and a few others: the two must agree to within rounding.
func TestResampleMatchesCatmullRom(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t)
	sizes := [][2]int{{960, 600}, {640, 400}, {1280, 800}, {1300, 820}}
	for _, name := range model.ProfileNames() {
		p, _ := model.LookupProfile(name)
		w, h := p.Image.Fit(1280, 800)
		sizes = append(sizes, [2]int{w, h})
	}
	for _, s := range sizes {
		want := resize(screen, s[0], s[1], draw.CatmullRom).(*image.RGBA)
		got := resampleRGBA(screen, s[0], s[1])
		mean, most := meanAbsDiff(got, want)
		t.Logf("%dx%d: %.3f on average, %d at most", s[0], s[1], mean, most)
		if mean > 0.5 || most > 48 {
			t.Errorf("%dx%d: differs from Catmull-Rom by %.3f on average, %d at most", s[0], s[1], mean, most)
		}
	}
}

// words are the words of three letters or more tesseract reads, in order.
func words(t *testing.T, img image.Image) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ws, err := ocr.NewReader(1).Read(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, w := range ws {
		if len([]rune(w.Text)) >= 3 && strings.IndexFunc(w.Text, unicode.IsLetter) >= 0 {
			out = append(out, w.Text)
		}
	}
	return out
}

// TestDownscaleStaysLegible reads a real xterm full of text, scaled to
// the gpt and qwen2.5-vl profiles' sizes by the tabulated resampler and by
// x/image/draw's Catmull-Rom: tesseract must read the same words from
// both.
func TestDownscaleStaysLegible(t *testing.T) {
	t.Parallel()
	testkit.Need(t, "Xvfb", "xterm", ocr.Command)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := x11.Dial(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := proc.Start(ctx, proc.Spec{
		Argv: []string{"xterm", "-class", "KasmText", "-fa", "DejaVu Sans Mono", "-fs", "11", "-geometry", "100x30+0+0", "-e", "sh", "-c",
			"head -28 /usr/share/common-licenses/GPL-3; exec sleep 100"},
		Env: []string{"DISPLAY=" + s.Display()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	if _, err := c.FindWindow(ctx, x11.WindowMatch{Class: "KasmText"}); err != nil {
		t.Fatal(err)
	}
	screen, settled, err := c.WaitSettled(ctx, x11.SettleOptions{Quiet: 300 * time.Millisecond, Cap: 5 * time.Second})
	if err != nil || !settled {
		t.Fatalf("settle: %v %v", settled, err)
	}
	// Every profile that sends a 1280x800 screen smaller, through the
	// run's Downscaler as the loop uses it.
	for _, name := range []string{"gpt", "qwen2.5-vl-7b-instruct"} {
		p, _ := model.LookupProfile(name)
		small, scale := NewDownscaler(p).Downscale(screen)
		if scale.Sent == scale.Screen {
			t.Fatalf("%s does not downscale %v", name, scale.Screen)
		}
		reference := resize(screen, scale.Sent.X, scale.Sent.Y, draw.CatmullRom)
		got, want := words(t, small), words(t, reference)
		if len(want) < 40 {
			t.Fatalf("%s: tesseract read only %d words from the reference: %q", name, len(want), want)
		}
		missing := 0
		for _, w := range want {
			if !slices.Contains(got, w) {
				missing++
			}
		}
		// OCR is not bit-exact across images that differ by rounding; a
		// word or two in a hundred may be read differently.
		if missing > len(want)/50 {
			t.Errorf("%s: of %d words read from Catmull-Rom's output, %d are not read from ours:\nwant %q\ngot  %q", name, len(want), missing, want, got)
		}
		t.Logf("%s (%dx%d): %d words from Catmull-Rom's output, %d from ours, %d missing", name, scale.Sent.X, scale.Sent.Y, len(want), len(got), missing)
	}
}

// BenchmarkDownscale compares, on a real 1280x800 screen scaled to the gpt
// profile's 1229x768, the tabulated resampler, x/image/draw's Catmull-Rom
// and ApproxBiLinear, and the console's box filter's kind of cost at
// 960x600 (its own benchmark is in tui/graphics).
func BenchmarkDownscale(b *testing.B) {
	screen := loadScreen(b)
	gpt, _ := model.LookupProfile("gpt")
	w, h := gpt.Image.Fit(1280, 800)
	for _, c := range []struct {
		name string
		fn   func() image.Image
	}{
		{"tabulated-CatmullRom", func() image.Image { return resampleRGBA(screen, w, h) }},
		{"Downscale", func() image.Image { img, _ := Downscale(screen, gpt); return img }},
		{"x-image-draw-CatmullRom", func() image.Image { return resize(screen, w, h, draw.CatmullRom) }},
		{"x-image-draw-ApproxBiLinear", func() image.Image { return resize(screen, w, h, draw.ApproxBiLinear) }},
		{"tabulated-CatmullRom-960x600", func() image.Image { return resampleRGBA(screen, 960, 600) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.fn()
			}
		})
	}
	b.Run("Downscaler-a-letter-typed", func(b *testing.B) {
		// Each screen differs from the one before in a few rows, as
		// after a key press in a terminal.
		d := NewDownscaler(gpt)
		screens := [2]*image.RGBA{screen, image.NewRGBA(screen.Rect)}
		copy(screens[1].Pix, screen.Pix)
		screens[1].Pix[screens[1].PixOffset(600, 300)] ^= 0xff
		i := 0
		for b.Loop() {
			d.Downscale(screens[i%2])
			i++
		}
	})
}

// TestDownscalerRedoesChangedRows scales a run of screens that change a
// little from one to the next: every result is exactly a fresh
// Downscale's, and only the rows that read a changed source row are
// computed again.
func TestDownscalerRedoesChangedRows(t *testing.T) {
	t.Parallel()
	screen := loadScreen(t)
	gpt, _ := model.LookupProfile("gpt")
	w, h := gpt.Image.Fit(1280, 800)
	changed := func(prev *image.RGBA, rows ...int) *image.RGBA {
		next := image.NewRGBA(prev.Rect)
		copy(next.Pix, prev.Pix)
		for _, y := range rows {
			next.Pix[next.PixOffset(640, y)] ^= 0xff
		}
		return next
	}
	steps := []struct {
		name string
		next func(prev *image.RGBA) *image.RGBA
		// most is the most rows that may be computed.
		most int
	}{
		{"the first screen", func(*image.RGBA) *image.RGBA { return screen }, h},
		{"the same screen again", func(p *image.RGBA) *image.RGBA { return changed(p) }, 0},
		{"a letter typed", func(p *image.RGBA) *image.RGBA { return changed(p, 300, 305, 312) }, 20},
		{"the top and the bottom rows", func(p *image.RGBA) *image.RGBA { return changed(p, 0, 799) }, 8},
		{"a translucent pixel, which x/image/draw takes", func(p *image.RGBA) *image.RGBA {
			next := changed(p)
			next.Pix[next.PixOffset(5, 500)+3] = 0x80
			next.Pix[next.PixOffset(5, 500)] = 0x10
			return next
		}, 0},
		{"opaque again", func(*image.RGBA) *image.RGBA { return screen }, h},
		{"every row", func(p *image.RGBA) *image.RGBA {
			rows := make([]int, 800)
			for i := range rows {
				rows[i] = i
			}
			return changed(p, rows...)
		}, h},
	}
	d := NewDownscaler(gpt)
	prev := screen
	for _, s := range steps {
		img := s.next(prev)
		before := d.last.computed
		got, scale := d.Downscale(img)
		if scale.Sent != image.Pt(w, h) {
			t.Fatalf("%s: sent at %v, want %dx%d", s.name, scale.Sent, w, h)
		}
		fresh, _ := Downscale(img, gpt)
		want := fresh.(*image.RGBA)
		if !slices.Equal(got.(*image.RGBA).Pix, want.Pix) {
			mean, most := meanAbsDiff(got.(*image.RGBA), want)
			t.Errorf("%s: differs from a fresh downscale by %.3f on average, %d at most", s.name, mean, most)
		}
		n := d.last.computed - before
		if n > s.most || (s.most > 0 && n == 0) {
			t.Errorf("%s: %d rows computed, want between 1 and %d", s.name, n, s.most)
		}
		prev = img
	}
}

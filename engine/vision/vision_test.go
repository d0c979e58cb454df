package vision_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/vision"
)

func client(t *testing.T, srv *modeltest.Server, p model.Profile) *model.Client {
	t.Helper()
	if p.ServedModel == "" {
		// The openai-compatible profile names no model; a run resolves one.
		p.ServedModel = "served-model"
	}
	c, err := model.New(model.Config{Endpoint: srv.URL(), Profile: p, Retry: model.NoRetry})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func lookup(t testing.TB, name string) model.Profile {
	t.Helper()
	p, err := model.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var red = color.RGBA{R: 230, G: 20, B: 20, A: 255}

// screen is a grey w×h screen with a red square of side 40 around centre.
func screen(w, h int, centre image.Point) (*image.RGBA, image.Rectangle) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{R: 200, G: 200, B: 200, A: 255}}, image.Point{}, draw.Src)
	sq := image.Rect(centre.X-20, centre.Y-20, centre.X+20, centre.Y+20)
	draw.Draw(img, sq, &image.Uniform{red}, image.Point{}, draw.Src)
	return img, sq
}

// redCentroid is the centre of the red pixels of img, in its pixels.
func redCentroid(img image.Image) (float64, float64, bool) {
	var sx, sy, n float64
	b := img.Bounds()
	if rgba, ok := img.(*image.RGBA); ok {
		for y := 0; y < b.Dy(); y++ {
			row := rgba.Pix[y*rgba.Stride:]
			for x := 0; x < b.Dx(); x++ {
				if p := row[4*x:]; p[0] > 180 && p[1] < 100 && p[2] < 100 {
					sx += float64(x) + 0.5
					sy += float64(y) + 0.5
					n++
				}
			}
		}
		return sx / n, sy / n, n > 0
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 180 && g>>8 < 100 && bl>>8 < 100 {
				sx += float64(x-b.Min.X) + 0.5
				sy += float64(y-b.Min.Y) + 0.5
				n++
			}
		}
	}
	return sx / n, sy / n, n > 0
}

// locator answers a locate request the way a perfect model of the profile's
// family would: the red square's centre in the image it was sent.
func locator(t *testing.T, c model.Coordinates) modeltest.Exchange {
	return modeltest.Func(func(req modeltest.Request) modeltest.Exchange {
		imgs, err := req.Images()
		if err != nil || len(imgs) != 1 {
			t.Errorf("locate request images: %d, %v", len(imgs), err)
			return modeltest.Text("no image")
		}
		x, y, ok := redCentroid(imgs[0])
		if !ok {
			return modeltest.Text(`{"found": false}`)
		}
		b := imgs[0].Bounds()
		if c == model.Relative1000 {
			return modeltest.Text(fmt.Sprintf(`{"point": [%d, %d]}`, int(math.Round(x/float64(b.Dx())*1000)), int(math.Round(y/float64(b.Dy())*1000))))
		}
		return modeltest.Text(fmt.Sprintf("```json\n{\"point\": [%d, %d]}\n```", int(x), int(y)))
	})
}

func TestLocateMapsBackToScreen(t *testing.T) {
	t.Parallel()
	sizes := []image.Point{{1280, 800}, {1920, 1080}, {800, 600}, {1023, 767}, {641, 1201}}
	for _, name := range []string{"qwen3-vl-8b-instruct", "qwen2.5-vl-7b-instruct", "gpt", "openai-compatible"} {
		p := lookup(t, name)
		for _, size := range sizes {
			// One point inside, one at a corner where rounding could leave the image.
			for _, centre := range []image.Point{{size.X * 7 / 10, size.Y * 3 / 10}, {size.X - 21, size.Y - 21}} {
				t.Run(fmt.Sprintf("%s/%dx%d/%d,%d", name, size.X, size.Y, centre.X, centre.Y), func(t *testing.T) {
					t.Parallel()
					img, square := screen(size.X, size.Y, centre)
					srv := modeltest.New(t, locator(t, p.Coordinates))
					pt, err := vision.Locate(context.Background(), client(t, srv, p), p, img, "the red square")
					if err != nil {
						t.Fatal(err)
					}
					if !pt.In(square) {
						t.Errorf("point %v is outside the square %v", pt, square)
					}
					// Rounding in the sent image may cost up to one sent
					// pixel, which is at most this many screen pixels.
					tol := int(math.Ceil(float64(size.X)/float64(img.Bounds().Dx())*2)) + 2
					if d := pt.Sub(centre); abs(d.X) > tol || abs(d.Y) > tol {
						t.Errorf("point %v is %v from the centre %v", pt, d, centre)
					}
					req := srv.Requests()[0]
					if _, ok := req.Body["tools"]; ok {
						t.Error("locate request offers tools")
					}
					if !strings.Contains(req.Text(), "the red square") {
						t.Errorf("prompt lacks the description:\n%s", req.Text())
					}
				})
			}
		}
	}
}

func abs(v int) int { return max(v, -v) }

func TestMapPoint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scale   vision.Scale
		conv    model.Coordinates
		x, y    float64
		want    image.Point
		wantErr bool
	}{
		// Identity: a pixel is itself.
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Absolute, 0, 0, image.Pt(0, 0), false},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Absolute, 799, 599, image.Pt(799, 599), false},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Absolute, 800, 10, image.Point{}, true},
		// Halving: sent pixel 10 covers screen 20–21; its centre is in 21.
		{vision.Scale{Screen: image.Pt(1920, 1080), Sent: image.Pt(960, 540)}, model.Absolute, 10, 10, image.Pt(21, 21), false},
		{vision.Scale{Screen: image.Pt(1920, 1080), Sent: image.Pt(960, 540)}, model.Absolute, 959, 539, image.Pt(1919, 1079), false},
		{vision.Scale{Screen: image.Pt(1920, 1080), Sent: image.Pt(1344, 736)}, model.Absolute, 672, 368, image.Pt(960, 540), false},
		{vision.Scale{Screen: image.Pt(1280, 800), Sent: image.Pt(1260, 784)}, model.Absolute, 630, 392, image.Pt(640, 400), false},
		// Qwen may enlarge slightly to reach a multiple of its patch.
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(812, 588)}, model.Absolute, 811, 587, image.Pt(799, 599), false},
		{vision.Scale{Screen: image.Pt(1280, 800), Sent: image.Pt(1280, 800)}, model.Absolute, -1, 5, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(1280, 800), Sent: image.Pt(1280, 800)}, model.Absolute, math.NaN(), 5, image.Point{}, true},
		// Relative 0–1000 ignores the sent size.
		{vision.Scale{Screen: image.Pt(1280, 800), Sent: image.Pt(1280, 800)}, model.Relative1000, 500, 500, image.Pt(640, 400), false},
		{vision.Scale{Screen: image.Pt(1920, 1080), Sent: image.Pt(1344, 736)}, model.Relative1000, 500, 500, image.Pt(960, 540), false},
		{vision.Scale{Screen: image.Pt(1920, 1080), Sent: image.Pt(1344, 736)}, model.Relative1000, 0, 1000, image.Pt(0, 1079), false},
		{vision.Scale{Screen: image.Pt(1023, 767), Sent: image.Pt(1024, 768)}, model.Relative1000, 1000, 1000, image.Pt(1022, 766), false},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 608)}, model.Relative1000, 250, 750, image.Pt(200, 450), false},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 608)}, model.Relative1000, 1000.5, 10, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 608)}, model.Relative1000, 10, -0.1, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Coordinates("polar"), 1, 1, image.Point{}, true},
		// The edges: the last row is outside, 0 inside; an empty image
		// in either dimension maps nothing.
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Absolute, 10, 600, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 600)}, model.Relative1000, 1000, 0, image.Pt(799, 0), false},
		{vision.Scale{Screen: image.Pt(0, 600), Sent: image.Pt(800, 600)}, model.Relative1000, 1, 1, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 0), Sent: image.Pt(800, 600)}, model.Relative1000, 1, 1, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(0, 600)}, model.Relative1000, 1, 1, image.Point{}, true},
		{vision.Scale{Screen: image.Pt(800, 600), Sent: image.Pt(800, 0)}, model.Relative1000, 1, 1, image.Point{}, true},
	}
	for _, tt := range tests {
		got, err := vision.MapPoint(tt.scale, tt.conv, tt.x, tt.y)
		if tt.wantErr {
			if !errors.Is(err, vision.ErrUnavailable) {
				t.Errorf("MapPoint(%v, %s, %g, %g) = %v, %v; want ErrUnavailable", tt.scale, tt.conv, tt.x, tt.y, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("MapPoint(%v, %s, %g, %g) = %v, %v; want %v", tt.scale, tt.conv, tt.x, tt.y, got, err, tt.want)
		}
	}
}

func TestDownscale(t *testing.T) {
	t.Parallel()
	img, _ := screen(1920, 1080, image.Pt(960, 540))
	for _, name := range []string{"qwen3-vl-8b-instruct", "qwen2.5-vl-7b-instruct", "gpt", "openai-compatible"} {
		p := lookup(t, name)
		out, s := vision.Downscale(img, p)
		w, h := p.Image.Fit(1920, 1080)
		if s.Screen != image.Pt(1920, 1080) || s.Sent != image.Pt(w, h) || out.Bounds().Size() != s.Sent {
			t.Errorf("%s: scale %v, image %v, want sent %dx%d", name, s, out.Bounds(), w, h)
		}
	}
	small, _ := screen(1280, 800, image.Pt(100, 100))
	if out, s := vision.Downscale(small, lookup(t, "qwen3-vl-8b-instruct")); out != image.Image(small) || s.Sent != s.Screen {
		t.Errorf("an image already at the preferred size was resampled: %v", s)
	}
}

func TestLocateAnswers(t *testing.T) {
	t.Parallel()
	img, _ := screen(1280, 800, image.Pt(640, 400))
	abs := lookup(t, "openai-compatible")
	rel := lookup(t, "qwen3-vl-8b-instruct")
	tests := []struct {
		name    string
		p       model.Profile
		reply   modeltest.Exchange
		want    image.Point
		wantErr error
	}{
		{"plain", abs, modeltest.Text(`{"point": [640, 400]}`), image.Pt(640, 400), nil},
		{"answer tags", abs, modeltest.Text(`It is here. <answer>{"point": [10, 20]}</answer>`), image.Pt(10, 20), nil},
		{"qwen native list", rel, modeltest.Text(`[{"point_2d": [500, 500], "label": "square"}]`), image.Pt(640, 400), nil},
		// Integers name pixel centres, so 10.6 is nearer pixel 11.
		{"fractional", abs, modeltest.Text(`{"point": [10.6, 20.2]}`), image.Pt(11, 20), nil},
		{"not found", abs, modeltest.Text(`{"found": false}`), image.Point{}, vision.ErrNotFound},
		{"prose", abs, modeltest.Text("The button is at the top left."), image.Point{}, vision.ErrUnavailable},
		{"truncated", abs, modeltest.Text(`{"point": [10, `), image.Point{}, vision.ErrUnavailable},
		{"three numbers", abs, modeltest.Text(`{"point": [1, 2, 3]}`), image.Point{}, vision.ErrUnavailable},
		{"strings", abs, modeltest.Text(`{"point": ["1", "2"]}`), image.Point{}, vision.ErrUnavailable},
		{"object point", abs, modeltest.Text(`{"point": {"x": 1, "y": 2}}`), image.Point{}, vision.ErrUnavailable},
		{"found true without point", abs, modeltest.Text(`{"found": true}`), image.Point{}, vision.ErrUnavailable},
		{"two answers", rel, modeltest.Text(`[{"point_2d": [1, 2]}, {"point_2d": [3, 4]}]`), image.Point{}, vision.ErrUnavailable},
		{"outside absolute", abs, modeltest.Text(`{"point": [1280, 10]}`), image.Point{}, vision.ErrUnavailable},
		{"negative", abs, modeltest.Text(`{"point": [-3, 10]}`), image.Point{}, vision.ErrUnavailable},
		{"outside relative", rel, modeltest.Text(`{"point": [500, 1200]}`), image.Point{}, vision.ErrUnavailable},
		{"empty", abs, modeltest.Empty(), image.Point{}, vision.ErrUnavailable},
		{"model error", abs, modeltest.Status(503), image.Point{}, vision.ErrUnavailable},
		{"garbage body", abs, modeltest.Garbage("<html>"), image.Point{}, vision.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, tt.reply)
			got, err := vision.Locate(context.Background(), client(t, srv, tt.p), tt.p, img, "the square")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Locate = %v, %v; want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Locate = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestLocateOffsetBounds(t *testing.T) {
	t.Parallel()
	// A capture of a window may not start at the origin; the point is in
	// the capture's own coordinates.
	full, _ := screen(1000, 700, image.Pt(600, 400))
	sub := full.SubImage(image.Rect(100, 50, 900, 650))
	p := lookup(t, "openai-compatible")
	srv := modeltest.New(t, locator(t, p.Coordinates))
	pt, err := vision.Locate(context.Background(), client(t, srv, p), p, sub, "the red square")
	if err != nil {
		t.Fatal(err)
	}
	if d := pt.Sub(image.Pt(600, 400)); abs(d.X) > 1 || abs(d.Y) > 1 {
		t.Errorf("point %v, want about (600, 400)", pt)
	}
}

func TestJudgeAndCheck(t *testing.T) {
	t.Parallel()
	before, _ := screen(1280, 800, image.Pt(100, 100))
	after, _ := screen(1280, 800, image.Pt(900, 600))
	p := lookup(t, "gpt")
	tests := []struct {
		name    string
		reply   modeltest.Exchange
		want    vision.Outcome
		reason  string
		wantErr bool
	}{
		{"met", modeltest.Text(`{"met": true, "reason": "The dialog closed."}`), vision.Confirmed, "The dialog closed.", false},
		{"not met", modeltest.Text("```json\n{\"met\": false, \"reason\": \"Still open.\"}\n```"), vision.Contradicted, "Still open.", false},
		{"no met field", modeltest.Text(`{"reason": "unsure"}`), vision.Unavailable, "", false},
		{"met as string", modeltest.Text(`{"met": "yes"}`), vision.Unavailable, "", false},
		{"prose", modeltest.Text("Yes, it worked."), vision.Unavailable, "", false},
		{"empty", modeltest.Empty(), vision.Unavailable, "", false},
		{"model down", modeltest.Status(502), vision.Unavailable, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, tt.reply, tt.reply)
			c := client(t, srv, p)
			j, err := vision.Judge(context.Background(), c, p, before, after, "the dialog closes")
			k, errCheck := vision.Check(context.Background(), c, p, after, "no dialog is open")
			for i, got := range []vision.Judgement{j, k} {
				e := []error{err, errCheck}[i]
				if got.Outcome != tt.want || (tt.reason != "" && got.Reason != tt.reason) || (e != nil) != tt.wantErr {
					t.Errorf("judgement %d = %+v, %v; want %s %q (error %v)", i, got, e, tt.want, tt.reason, tt.wantErr)
				}
				if got.Outcome == vision.Unavailable && !tt.wantErr && !strings.Contains(got.Reason, "malformed") {
					t.Errorf("unavailable reason %q does not say malformed", got.Reason)
				}
			}
			reqs := srv.Requests()
			if n := len(reqs[0].ImageURLs()); n != 2 {
				t.Errorf("Judge sent %d images, want before and after", n)
			}
			if n := len(reqs[1].ImageURLs()); n != 1 {
				t.Errorf("Check sent %d images, want 1", n)
			}
			if !strings.Contains(reqs[0].Text(), "the dialog closes") || !strings.Contains(reqs[1].Text(), "no dialog is open") {
				t.Error("expectation missing from the prompts")
			}
		})
	}
}

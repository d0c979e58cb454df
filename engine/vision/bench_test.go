package vision

import (
	"image"
	"image/color"
	"testing"

	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/engine/model"
)

// BenchmarkResize compares the resamplers for the common cases: a 1920x1080
// screen scaled to Qwen3-VL's size and a 1280x800 screen to Qwen2.5-VL's,
// and the PNG encode that follows.
func BenchmarkResize(b *testing.B) {
	b.Run("1920x1080-qwen3", func(b *testing.B) { benchResize(b, 1920, 1080, "qwen3-vl-8b-instruct") })
	b.Run("1280x800-qwen2.5", func(b *testing.B) { benchResize(b, 1280, 800, "qwen2.5-vl-7b-instruct") })
}

func benchResize(b *testing.B, sw, sh int, profile string) {
	src := image.NewRGBA(image.Rect(0, 0, sw, sh))
	for y := range sh {
		for x := range sw {
			src.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	p, _ := model.LookupProfile(profile)
	w, h := p.Image.Fit(sw, sh)
	for _, s := range []struct {
		name   string
		scaler draw.Scaler
	}{
		{"NearestNeighbor", draw.NearestNeighbor},
		{"ApproxBiLinear", draw.ApproxBiLinear},
		{"BiLinear", draw.BiLinear},
		{"CatmullRom", draw.CatmullRom},
	} {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				resize(src, w, h, s.scaler)
			}
		})
	}
	b.Run("EncodePNG", func(b *testing.B) {
		dst := resize(src, w, h, draw.CatmullRom)
		for b.Loop() {
			if _, err := encodePNG(dst); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package vision

import (
	"image"
	"image/color"
	"testing"

	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/engine/model"
)

// BenchmarkResize compares the resamplers for a 1920x1080 screen scaled to
// Qwen3-VL's size, and the PNG encode that follows.
func BenchmarkResize(b *testing.B) {
	src := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	for y := range 1080 {
		for x := range 1920 {
			src.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	p, _ := model.LookupProfile("qwen3-vl-8b-instruct")
	w, h := p.Image.Fit(1920, 1080)
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

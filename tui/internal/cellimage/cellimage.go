// Package cellimage turns block-element cells back into the picture they
// show, so tests can judge a half-block screen the way an operator's eyes
// do: by reading it (docs/architecture.md, "Legible screens in half-block
// terminals").
package cellimage

import (
	"context"
	"image"
	"image/color"
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/drivers/ocr"
)

// quadrants maps each block element to the sub-pixels of its cell it
// covers with the foreground: bit 0 upper left, 1 upper right, 2 lower
// left, 3 lower right.
var quadrants = map[string]uint8{
	" ": 0, "▘": 1, "▝": 2, "▀": 3, "▖": 4, "▌": 5, "▞": 6, "▛": 7,
	"▗": 8, "▚": 9, "▐": 10, "▜": 11, "▄": 12, "▙": 13, "▟": 14, "█": 15,
}

// Decode draws styled cells — a renderer's output or a terminal's copy of
// it, as tmux capture-pane -e prints — as 2×2 sub-pixels a cell, and
// returns the picture and the cells that carried a colour, the image's
// extent without the padding around it. Any other character is drawn in
// its background colour.
func Decode(s string) (*image.RGBA, image.Rectangle) {
	lines := uv.NewStyledString(s).Lines(ansi.GraphemeWidth)
	w := 0
	for _, l := range lines {
		w = max(w, len(l))
	}
	img := image.NewRGBA(image.Rect(0, 0, 2*w, 2*len(lines)))
	var painted image.Rectangle
	for y, l := range lines {
		for x, c := range l {
			fg, bg := rgba(c.Style.Fg, color.RGBA{255, 255, 255, 255}), rgba(c.Style.Bg, color.RGBA{A: 255})
			if c.Style.Bg != nil {
				painted = painted.Union(image.Rect(2*x, 2*y, 2*x+2, 2*y+2))
			}
			mask := quadrants[c.Content]
			for i := range 4 {
				col := bg
				if mask>>i&1 == 1 {
					col = fg
				}
				img.SetRGBA(2*x+i%2, 2*y+i/2, col)
			}
		}
	}
	return img, painted
}

func rgba(c color.Color, unset color.RGBA) color.RGBA {
	if c == nil {
		return unset
	}
	r, g, b, _ := c.RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 255}
}

// Read runs tesseract on the part r of a decoded picture as a terminal
// shows it: each sub-pixel is half a cell wide and half a cell tall, and
// a cell is twice as tall as wide, so it is enlarged scale times across
// and twice that down, with Catmull-Rom, as a terminal's glyphs blur
// into each other for the eye.
func Read(ctx context.Context, img *image.RGBA, r image.Rectangle, scale int) ([]ocr.Word, error) {
	r = r.Intersect(img.Rect)
	big := image.NewRGBA(image.Rect(0, 0, r.Dx()*scale, r.Dy()*2*scale))
	draw.CatmullRom.Scale(big, big.Rect, img, r, draw.Src, nil)
	return ocr.NewReader(1).Read(ctx, big)
}

// Fold is a word as it is compared: lower case, without the punctuation
// tesseract reads next to it.
func Fold(word string) string {
	return strings.ToLower(strings.Trim(word, ".,:;!?\"'“”‘’()[]|"))
}

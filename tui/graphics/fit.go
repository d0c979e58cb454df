package graphics

import (
	"image"
	"image/draw"
)

// Default cell size in pixels, used when the terminal does not report one
// (Bubble Tea v2 delivers uv.CellSizeEvent / uv.PixelSizeEvent only after
// the console asks with ansi.RequestCellSizeWinOp or
// ansi.RequestWindowSizeWinOp, and many terminals never answer).
const (
	DefaultCellWidth  = 10
	DefaultCellHeight = 20
)

// Fit scales img down to fit a pane of cols×rows cells of cellW×cellH
// pixels, preserving its aspect ratio. A non-positive cell size means the
// default 10×20. Images that already fit are returned unscaled (as RGBA),
// since upscaling only costs bytes. Scaling averages the source pixels each
// destination pixel covers, which keeps thin text strokes visible.
func Fit(img image.Image, cols, rows, cellW, cellH int) *image.RGBA {
	if cellW <= 0 || cellH <= 0 {
		cellW, cellH = DefaultCellWidth, DefaultCellHeight
	}
	b := img.Bounds()
	w, h := fitSize(b.Dx(), b.Dy(), cols*cellW, rows*cellH)
	if w == b.Dx() && h == b.Dy() {
		return toRGBA(img)
	}
	return boxScale(asRGBA(img), w, h)
}

// fitSize returns the largest size with the aspect of sw×sh that fits in
// maxW×maxH without exceeding sw×sh, at least 1×1.
func fitSize(sw, sh, maxW, maxH int) (int, int) {
	if sw <= 0 || sh <= 0 || maxW <= 0 || maxH <= 0 {
		return 0, 0
	}
	if sw <= maxW && sh <= maxH {
		return sw, sh
	}
	// Compare maxW/sw with maxH/sh without floating point.
	if maxW*sh <= maxH*sw {
		return maxW, max(1, sh*maxW/sw)
	}
	return max(1, sw*maxH/sh), maxH
}

// asRGBA returns img as an *image.RGBA, copying only when it is another
// kind of image: a crop of a capture (the window view, the zoom) is read
// where it lies, not copied first.
func asRGBA(img image.Image) *image.RGBA {
	if m, ok := img.(*image.RGBA); ok {
		return m
	}
	return toRGBA(img)
}

// toRGBA returns img as an *image.RGBA with origin (0,0), copying only when
// it has to.
func toRGBA(img image.Image) *image.RGBA {
	if m, ok := img.(*image.RGBA); ok && m.Rect.Min == (image.Point{}) {
		return m
	}
	b := img.Bounds()
	m := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(m, m.Rect, img, b.Min, draw.Src)
	return m
}

// boxScale downscales src, whatever its origin, to w×h by averaging the
// source rectangle under each destination pixel.
func boxScale(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 {
		return dst
	}
	// Column spans are the same for every row: compute them once, and which
	// destination column each source column adds into.
	x0s := make([]int, w+1)
	for x := 0; x <= w; x++ {
		x0s[x] = x * sw / w
	}
	owner := make([]int, sw)
	for x := 0; x < w; x++ {
		for sx := x0s[x]; sx < max(x0s[x+1], x0s[x]+1) && sx < sw; sx++ {
			owner[sx] = 4 * x
		}
	}
	sums := make([]uint32, 4*w)
	for y := 0; y < h; y++ {
		y0, y1 := y*sh/h, (y+1)*sh/h
		if y1 == y0 {
			y1 = y0 + 1
		}
		clear(sums)
		for sy := y0; sy < y1; sy++ {
			off := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+sy)
			row := src.Pix[off : off+4*sw]
			for sx, o := range owner {
				p := row[4*sx : 4*sx+4 : 4*sx+4]
				s := sums[o : o+4 : o+4]
				s[0] += uint32(p[0])
				s[1] += uint32(p[1])
				s[2] += uint32(p[2])
				s[3] += uint32(p[3])
			}
		}
		out := dst.Pix[y*dst.Stride:]
		for x := 0; x < w; x++ {
			a, b := x0s[x], x0s[x+1]
			if b == a {
				b = a + 1
			}
			n := uint32((b - a) * (y1 - y0))
			s := sums[4*x : 4*x+4 : 4*x+4]
			out[4*x] = uint8((s[0] + n/2) / n)
			out[4*x+1] = uint8((s[1] + n/2) / n)
			out[4*x+2] = uint8((s[2] + n/2) / n)
			out[4*x+3] = uint8((s[3] + n/2) / n)
		}
	}
	return dst
}

package graphics

import (
	"cmp"
	"image"
	"image/color"
	"slices"
	"strconv"
	"sync"
)

// SixelPalette says where a SixelEncoder's colours come from.
type SixelPalette int

const (
	// PaletteAdaptiveOnce builds the palette from the first frame (its most
	// common colours plus a coarse colour cube for what later frames bring)
	// and reuses it for every later frame. Screens of one app change little,
	// so the palette keeps fitting while quantizing costs one table lookup a
	// pixel.
	PaletteAdaptiveOnce SixelPalette = iota
	// PaletteUniform uses a fixed 6×7×6 colour cube: no first-frame cost, a
	// little more banding on UI greys.
	PaletteUniform
)

// lutBits is the precision per channel of the nearest-colour table: 5 bits
// gives a 32×32×32 table (32 KiB), small enough to stay in cache.
const lutBits = 5

// SixelEncoder encodes images as DEC sixel. It keeps its palette, colour
// lookup table and scratch buffers between frames, which is what makes it
// fast; one encoder serves one pane. It is safe for concurrent use (calls
// are serialised).
type SixelEncoder struct {
	mu      sync.Mutex
	kind    SixelPalette
	palette []color.RGBA
	lut     []uint8

	// Scratch reused between frames.
	idx        []uint8
	bits       []byte
	minX, maxX [256]int
	buf        []byte
}

// NewSixelEncoder returns an encoder using the given palette policy.
func NewSixelEncoder(kind SixelPalette) *SixelEncoder {
	return &SixelEncoder{kind: kind}
}

// Reset forgets the palette, so the next frame builds a new one (for
// PaletteAdaptiveOnce); call it when the pane starts showing a different
// application.
func (e *SixelEncoder) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.palette, e.lut = nil, nil
}

// Palette returns a copy of the colours the encoder currently uses.
func (e *SixelEncoder) Palette() []color.RGBA {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.palette)
}

// Encode returns img as a complete sixel sequence: DCS "ESC P q", raster
// attributes "1;1;W;H, the colours used, the bands, and ST "ESC \". Alpha
// is ignored: screenshots are opaque.
func (e *SixelEncoder) Encode(img image.Image) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	src := toRGBA(img)
	if e.lut == nil {
		switch e.kind {
		case PaletteUniform:
			e.palette = uniformPalette()
		default:
			e.palette = adaptivePalette(src)
		}
		e.lut = buildLUT(e.palette)
	}
	return string(e.encode(src))
}

func (e *SixelEncoder) encode(src *image.RGBA) []byte {
	w, h := src.Rect.Dx(), src.Rect.Dy()
	buf := e.buf[:0]
	buf = append(buf, "\x1bPq\"1;1;"...)
	buf = strconv.AppendInt(buf, int64(w), 10)
	buf = append(buf, ';')
	buf = strconv.AppendInt(buf, int64(h), 10)
	if w == 0 || h == 0 {
		return append(buf, "\x1b\\"...)
	}

	// Quantize every pixel through the table and note which colours occur.
	if cap(e.idx) < w*h {
		e.idx = make([]uint8, w*h)
	}
	idx := e.idx[:w*h]
	var used [256]bool
	lut := e.lut
	for y := 0; y < h; y++ {
		row := src.Pix[y*src.Stride : y*src.Stride+4*w]
		out := idx[y*w : y*w+w]
		for x := range out {
			p := row[4*x : 4*x+3 : 4*x+3]
			out[x] = lut[int(p[0]>>3)<<10|int(p[1]>>3)<<5|int(p[2]>>3)]
		}
	}
	for _, c := range idx {
		used[c] = true
	}
	for i, c := range e.palette {
		if !used[i] {
			continue
		}
		buf = append(buf, '#')
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, ";2;"...)
		buf = strconv.AppendInt(buf, int64(percent(c.R)), 10)
		buf = append(buf, ';')
		buf = strconv.AppendInt(buf, int64(percent(c.G)), 10)
		buf = append(buf, ';')
		buf = strconv.AppendInt(buf, int64(percent(c.B)), 10)
	}

	if cap(e.bits) < 256*w {
		e.bits = make([]byte, 256*w)
	}
	bits := e.bits[:256*w]
	var inBand [256]bool
	band := make([]uint8, 0, 256)
	for y0 := 0; y0 < h; y0 += 6 {
		band = band[:0]
		for r := 0; r < 6 && y0+r < h; r++ {
			bit := byte(1) << r
			row := idx[(y0+r)*w : (y0+r+1)*w]
			for x, c := range row {
				if !inBand[c] {
					inBand[c] = true
					band = append(band, c)
					e.minX[c], e.maxX[c] = x, x
				}
				bits[int(c)*w+x] |= bit
				if x < e.minX[c] {
					e.minX[c] = x
				}
				if x > e.maxX[c] {
					e.maxX[c] = x
				}
			}
		}
		for k, c := range band {
			inBand[c] = false
			if k > 0 {
				buf = append(buf, '$')
			}
			buf = append(buf, '#')
			buf = strconv.AppendInt(buf, int64(c), 10)
			lo, hi := e.minX[c], e.maxX[c]
			buf = appendRun(buf, '?', lo)
			cells := bits[int(c)*w+lo : int(c)*w+hi+1]
			run, prev := 0, cells[0]
			for _, v := range cells {
				if v == prev {
					run++
					continue
				}
				buf = appendRun(buf, prev+'?', run)
				run, prev = 1, v
			}
			buf = appendRun(buf, prev+'?', run)
			clear(cells)
		}
		if y0+6 < h {
			buf = append(buf, '-')
		}
	}
	buf = append(buf, "\x1b\\"...)
	e.buf = buf
	return buf
}

// appendRun appends n copies of ch, using the sixel repeat introducer when
// it is shorter.
func appendRun(buf []byte, ch byte, n int) []byte {
	switch {
	case n <= 0:
		return buf
	case n <= 3:
		for range n {
			buf = append(buf, ch)
		}
		return buf
	}
	buf = append(buf, '!')
	buf = strconv.AppendInt(buf, int64(n), 10)
	return append(buf, ch)
}

// percent converts an 8-bit channel to sixel's 0–100 scale.
func percent(v uint8) int { return (int(v)*100 + 127) / 255 }

// fromPercent is the inverse of percent, as a terminal would apply it.
func fromPercent(p int) uint8 { return uint8((p*255 + 50) / 100) }

// roundTrip returns c as the terminal will show it after the percent
// conversion, so the table maps pixels to the colour actually displayed.
func roundTrip(c color.RGBA) color.RGBA {
	return color.RGBA{fromPercent(percent(c.R)), fromPercent(percent(c.G)), fromPercent(percent(c.B)), 255}
}

// uniformPalette is a 6×7×6 cube (252 colours); green gets the extra level
// because the eye is most sensitive to it.
func uniformPalette() []color.RGBA {
	p := make([]color.RGBA, 0, 252)
	for r := range 6 {
		for g := range 7 {
			for b := range 6 {
				p = append(p, roundTrip(color.RGBA{uint8(r * 255 / 5), uint8(g * 255 / 6), uint8(b * 255 / 5), 255}))
			}
		}
	}
	return p
}

// adaptivePalette takes the up to 192 most common colours of img (at 5 bits
// a channel, each the mean of its bin) and adds a 4×4×4 cube so colours that
// appear in later frames still have a neighbour.
func adaptivePalette(img *image.RGBA) []color.RGBA {
	type bin struct {
		n       uint32
		r, g, b uint32
	}
	bins := make([]bin, 1<<(3*lutBits))
	w, h := img.Rect.Dx(), img.Rect.Dy()
	for y := 0; y < h; y++ {
		row := img.Pix[y*img.Stride : y*img.Stride+4*w]
		for x := 0; x < w; x++ {
			r, g, b := row[4*x], row[4*x+1], row[4*x+2]
			k := &bins[int(r>>3)<<10|int(g>>3)<<5|int(b>>3)]
			k.n++
			k.r += uint32(r)
			k.g += uint32(g)
			k.b += uint32(b)
		}
	}
	order := make([]int, 0, 1024)
	for i, b := range bins {
		if b.n > 0 {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(bins[b].n, bins[a].n) })
	const popular = 192
	p := make([]color.RGBA, 0, 256)
	for _, i := range order[:min(popular, len(order))] {
		b := bins[i]
		p = append(p, roundTrip(color.RGBA{uint8(b.r / b.n), uint8(b.g / b.n), uint8(b.b / b.n), 255}))
	}
	for r := range 4 {
		for g := range 4 {
			for b := range 4 {
				p = append(p, roundTrip(color.RGBA{uint8(r * 85), uint8(g * 85), uint8(b * 85), 255}))
			}
		}
	}
	return p
}

// buildLUT maps every 5-bit colour to the index of its nearest palette entry
// (squared distance weighted 2:4:3 for R:G:B, a cheap perceptual nudge).
func buildLUT(p []color.RGBA) []uint8 {
	lut := make([]uint8, 1<<(3*lutBits))
	for k := range lut {
		r := int(k>>10)<<3 | 4
		g := int(k>>5&31)<<3 | 4
		b := int(k&31)<<3 | 4
		best, bestD := 0, int(^uint(0)>>1)
		for i, c := range p {
			dr, dg, db := r-int(c.R), g-int(c.G), b-int(c.B)
			d := 2*dr*dr + 4*dg*dg + 3*db*db
			if d < bestD {
				best, bestD = i, d
			}
		}
		lut[k] = uint8(best)
	}
	return lut
}

package graphics

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"strconv"
)

// decodeSixel parses a DEC sixel sequence (DCS ... q ... ST) back into an
// image, as a terminal would draw it. It understands raster attributes,
// colour definitions in RGB percent (Pu=2), colour selection, repeats,
// carriage return ($) and new band (-): everything the encoders under test
// emit, libsixel included.
func decodeSixel(data []byte) (*image.RGBA, error) {
	start := bytes.Index(data, []byte("\x1bP"))
	if start < 0 {
		return nil, fmt.Errorf("no DCS introducer")
	}
	q := bytes.IndexByte(data[start:], 'q')
	if q < 0 {
		return nil, fmt.Errorf("no sixel 'q'")
	}
	body := data[start+q+1:]
	end := bytes.Index(body, []byte("\x1b\\"))
	if end < 0 {
		return nil, fmt.Errorf("no string terminator")
	}
	body = body[:end]

	num := func(i int) (int, int) {
		j := i
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(string(body[i:j]))
		return n, j
	}
	params := func(i int) ([]int, int) {
		var ps []int
		for {
			var n int
			n, i = num(i)
			ps = append(ps, n)
			if i < len(body) && body[i] == ';' {
				i++
				continue
			}
			return ps, i
		}
	}

	var w, h int
	type px struct {
		x, y int
		c    int
	}
	palette := map[int]color.RGBA{}
	var ops []px // (x, y, colour) in drawing order, applied at the end
	x, y, cur := 0, 0, 0
	maxX, maxY := 0, 0
	for i := 0; i < len(body); {
		ch := body[i]
		switch {
		case ch == '"':
			var ps []int
			ps, i = params(i + 1)
			if len(ps) >= 4 {
				w, h = ps[2], ps[3]
			}
		case ch == '#':
			var ps []int
			ps, i = params(i + 1)
			cur = ps[0]
			if len(ps) >= 5 {
				if ps[1] != 2 {
					return nil, fmt.Errorf("colour %d: only RGB (2) supported, got %d", ps[0], ps[1])
				}
				palette[ps[0]] = color.RGBA{fromPercent(ps[2]), fromPercent(ps[3]), fromPercent(ps[4]), 255}
			}
		case ch == '!':
			var n int
			n, i = num(i + 1)
			if i >= len(body) || body[i] < '?' || body[i] > '~' {
				return nil, fmt.Errorf("repeat without a sixel at %d", i)
			}
			bits := body[i] - '?'
			for range n {
				for r := range 6 {
					if bits&(1<<r) != 0 {
						ops = append(ops, px{x, y + r, cur})
						maxY = max(maxY, y+r+1)
					}
				}
				x++
			}
			maxX = max(maxX, x)
			i++
		case ch == '$':
			x = 0
			i++
		case ch == '-':
			x = 0
			y += 6
			i++
		case ch >= '?' && ch <= '~':
			bits := ch - '?'
			for r := range 6 {
				if bits&(1<<r) != 0 {
					ops = append(ops, px{x, y + r, cur})
					maxY = max(maxY, y+r+1)
				}
			}
			x++
			maxX = max(maxX, x)
			i++
		case ch == '\n' || ch == '\r':
			i++
		default:
			return nil, fmt.Errorf("unexpected byte %q at %d", ch, i)
		}
	}
	if w == 0 || h == 0 {
		w, h = maxX, maxY
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for _, o := range ops {
		c, ok := palette[o.c]
		if !ok {
			return nil, fmt.Errorf("colour %d used but never defined", o.c)
		}
		if o.x < w && o.y < h {
			img.SetRGBA(o.x, o.y, c)
		}
	}
	return img, nil
}

// meanError is the mean absolute difference per channel between a and b,
// 0–255, over the smaller common area.
func meanError(a, b *image.RGBA) float64 {
	w, h := min(a.Rect.Dx(), b.Rect.Dx()), min(a.Rect.Dy(), b.Rect.Dy())
	var sum int
	for y := range h {
		for x := range w {
			p, q := a.RGBAAt(x, y), b.RGBAAt(x, y)
			sum += absInt(int(p.R)-int(q.R)) + absInt(int(p.G)-int(q.G)) + absInt(int(p.B)-int(q.B))
		}
	}
	return float64(sum) / float64(3*w*h)
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

package vision

import (
	"encoding/binary"
	"image"
	"math"
	"runtime"
	"slices"
	"sync"
)

// weightBits is the fixed-point precision of the resampling weights.
const weightBits = 14

// kernel is one axis of a resampling: for each destination pixel, the
// first source pixel it reads and the weights of the taps that follow,
// in fixed point, summing to 1<<weightBits.
type kernel struct {
	taps    int
	start   []int
	weights []int32
}

// catmullRom is the Catmull-Rom cubic (B=0, C=1/2), supported on [-2, 2].
func catmullRom(x float64) float64 {
	x = math.Abs(x)
	switch {
	case x < 1:
		return (1.5*x-2.5)*x*x + 1
	case x < 2:
		return ((-0.5*x+2.5)*x-4)*x + 2
	}
	return 0
}

// newKernel computes the taps mapping src pixels onto dst pixels. When
// shrinking, the kernel is widened by the scale, so every source pixel
// contributes (what keeps thin strokes of text from vanishing); pixels past
// the edges repeat the edge.
func newKernel(src, dst int) kernel {
	scale := float64(src) / float64(dst)
	filterScale := max(scale, 1)
	support := 2 * filterScale
	// An open interval 2*support long holds at most this many whole
	// pixels.
	taps := min(int(math.Ceil(2*support)), src)
	k := kernel{taps: taps, start: make([]int, dst), weights: make([]int32, dst*taps)}
	raw := make([]float64, taps)
	for d := 0; d < dst; d++ {
		center := (float64(d)+0.5)*scale - 0.5
		first := int(math.Floor(center-support)) + 1
		start := min(max(first, 0), src-taps)
		clear(raw)
		total := 0.0
		for i := first; i <= int(math.Ceil(center+support)); i++ {
			w := catmullRom((float64(i) - center) / filterScale)
			if w == 0 {
				continue
			}
			j := min(max(i, 0), src-1) - start
			if j < 0 || j >= taps {
				continue
			}
			raw[j] += w
			total += w
		}
		// Fixed point, with the rounding error put on the largest tap so
		// a flat area stays exactly flat.
		ws := k.weights[d*taps : (d+1)*taps]
		sum, largest := int32(0), 0
		for j, w := range raw {
			ws[j] = int32(math.Round(w / total * (1 << weightBits)))
			sum += ws[j]
			if ws[j] > ws[largest] {
				largest = j
			}
		}
		ws[largest] += 1<<weightBits - sum
		k.start[d] = start
	}
	return k
}

func clampByte(v int32) uint8 {
	v = (v + 1<<(weightBits-1)) >> weightBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// resampleRGBA scales an opaque src to w x h with Catmull-Rom, as
// x/image/draw.CatmullRom does, but with the weights tabulated once per
// axis, in integers, in two passes (rows, then columns), and on every
// core. The result is opaque.
func resampleRGBA(src *image.RGBA, w, h int) *image.RGBA {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 || sw == 0 || sh == 0 {
		return dst
	}
	kx, ky := newKernel(sw, w), newKernel(sh, h)
	// Pixels travel as little-endian RGBA words. Most of a screen is flat
	// colour, where every tap reads the same pixel and the result is that
	// pixel: comparing the words skips the arithmetic there.
	mid := make([]uint32, sh*w)
	parallelRows(sh, func(y0, y1 int) {
		taps := kx.taps
		for y := y0; y < y1; y++ {
			off := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+y)
			row := src.Pix[off : off+sw*4]
			out := mid[y*w : (y+1)*w]
			// [runStart, runEnd) is a run of identical source pixels; the
			// windows move right, so each pixel is compared about once.
			runStart, runEnd := 0, 0
			for x := range out {
				st := kx.start[x]
				if st >= runEnd {
					first := binary.LittleEndian.Uint32(row[st*4:])
					runStart, runEnd = st, st+1
					for runEnd < sw && binary.LittleEndian.Uint32(row[runEnd*4:]) == first {
						runEnd++
					}
				}
				px := row[st*4:]
				px = px[:taps*4]
				if st >= runStart && st+taps <= runEnd {
					out[x] = binary.LittleEndian.Uint32(px) | 0xff000000
					continue
				}
				ws := kx.weights[x*taps : (x+1)*taps]
				var r, g, b int32
				for i, wt := range ws {
					r += wt * int32(px[i*4])
					g += wt * int32(px[i*4+1])
					b += wt * int32(px[i*4+2])
				}
				out[x] = pack(r, g, b)
			}
		}
	})
	parallelRows(h, func(y0, y1 int) {
		taps := ky.taps
		rows := make([][]uint32, taps)
		for y := y0; y < y1; y++ {
			s := ky.start[y]
			for i := range rows {
				rows[i] = mid[(s+i)*w : (s+i+1)*w]
			}
			ws := ky.weights[y*taps : (y+1)*taps]
			out := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
			same := true
			for i := 1; i < taps && same; i++ {
				same = slices.Equal(rows[i], rows[0])
			}
			if same {
				// A stretch of identical rows (blank lines, flat
				// panels): the result is the row itself.
				for x, v := range rows[0] {
					binary.LittleEndian.PutUint32(out[x*4:], v)
				}
				continue
			}
			for x := 0; x < w; x++ {
				first := rows[0][x]
				flat := true
				for i := 1; i < taps; i++ {
					if rows[i][x] != first {
						flat = false
						break
					}
				}
				v := first
				if !flat {
					var r, g, b int32
					for i, wt := range ws {
						p := rows[i][x]
						r += wt * int32(p&0xff)
						g += wt * int32(p>>8&0xff)
						b += wt * int32(p>>16&0xff)
					}
					v = pack(r, g, b)
				}
				binary.LittleEndian.PutUint32(out[x*4:], v)
			}
		}
	})
	return dst
}

// pack rounds and clamps fixed-point channel sums into an opaque RGBA word.
func pack(r, g, b int32) uint32 {
	return uint32(clampByte(r)) | uint32(clampByte(g))<<8 | uint32(clampByte(b))<<16 | 0xff000000
}

// parallelRows splits rows [0, n) into one band per core and runs fn on
// each.
func parallelRows(n int, fn func(y0, y1 int)) {
	bands := min(runtime.GOMAXPROCS(0), max(1, n/32))
	if bands <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for i := 0; i < bands; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*i/bands, n*(i+1)/bands)
		}()
	}
	wg.Wait()
}

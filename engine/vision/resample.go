package vision

import (
	"bytes"
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

// clampByte rounds a fixed-point channel sum to the nearest level, halves
// up, and clamps it to a byte: Catmull-Rom's negative lobes can take a sum
// below 0 or above 255 next to an edge.
func clampByte(v int32) uint8 {
	return uint8(min(max((v+1<<(weightBits-1))>>weightBits, 0), 255))
}

// resampleRGBA scales an opaque src to w x h with Catmull-Rom, as
// x/image/draw.CatmullRom does, but with the weights tabulated once per
// axis, in integers, in two passes (rows, then columns), and on every
// core. The result is opaque.
func resampleRGBA(src *image.RGBA, w, h int) *image.RGBA {
	var r resampling
	dst, _ := r.scale(src, w, h, true)
	return dst
}

// resampling is one resampler's state: the image it scaled last, its
// first pass and its result, which the next image of the same size reuses
// where its rows are the same.
type resampling struct {
	src    *image.RGBA
	kx, ky kernel
	// mid is src scaled along x: one row of w pixels per source row.
	mid []uint32
	dst *image.RGBA
	// computed counts the destination rows computed, for the tests.
	computed int
}

// scale returns src at w x h. Rows of the result that read only source
// rows equal to the last image's are copied from the last result; the
// rest are computed, so the result is the same as a fresh one's. ok is
// false, and nothing is kept, when src is not opaque (opaque: the caller
// knows it is); only the rows that changed are looked at, since the last
// image was opaque.
func (r *resampling) scale(src *image.RGBA, w, h int, opaque bool) (_ *image.RGBA, ok bool) {
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if w == 0 || h == 0 || sw == 0 || sh == 0 {
		return dst, true
	}
	again := r.src != nil && r.src.Rect.Size() == src.Rect.Size() && r.dst.Rect.Size() == dst.Rect.Size()
	if !again {
		r.kx, r.ky = newKernel(sw, w), newKernel(sh, h)
		r.mid = make([]uint32, sh*w)
	}
	// changed[y] says whether source row y differs from the last image's;
	// before[y] counts the changed rows above y.
	changed := make([]bool, sh)
	before := make([]int, sh+1)
	var rows []int
	for y := range sh {
		row := pixRow(src, y)
		changed[y] = !again || !bytes.Equal(row, pixRow(r.src, y))
		before[y+1] = before[y]
		if changed[y] {
			if !opaque && !opaqueRow(row) {
				r.src, r.dst = nil, nil
				return nil, false
			}
			before[y+1]++
			rows = append(rows, y)
		}
	}
	parallelRows(len(rows), func(i0, i1 int) {
		for _, y := range rows[i0:i1] {
			scaleRow(r.mid[y*w:(y+1)*w], pixRow(src, y), r.kx)
		}
	})
	var out []int
	for y := range h {
		s := r.ky.start[y]
		if before[s+r.ky.taps] > before[s] {
			out = append(out, y)
		} else {
			copy(dst.Pix[y*dst.Stride:y*dst.Stride+w*4], r.dst.Pix[y*r.dst.Stride:])
		}
	}
	parallelRows(len(out), func(i0, i1 int) {
		rows := make([][]uint32, r.ky.taps)
		for _, y := range out[i0:i1] {
			s := r.ky.start[y]
			for i := range rows {
				rows[i] = r.mid[(s+i)*w : (s+i+1)*w]
			}
			blendRows(dst.Pix[y*dst.Stride:y*dst.Stride+w*4], rows, r.ky.weights[y*r.ky.taps:(y+1)*r.ky.taps])
		}
	})
	r.computed += len(out)
	r.src, r.dst = src, dst
	return dst, true
}

// opaqueRow reports whether every pixel of an RGBA row is opaque.
func opaqueRow(row []byte) bool {
	for px := range slices.Chunk(row, 4) {
		if px[3] != 0xff {
			return false
		}
	}
	return true
}

// pixRow is row y of img (counted from its top), four bytes a pixel.
func pixRow(img *image.RGBA, y int) []byte {
	off := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
	return img.Pix[off : off+img.Rect.Dx()*4]
}

// scaleRow is the first pass over one source row: row scaled along x
// into out. Pixels travel as little-endian RGBA words. Most of a screen
// is flat colour, where every tap reads the same pixel and the result is
// that pixel: comparing the words skips the arithmetic there.
func scaleRow(out []uint32, row []byte, kx kernel) {
	sw, taps := len(row)/4, kx.taps
	// [a window's start, runEnd) is a run of identical source pixels: the
	// windows only move right (kx.start does not decrease), so a run found
	// from one window's start still begins at or before the next one's,
	// and each pixel is compared about once.
	runEnd := 0
	for x := range out {
		st := kx.start[x]
		if st >= runEnd {
			first := binary.LittleEndian.Uint32(row[st*4:])
			runEnd = st + 1
			for runEnd < sw && binary.LittleEndian.Uint32(row[runEnd*4:]) == first {
				runEnd++
			}
		}
		px := row[st*4:]
		px = px[:taps*4]
		if st+taps <= runEnd {
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

// blendRows is the second pass for one destination row: the first
// pass's rows it reads, weighted, into out.
func blendRows(out []byte, rows [][]uint32, ws []int32) {
	taps := len(rows)
	same := true
	for i := 1; i < taps && same; i++ {
		same = slices.Equal(rows[i], rows[0])
	}
	if same {
		// A stretch of identical rows (blank lines, flat panels): the
		// result is the row itself.
		for x, v := range rows[0] {
			binary.LittleEndian.PutUint32(out[x*4:], v)
		}
		return
	}
	for x := range rows[0] {
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

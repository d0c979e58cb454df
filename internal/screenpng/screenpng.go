// Package screenpng encodes screenshots as PNG quickly. A screen is mostly
// flat colour and text, which a single filter and the fastest deflate
// level compress almost as well as the standard encoder's per-row choice
// of five filters, at a fraction of its time; the rows are compressed in
// bands on every core. The output is an ordinary PNG any decoder reads.
package screenpng

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
)

// minBandRows keeps bands large enough that splitting costs little
// compression.
const minBandRows = 64

// maxBands bounds the goroutines one image uses.
const maxBands = 8

// Encode writes img as PNG. An opaque *image.RGBA (every screen capture)
// is encoded here as 8-bit RGB; any other image goes through the standard
// encoder at its fastest level.
func Encode(w io.Writer, img image.Image) error {
	rgba, ok := fast(img)
	if !ok {
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(w, img); err != nil {
			return fmt.Errorf("encode png: %w", err)
		}
		return nil
	}
	data, err := encodeRGBA(rgba, 0)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	return nil
}

// Bytes returns img encoded as PNG, on every core.
func Bytes(img image.Image) ([]byte, error) { return BytesOn(img, 0) }

// BytesOn returns img encoded as PNG on at most cores goroutines (zero:
// every core); one leaves the other cores to more urgent work.
func BytesOn(img image.Image, cores int) ([]byte, error) {
	if rgba, ok := fast(img); ok {
		return encodeRGBA(rgba, cores)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fast reports whether img is one this package encodes itself.
func fast(img image.Image) (*image.RGBA, bool) {
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Rect.Empty() || !rgba.Opaque() {
		return nil, false
	}
	return rgba, true
}

// encodeRGBA encodes an opaque image as 8-bit RGB.
func encodeRGBA(img *image.RGBA, cores int) ([]byte, error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	const bpp, colorType = 3, 2
	rowLen := 1 + w*bpp
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	bands := min(max(1, h/minBandRows), cores, maxBands)
	type band struct {
		data []byte
		sum  uint32
		raw  int
		err  error
	}
	out := make([]band, bands)
	var wg sync.WaitGroup
	for i := range out {
		y0, y1 := h*i/bands, h*(i+1)/bands
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := &out[i]
			raw := make([]byte, (y1-y0)*rowLen)
			for y := y0; y < y1; y++ {
				filterRow(raw[(y-y0)*rowLen:(y-y0+1)*rowLen], img, y)
			}
			b.sum, b.raw = adler32.Checksum(raw), len(raw)
			var buf bytes.Buffer
			buf.Grow(len(raw) / 4)
			fw, err := flate.NewWriter(&buf, flate.BestSpeed)
			if err != nil {
				b.err = err
				return
			}
			if _, err := fw.Write(raw); err != nil {
				b.err = err
				return
			}
			// Every band but the last ends on a byte boundary without
			// the final-block bit, so the bands join into one stream.
			if i < bands-1 {
				err = fw.Flush()
			} else {
				err = fw.Close()
			}
			b.data, b.err = buf.Bytes(), err
		}()
	}
	wg.Wait()
	size := 2 + 4
	sum := uint32(1)
	for i, b := range out {
		if b.err != nil {
			return nil, fmt.Errorf("encode png: compress: %w", b.err)
		}
		size += len(b.data)
		if i == 0 {
			sum = b.sum
		} else {
			sum = adler32Combine(sum, b.sum, b.raw)
		}
	}
	var buf bytes.Buffer
	buf.Grow(8 + 25 + 12 + size + 12)
	buf.WriteString("\x89PNG\r\n\x1a\n")
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, colorType // bit depth, colour type; the rest are zero
	writeChunk(&buf, "IHDR", ihdr[:])
	idat := make([]byte, 0, size)
	idat = append(idat, 0x78, 0x01) // zlib: deflate, 32K window, fastest
	for _, b := range out {
		idat = append(idat, b.data...)
	}
	idat = binary.BigEndian.AppendUint32(idat, sum)
	writeChunk(&buf, "IDAT", idat)
	writeChunk(&buf, "IEND", nil)
	return buf.Bytes(), nil
}

// filterRow writes row y (counted from the top of img) into dst as RGB
// with the Up filter (each byte minus the byte above it): on a screen most
// rows repeat the row above in most places, which leaves long runs of
// zeros for deflate.
func filterRow(dst []byte, img *image.RGBA, y int) {
	dst[0] = 2 // Up
	w := img.Rect.Dx()
	start := img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y)
	cur := img.Pix[start : start+w*4]
	d := dst[1 : 1+w*3]
	if y == 0 {
		for x := 0; x < w; x++ {
			s := cur[x*4 : x*4+3 : x*4+3]
			o := d[x*3 : x*3+3 : x*3+3]
			o[0], o[1], o[2] = s[0], s[1], s[2]
		}
		return
	}
	prev := img.Pix[start-img.Stride : start-img.Stride+w*4]
	for x := 0; x < w; x++ {
		s := cur[x*4 : x*4+3 : x*4+3]
		p := prev[x*4 : x*4+3 : x*4+3]
		o := d[x*3 : x*3+3 : x*3+3]
		o[0], o[1], o[2] = s[0]-p[0], s[1]-p[1], s[2]-p[2]
	}
}

func writeChunk(buf *bytes.Buffer, kind string, data []byte) {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], kind)
	buf.Write(head[:])
	buf.Write(data)
	crc := crc32.NewIEEE()
	crc.Write(head[4:])
	crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	buf.Write(tail[:])
}

// adler32Combine is the Adler-32 of two pieces joined, from the sums of
// each and the second's length (as zlib's adler32_combine).
func adler32Combine(a1, a2 uint32, len2 int) uint32 {
	const base = 65521
	rem := uint64(len2 % base)
	s1 := uint64(a1 & 0xffff)
	s2 := rem * s1 % base
	s1 += uint64(a2&0xffff) + base - 1
	s2 += uint64(a1>>16) + uint64(a2>>16) + base - rem
	s1 %= base
	s2 %= base
	return uint32(s2<<16 | s1)
}

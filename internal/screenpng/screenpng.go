// Package screenpng encodes screenshots as PNG quickly. A screen is mostly
// flat colour and text, which a single filter and the fastest deflate
// level compress almost as well as the standard encoder's per-row choice
// of five filters, at a fraction of its time; the rows are compressed in
// bands on every core. The output is an ordinary PNG any decoder reads.
//
// Decode reads the browser's screenshots back just as quickly: 8-bit
// truecolor PNGs in one pass over the inflated rows, anything else
// through image/png.
package screenpng

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
)

// bandRows is the height of a band: the rows compressed as one piece of
// the deflate stream, on one core. The layout depends on the image's
// height only, so an image's bytes are the same however many cores encode
// it and whichever bands an Encoder kept from the image before. Bands much
// taller than deflate's 32 KiB window cost nothing in compression.
const bandRows = 32

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

// BytesOpaqueOn is BytesOn of an image the caller knows to be opaque, such
// as an X11 capture, whose every pixel the capture made opaque: its alpha
// is not read, which spares a pass over every pixel (BenchmarkEncode), and
// a pixel that is not opaque after all is encoded as if it were.
func BytesOpaqueOn(img *image.RGBA, cores int) ([]byte, error) {
	if img.Rect.Empty() {
		return BytesOn(img, cores)
	}
	return encodeRGBA(img, cores)
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
	var e Encoder
	return e.encode(img, cores, true)
}

// Encoder encodes the screens of one run, one after another: a band whose
// rows (and the row above it, which the filter reads) are the same as in
// the image it encoded last is not compressed again. Its output is
// exactly Bytes's. An Encoder is safe for concurrent use.
type Encoder struct {
	mu   sync.Mutex
	prev *image.RGBA
	// bands are prev's compressed bands.
	bands []band
	// writers are the compressors of the goroutines, kept between images.
	writers []*flate.Writer
	// compressed counts the bands compressed, which the tests read.
	compressed int
}

// band is one compressed piece of the image data.
type band struct {
	data []byte
	sum  uint32
	raw  int
}

// Encode returns img encoded as PNG on at most cores goroutines (zero:
// every core). The encoder keeps img to compare the next image with, so
// img must not change afterwards. An image that is not an opaque
// *image.RGBA is encoded as Bytes encodes it, and not kept.
func (e *Encoder) Encode(img image.Image, cores int) ([]byte, error) {
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Rect.Empty() {
		return BytesOn(img, cores)
	}
	return e.encode(rgba, cores, false)
}

// EncodeOpaque is Encode of an image the caller knows to be opaque, as
// BytesOpaqueOn is BytesOn's: no pixel's alpha is read.
func (e *Encoder) EncodeOpaque(img *image.RGBA, cores int) ([]byte, error) {
	if img.Rect.Empty() {
		return BytesOn(img, cores)
	}
	return e.encode(img, cores, true)
}

// encode is Encode of an RGBA image, known to be opaque or not yet.
func (e *Encoder) encode(rgba *image.RGBA, cores int, opaque bool) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	w, h := rgba.Rect.Dx(), rgba.Rect.Dy()
	const bpp, colorType = 3, 2
	rowLen := 1 + w*bpp
	n := (h + bandRows - 1) / bandRows
	bands := make([]band, n)
	var todo []int
	for i := range bands {
		y0, y1 := i*bandRows, min((i+1)*bandRows, h)
		if e.prev != nil && e.prev.Rect.Size() == rgba.Rect.Size() && sameRows(e.prev, rgba, max(y0-1, 0), y1) {
			bands[i] = e.bands[i]
			continue
		}
		// The rows kept are the last image's, which was opaque; the
		// others must be too.
		if !opaque && !opaqueRows(rgba, y0, y1) {
			e.prev, e.bands = nil, nil
			return BytesOn(rgba, cores)
		}
		todo = append(todo, i)
	}
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	workers := min(cores, len(todo))
	for len(e.writers) < workers {
		fw, err := flate.NewWriter(io.Discard, flate.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("encode png: compress: %w", err)
		}
		e.writers = append(e.writers, fw)
	}
	errs := make([]error, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw := make([]byte, bandRows*rowLen)
			for {
				j := int(next.Add(1)) - 1
				if j >= len(todo) {
					return
				}
				i := todo[j]
				y0, y1 := i*bandRows, min((i+1)*bandRows, h)
				b, err := compressBand(e.writers[k], rgba, y0, y1, raw[:(y1-y0)*rowLen], rowLen, i == n-1)
				if err != nil {
					errs[k] = err
					return
				}
				bands[i] = b
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		// The writers may be mid-stream; the next image starts afresh.
		e.prev, e.bands, e.writers = nil, nil, nil
		return nil, fmt.Errorf("encode png: compress: %w", err)
	}
	e.compressed += len(todo)
	e.prev, e.bands = rgba, bands

	size := 2 + 4
	sum := uint32(1)
	for i, b := range bands {
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
	for _, b := range bands {
		idat = append(idat, b.data...)
	}
	idat = binary.BigEndian.AppendUint32(idat, sum)
	writeChunk(&buf, "IDAT", idat)
	writeChunk(&buf, "IEND", nil)
	return buf.Bytes(), nil
}

// compressBand filters rows [y0, y1) of img into raw and compresses them
// with fw as one piece of the stream: every band but the last ends on a
// byte boundary without the final-block bit, so the bands join into one.
func compressBand(fw *flate.Writer, img *image.RGBA, y0, y1 int, raw []byte, rowLen int, last bool) (band, error) {
	for y := y0; y < y1; y++ {
		filterRow(raw[(y-y0)*rowLen:(y-y0+1)*rowLen], img, y)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw) / 4)
	fw.Reset(&buf)
	if _, err := fw.Write(raw); err != nil {
		return band{}, err
	}
	var err error
	if last {
		err = fw.Close()
	} else {
		err = fw.Flush()
	}
	if err != nil {
		return band{}, err
	}
	return band{data: buf.Bytes(), sum: adler32.Checksum(raw), raw: len(raw)}, nil
}

// opaqueRows reports whether every pixel of rows [y0, y1) of img is
// opaque.
func opaqueRows(img *image.RGBA, y0, y1 int) bool {
	w := img.Rect.Dx() * 4
	for y := y0; y < y1; y++ {
		row := img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):][:w]
		for i := 3; i < len(row); i += 4 {
			if row[i] != 0xff {
				return false
			}
		}
	}
	return true
}

// sameRows reports whether rows [y0, y1) of two images of one size hold
// the same pixels.
func sameRows(a, b *image.RGBA, y0, y1 int) bool {
	w := a.Rect.Dx() * 4
	for y := y0; y < y1; y++ {
		ra := a.Pix[a.PixOffset(a.Rect.Min.X, a.Rect.Min.Y+y):][:w]
		rb := b.Pix[b.PixOffset(b.Rect.Min.X, b.Rect.Min.Y+y):][:w]
		if !bytes.Equal(ra, rb) {
			return false
		}
	}
	return true
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

package screenpng

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/draw"
	"image/png"
	"io"

	"github.com/klauspost/compress/flate"
)

// pngSignature opens every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// maxInflateRatio bounds how many bytes deflate can produce from one byte
// of input: a 258-byte match coded in two bits is the best it can do. A
// header that claims more pixels than its image data could hold is
// rejected before anything that size is allocated, so a few bytes of
// garbage cannot ask for gigabytes.
const maxInflateRatio = 1032

// The PNG filter types that precede each row.
const (
	filterNone = iota
	filterSub
	filterUp
	filterAverage
	filterPaeth
)

// Decode decodes a PNG as an *image.RGBA. A browser's screenshot (8-bit
// truecolor, with or without alpha, not interlaced) is decoded here in one
// pass over the inflated rows; any other PNG goes through image/png and is
// converted. A translucent pixel comes out premultiplied, as draw.Draw
// converts image/png's *image.NRGBA. Bad input is an error that says what
// was wrong, never a panic.
func Decode(data []byte) (*image.RGBA, error) {
	f, err := readChunks(data)
	if err != nil {
		return nil, fmt.Errorf("decode png: %w", err)
	}
	if f.fast {
		img, ok, err := f.hdr.decode(join(f.idat, f.idatLen))
		if err != nil {
			return nil, fmt.Errorf("decode png: %w", err)
		}
		if ok {
			return img, nil
		}
	}
	return decodeStandard(data, f)
}

// header is what IHDR says about the image.
type header struct {
	width, height int
	depth         byte
	colorType     byte
	compression   byte
	filter        byte
	interlace     byte
}

// file is what the chunks of a PNG hold.
type file struct {
	hdr header
	// seenHeader is whether an IHDR chunk came first.
	seenHeader bool
	idat       [][]byte
	idatLen    int
	// fast is whether the image is one this package decodes itself.
	fast bool
}

// readChunks checks the signature and the chunks up to IEND, and collects
// the header and the image data. Every error it returns is one image/png
// would also fail on; what image/png tolerates but this package does not
// expect in a screenshot (ancillary chunks before IHDR, a palette, a
// transparent colour, IDAT chunks apart) leaves the image to image/png.
func readChunks(data []byte) (file, error) {
	if len(data) < len(pngSignature) || string(data[:len(pngSignature)]) != pngSignature {
		return file{}, errors.New("not a PNG file: no PNG signature")
	}
	rest := data[len(pngSignature):]
	offset := len(pngSignature)
	f := file{fast: true}
	// apart is whether a chunk other than IDAT followed the IDAT chunks.
	apart := false
	for first := true; ; first = false {
		kind, body, n, err := nextChunk(rest, offset)
		if err != nil {
			return file{}, err
		}
		rest, offset = rest[n:], offset+n
		switch {
		case kind == "IHDR":
			if !first {
				// image/png skips ancillary chunks before IHDR, and
				// reports a second one.
				f.fast = false
				if f.seenHeader {
					continue
				}
			}
			if f.hdr, err = parseHeader(body); err != nil {
				return file{}, err
			}
			f.seenHeader = true
			f.fast = f.fast && f.hdr.fast()
			continue
		case kind == "IDAT":
			// IDAT chunks after another chunk are only valid as trailing
			// garbage, which image/png ignores.
			if apart {
				f.fast = false
			}
			f.idat = append(f.idat, body)
			f.idatLen += len(body)
			continue
		case kind == "IEND":
			if len(body) != 0 {
				return file{}, fmt.Errorf("IEND chunk at byte %d: %d bytes of data, want none", offset-n, len(body))
			}
			if !f.seenHeader {
				return file{}, errors.New("no IHDR chunk before IEND")
			}
			if len(f.idat) == 0 {
				return file{}, errors.New("no IDAT chunk before IEND")
			}
			return f, nil
		case kind[0]&0x20 == 0, kind == "tRNS":
			// A palette, a critical chunk this decoder does not know
			// (image/png ignores a palette of a truecolor image and
			// unknown critical chunks) or a transparent colour, which
			// image/png turns into alpha.
			f.fast = false
		}
		// Any other ancillary chunk (text, gamma, physical size) does not
		// change the pixels.
		if len(f.idat) > 0 {
			apart = true
		}
	}
}

// nextChunk reads the chunk at the start of rest (at offset in the file)
// and checks its CRC; n is its size with length, type and CRC.
func nextChunk(rest []byte, offset int) (kind string, body []byte, n int, err error) {
	if len(rest) == 0 {
		return "", nil, 0, fmt.Errorf("truncated at byte %d: no IEND chunk", offset)
	}
	if len(rest) < 12 {
		return "", nil, 0, fmt.Errorf("truncated at byte %d: a chunk needs 12 bytes, %d left", offset, len(rest))
	}
	length := binary.BigEndian.Uint32(rest)
	kind = string(rest[4:8])
	if length > 0x7fffffff {
		return "", nil, 0, fmt.Errorf("%q chunk at byte %d: length %d too large", kind, offset, length)
	}
	if int64(length) > int64(len(rest)-12) {
		return "", nil, 0, fmt.Errorf("truncated %q chunk at byte %d: %d bytes of data declared, %d left", kind, offset, length, len(rest)-12)
	}
	end := 8 + int(length)
	if got, want := crc32.ChecksumIEEE(rest[4:end]), binary.BigEndian.Uint32(rest[end:]); got != want {
		return "", nil, 0, fmt.Errorf("%q chunk at byte %d: CRC %08x, want %08x", kind, offset, got, want)
	}
	return kind, rest[8:end], end + 4, nil
}

// parseHeader reads IHDR's fields. Dimensions image/png rejects (zero, or
// beyond 2^31-1) leave the header zero, which is not one to decode here,
// so that image/png reports them.
func parseHeader(body []byte) (header, error) {
	if len(body) != 13 {
		return header{}, fmt.Errorf("IHDR chunk: %d bytes, want 13", len(body))
	}
	w, h := binary.BigEndian.Uint32(body[0:]), binary.BigEndian.Uint32(body[4:])
	hdr := header{
		depth: body[8], colorType: body[9], compression: body[10], filter: body[11], interlace: body[12],
	}
	if w == 0 || h == 0 || w > 0x7fffffff || h > 0x7fffffff {
		return header{}, nil
	}
	hdr.width, hdr.height = int(w), int(h)
	return hdr, nil
}

// fast reports whether the image is one this package decodes itself:
// 8-bit RGB or RGBA, not interlaced. The dimensions need no check of their
// own: parseHeader leaves a header with dimensions image/png rejects zero,
// and a depth of zero is not 8.
func (h header) fast() bool {
	return h.depth == 8 && (h.colorType == 2 || h.colorType == 6) &&
		h.compression == 0 && h.filter == 0 && h.interlace == 0
}

// bytesPerPixel is the size of a pixel in the image data.
func (h header) bytesPerPixel() int {
	if h.colorType == 6 {
		return 4
	}
	return 3
}

// join returns the pieces as one slice, copying only if there are several.
func join(pieces [][]byte, n int) []byte {
	if len(pieces) == 1 {
		return pieces[0]
	}
	out := make([]byte, 0, n)
	for _, p := range pieces {
		out = append(out, p...)
	}
	return out
}

// decode inflates the zlib stream z of the image data row by row into two
// row buffers, unfilters each row and expands it to RGBA. Inflating the
// whole image into one buffer first and unfiltering it after was slower:
// by the second pass the 2.5 MB of a screenshot's rows had left the
// cache, where one row stays in it.
func (h header) decode(z []byte) (*image.RGBA, bool, error) {
	bpp := h.bytesPerPixel()
	rowLen := 1 + h.width*bpp
	// Width and height may each be up to 2^31-1, so the rows that z can
	// hold are counted rather than the image's size multiplied out.
	if rows := (int64(len(z)) + 1) * maxInflateRatio / int64(rowLen); int64(h.height) > rows {
		return nil, false, fmt.Errorf("not enough pixel data: %d compressed bytes cannot hold %dx%d pixels",
			len(z), h.width, h.height)
	}
	zr, br, err := newInflater(z)
	if err != nil {
		return nil, false, err
	}
	defer zr.Close()
	img := image.NewRGBA(image.Rect(0, 0, h.width, h.height))
	// prev starts as the zeros the filters take for the row above the
	// first.
	cur, prev := make([]byte, rowLen), make([]byte, rowLen)
	for y := range h.height {
		if _, err := io.ReadFull(zr, cur); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, false, fmt.Errorf("not enough pixel data: the image data ends in row %d of %d", y, h.height)
			}
			return nil, false, fmt.Errorf("inflate row %d: %w", y, err)
		}
		dst := img.Pix[y*img.Stride : y*img.Stride+h.width*4]
		switch {
		case bpp == 3 && cur[0] == filterUp:
			upRGB(dst, cur[1:], prev[1:])
		case bpp == 3:
			if err := unfilter(cur[0], cur[1:], prev[1:], bpp); err != nil {
				return nil, false, fmt.Errorf("row %d: %w", y, err)
			}
			expandRGB(dst, cur[1:])
		default:
			if err := unfilter(cur[0], cur[1:], prev[1:], bpp); err != nil {
				return nil, false, fmt.Errorf("row %d: %w", y, err)
			}
			premultiply(dst, cur[1:])
		}
		cur, prev = prev, cur
	}
	trailing, err := endOfStream(zr, br)
	if err != nil {
		return nil, false, err
	}
	if trailing {
		// Bytes after the zlib stream, which image/png may ignore.
		return nil, false, nil
	}
	return img, true, nil
}

// newInflater checks the zlib header of z and returns the inflater of the
// deflate stream after it, and the reader of z it reads from.
func newInflater(z []byte) (io.ReadCloser, *bytes.Reader, error) {
	if len(z) < 2 {
		return nil, nil, fmt.Errorf("zlib header: %d bytes of image data", len(z))
	}
	cmf, flg := z[0], z[1]
	switch {
	case cmf&0x0f != 8 || cmf>>4 > 7:
		return nil, nil, fmt.Errorf("zlib header %02x%02x: not deflate with a window of at most 32 KiB", cmf, flg)
	case (uint16(cmf)<<8|uint16(flg))%31 != 0:
		return nil, nil, fmt.Errorf("zlib header %02x%02x: bad check bits", cmf, flg)
	case flg&0x20 != 0:
		return nil, nil, fmt.Errorf("zlib header %02x%02x: asks for a preset dictionary", cmf, flg)
	}
	// A *bytes.Reader is a byte reader, so the inflater reads no further
	// than the end of the deflate stream (what is left is the checksum)
	// and takes klauspost's path specialised for it.
	br := bytes.NewReader(z[2:])
	return flate.NewReader(br), br, nil
}

// endOfStream checks that the deflate stream ends after the rows and that
// its checksum follows, and reports whether more bytes follow that.
//
// The Adler-32 of the inflated data is not checked: it would cost about a
// millisecond of a screenshot's four, and the data comes from the local
// browser with a CRC-32 on every chunk, which readChunks checks and which
// already guards the compressed bytes; an inflater fed intact bytes that
// got the output wrong would be a bug the differential tests are there to
// catch.
func endOfStream(zr io.Reader, br *bytes.Reader) (trailing bool, err error) {
	// A reader may return nothing and no error a few times; image/png
	// gives up after a hundred.
	var one [1]byte
	for range 100 {
		n, err := zr.Read(one[:])
		if n > 0 {
			return false, errors.New("too much pixel data")
		}
		if errors.Is(err, io.EOF) {
			switch left := br.Len(); {
			case left < 4:
				return false, fmt.Errorf("truncated zlib checksum: %d of 4 bytes", left)
			case left > 4:
				return true, nil
			}
			return false, nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return false, errors.New("truncated deflate stream after the pixel data")
			}
			return false, fmt.Errorf("inflate: %w", err)
		}
	}
	return false, errors.New("inflate: no progress at the end of the pixel data")
}

// unfilter undoes the row's filter in place; prev is the row above,
// already unfiltered (zeros above the first row).
func unfilter(filter byte, cur, prev []byte, bpp int) error {
	prev = prev[:len(cur)]
	switch filter {
	case filterNone:
	case filterSub:
		for i := bpp; i < len(cur); i++ {
			cur[i] += cur[i-bpp]
		}
	case filterUp:
		addBytes(cur, prev)
	case filterAverage:
		for i := range bpp {
			cur[i] += prev[i] / 2
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += byte((int(cur[i-bpp]) + int(prev[i])) / 2)
		}
	case filterPaeth:
		for i := range bpp {
			cur[i] += prev[i] // the predictor of b alone, with a and c zero
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += paeth(cur[i-bpp], prev[i], prev[i-bpp])
		}
	default:
		return fmt.Errorf("bad filter type %d", filter)
	}
	return nil
}

// paeth is the Paeth predictor of a byte from the ones to its left (a),
// above (b) and above left (c).
func paeth(a, b, c byte) byte {
	pa := absDiff(int(b), int(c))
	pb := absDiff(int(a), int(c))
	pc := absDiff(int(a)+int(b), 2*int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func absDiff(x, y int) int {
	if x < y {
		return y - x
	}
	return x - y
}

// addBytes adds src to dst byte by byte (mod 256), eight bytes at a time.
func addBytes(dst, src []byte) {
	d, s := dst, src[:len(dst)]
	for len(d) >= 8 && len(s) >= 8 {
		binary.LittleEndian.PutUint64(d, add8(binary.LittleEndian.Uint64(d), binary.LittleEndian.Uint64(s)))
		d, s = d[8:], s[8:]
	}
	for i := range d {
		d[i] += s[i]
	}
}

// add8 adds the eight bytes of a and b each on their own: the low seven
// bits of each byte are added without a carry leaving the byte, and the
// top bit is the sum of the two top bits and that carry.
func add8(a, b uint64) uint64 {
	const high = 0x8080808080808080
	return ((a &^ high) + (b &^ high)) ^ ((a ^ b) & high)
}

// expandRGB writes the RGB pixels of src into dst as opaque RGBA.
func expandRGB(dst, src []byte) {
	d, s := dst, src[:len(dst)/4*3]
	for len(s) >= 12 && len(d) >= 16 {
		expand4(d, binary.LittleEndian.Uint64(s), uint64(binary.LittleEndian.Uint32(s[8:])))
		d, s = d[16:], s[12:]
	}
	for len(s) >= 3 && len(d) >= 4 {
		d[0], d[1], d[2], d[3] = s[0], s[1], s[2], 0xff
		d, s = d[4:], s[3:]
	}
}

// expand4 writes four RGB pixels, the twelve bytes lo (eight) and hi
// (four), into d as sixteen bytes of opaque RGBA.
func expand4(d []byte, lo, hi uint64) {
	const alpha = 0xff000000_ff000000
	p0 := lo & 0xffffff
	p1 := lo >> 24 & 0xffffff
	p2 := lo>>48 | (hi&0xff)<<16
	p3 := hi >> 8
	binary.LittleEndian.PutUint64(d[0:8], p0|p1<<32|alpha)
	binary.LittleEndian.PutUint64(d[8:16], p2|p3<<32|alpha)
}

// upRGB undoes the Up filter of an RGB row in place and writes it into dst
// as opaque RGBA, in one pass over each four pixels: a browser filters
// every row of its screenshots so, and reading the row once instead of
// twice saved about an eighth of the decoding time.
func upRGB(dst, cur, prev []byte) {
	d, c, p := dst, cur[:len(dst)/4*3], prev[:len(dst)/4*3]
	for len(c) >= 12 && len(p) >= 12 && len(d) >= 16 {
		lo := add8(binary.LittleEndian.Uint64(c), binary.LittleEndian.Uint64(p))
		hi := add8(uint64(binary.LittleEndian.Uint32(c[8:])), uint64(binary.LittleEndian.Uint32(p[8:])))
		binary.LittleEndian.PutUint64(c, lo)
		binary.LittleEndian.PutUint32(c[8:], uint32(hi))
		expand4(d, lo, hi)
		d, c, p = d[16:], c[12:], p[12:]
	}
	addBytes(c, p)
	expandRGB(d, c)
}

// premultiply writes the non-premultiplied RGBA pixels of src into dst
// premultiplied, rounding as draw.Draw does when it converts an
// *image.NRGBA to an *image.RGBA.
func premultiply(dst, src []byte) {
	src = src[:len(dst)]
	for i := 0; i+4 <= len(src); i += 4 {
		s, d := src[i:i+4:i+4], dst[i:i+4:i+4]
		if s[3] == 0xff {
			copy(d, s)
			continue
		}
		a := uint32(s[3]) * 0x101
		d[0] = uint8(uint32(s[0]) * a / 0xff >> 8)
		d[1] = uint8(uint32(s[1]) * a / 0xff >> 8)
		d[2] = uint8(uint32(s[2]) * a / 0xff >> 8)
		d[3] = s[3]
	}
}

// decodeStandard decodes data with image/png and converts the image to
// *image.RGBA.
func decodeStandard(data []byte, f file) (*image.RGBA, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode png: %w", err)
	}
	// image/png allocates the image its header asks for before it reads
	// the data; the pixels' bits (one filter byte a row aside) must fit in
	// what the image data can inflate to. image/png has checked the header
	// already, and the depths and colour types it accepts have at most 64
	// bits a pixel. Since DecodeConfig accepted the header, the width is
	// positive and so are the depth and the channels of its colour type,
	// so the division below is never by zero.
	bits := int64(f.hdr.depth) * int64(channels(f.hdr.colorType))
	if int64(f.hdr.height) > (int64(f.idatLen)+1)*maxInflateRatio*8/(int64(f.hdr.width)*bits) {
		return nil, fmt.Errorf("decode png: not enough pixel data: %d compressed bytes cannot hold %dx%d pixels",
			f.idatLen, cfg.Width, cfg.Height)
	}
	m, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decode png: %w", err)
	}
	if rgba, ok := m.(*image.RGBA); ok {
		return rgba, nil
	}
	rgba := image.NewRGBA(m.Bounds())
	draw.Draw(rgba, rgba.Rect, m, m.Bounds().Min, draw.Src)
	return rgba, nil
}

// channels is the number of samples in a pixel of a colour type.
func channels(colorType byte) int {
	switch colorType {
	case 0, 3: // grey, palette index
		return 1
	case 4: // grey and alpha
		return 2
	case 2:
		return 3
	case 6:
		return 4
	}
	return 0
}

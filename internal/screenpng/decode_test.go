package screenpng

import (
	"bytes"
	stdflate "compress/flate"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
)

// chromiumScreenshot is a headless Chromium 1280x800 window's viewport on
// a text-heavy page, captured with Page.captureScreenshot and
// optimizeForSpeed as drivers/cdp captures it: 8-bit RGB, every row
// filtered Up, zlib level 1 in 4 KiB IDAT chunks.
const chromiumScreenshot = "testdata/chromium-manual-1280x657.png"

// handPNG describes a PNG the tests write byte by byte, so that every
// filter type can be chosen row by row (image/png's encoder picks its own).
type handPNG struct {
	width, height int
	// colorType is 2 (RGB) or 6 (RGBA); depth 8.
	colorType byte
	interlace byte
	// filters are the rows' filter types, repeated down the image.
	filters []byte
	// level is the zlib compression level (zero: the default).
	level int
	// idatSize splits the image data into IDAT chunks of this size (zero:
	// one chunk).
	idatSize int
	// first, before and after are chunks written before IHDR, before the
	// first IDAT chunk and between IDAT and IEND.
	first, before, after []testChunk
	seed                 uint64
}

type testChunk struct {
	kind string
	data []byte
}

// pixels returns the image's unfiltered rows: random bytes, so that every
// branch of the predictors is taken, with runs of the row above and of
// the pixel to the left as on a screen, and for RGBA alpha that is often
// 0 or 0xff and otherwise anything.
func (p handPNG) pixels() [][]byte {
	r := rand.New(rand.NewPCG(p.seed, uint64(p.width)<<32|uint64(p.height)))
	bpp := 3
	if p.colorType == 6 {
		bpp = 4
	}
	rows := make([][]byte, p.height)
	for y := range rows {
		row := make([]byte, p.width*bpp)
		for x := 0; x < p.width; x++ {
			px := row[x*bpp : (x+1)*bpp]
			switch k := r.IntN(4); {
			case k == 0 && y > 0:
				copy(px, rows[y-1][x*bpp:])
			case k == 1 && x > 0:
				copy(px, row[(x-1)*bpp:])
			default:
				for i := range px {
					px[i] = byte(r.IntN(256))
				}
			}
			if bpp == 4 {
				switch r.IntN(3) {
				case 0:
					px[3] = 0
				case 1:
					px[3] = 0xff
				}
			}
		}
		rows[y] = row
	}
	return rows
}

// build writes the PNG, and returns it with the image the rows are.
func (p handPNG) build(t testing.TB) ([]byte, *image.NRGBA) {
	t.Helper()
	rows := p.pixels()
	bpp := len(rows[0]) / p.width
	want := image.NewNRGBA(image.Rect(0, 0, p.width, p.height))
	for y, row := range rows {
		for x := range p.width {
			px := row[x*bpp:]
			a := byte(0xff)
			if bpp == 4 {
				a = px[3]
			}
			want.SetNRGBA(x, y, color.NRGBA{px[0], px[1], px[2], a})
		}
	}
	var raw bytes.Buffer
	prev := make([]byte, len(rows[0]))
	for y, row := range rows {
		f := p.filters[y%len(p.filters)]
		raw.WriteByte(f)
		raw.Write(filterTestRow(f, row, prev, bpp))
		prev = row
	}
	return p.assemble(t, raw.Bytes()), want
}

// assemble compresses the filtered rows raw and writes them as the PNG p
// says: its compression level, its chunks around the image data and the
// size of its IDAT chunks.
func (p handPNG) assemble(t testing.TB, raw []byte) []byte {
	t.Helper()
	level := p.level
	if level == 0 {
		level = zlib.DefaultCompression
	}
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, level)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(p.width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(p.height))
	ihdr[8], ihdr[9], ihdr[12] = 8, p.colorType, p.interlace
	chunks := append(slices.Clone(p.first), testChunk{"IHDR", ihdr[:]})
	chunks = append(chunks, p.before...)
	data := z.Bytes()
	size := p.idatSize
	if size == 0 {
		size = len(data)
	}
	for len(data) > 0 {
		n := min(size, len(data))
		chunks = append(chunks, testChunk{"IDAT", data[:n]})
		data = data[n:]
	}
	chunks = append(chunks, p.after...)
	chunks = append(chunks, testChunk{"IEND", nil})
	return writeTestPNG(chunks)
}

// writeTestPNG writes the signature and the chunks with their CRCs.
func writeTestPNG(chunks []testChunk) []byte {
	out := []byte(pngSignature)
	for _, c := range chunks {
		out = binary.BigEndian.AppendUint32(out, uint32(len(c.data)))
		start := len(out)
		out = append(out, c.kind...)
		out = append(out, c.data...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[start:]))
	}
	return out
}

// filterTestRow applies filter f to row as the PNG specification writes
// it, byte by byte; prev is the unfiltered row above (zeros for the first).
func filterTestRow(f byte, row, prev []byte, bpp int) []byte {
	out := make([]byte, len(row))
	for i := range row {
		var a, b, c int
		if i >= bpp {
			a, c = int(row[i-bpp]), int(prev[i-bpp])
		}
		b = int(prev[i])
		var pred int
		switch f {
		case filterNone:
		case filterSub:
			pred = a
		case filterUp:
			pred = b
		case filterAverage:
			pred = (a + b) / 2
		case filterPaeth:
			p := a + b - c
			pa, pb, pc := abs(p-a), abs(p-b), abs(p-c)
			switch {
			case pa <= pb && pa <= pc:
				pred = a
			case pb <= pc:
				pred = b
			default:
				pred = c
			}
		default:
			panic(fmt.Sprintf("filter %d", f))
		}
		out[i] = row[i] - byte(pred)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// reference decodes data as the standard library would have it: image/png,
// then draw.Draw into an *image.RGBA.
func reference(data []byte) (*image.RGBA, error) {
	m, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	rgba := image.NewRGBA(m.Bounds())
	draw.Draw(rgba, rgba.Rect, m, m.Bounds().Min, draw.Src)
	return rgba, nil
}

// diffRGBA describes the first difference between two images, or is empty.
func diffRGBA(got, want *image.RGBA) string {
	if got.Rect != want.Rect {
		return fmt.Sprintf("bounds %v, want %v", got.Rect, want.Rect)
	}
	for y := want.Rect.Min.Y; y < want.Rect.Max.Y; y++ {
		for x := want.Rect.Min.X; x < want.Rect.Max.X; x++ {
			if g, w := got.RGBAAt(x, y), want.RGBAAt(x, y); g != w {
				return fmt.Sprintf("pixel (%d,%d) is %v, want %v", x, y, g, w)
			}
		}
	}
	return ""
}

// decodesFast reports whether Decode takes its own path for data.
func decodesFast(t testing.TB, data []byte) bool {
	t.Helper()
	f, err := readChunks(data)
	if err != nil {
		t.Fatalf("readChunks: %v", err)
	}
	if !f.fast {
		return false
	}
	_, ok, err := f.hdr.decode(join(f.idat, f.idatLen))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return ok
}

// handCases are the hand-written PNGs: every filter alone and all five
// mixed, both colour types, odd widths and single rows, chunking and
// compression levels.
func handCases() []struct {
	name string
	png  handPNG
	fast bool
} {
	all := []byte{filterNone, filterSub, filterUp, filterAverage, filterPaeth}
	type c = struct {
		name string
		png  handPNG
		fast bool
	}
	var cases []c
	filterSets := []struct {
		name    string
		filters []byte
	}{
		{"none", []byte{filterNone}},
		{"sub", []byte{filterSub}},
		{"up", []byte{filterUp}},
		{"average", []byte{filterAverage}},
		{"paeth", []byte{filterPaeth}},
		{"all five", all},
		{"all five backwards", []byte{filterPaeth, filterAverage, filterUp, filterSub, filterNone}},
	}
	sizes := []image.Point{{1, 1}, {1, 9}, {9, 1}, {2, 3}, {13, 17}, {333, 7}}
	for _, ct := range []byte{2, 6} {
		for _, fs := range filterSets {
			for _, sz := range sizes {
				cases = append(cases, c{
					fmt.Sprintf("type %d, %s, %dx%d", ct, fs.name, sz.X, sz.Y),
					handPNG{width: sz.X, height: sz.Y, colorType: ct, filters: fs.filters, seed: uint64(ct)},
					true,
				})
			}
		}
	}
	text := testChunk{"tEXt", []byte("Comment\x00written by hand")}
	cases = append(cases,
		c{"level 1 in 7-byte IDAT chunks", handPNG{width: 40, height: 30, colorType: 2, filters: all, level: 1, idatSize: 7}, true},
		c{"stored in 1-byte IDAT chunks", handPNG{width: 11, height: 5, colorType: 6, filters: all, level: zlib.NoCompression, idatSize: 1}, true},
		c{"best compression", handPNG{width: 64, height: 64, colorType: 6, filters: all, level: zlib.BestCompression}, true},
		c{"text before and after the image data", handPNG{width: 20, height: 4, colorType: 2, filters: all, before: []testChunk{text}, after: []testChunk{text}}, true},
		c{"an empty IDAT chunk after the image data", handPNG{width: 20, height: 4, colorType: 2, filters: all, after: []testChunk{{"IDAT", nil}}}, true},
		c{"a suggested palette", handPNG{width: 5, height: 5, colorType: 2, filters: all, before: []testChunk{{"PLTE", []byte{1, 2, 3}}}}, false},
		c{"a transparent colour", handPNG{width: 5, height: 5, colorType: 2, filters: all, before: []testChunk{{"tRNS", []byte{0, 1, 0, 2, 0, 3}}}}, false},
		c{"text before IHDR", handPNG{width: 20, height: 4, colorType: 2, filters: all, first: []testChunk{text}}, false},
		c{"text between IDAT chunks", handPNG{width: 20, height: 4, colorType: 2, filters: all, idatSize: 10, after: []testChunk{text, {"IDAT", nil}}}, false},
		// One pixel is the only image whose Adam7 data is laid out as
		// without interlacing.
		c{"interlaced", handPNG{width: 1, height: 1, colorType: 6, filters: all, interlace: 1}, false},
	)
	return cases
}

func TestDecodeHandWritten(t *testing.T) {
	t.Parallel()
	for _, c := range handCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data, nrgba := c.png.build(t)
			if fast := decodesFast(t, data); fast != c.fast {
				t.Fatalf("fast path taken: %v, want %v", fast, c.fast)
			}
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			ref, err := reference(data)
			if err != nil {
				t.Fatalf("image/png: %v", err)
			}
			if d := diffRGBA(got, ref); d != "" {
				t.Errorf("against image/png: %s", d)
			}
			want := image.NewRGBA(nrgba.Rect)
			draw.Draw(want, want.Rect, nrgba, image.Point{}, draw.Src)
			if d := diffRGBA(got, want); d != "" {
				t.Errorf("against the pixels written: %s", d)
			}
		})
	}
}

// encodedCases are PNGs from encoders: this package's, image/png's at each
// level and for several image types, and Chromium's.
func encodedCases(tb testing.TB) []struct {
	name string
	data []byte
	fast bool
} {
	tb.Helper()
	type c = struct {
		name string
		data []byte
		fast bool
	}
	screen := loadScreen(tb)
	r := rand.New(rand.NewPCG(7, 7))
	translucent := image.NewNRGBA(image.Rect(0, 0, 61, 43))
	for i := range translucent.Pix {
		translucent.Pix[i] = byte(r.IntN(256))
	}
	opaque := image.NewRGBA(image.Rect(0, 0, 300, 200))
	draw.Draw(opaque, opaque.Rect, screen, image.Pt(500, 300), draw.Src)
	gray := image.NewGray(image.Rect(0, 0, 31, 9))
	for i := range gray.Pix {
		gray.Pix[i] = byte(r.IntN(256))
	}
	deep := image.NewRGBA64(image.Rect(0, 0, 9, 8))
	for i := range deep.Pix {
		deep.Pix[i] = byte(r.IntN(256))
	}
	pal := image.NewPaletted(image.Rect(0, 0, 17, 5), color.Palette{color.Black, color.White, color.NRGBA{200, 10, 10, 128}})
	for i := range pal.Pix {
		pal.Pix[i] = byte(r.IntN(3))
	}
	var cases []c
	ours, err := Bytes(screen)
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases, c{"this package's encoder, a real screen", ours, true})
	oursSmall, err := Bytes(opaque)
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases, c{"this package's encoder, part of it", oursSmall, true})
	levels := []struct {
		name  string
		level png.CompressionLevel
	}{
		{"default", png.DefaultCompression},
		{"no compression", png.NoCompression},
		{"best speed", png.BestSpeed},
		{"best compression", png.BestCompression},
	}
	for _, l := range levels {
		for _, im := range []struct {
			name string
			img  image.Image
			fast bool
		}{
			{"opaque RGB", opaque, true},
			{"translucent NRGBA", translucent, true},
			{"grey", gray, false},
			{"16-bit", deep, false},
			{"palette", pal, false},
		} {
			var buf bytes.Buffer
			enc := png.Encoder{CompressionLevel: l.level}
			if err := enc.Encode(&buf, im.img); err != nil {
				tb.Fatal(err)
			}
			cases = append(cases, c{fmt.Sprintf("image/png, %s, %s", l.name, im.name), buf.Bytes(), im.fast})
		}
	}
	chromium, err := os.ReadFile(chromiumScreenshot)
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases, c{"a Chromium screenshot", chromium, true})
	return cases
}

func TestDecodeEncoded(t *testing.T) {
	t.Parallel()
	for _, c := range encodedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if fast := decodesFast(t, c.data); fast != c.fast {
				t.Fatalf("fast path taken: %v, want %v", fast, c.fast)
			}
			got, err := Decode(c.data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			ref, err := reference(c.data)
			if err != nil {
				t.Fatalf("image/png: %v", err)
			}
			if d := diffRGBA(got, ref); d != "" {
				t.Error(d)
			}
		})
	}
}

// withCRCs returns data with every chunk's CRC made right, so that a
// corrupted or fuzzed file gets past the CRC checks to what is behind.
func withCRCs(data []byte) []byte {
	out := bytes.Clone(data)
	if len(out) < len(pngSignature) {
		return out
	}
	for p := len(pngSignature); p+12 <= len(out); {
		n := int(binary.BigEndian.Uint32(out[p:]))
		if n < 0 || n > len(out)-p-12 {
			break
		}
		binary.BigEndian.PutUint32(out[p+8+n:], crc32.ChecksumIEEE(out[p+4:p+8+n]))
		p += 12 + n
	}
	return out
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	good, _ := handPNG{width: 5, height: 3, colorType: 2, filters: []byte{filterUp}, seed: 3}.build(t)
	// The byte offsets in good: the signature (8), IHDR (25), then the
	// IDAT chunk.
	idat := 8 + 25
	idatLen := int(binary.BigEndian.Uint32(good[idat:]))
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	rows := func(h int) []byte {
		// An image that says it is h rows high, with good's data.
		return withCRCs(edit(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[8+8+4:], uint32(h))
			return b
		}))
	}
	hugeHeader := writeTestPNG([]testChunk{
		{"IHDR", []byte{0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 8, 2, 0, 0, 0}},
		{"IDAT", []byte{0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff}},
		{"IEND", nil},
	})
	// tall is an image 1 pixel wide and h rows high of colour type ct
	// whose image data is seven bytes: a zlib header and an empty final
	// stored block, without the checksum. Seven bytes inflate to at most
	// (7+1)*maxInflateRatio = 8256, so a header that asks for more rows
	// than that holds is refused before anything is allocated, and one
	// exactly at the bound is read until the data runs out.
	tall := func(ct byte, h uint32) []byte {
		ihdr := []byte{0, 0, 0, 1, 0, 0, 0, 0, 8, ct, 0, 0, 0}
		binary.BigEndian.PutUint32(ihdr[4:], h)
		return writeTestPNG([]testChunk{
			{"IHDR", ihdr},
			{"IDAT", []byte{0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff}},
			{"IEND", nil},
		})
	}
	// unfinished is good's rows in a zlib stream that is cut, or goes on
	// with tail, after a sync flush that follows the last row: the rows
	// are all there, and what comes after them is not the stream's end.
	unfinished := func(tail ...byte) []byte {
		p := handPNG{width: 5, height: 3, colorType: 2, filters: []byte{filterUp}, seed: 3}
		var raw bytes.Buffer
		prev := make([]byte, 15)
		for _, row := range p.pixels() {
			raw.WriteByte(filterUp)
			raw.Write(filterTestRow(filterUp, row, prev, 3))
			prev = row
		}
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		if _, err := zw.Write(raw.Bytes()); err != nil {
			t.Fatal(err)
		}
		if err := zw.Flush(); err != nil {
			t.Fatal(err)
		}
		return writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IDAT", append(z.Bytes(), tail...)}, {"IEND", nil}})
	}
	hugePalette := writeTestPNG([]testChunk{
		{"IHDR", []byte{0, 1, 0, 0, 0, 1, 0, 0, 8, 3, 0, 0, 0}}, // 65536x65536
		{"PLTE", []byte{1, 2, 3}},
		{"IDAT", []byte{0x78, 0x01, 0x01, 0x00, 0x00, 0xff, 0xff}},
		{"IEND", nil},
	})
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no PNG signature"},
		{"a GIF", []byte("GIF89a........"), "no PNG signature"},
		{"the signature alone", good[:8], "no IEND chunk"},
		{"cut in a chunk header", good[:12], "a chunk needs 12 bytes"},
		{"cut in the image data", good[:idat+20], fmt.Sprintf(`truncated "IDAT" chunk at byte 33: %d bytes of data declared, 8 left`, idatLen)},
		// Cut in its CRC, the chunk's data is whole but the chunk is not.
		{"cut in the image data's CRC", good[:idat+12+idatLen-1], fmt.Sprintf("%d bytes of data declared, %d left", idatLen, idatLen-1)},
		{"a chunk length of 2^31-1", edit(func(b []byte) []byte { copy(b[idat:], "\x7f\xff\xff\xff"); return b }), `truncated "IDAT" chunk`},
		{"cut before IEND", good[:len(good)-12], "no IEND chunk"},
		{"a flipped bit", edit(func(b []byte) []byte { b[idat+10] ^= 1; return b }), `"IDAT" chunk at byte 33: CRC`},
		{"a chunk length beyond 2^31", edit(func(b []byte) []byte { b[idat] = 0x80; return b }), "too large"},
		{"a short IHDR", writeTestPNG([]testChunk{{"IHDR", make([]byte, 12)}, {"IEND", nil}}), "IHDR chunk: 12 bytes"},
		{"no image data", writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IEND", nil}}), "no IDAT chunk"},
		{"data in IEND", writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IDAT", good[idat+8 : idat+8+idatLen]}, {"IEND", []byte{1}}}), fmt.Sprintf("IEND chunk at byte %d: 1 bytes", idat+12+idatLen)},
		{"not zlib", withCRCs(edit(func(b []byte) []byte { b[idat+8] = 0x79; return b })), "not deflate"},
		{"zlib check bits", withCRCs(edit(func(b []byte) []byte { b[idat+9] ^= 1; return b })), "bad check bits"},
		{"a zlib header alone", writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IDAT", []byte{0x78, 0x01}}, {"IEND", nil}}), "the image data ends in row 0 of 3"},
		{"a preset dictionary", writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IDAT", []byte{0x78, 0xbb, 0, 0, 0, 1}}, {"IEND", nil}}), "preset dictionary"},
		{"a broken deflate stream", withCRCs(edit(func(b []byte) []byte { b[idat+10] = 0xff; return b })), "inflate"},
		{"fewer rows than the header says", rows(4), "not enough pixel data"},
		{"more rows than the header says", rows(2), "too much pixel data"},
		{"a bad filter type", handPNG{width: 5, height: 3, colorType: 2, filters: []byte{filterUp, 5}}.buildRaw(t), "row 1: bad filter type 5"},
		{"the stream cut after the rows", unfinished(), "truncated deflate stream after the pixel data"},
		{"a broken block after the rows", unfinished(0xff), "decode png: inflate: flate: corrupt input"},
		{"as many rows as the image data can hold", tall(2, 8256/4), "the image data ends in row 0 of 2064"},
		{"one row more than the image data can hold", tall(2, 8256/4+1), "7 compressed bytes cannot hold 1x2065 pixels"},
		// image/png's own error: 16 bits a pixel, 8256*8/16 rows.
		{"as many grey rows as the image data can hold", tall(4, 4128), "decode png: png: "},
		{"one grey row more than the image data can hold", tall(4, 4129), "7 compressed bytes cannot hold 1x4129 pixels"},
		{"a huge image from a few bytes", hugeHeader, "not enough pixel data"},
		{"a huge palette image from a few bytes", hugePalette, "not enough pixel data"},
		{"a truncated checksum", writeTestPNG([]testChunk{{"IHDR", good[16:29]}, {"IDAT", good[idat+8 : idat+8+idatLen-2]}, {"IEND", nil}}), "truncated zlib checksum"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			img, err := Decode(c.data)
			if err == nil {
				t.Fatalf("Decode succeeded (%v), want an error", img.Rect)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// buildRaw is build without the filters applied: the filter bytes are
// written as they are, so that a test can write one that does not exist.
func (p handPNG) buildRaw(t testing.TB) []byte {
	t.Helper()
	rows := p.pixels()
	var raw bytes.Buffer
	for y, row := range rows {
		raw.WriteByte(p.filters[y%len(p.filters)])
		raw.Write(row)
	}
	return p.assemble(t, raw.Bytes())
}

// FuzzDecode checks that no input makes Decode panic, and that whenever
// image/png decodes an input too, both give the same pixels. Each input is
// also tried with its CRCs made right, so that mutations reach the image
// data rather than stopping at a checksum.
func FuzzDecode(f *testing.F) {
	for _, c := range handCases() {
		if c.png.width*c.png.height > 4096 {
			continue
		}
		data, _ := c.png.build(f)
		f.Add(data)
	}
	for _, c := range encodedCases(f) {
		if len(c.data) < 20000 {
			f.Add(c.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range [][]byte{data, withCRCs(data)} {
			// Both decoders allocate what the header asks for once the
			// image data could hold it, and a few kilobytes of a 1-bit
			// image can hold a hundred million pixels; stay within what
			// a test can afford, as image/png's own fuzz test does.
			cfg, cerr := png.DecodeConfig(bytes.NewReader(in))
			if cerr == nil && int64(cfg.Width)*int64(cfg.Height) > 1e6 {
				continue
			}
			got, err := Decode(in)
			if cerr != nil {
				continue
			}
			ref, rerr := reference(in)
			if err != nil || rerr != nil {
				continue
			}
			if d := diffRGBA(got, ref); d != "" {
				t.Fatalf("against image/png: %s", d)
			}
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	data, err := os.ReadFile(chromiumScreenshot)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		decode func([]byte) (image.Image, error)
	}{
		{"screenpng", func(d []byte) (image.Image, error) { return Decode(d) }},
		{"image-png", func(d []byte) (image.Image, error) { return png.Decode(bytes.NewReader(d)) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeParts measures the parts of decoding the Chromium
// screenshot on their own: inflating its rows with klauspost/compress and
// with the standard library, the Adler-32 that Decode does not check,
// undoing the Up filter and expanding the rows to RGBA, and allocating
// (clearing) the image. Decode is about their sum without the Adler-32
// and the standard inflater.
func BenchmarkDecodeParts(b *testing.B) {
	data, err := os.ReadFile(chromiumScreenshot)
	if err != nil {
		b.Fatal(err)
	}
	f, err := readChunks(data)
	if err != nil {
		b.Fatal(err)
	}
	z, h := join(f.idat, f.idatLen), f.hdr
	rowLen := 1 + 3*h.width
	inflateRows := func(b *testing.B, r io.Reader) {
		row := make([]byte, rowLen)
		for range h.height {
			if _, err := io.ReadFull(r, row); err != nil {
				b.Fatal(err)
			}
		}
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(z[2:])))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("inflate-klauspost", func(b *testing.B) {
		for b.Loop() {
			inflateRows(b, flate.NewReader(bytes.NewReader(z[2:])))
		}
	})
	b.Run("inflate-compress-flate", func(b *testing.B) {
		for b.Loop() {
			inflateRows(b, stdflate.NewReader(bytes.NewReader(z[2:])))
		}
	})
	b.Run("adler32", func(b *testing.B) {
		for b.Loop() {
			adler32.Checksum(raw)
		}
	})
	b.Run("up-and-expand", func(b *testing.B) {
		// Two rows stand for all of them: in Decode the row the inflater
		// has just written is in the cache, and the arithmetic does not
		// depend on the bytes.
		img := image.NewRGBA(image.Rect(0, 0, h.width, h.height))
		cur, prev := bytes.Clone(raw[rowLen:2*rowLen]), bytes.Clone(raw[:rowLen])
		for b.Loop() {
			for y := range h.height {
				upRGB(img.Pix[y*img.Stride:(y+1)*img.Stride], cur[1:], prev[1:])
			}
		}
	})
	b.Run("new-image", func(b *testing.B) {
		for b.Loop() {
			_ = image.NewRGBA(image.Rect(0, 0, h.width, h.height))
		}
	})
}

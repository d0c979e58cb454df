package graphics

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi/kitty"
)

// KittyChunkSize is the most base64 bytes one kitty graphics escape carries;
// the protocol requires chunks of at most 4096.
const KittyChunkSize = 4096

// EncodePNG encodes img as PNG at the fastest compression level, which is
// what kitty passthrough sends: the terminal decodes it, nothing is
// quantized.
func EncodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}

// KittyTransmit returns the escapes that upload pngData as image id and
// create a virtual placement of cols×rows cells for Unicode placeholders
// (a=T, U=1, f=100, q=2 so the terminal sends no replies). The base64
// payload is split into chunks of KittyChunkSize with m=1 on all but the
// last. The image appears only where KittyPlaceholders cells are drawn.
func KittyTransmit(id uint32, pngData []byte, cols, rows int) string {
	data := base64.StdEncoding.EncodeToString(pngData)
	var b strings.Builder
	b.Grow(len(data) + (len(data)/KittyChunkSize+1)*16 + 64)
	first := true
	for {
		chunk := data[:min(KittyChunkSize, len(data))]
		data = data[len(chunk):]
		more := 0
		if len(data) > 0 {
			more = 1
		}
		b.WriteString("\x1b_G")
		if first {
			fmt.Fprintf(&b, "a=T,U=1,f=100,q=2,i=%d,c=%d,r=%d,", id, cols, rows)
			first = false
		} else {
			b.WriteString("q=2,")
		}
		b.WriteString("m=")
		b.WriteString(strconv.Itoa(more))
		b.WriteByte(';')
		b.WriteString(chunk)
		b.WriteString("\x1b\\")
		if more == 0 {
			return b.String()
		}
	}
}

// KittyDelete returns the escape that deletes image id and frees its data
// (a=d, d=I), for a frame that has been replaced.
func KittyDelete(id uint32) string {
	return "\x1b_Ga=d,d=I,q=2,i=" + strconv.FormatUint(uint64(id), 10) + "\x1b\\"
}

// KittyPlaceholders returns rows lines of cols placeholder cells (U+10EEEE
// with a row and a column diacritic each) in a foreground colour that
// encodes id, so the terminal draws the image transmitted by KittyTransmit
// there. They are plain styled text: the Bubble Tea renderer and tmux pass
// them like any other cells. ids are 24-bit; every cell carries both
// diacritics so the picture survives partial redraws.
func KittyPlaceholders(id uint32, cols, rows int) string {
	fg := fmt.Sprintf("\x1b[38;2;%d;%d;%dm", id>>16&0xff, id>>8&0xff, id&0xff)
	var b strings.Builder
	b.Grow(rows * (len(fg) + cols*8 + 8))
	for r := range rows {
		if r > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fg)
		for c := range cols {
			b.WriteRune(kitty.Placeholder)
			b.WriteRune(kitty.Diacritic(r))
			b.WriteRune(kitty.Diacritic(c))
		}
		b.WriteString("\x1b[39m")
	}
	return b.String()
}

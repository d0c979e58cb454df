package x11

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"

	"github.com/jezek/xgb/xproto"
)

// Capture returns the whole screen (the root window) as RGBA.
//
// It reads through MIT-SHM when the server attached the connection's
// segment, and through core GetImage otherwise (docs/benchmarks.md has
// both costs).
func (c *Conn) Capture(ctx context.Context) (*image.RGBA, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("capture screen: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, c.width, c.height))
	if err := c.captureInto(img); err != nil {
		return nil, err
	}
	return img, nil
}

// captureInto fills img, which must be screen-sized, with the screen.
func (c *Conn) captureInto(img *image.RGBA) error {
	if c.shm != nil {
		return c.shm.capture(c.x, c.root, img.Pix, c.width, c.height)
	}
	return c.captureGetImage(img)
}

// captureGetImage fills img through core GetImage, which every server
// answers.
func (c *Conn) captureGetImage(img *image.RGBA) error {
	r, err := xproto.GetImage(c.x, xproto.ImageFormatZPixmap, xproto.Drawable(c.root),
		0, 0, uint16(c.width), uint16(c.height), 0xffffffff).Reply()
	if err != nil {
		return fmt.Errorf("capture screen: %w", err)
	}
	if want := c.width * c.height * 4; len(r.Data) != want {
		// 32 bits per pixel is what depth 24 and 32 screens use; 16-bit
		// and 8-bit visuals are not supported.
		return fmt.Errorf("capture screen: got %d bytes for %dx%d at depth %d, want %d (32 bpp)",
			len(r.Data), c.width, c.height, r.Depth, want)
	}
	bgrxToRGBA(img.Pix, r.Data)
	return nil
}

// bgrxToRGBA converts little-endian 32 bpp TrueColor pixels (B, G, R, X) to
// opaque RGBA. dst and src have the same length. A screen is split in two
// halves converted at once, as the screen's PNG is encoded on every core.
func bgrxToRGBA(dst, src []byte) {
	const half = 1 << 20 // below a 512x512 screen, one goroutine
	if len(src) < 2*half {
		convertBGRX(dst, src)
		return
	}
	mid := len(src) / 2 &^ 7
	done := make(chan struct{})
	go func() {
		convertBGRX(dst[mid:], src[mid:])
		close(done)
	}()
	convertBGRX(dst[:mid], src[:mid])
	<-done
}

// convertBGRX is bgrxToRGBA on one goroutine. Two pixels at a time as one
// 64-bit word: swap the blue and red bytes and set alpha, about twice as
// fast as a pixel at a time.
func convertBGRX(dst, src []byte) {
	n := len(src) &^ 7
	d, s := dst[:n], src[:n]
	for i := 0; i < n; i += 8 {
		v := binary.LittleEndian.Uint64(s[i:])
		v = v&0x0000ff000000ff00 | v>>16&0x000000ff000000ff | v&0x000000ff000000ff<<16 | 0xff000000ff000000
		binary.LittleEndian.PutUint64(d[i:], v)
	}
	if n < len(src) {
		v := binary.LittleEndian.Uint32(src[n:])
		v = v&0x0000ff00 | v>>16&0xff | v&0xff<<16 | 0xff000000
		binary.LittleEndian.PutUint32(dst[n:], v)
	}
}

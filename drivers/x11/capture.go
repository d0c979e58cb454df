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
// opaque RGBA. dst and src have the same length.
func bgrxToRGBA(dst, src []byte) {
	_ = dst[len(src)-1]
	// A pixel at a time as one 32-bit word: swap the blue and red bytes
	// and set alpha, four times faster than byte by byte.
	for i := 0; i+3 < len(src); i += 4 {
		v := binary.LittleEndian.Uint32(src[i:])
		v = v&0x0000ff00 | v>>16&0xff | v&0xff<<16 | 0xff000000
		binary.LittleEndian.PutUint32(dst[i:], v)
	}
}

package x11

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"time"

	"github.com/jezek/xgb/xproto"
)

// WaitPainted waits until w has painted: its area of the screen is not
// blank (every pixel one colour, such as the black of a window just
// mapped), and then until two captures of it are identical, for at most
// opts.Cap (an animating window is painted, if never still). It returns
// false when ctx ends before the window painted; ctx ending is not an
// error. A window that moves or resizes meanwhile is read afresh.
func (c *Conn) WaitPainted(ctx context.Context, w Window, opts SettleOptions) (bool, error) {
	interval, limit := opts.Interval, opts.Cap
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	if limit <= 0 {
		limit = 2 * time.Second
	}
	var prev []byte
	var settleBy time.Time
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cur, err := c.Window(w.ID)
		if err != nil {
			return false, fmt.Errorf("wait for window 0x%x to paint: %w", w.ID, err)
		}
		pix, err := c.captureArea(cur)
		if err != nil {
			return false, fmt.Errorf("wait for window 0x%x to paint: %w", w.ID, err)
		}
		if !blank(pix) {
			if settleBy.IsZero() {
				settleBy = time.Now().Add(limit)
			}
			if bytes.Equal(prev, pix) || !time.Now().Before(settleBy) {
				return true, nil
			}
		}
		prev = pix
		select {
		case <-ctx.Done():
			return !settleBy.IsZero(), nil
		case <-t.C:
		}
	}
}

// captureArea returns the raw pixels of w's part of the screen (nil when
// it is entirely off the screen).
func (c *Conn) captureArea(w Window) ([]byte, error) {
	r := image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height).Intersect(image.Rect(0, 0, c.width, c.height))
	if r.Empty() {
		return nil, nil
	}
	img, err := xproto.GetImage(c.x, xproto.ImageFormatZPixmap, xproto.Drawable(c.root),
		int16(r.Min.X), int16(r.Min.Y), uint16(r.Dx()), uint16(r.Dy()), 0xffffffff).Reply()
	if err != nil {
		return nil, fmt.Errorf("capture the window's area: %w", err)
	}
	return img.Data, nil
}

// blank reports whether 32 bpp pixels are all one colour (the unused
// fourth byte aside). No pixels at all is blank too.
func blank(pix []byte) bool {
	if len(pix) < 4 {
		return true
	}
	b, g, r := pix[0], pix[1], pix[2]
	for i := 4; i+3 < len(pix); i += 4 {
		if pix[i] != b || pix[i+1] != g || pix[i+2] != r {
			return false
		}
	}
	return true
}

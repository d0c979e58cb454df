package wayland

import (
	"context"
	"fmt"
	"image"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// client is the driver's Wayland connection: the globals it binds, and
// the virtual keyboard and pointer it keeps for the whole session. Keeping
// them is what gives the seat its keyboard and pointer: a headless
// compositor has no input devices of its own, and a seat without them
// offers clients no wl_keyboard or wl_pointer, so input from a device
// that comes and goes (wtype's) is lost while the client binds.
type client struct {
	w *wire

	shm, output, seat            uint32
	screencopy, vkbdMgr, vptrMgr uint32

	kbd, ptr uint32

	// inputMu serialises input and guards the keymap.
	inputMu sync.Mutex
	keymap  keymap
	started time.Time

	// captureMu serialises captures, which share one buffer.
	captureMu sync.Mutex
	buf       *shmBuffer
}

// Interfaces and the versions the driver speaks.
var wanted = map[string]uint32{
	"wl_shm":                          1,
	"wl_output":                       1,
	"wl_seat":                         1,
	"zwlr_screencopy_manager_v1":      2,
	"zwp_virtual_keyboard_manager_v1": 1,
	"zwlr_virtual_pointer_manager_v1": 1,
}

// dialClient connects to the compositor's socket, binds the globals and
// creates the virtual keyboard (with its first keymap) and pointer.
func dialClient(path string) (*client, error) {
	w, err := dialWire(path)
	if err != nil {
		return nil, fmt.Errorf("connect to the compositor at %s: %w", path, err)
	}
	c := &client{w: w, started: time.Now()}
	type global struct {
		name, version uint32
	}
	var mu sync.Mutex
	globals := map[string]global{}
	registry := w.newID(func(op uint16, a *args) {
		if op != 0 { // global
			return
		}
		name, iface, version := a.uint(), a.string(), a.uint()
		mu.Lock()
		if _, seen := globals[iface]; !seen {
			globals[iface] = global{name, version}
		}
		mu.Unlock()
	})
	if err := w.send(displayID, 1, new(msg).uint(registry)); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.roundtrip(); err != nil {
		w.Close()
		return nil, fmt.Errorf("list the compositor's globals: %w", err)
	}
	bind := func(iface string) (uint32, error) {
		mu.Lock()
		g, ok := globals[iface]
		mu.Unlock()
		if !ok {
			return 0, fmt.Errorf("the compositor does not offer %s", iface)
		}
		id := w.newID(nil)
		err := w.send(registry, 0, new(msg).uint(g.name).string(iface).uint(min(g.version, wanted[iface])).uint(id))
		return id, err
	}
	for _, b := range []struct {
		iface string
		id    *uint32
	}{
		{"wl_shm", &c.shm}, {"wl_output", &c.output}, {"wl_seat", &c.seat},
		{"zwlr_screencopy_manager_v1", &c.screencopy},
		{"zwp_virtual_keyboard_manager_v1", &c.vkbdMgr},
		{"zwlr_virtual_pointer_manager_v1", &c.vptrMgr},
	} {
		if *b.id, err = bind(b.iface); err != nil {
			w.Close()
			return nil, err
		}
	}
	c.kbd = w.newID(nil)
	if err := w.send(c.vkbdMgr, 0, new(msg).uint(c.seat).uint(c.kbd)); err != nil {
		w.Close()
		return nil, err
	}
	if err := c.uploadKeymap(); err != nil {
		w.Close()
		return nil, err
	}
	c.ptr = w.newID(nil)
	if err := w.send(c.vptrMgr, 0, new(msg).uint(c.seat).uint(c.ptr)); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.roundtrip(); err != nil {
		w.Close()
		return nil, fmt.Errorf("create the virtual keyboard and pointer: %w", err)
	}
	return c, nil
}

// now is the timestamp of an input event, in milliseconds.
func (c *client) now() uint32 { return uint32(time.Since(c.started).Milliseconds()) }

// Linux input button codes.
const btnLeft = 0x110

// movePointer moves the pointer to (x, y) of a screen w x h.
func (c *client) movePointer(x, y, w, h int) error {
	if err := c.w.send(c.ptr, 1, new(msg).uint(c.now()).uint(uint32(x)).uint(uint32(y)).uint(uint32(w)).uint(uint32(h))); err != nil {
		return err
	}
	return c.w.send(c.ptr, 4, nil) // frame
}

// button presses (down) or releases the left button.
func (c *client) button(down bool) error {
	state := uint32(0)
	if down {
		state = 1
	}
	if err := c.w.send(c.ptr, 2, new(msg).uint(c.now()).uint(btnLeft).uint(state)); err != nil {
		return err
	}
	return c.w.send(c.ptr, 4, nil)
}

// shmBuffer is a shared-memory buffer the compositor copies the screen
// into.
type shmBuffer struct {
	pool, buffer                  uint32
	fd                            int
	data                          []byte
	format, width, height, stride uint32
}

func (b *shmBuffer) fits(format, width, height, stride uint32) bool {
	return b != nil && b.format == format && b.width == width && b.height == height && b.stride == stride
}

// newBuffer creates a buffer of the given layout in a memfd pool.
func (c *client) newBuffer(format, width, height, stride uint32) (*shmBuffer, error) {
	size := int(stride * height)
	fd, err := unix.MemfdCreate("kasmrt-screencopy", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create the capture buffer: %w", err)
	}
	if err := unix.Ftruncate(fd, int64(size)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("size the capture buffer: %w", err)
	}
	data, err := unix.Mmap(fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("map the capture buffer: %w", err)
	}
	b := &shmBuffer{fd: fd, data: data, format: format, width: width, height: height, stride: stride}
	b.pool = c.w.newID(nil)
	if err := c.w.send(c.shm, 0, new(msg).uint(b.pool).fd(fd).int(int32(size))); err != nil {
		b.free(c)
		return nil, err
	}
	b.buffer = c.w.newID(nil)
	if err := c.w.send(b.pool, 0, new(msg).uint(b.buffer).int(0).int(int32(width)).int(int32(height)).int(int32(stride)).uint(format)); err != nil {
		b.free(c)
		return nil, err
	}
	return b, nil
}

// free destroys the buffer and its pool and unmaps the memory.
func (b *shmBuffer) free(c *client) {
	if b.buffer != 0 {
		_ = c.w.send(b.buffer, 0, nil)
	}
	if b.pool != 0 {
		_ = c.w.send(b.pool, 1, nil)
	}
	_ = unix.Munmap(b.data)
	unix.Close(b.fd)
}

// shm formats the capture converts.
const (
	formatARGB8888 = 0
	formatXRGB8888 = 1
	formatABGR8888 = 0x34324241
	formatXBGR8888 = 0x34324258
)

// capture copies the output into an RGBA image (zwlr_screencopy_v1). With
// damage, the compositor answers only once something was drawn since the
// frame was asked for, which is how settling sees drawing without
// comparing captures.
// It returns the parts of the screen the compositor reports drawn since
// the previous copy with damage (all of it for the client's first).
func (c *client) capture(ctx context.Context, withDamage bool) (*image.RGBA, []image.Rectangle, error) {
	c.captureMu.Lock()
	defer c.captureMu.Unlock()
	type layout struct{ format, width, height, stride uint32 }
	bufferCh := make(chan layout, 1)
	result := make(chan error, 1)
	var yInvert bool
	var damage []image.Rectangle
	frame := c.w.newID(func(op uint16, a *args) {
		switch op {
		case 0: // buffer
			l := layout{a.uint(), a.uint(), a.uint(), a.uint()}
			select {
			case bufferCh <- l:
			default:
			}
		case 1: // flags
			yInvert = a.uint()&1 != 0
		case 2: // ready
			result <- nil
		case 3: // failed
			result <- fmt.Errorf("the compositor could not copy the screen")
		case 4: // damage, before ready
			x, y, w, h := int(a.uint()), int(a.uint()), int(a.uint()), int(a.uint())
			damage = append(damage, image.Rect(x, y, x+w, y+h))
		}
	})
	defer func() {
		_ = c.w.send(frame, 1, nil) // destroy
		c.w.forget(frame)
	}()
	if err := c.w.send(c.screencopy, 0, new(msg).uint(frame).int(0).uint(c.output)); err != nil {
		return nil, nil, err
	}
	var l layout
	select {
	case l = <-bufferCh:
	case <-c.w.done:
		return nil, nil, c.w.closed()
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	switch l.format {
	case formatARGB8888, formatXRGB8888, formatABGR8888, formatXBGR8888:
	default:
		return nil, nil, fmt.Errorf("the compositor offers the screen in shm format %#x, which the driver does not read", l.format)
	}
	if !c.buf.fits(l.format, l.width, l.height, l.stride) {
		if c.buf != nil {
			c.buf.free(c)
			c.buf = nil
		}
		b, err := c.newBuffer(l.format, l.width, l.height, l.stride)
		if err != nil {
			return nil, nil, err
		}
		c.buf = b
	}
	op := uint16(0) // copy
	if withDamage {
		op = 2 // copy_with_damage
	}
	if err := c.w.send(frame, op, new(msg).uint(c.buf.buffer)); err != nil {
		return nil, nil, err
	}
	select {
	case err := <-result:
		if err != nil {
			return nil, nil, err
		}
	case <-c.w.done:
		return nil, nil, c.w.closed()
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	return toRGBA(c.buf, yInvert), damage, nil
}

// toRGBA converts the buffer's pixels (32-bit little-endian words) to an
// opaque RGBA image.
func toRGBA(b *shmBuffer, yInvert bool) *image.RGBA {
	w, h := int(b.width), int(b.height)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	bgr := b.format == formatABGR8888 || b.format == formatXBGR8888
	for y := 0; y < h; y++ {
		sy := y
		if yInvert {
			sy = h - 1 - y
		}
		src := b.data[sy*int(b.stride):]
		dst := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			p := src[x*4 : x*4+4]
			if bgr {
				dst[x*4], dst[x*4+1], dst[x*4+2] = p[0], p[1], p[2]
			} else {
				dst[x*4], dst[x*4+1], dst[x*4+2] = p[2], p[1], p[0]
			}
			dst[x*4+3] = 0xff
		}
	}
	return img
}

// close destroys the virtual devices and ends the connection.
func (c *client) close() error {
	c.captureMu.Lock()
	if c.buf != nil {
		c.buf.free(c)
		c.buf = nil
	}
	c.captureMu.Unlock()
	_ = c.w.send(c.kbd, 3, nil)
	_ = c.w.send(c.ptr, 8, nil)
	return c.w.Close()
}

package x11

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/shm"
	"github.com/jezek/xgb/xproto"
	"golang.org/x/sys/unix"
)

// shmCapture captures the screen through the MIT-SHM extension: the server
// writes the pixels straight into a shared memory segment, so the 4 MB of a
// 1280x800 screen never cross the socket. A server on another machine, or
// in another IPC namespace, cannot attach the segment; Dial then keeps
// core GetImage.
type shmCapture struct {
	seg shm.Seg
	// mu guards mem: one capture at a time fills and reads it.
	mu  sync.Mutex
	mem []byte
}

// attachSHM creates a segment the size of a w x h screen at 32 bits per
// pixel and has the server attach it.
func attachSHM(x *xgb.Conn, w, h int) (*shmCapture, error) {
	if err := initExtension(x, "MIT-SHM", shm.Init); err != nil {
		return nil, fmt.Errorf("MIT-SHM: %w", err)
	}
	if _, err := shm.QueryVersion(x).Reply(); err != nil {
		return nil, fmt.Errorf("MIT-SHM: query version: %w", err)
	}
	size := w * h * 4
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, size, unix.IPC_CREAT|0o600)
	if err != nil {
		return nil, fmt.Errorf("MIT-SHM: create a %d-byte segment: %w", size, err)
	}
	// Marked for removal at once: the segment lives while it is attached
	// and disappears with the last detach, even if this process is killed.
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("MIT-SHM: attach the segment: %w", err)
	}
	seg, err := shm.NewSegId(x)
	if err != nil {
		unix.SysvShmDetach(mem)
		return nil, fmt.Errorf("MIT-SHM: %w", err)
	}
	if err := shm.AttachChecked(x, seg, uint32(id), false).Check(); err != nil {
		unix.SysvShmDetach(mem)
		return nil, fmt.Errorf("MIT-SHM: the server could not attach the segment: %w", err)
	}
	return &shmCapture{seg: seg, mem: mem}, nil
}

// capture fills dst (w*h*4 bytes of RGBA) with the area of the screen at
// (0, 0) of w x h.
func (s *shmCapture) capture(x *xgb.Conn, root xproto.Window, dst []byte, w, h int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := shm.GetImage(x, xproto.Drawable(root), 0, 0, uint16(w), uint16(h), 0xffffffff,
		xproto.ImageFormatZPixmap, s.seg, 0).Reply()
	if err != nil {
		return fmt.Errorf("capture screen (MIT-SHM): %w", err)
	}
	if want := w * h * 4; int(r.Size) != want {
		return fmt.Errorf("capture screen (MIT-SHM): got %d bytes for %dx%d at depth %d, want %d (32 bpp)",
			r.Size, w, h, r.Depth, want)
	}
	bgrxToRGBA(dst, s.mem[:w*h*4])
	return nil
}

// detach has the server let go of the segment and unmaps it here.
func (s *shmCapture) detach(x *xgb.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = shm.DetachChecked(x, s.seg).Check()
	_ = unix.SysvShmDetach(s.mem)
	s.mem = nil
}

package x11

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"log"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/kasmrt/kasmrt/internal/screenpng"
)

func init() {
	// xgb logs through its own package-level logger: "Could not get
	// authority info" on every connection to a server without an
	// .Xauthority entry (ours never have one), and read/write errors when a
	// connection closes or its server dies. The same failures reach callers
	// as errors from the requests, so the log adds only noise on stderr,
	// where it would also corrupt the console. Setting it here, before any
	// connection exists, cannot race xgb's goroutines.
	xgb.Logger = log.New(io.Discard, "", 0)
}

// Conn is a connection to an X server with the XTEST extension, used to
// look at the screen and drive input. Its methods are safe for concurrent
// use; input methods serialise among themselves.
type Conn struct {
	x       *xgb.Conn
	display string
	root    xproto.Window
	width   int
	height  int
	atoms   atoms

	// inputMu serialises input so two chords never interleave and the
	// scratch keycodes are not handed out twice.
	inputMu sync.Mutex
	// scratch holds keycodes this connection rebound for TypeText, keyed
	// by the keysym they now produce; Close restores them.
	scratch map[xproto.Keysym]xproto.Keycode
	// typedAt is when the application read the keys TypeText sent last,
	// zero once PressKey has paused after them (keypace.go). Guarded by
	// inputMu.
	typedAt time.Time

	// shm captures through shared memory when the server can attach our
	// segment; nil means core GetImage.
	shm *shmCapture
	// damage reports drawing on the screen, so settling waits for the
	// drawing to stop instead of comparing captures; nil when the server
	// has no DAMAGE extension.
	damage *damageWatch
	// ping sends _NET_WM_PING and reads the answers (Ping); it is opened
	// on first use.
	pingMu sync.Mutex
	ping   *pingWatch

	closeOnce sync.Once
}

// atoms are the interned property names Windows reads.
type atoms struct {
	netWMPID, netWMName, utf8String, wmClass, wmName xproto.Atom
	// netWMCheck names the window a window manager announces itself with.
	netWMCheck xproto.Atom
	// netWMWindowType is _NET_WM_WINDOW_TYPE, and popupTypes the kinds
	// of popup its values name (popupKinds).
	netWMWindowType xproto.Atom
	popupTypes      map[xproto.Atom]string
}

// Dial connects to display (":99"), checks for XTEST and reads the root
// window's size.
func Dial(display string) (*Conn, error) {
	if display == "" {
		return nil, errors.New("dial X: empty display name")
	}
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("dial X display %s: %w", display, err)
	}
	c := &Conn{x: x, display: display, scratch: map[xproto.Keysym]xproto.Keycode{}}
	setup := xproto.Setup(x)
	if setup == nil || len(setup.Roots) == 0 {
		x.Close()
		return nil, fmt.Errorf("dial X display %s: no screens", display)
	}
	screen := setup.DefaultScreen(x)
	c.root = screen.Root
	c.width, c.height = int(screen.WidthInPixels), int(screen.HeightInPixels)
	if err := xtest.Init(x); err != nil {
		x.Close()
		return nil, fmt.Errorf("dial X display %s: XTEST extension: %w", display, err)
	}
	if err := c.internAtoms(); err != nil {
		x.Close()
		return nil, fmt.Errorf("dial X display %s: %w", display, err)
	}
	// Both are optional: without them capture uses core GetImage and
	// settling compares captures, as every X server allows.
	if sc, err := attachSHM(x, c.width, c.height); err == nil {
		c.shm = sc
	}
	if dw, err := watchDamage(display, c.root); err == nil {
		c.damage = dw
	}
	return c, nil
}

func (c *Conn) internAtoms() error {
	names := []string{"_NET_WM_PID", "_NET_WM_NAME", "UTF8_STRING", "_NET_SUPPORTING_WM_CHECK", "_NET_WM_WINDOW_TYPE"}
	for _, k := range popupKinds {
		names = append(names, k.atom)
	}
	cookies := make([]xproto.InternAtomCookie, len(names))
	for i, n := range names {
		cookies[i] = xproto.InternAtom(c.x, false, uint16(len(n)), n)
	}
	got := make([]xproto.Atom, len(names))
	for i, ck := range cookies {
		r, err := ck.Reply()
		if err != nil {
			return fmt.Errorf("intern atom %s: %w", names[i], err)
		}
		got[i] = r.Atom
	}
	c.atoms = atoms{
		netWMPID: got[0], netWMName: got[1], utf8String: got[2],
		wmClass: xproto.AtomWmClass, wmName: xproto.AtomWmName, netWMCheck: got[3],
		netWMWindowType: got[4], popupTypes: map[xproto.Atom]string{},
	}
	for i, k := range popupKinds {
		c.atoms.popupTypes[got[5+i]] = k.kind
	}
	return nil
}

// Display is the display name this connection was dialled with.
func (c *Conn) Display() string { return c.display }

// Close restores any keycodes TypeText rebound and closes the connection.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.inputMu.Lock()
		c.restoreScratch()
		c.inputMu.Unlock()
		if c.shm != nil {
			c.shm.detach(c.x)
		}
		if c.damage != nil {
			c.damage.close()
		}
		c.pingMu.Lock()
		if c.ping != nil {
			c.ping.close()
		}
		c.pingMu.Unlock()
		c.x.Close()
	})
	return nil
}

// CaptureMethod names how Capture reads the screen: "MIT-SHM" or
// "GetImage".
func (c *Conn) CaptureMethod() string {
	if c.shm != nil {
		return "MIT-SHM"
	}
	return "GetImage"
}

// SettleMethod names how WaitSettled decides the screen is still: "DAMAGE"
// (the server reports drawing) or "compare" (consecutive captures are
// compared).
func (c *Conn) SettleMethod() string {
	if c.damage != nil {
		if _, _, err := c.damage.state(); err == nil {
			return "DAMAGE"
		}
	}
	return "compare"
}

// ScreenSize is the size of the root window in pixels.
func (c *Conn) ScreenSize() (w, h int) { return c.width, c.height }

// sync waits until the server has processed every request sent so far.
func (c *Conn) sync() error {
	_, err := xproto.GetInputFocus(c.x).Reply()
	return err
}

// EncodePNG writes img as PNG tuned for speed over size: screens are
// written once per step and read rarely (internal/screenpng).
func EncodePNG(w io.Writer, img image.Image) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if err := screenpng.Encode(bw, img); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	return nil
}

package wayland

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/keysym"
)

// Conn is the driver's connection to a session: the Wayland client that
// captures the screen and holds the virtual keyboard and pointer, and
// sway's IPC for the windows and the focus. Its methods are safe for
// concurrent use.
type Conn struct {
	display       string
	c             *client
	ipc           *ipc
	width, height int

	// typedAt is when the screen last changed after TypeText typed (when
	// the compositor had the keys, if the application drew nothing in
	// time), zero once PressKey has paused after it; typedImg is the
	// screen then (nil when the application drew nothing).
	typedMu  sync.Mutex
	typedAt  time.Time
	typedImg *image.RGBA

	// clickedAt is when Click last pressed the button; guarded by the
	// client's inputMu.
	clickedAt time.Time

	closeOnce sync.Once
}

// Dial connects to the session whose Wayland socket is at display (a
// Server's Display), and to sway's IPC socket beside it.
func Dial(display string) (*Conn, error) {
	p, err := dialIPC(filepath.Join(filepath.Dir(display), ipcSocket))
	if err != nil {
		return nil, err
	}
	var outs []struct {
		Active bool `json:"active"`
		Rect   rect `json:"rect"`
	}
	if err := p.call(ipcOutputs, "", &outs); err != nil {
		p.Close()
		return nil, fmt.Errorf("read the session's screen: %w", err)
	}
	conn := &Conn{display: display, ipc: p}
	for _, o := range outs {
		if o.Active {
			conn.width, conn.height = o.Rect.Width, o.Rect.Height
			break
		}
	}
	if conn.width == 0 {
		p.Close()
		return nil, errors.New("read the session's screen: sway has no active output")
	}
	if conn.c, err = dialClient(display); err != nil {
		p.Close()
		return nil, err
	}
	return conn, nil
}

// ScreenSize is the output's size.
func (c *Conn) ScreenSize() (w, h int) { return c.width, c.height }

// Capture copies the screen.
func (c *Conn) Capture(ctx context.Context) (*image.RGBA, error) {
	img, _, err := c.c.capture(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("capture the screen: %w", err)
	}
	return img, nil
}

// WaitSettled waits until the screen is still or opts.Cap has passed, and
// returns a capture taken then and whether the screen settled. The
// compositor reports drawing (screencopy's copy with damage answers once
// something was drawn), so the screen is still once nothing has been drawn
// outside opts.Ignore for opts.Quiet, after the first drawing when
// opts.Response asks to wait for one, as with X11's DAMAGE. With
// opts.Compare, captures are taken opts.Interval apart until two are
// identical. A cancelled ctx is an error.
func (c *Conn) WaitSettled(ctx context.Context, opts desktop.SettleOptions) (*image.RGBA, bool, error) {
	opts = opts.WithDefaults()
	if opts.Compare {
		return c.settleByComparing(ctx, opts)
	}
	return c.settleByDamage(ctx, opts)
}

// settleByDamage waits for the compositor to draw nothing outside
// opts.Ignore for opts.Quiet (or, until the first drawing, for what is
// left of opts.Response since the action began). A copy with damage
// answers once something was drawn since this client's previous one, so
// drawing between the action and the wait counts as its response, and an
// unchanging screen leaves the copy unanswered until the wait ends.
func (c *Conn) settleByDamage(ctx context.Context, opts desktop.SettleOptions) (*image.RGBA, bool, error) {
	start := time.Now()
	deadline := start.Add(opts.Cap)
	since := start
	if !opts.Since.IsZero() && opts.Since.Before(start) {
		since = opts.Since
	}
	ready := start.Add(opts.Quiet)
	if opts.Response > 0 {
		ready = maxTime(ready, since.Add(opts.Response))
	}
	// img is the screen as the last copy left it, nil until one answered.
	var img *image.RGBA
	settled := false
	for {
		now := time.Now()
		if !now.Before(ready) {
			settled = true
			break
		}
		if !now.Before(deadline) {
			break
		}
		wctx, cancel := context.WithDeadline(ctx, minTime(ready, deadline))
		next, damage, err := c.c.capture(wctx, true)
		cancel()
		switch {
		case err == nil:
			img = next
			if drawnOutside(damage, opts.Ignore) {
				ready = time.Now().Add(opts.Quiet)
			}
		case ctx.Err() != nil:
			return img, false, fmt.Errorf("wait for screen to settle: %w", ctx.Err())
		case errors.Is(err, context.DeadlineExceeded):
			// Nothing drawn until ready (or the cap): the loop decides.
		default:
			return nil, false, fmt.Errorf("wait for screen to settle: %w", err)
		}
	}
	if img == nil {
		var err error
		if img, err = c.Capture(ctx); err != nil {
			return nil, false, fmt.Errorf("wait for screen to settle: %w", err)
		}
	}
	return img, settled, nil
}

// drawnOutside reports whether any of the drawn rectangles reaches outside
// ignore (an empty ignore: whether anything was drawn).
func drawnOutside(damage []image.Rectangle, ignore image.Rectangle) bool {
	for _, r := range damage {
		if !r.Empty() && (ignore.Empty() || !r.In(ignore)) {
			return true
		}
	}
	return false
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// settleByComparing captures the screen until two consecutive captures
// are identical or opts.Cap has passed.
func (c *Conn) settleByComparing(ctx context.Context, opts desktop.SettleOptions) (*image.RGBA, bool, error) {
	interval, limit := opts.Interval, opts.Cap
	deadline := time.Now().Add(limit)
	prev, err := c.Capture(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("wait for screen to settle: %w", err)
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return prev, false, fmt.Errorf("wait for screen to settle: %w", ctx.Err())
		case <-t.C:
		}
		next, err := c.Capture(ctx)
		if err != nil {
			return prev, false, fmt.Errorf("wait for screen to settle: %w", err)
		}
		if bytes.Equal(prev.Pix, next.Pix) {
			return next, true, nil
		}
		prev = next
		if !time.Now().Before(deadline) {
			return prev, false, nil
		}
		t.Reset(min(interval, time.Until(deadline)))
	}
}

// WaitPainted waits until w's area of the screen is not one colour, and
// then until two captures of it are identical, for at most opts.Cap. It
// returns false when ctx ends before the window painted.
func (c *Conn) WaitPainted(ctx context.Context, w desktop.Window, opts desktop.SettleOptions) (bool, error) {
	interval, limit := opts.Interval, opts.Cap
	if interval <= 0 {
		interval = 50 * time.Millisecond
	}
	if limit <= 0 {
		limit = 2 * time.Second
	}
	var prev *image.RGBA
	var settleBy time.Time
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		cur, err := c.Window(w.ID)
		if err != nil {
			return false, fmt.Errorf("wait for window %d to paint: %w", w.ID, err)
		}
		img, err := c.Capture(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return !settleBy.IsZero(), nil
			}
			return false, fmt.Errorf("wait for window %d to paint: %w", w.ID, err)
		}
		area := img.SubImage(image.Rect(cur.X, cur.Y, cur.X+cur.Width, cur.Y+cur.Height)).(*image.RGBA)
		if !blank(area) {
			if settleBy.IsZero() {
				settleBy = time.Now().Add(limit)
			}
			if prev != nil && sameImage(prev, area) || !time.Now().Before(settleBy) {
				return true, nil
			}
		}
		prev = area
		select {
		case <-ctx.Done():
			return !settleBy.IsZero(), nil
		case <-t.C:
		}
	}
}

// blank reports whether every pixel of img is one colour (or it has none).
func blank(img *image.RGBA) bool {
	r := img.Bounds()
	if r.Empty() {
		return true
	}
	first := img.Pix[img.PixOffset(r.Min.X, r.Min.Y):][:4]
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := img.Pix[img.PixOffset(r.Min.X, y):][:r.Dx()*4]
		for i := 0; i < len(row); i += 4 {
			if !bytes.Equal(row[i:i+4], first) {
				return false
			}
		}
	}
	return true
}

// sameImage reports whether two captures of an area are identical.
func sameImage(a, b *image.RGBA) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		if !bytes.Equal(a.Pix[a.PixOffset(r.Min.X, y):][:r.Dx()*4], b.Pix[b.PixOffset(r.Min.X, y):][:r.Dx()*4]) {
			return false
		}
	}
	return true
}

// typingPause is how long PressKey lets pass after the application drew
// the characters TypeText typed before it presses a key, as the X11 driver
// does after the application answered a ping: toolkits act on a name typed
// into a field only after the typing stops (GTK's file chooser unselects
// its file list 150 ms after the name last changed, and a Return before
// then leaves Mousepad's Save As open), and a person always pauses that
// long.
const typingPause = 250 * time.Millisecond

// typedDrawTimeout bounds how long TypeText waits for the application to
// start drawing what it typed, and typedQuietCap how long PressKey waits
// for the drawing to stop: an application that is busy for longer, whose
// screen the typing does not change or that never stops drawing gets the
// key then.
const (
	typedDrawTimeout = time.Second
	typedQuietCap    = 3 * time.Second
)

// typedQuiet is how long the screen must stay unchanged after the typed
// text's drawing before PressKey presses its key: the pause a person
// makes, and room for a pause in the drawing itself. An application may
// draw the first characters, stop for a while (GTK's file chooser did for
// 180 ms on a loaded machine, reading its folder) and then draw the rest;
// a key pressed in that gap comes before the name is whole.
const typedQuiet = 2 * typingPause

// PressKey presses a chord ("ctrl+s", "Return") on the virtual keyboard.
func (c *Conn) PressKey(ctx context.Context, chord string) error {
	ch, err := keysym.Parse(chord)
	if err != nil {
		return err
	}
	if err := c.pauseAfterTyping(ctx); err != nil {
		return err
	}
	if err := c.c.pressChord(ch); err != nil {
		return fmt.Errorf("press %q: %w", chord, err)
	}
	return nil
}

// TypeText types s on the virtual keyboard and waits (within
// typedDrawTimeout) for the application to start drawing it. Sway offers
// no client a ping to learn when the application has read the keys, and
// on a loaded machine it reads them well after the compositor had them: a
// pause counted from then ran out before the toolkit acted on the name,
// and the Return after it was lost. The application's drawing of what was
// typed says it has read the keys.
func (c *Conn) TypeText(ctx context.Context, s string) error {
	// The screen before the typing, to tell the application's drawing of
	// it from drawing the screen shows already.
	before, _, err := c.c.capture(ctx, false)
	if err != nil {
		before = nil
	}
	if err := c.c.typeText(s); err != nil {
		return fmt.Errorf("type text: %w", err)
	}
	at := time.Now()
	var img *image.RGBA
	if before != nil {
		if changed, drawn, ok := c.waitChanged(ctx, before, typedDrawTimeout); ok {
			at, img = drawn, changed
		}
	}
	c.typedMu.Lock()
	c.typedAt, c.typedImg = at, img
	c.typedMu.Unlock()
	return nil
}

// waitChanged waits, for at most limit, until the screen differs from
// before, and returns it and when the compositor had it. A copy with
// damage answers once something was drawn since this client's previous
// one, so the wait follows the compositor's drawing instead of polling;
// drawing that leaves the screen as it was (or damage left from before)
// is waited past.
func (c *Conn) waitChanged(ctx context.Context, before *image.RGBA, limit time.Duration) (*image.RGBA, time.Time, bool) {
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		img, _, err := c.c.capture(wctx, true)
		if err != nil {
			return nil, time.Time{}, false
		}
		if !sameImage(img, before) {
			return img, time.Now(), true
		}
	}
}

// pauseAfterTyping waits, once after TypeText, until the application has
// neither drawn nor worked for typedQuiet (within typedQuietCap). It draws
// a long text as it reads it, and the toolkit's timer starts again with
// each change of the name, so the pause counts from the last drawing, not
// the first; and it may stop drawing for a while in the middle of the
// text (GTK's file chooser worked for 180 ms after the first letter, more
// on a loaded machine), so the pause also counts from the last moment its
// main thread was seen running (or stopped) rather than waiting in its
// main loop. Drawing the wait could not see (another copy with damage,
// such as a settle wait, took it) is found by comparing the screen.
func (c *Conn) pauseAfterTyping(ctx context.Context) error {
	c.typedMu.Lock()
	at, last := c.typedAt, c.typedImg
	c.typedAt, c.typedImg = time.Time{}, nil
	c.typedMu.Unlock()
	if at.IsZero() {
		return nil
	}
	if last == nil {
		return sleepUntil(ctx, at.Add(typingPause))
	}
	pid := 0
	if w, ok, err := c.FocusedWindow(); err == nil && ok {
		pid = w.PID
	}
	end := time.Now().Add(typedQuietCap)
	for {
		if until := at.Add(typedQuiet); time.Now().Before(until) {
			wctx, cancel := context.WithDeadline(ctx, minTime(until, end))
			img, _, err := c.c.capture(wctx, true)
			cancel()
			switch {
			case err == nil:
				if !sameImage(img, last) {
					at, last = time.Now(), img
				}
			case ctx.Err() != nil:
				return ctx.Err()
			case !errors.Is(err, context.DeadlineExceeded):
				// The screen cannot be watched: the pause so far stands.
				return nil
			}
			if !time.Now().Before(end) {
				return nil
			}
			continue
		}
		img, _, err := c.c.capture(ctx, false)
		switch {
		case err != nil:
			return ctx.Err()
		case !sameImage(img, last):
			at, last = time.Now(), img
		case !mainLoopBusy(pid) || !time.Now().Before(end):
			return nil
		default:
			at = time.Now()
		}
	}
}

// mainLoopBusy reports whether the main thread of process pid is running,
// or stopped, rather than asleep: an application waiting in its main loop
// for something to do sleeps (in poll), one still reading its input or
// working on it does not. It is false when that cannot be read (pid 0, a
// process gone).
func mainLoopBusy(pid int) bool {
	if pid <= 0 {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and may
	// hold any character.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	switch stat[i+2] {
	case 'R', 'D', 'T', 't':
		return true
	}
	return false
}

// sleepUntil waits until t (at once if it has passed) or until ctx ends.
func sleepUntil(ctx context.Context, t time.Time) error {
	wait := time.Until(t)
	if wait <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// CheckChord reports whether PressKey understands chord: an unknown
// modifier or key is a *desktop.UnknownKeyError. Every keysym is on the
// virtual keyboard, whose layout grows to hold it.
func CheckChord(chord string) error {
	_, err := keysym.Parse(chord)
	return err
}

// MovePointer moves the virtual pointer to (x, y).
func (c *Conn) MovePointer(ctx context.Context, x, y int) error {
	if x < 0 || y < 0 || x >= c.width || y >= c.height {
		return fmt.Errorf("move pointer to %d,%d: %w", x, y, desktop.ErrOffScreen)
	}
	c.c.inputMu.Lock()
	defer c.c.inputMu.Unlock()
	if err := c.c.movePointer(x, y, c.width, c.height); err != nil {
		return fmt.Errorf("move pointer to %d,%d: %w", x, y, err)
	}
	return c.c.w.roundtrip()
}

// clickPause is the least time between two clicks' presses. GTK 3 takes
// a button release inside a menu that comes less than 500 ms (its
// MENU_SHELL_TIMEOUT, by the events' timestamps) after the press that
// opened the menu from its menu bar for the end of that press, and
// swallows it: a click on a menu item right after the click that opened
// the menu highlights the item and does not activate it. On X11 the menu
// bar takes the first click's release itself and forgets that press, so
// the next release counts; on Wayland it does not, and only time clears
// it. A person never clicks twice that fast on purpose, so the driver
// waits as long as a person would before pressing again.
const clickPause = 600 * time.Millisecond

// Click moves the virtual pointer to (x, y) and clicks the left button,
// no sooner than clickPause after the previous click.
func (c *Conn) Click(ctx context.Context, x, y int) error {
	if x < 0 || y < 0 || x >= c.width || y >= c.height {
		return fmt.Errorf("click at %d,%d: %w", x, y, desktop.ErrOffScreen)
	}
	c.c.inputMu.Lock()
	defer c.c.inputMu.Unlock()
	if err := sleepUntil(ctx, c.clickedAt.Add(clickPause)); err != nil {
		return fmt.Errorf("click at %d,%d: %w", x, y, err)
	}
	err := c.c.movePointer(x, y, c.width, c.height)
	if err == nil {
		c.clickedAt = time.Now()
		err = c.c.button(true)
	}
	if err == nil {
		err = c.c.button(false)
	}
	if err == nil {
		err = c.c.w.roundtrip()
	}
	if err != nil {
		return fmt.Errorf("click at %d,%d: %w", x, y, err)
	}
	return nil
}

// Windows are the application windows sway manages. A Wayland client's
// popups (menus, tooltips) are its surfaces, not windows, so none is
// listed.
func (c *Conn) Windows() ([]desktop.Window, error) {
	t, err := c.ipc.tree()
	if err != nil {
		return nil, fmt.Errorf("list windows: %w", err)
	}
	var out []desktop.Window
	for _, v := range t.views() {
		out = append(out, v.window())
	}
	return out, nil
}

// window is a view in the desktop contract's terms. Its class is its
// app_id ("org.gnome.Calculator"), and its instance the program's name
// ("gnome-calculator"), which is what a toolkit puts in the instance half
// of WM_CLASS on X11: a scenario's app.window.class written for one
// desktop then finds the window on the other.
func (n node) window() desktop.Window {
	w := desktop.Window{ID: n.ID, PID: n.PID, Instance: programName(n.PID), Class: n.AppID, Title: n.Name,
		X: n.Rect.X, Y: n.Rect.Y, Width: n.Rect.Width, Height: n.Rect.Height, Viewable: n.Visible}
	if n.WindowProperties != nil {
		w.Instance, w.Class = n.WindowProperties.Instance, n.WindowProperties.Class
	}
	return w
}

// programName is the base name of the process's argv[0], or "".
func programName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	argv0, _, _ := strings.Cut(string(b), "\x00")
	return filepath.Base(argv0)
}

// Window is the window with that id now.
func (c *Conn) Window(id uint32) (desktop.Window, error) {
	ws, err := c.Windows()
	if err != nil {
		return desktop.Window{}, err
	}
	for _, w := range ws {
		if w.ID == id {
			return w, nil
		}
	}
	return desktop.Window{}, fmt.Errorf("window %d: %w", id, desktop.ErrWindowGone)
}

// FindWindow waits for a window m matches, woken by sway's window events.
func (c *Conn) FindWindow(ctx context.Context, m desktop.WindowMatch) (desktop.Window, error) {
	ev, err := dialIPC(filepath.Join(filepath.Dir(c.display), ipcSocket))
	if err != nil {
		return desktop.Window{}, err
	}
	defer ev.Close()
	if err := ev.subscribe(); err != nil {
		return desktop.Window{}, err
	}
	events := make(chan error, 1)
	go func() {
		for {
			if _, err := ev.nextEvent(); err != nil {
				events <- err
				return
			}
			select {
			case events <- nil:
			default:
			}
		}
	}()
	for {
		ws, err := c.Windows()
		if err != nil {
			return desktop.Window{}, err
		}
		for _, w := range ws {
			if m.Matches(w) {
				return w, nil
			}
		}
		select {
		case <-ctx.Done():
			return desktop.Window{}, fmt.Errorf("find window (%s): %w: %w", m, desktop.ErrNoWindow, ctx.Err())
		case err := <-events:
			if err != nil {
				return desktop.Window{}, fmt.Errorf("find window (%s): %w", m, err)
			}
		}
	}
}

// FocusedWindow is the window with the keyboard focus, if any.
func (c *Conn) FocusedWindow() (desktop.Window, bool, error) {
	t, err := c.ipc.tree()
	if err != nil {
		return desktop.Window{}, false, fmt.Errorf("read the focus: %w", err)
	}
	for _, v := range t.views() {
		if v.Focused {
			return v.window(), true, nil
		}
	}
	return desktop.Window{}, false, nil
}

// Focus gives w the keyboard focus and raises it.
func (c *Conn) Focus(w desktop.Window) error {
	if err := c.ipc.command(fmt.Sprintf("[con_id=%d] focus", w.ID)); err != nil {
		return fmt.Errorf("focus window %d: %w", w.ID, err)
	}
	return nil
}

// WindowAt is the topmost window holding the point, if any: the focused
// window first (sway raises it), then the others from the top of the
// tree's floating order.
func (c *Conn) WindowAt(x, y int) (desktop.Hit, bool, error) {
	t, err := c.ipc.tree()
	if err != nil {
		return desktop.Hit{}, false, fmt.Errorf("find the window at %d,%d: %w", x, y, err)
	}
	views := t.views()
	p := image.Pt(x, y)
	in := func(n node) bool {
		return n.Visible && p.In(image.Rect(n.Rect.X, n.Rect.Y, n.Rect.X+n.Rect.Width, n.Rect.Y+n.Rect.Height))
	}
	for _, v := range views {
		if v.Focused && in(v) {
			return desktop.Hit{Window: v.window()}, true, nil
		}
	}
	for i := len(views) - 1; i >= 0; i-- {
		if in(views[i]) {
			return desktop.Hit{Window: views[i].window()}, true, nil
		}
	}
	return desktop.Hit{}, false, nil
}

// Close ends both connections.
func (c *Conn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		err = c.c.close()
		if cerr := c.ipc.Close(); err == nil {
			err = cerr
		}
	})
	return err
}

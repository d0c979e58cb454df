package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
	"github.com/kasmrt/kasmrt/engine/stage"
)

// fakePID is the double's application PID: above Linux's largest pid_max,
// so no real process (and no /proc entry) ever has it.
const fakePID = 1<<22 + 1

// fakeWindowID is the double's application window, and fakeWindowBox
// where it is on the screen.
const fakeWindowID = 0x400001

func fakeWindowBox() image.Rectangle { return image.Rect(20, 20, 420, 260) }

// errFakeConnClosed is what the double's connection answers once its X
// server has gone away.
var errFakeConnClosed = errors.New("X connection closed")

// fakeMachine is the rule tests' machine: it stands in for the X session,
// the connection to it and the application, below the engine's own
// interfaces. The screen is scripted (frames, or a fresh colour after every
// input), every input is recorded, and the app, its window and the session
// can die on cue.
type fakeMachine struct {
	// Set before the run; read under mu afterwards.

	// frames, when set, are the screens in order: the screen moves to the
	// next one after every input and stays on the last.
	frames []*image.RGBA
	// still keeps the screen unchanged by input (a stuck application).
	still bool
	// echo makes the application write what is typed to its output, as a
	// program echoing its input into its log would.
	echo bool
	// unsettled is how many settle waits report a screen still changing.
	unsettled int
	// title is the window's title; noWindow means it never appears.
	title    string
	noWindow bool
	// exitAtLaunch makes the app exit with this status before its window
	// appears.
	exitAtLaunch *proc.Status
	// sessionErr, dialErr, startErr and browserErr, when set, are what
	// starting the X server, connecting to it, starting the app and
	// starting or attaching the browser answer; navigateErr is what every
	// navigation of the tab answers.
	sessionErr, dialErr, startErr, browserErr, navigateErr error
	// navigateFails is what navigating the tab to one of its URLs
	// answers: a page that does not load where the start page did.
	navigateFails map[string]error
	// focusErr, when set, is what focusing the window answers; settleErr
	// what waiting for a settled screen does.
	focusErr  error
	settleErr error
	// captureDelay is how long a capture takes (a slow screen), or until
	// its context ends, which is then its error.
	captureDelay time.Duration
	// lateDraw, when set, moves the screen on once more after an input,
	// once that many captures have been taken since it: an app that
	// draws its answer after the screen looked settled.
	lateDraw int
	// on is called after every recorded input, outside the lock, with the
	// input as recorded ("key Return", "type exit", "click 220,140"): the
	// place to kill something on cue.
	on func(f *fakeMachine, input string)
	// onPing is called after every ping the window answers, outside the
	// lock: the place to act between a step's checks and the next.
	onPing func(f *fakeMachine)

	mu       sync.Mutex
	width    int
	height   int
	frame    int
	input    []string
	specs    []proc.Spec
	app      *fakeApp
	sess     *fakeSession
	winGone  bool
	unmapped bool
	closed   bool
	captures int
	browser  *fakeBrowser
	// page is what the double's browser tab shows, by selector, and
	// interactive the elements cdp_list_interactive lists.
	page        map[string]cdp.ElementState
	interactive []cdp.Element
	// focusSel is the selector of the page's focused element ("" when
	// nothing in the page has the focus); boxes are where the page's
	// elements are in the viewport, by selector.
	focusSel string
	boxes    map[string]image.Rectangle
	// boxErr, when set, is what reading an element's box answers (a page
	// between documents).
	boxErr error
	// viewport is where the page's viewport is on the screen: in a
	// headed browser's window, below its toolbars.
	viewport image.Point
	// controls are the application's named controls over AT-SPI; nil is
	// an application without an accessibility bridge (xterm). refuse makes
	// the toolkit refuse every action; stuck makes every action a call
	// that does not return in time; focused is the accessible with the
	// keyboard focus; noCache is why the controls cannot be cached, so
	// every read walks.
	controls []atspi.Control
	refuse   bool
	stuck    bool
	// pings makes the window take part in _NET_WM_PING; hung makes it
	// stop answering (fake_pointer_test.go).
	pings, hung bool
	focused     *atspi.Accessible
	noCache     error
	// shotFails is how many of the tab's next screenshots fail; shots
	// counts them all.
	shotFails, shots int
	// The tab's screenshots come encoded as a browser's do, by image/png
	// (whose bytes this project's encoder never makes); shotPNG holds
	// them in order. spoilAfterClick makes the capture after each click
	// one whose header is whole but whose pixels do not decode, so a test
	// can tell whether anything decoded it; spoilShots spoils every one.
	shotPNG         [][]byte
	spoilAfterClick bool
	spoilShots      bool
	spoilNext       bool
	// console is what the page logs as soon as its console is watched.
	console []cdp.ConsoleMessage
	// buses counts the session buses the run started; dialled lists the
	// session bus addresses it reached the accessibility bus through.
	buses   int
	dialled []string
	// others are the top-level windows besides the application's (see
	// fake_toplevels_test.go); focus is the window with the focus when it is
	// one of them, and gaveFocus records every window given the focus.
	others    []desktop.Window
	focus     uint32
	gaveFocus []uint32
	// painted records every window waited on to paint.
	painted []uint32
	// paintsOnDiscovery, when set, keeps the window blank until the
	// application has been looked for on the accessibility bus (Discover
	// closes it), as a toolkit registers while it draws its first frames.
	paintsOnDiscovery chan struct{}
	// lateLeft counts down lateDraw's captures.
	lateLeft int
	// moves records every pointer move that is not a click.
	moves []image.Point
	// deadlines records the deadline of every capture's context that has
	// one, in order.
	deadlines []time.Time
}

var (
	_ machine       = (*fakeMachine)(nil)
	_ stage.Desktop = (*fakeMachine)(nil)
	_ browser       = (*fakeBrowser)(nil)
	_ focusReader   = (*fakeTab)(nil)
	_ boxReader     = (*fakeTab)(nil)
)

func (f *fakeMachine) StartDisplayServer(_ context.Context, opts desktop.DisplayOptions) (displayServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessionErr != nil {
		return nil, f.sessionErr
	}
	f.width, f.height = opts.Width, opts.Height
	if f.width == 0 {
		f.width, f.height = 640, 400
	}
	f.sess = &fakeSession{done: make(chan struct{})}
	return f.sess, nil
}

func (f *fakeMachine) Dial(string) (stage.Desktop, error) {
	if f.dialErr != nil {
		return nil, f.dialErr
	}
	return f, nil
}

func (f *fakeMachine) StartApp(_ context.Context, spec proc.Spec) (app, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.specs = append(f.specs, spec)
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.app = &fakeApp{done: make(chan struct{}), out: spec.Output}
	if f.exitAtLaunch != nil {
		f.app.exit(*f.exitAtLaunch)
	}
	return f.app, nil
}

// exitApp ends the application with an exit code.
func (f *fakeMachine) exitApp(code int) { f.theApp().exit(proc.Status{Code: code}) }

// killApp ends the application with a signal.
func (f *fakeMachine) killApp(sig syscall.Signal) {
	f.theApp().exit(proc.Status{Code: -1, Signal: sig})
}

// say writes a line of the application's output (app.log, fatal patterns).
func (f *fakeMachine) say(line string) {
	if w := f.theApp().out; w != nil {
		_, _ = io.WriteString(w, line+"\n")
	}
}

// loseWindow destroys the application's window; unmapWindow hides it.
func (f *fakeMachine) loseWindow()  { f.mu.Lock(); f.winGone = true; f.mu.Unlock() }
func (f *fakeMachine) unmapWindow() { f.mu.Lock(); f.unmapped = true; f.mu.Unlock() }

// crashSession kills the X server the way a real one dies: its clients
// are seen gone first, the server itself a moment later.
func (f *fakeMachine) crashSession() {
	f.killApp(syscall.SIGPIPE)
	f.mu.Lock()
	sess := f.sess
	f.mu.Unlock()
	time.AfterFunc(40*time.Millisecond, sess.close)
}

// loseSession makes the X server go away, taking the application with it.
func (f *fakeMachine) loseSession() {
	f.mu.Lock()
	s := f.sess
	f.mu.Unlock()
	s.close()
	f.killApp(syscall.SIGPIPE)
}

func (f *fakeMachine) theApp() *fakeApp {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.app
}

// inputs returns the input recorded so far.
func (f *fakeMachine) inputs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.input...)
}

func (f *fakeMachine) record(in string) error {
	f.mu.Lock()
	if f.sessionGone() {
		f.mu.Unlock()
		return errFakeConnClosed
	}
	f.input = append(f.input, in)
	if !f.still {
		f.frame++
	}
	f.lateLeft = f.lateDraw
	on := f.on
	f.mu.Unlock()
	if on != nil {
		on(f, in)
	}
	return nil
}

func (f *fakeMachine) sessionGone() bool {
	select {
	case <-f.sess.done:
		return true
	default:
		return false
	}
}

// screen returns the current frame: a scripted one, or a flat colour that
// changes with every input.
func (f *fakeMachine) screen() (*image.RGBA, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessionGone() {
		return nil, errFakeConnClosed
	}
	f.captures++
	if f.lateLeft > 0 {
		f.lateLeft--
		// This capture still shows the screen before the late drawing.
		defer func() {
			if f.lateLeft == 0 {
				f.frame++
			}
		}()
	}
	if len(f.frames) > 0 {
		// Each capture is an image of its own, as a real one is: the run
		// masks secrets on it in place.
		frame := f.frames[min(f.frame, len(f.frames)-1)]
		img := image.NewRGBA(frame.Bounds())
		copy(img.Pix, frame.Pix)
		return img, nil
	}
	img := image.NewRGBA(image.Rect(0, 0, f.width, f.height))
	c := color.RGBA{R: uint8(f.frame * 40), G: uint8(f.frame * 7), B: 0x80, A: 0xff}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	// The window is a white box, as xterm's is on Xvfb's black root, so a
	// test can locate it in the image the model is sent.
	draw.Draw(img, fakeWindowBox(), image.White, image.Point{}, draw.Src)
	return img, nil
}

func (f *fakeMachine) Capture(ctx context.Context) (*image.RGBA, error) {
	if d, ok := ctx.Deadline(); ok {
		f.mu.Lock()
		f.deadlines = append(f.deadlines, d)
		f.mu.Unlock()
	}
	if f.captureDelay > 0 {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("capture: %w", ctx.Err())
		case <-time.After(f.captureDelay):
		}
	}
	return f.screen()
}

// captureDeadlines returns the deadlines the captures' contexts carried,
// in order.
func (f *fakeMachine) captureDeadlines() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.deadlines)
}

func (f *fakeMachine) WaitSettled(context.Context, desktop.SettleOptions) (*image.RGBA, bool, error) {
	if f.settleErr != nil {
		return nil, false, f.settleErr
	}
	img, err := f.screen()
	if err != nil {
		return nil, false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsettled > 0 {
		f.unsettled--
		return img, false, nil
	}
	return img, true, nil
}

func (f *fakeMachine) PressKey(_ context.Context, chord string) error {
	// F35 is a key name the language accepts but no keyboard layout of
	// the double maps.
	if chord == "F35" {
		return fmt.Errorf("press %s: %w", chord, desktop.ErrUnknownKey)
	}
	return f.record("key " + chord)
}

func (f *fakeMachine) TypeText(_ context.Context, s string) error {
	if err := f.record("type " + s); err != nil {
		return err
	}
	if !f.echo {
		return nil
	}
	if app := f.theApp(); app != nil && app.out != nil {
		_, _ = io.WriteString(app.out, s)
	}
	return nil
}

// MovePointer records a move apart from the inputs: it changes nothing
// on the double's screen.
func (f *fakeMachine) MovePointer(_ context.Context, x, y int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sessionGone() {
		return errFakeConnClosed
	}
	f.moves = append(f.moves, image.Pt(x, y))
	return nil
}

func (f *fakeMachine) Click(_ context.Context, x, y int) error {
	return f.record(fmt.Sprintf("click %d,%d", x, y))
}

func (f *fakeMachine) window() (desktop.Window, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.winGone || f.sessionGone() {
		return desktop.Window{}, fmt.Errorf("window 0x%x: %w", fakeWindowID, desktop.ErrWindowGone)
	}
	b := fakeWindowBox()
	return desktop.Window{ID: fakeWindowID, PID: fakePID, Instance: "fake", Class: "Fake", Title: f.title,
		X: b.Min.X, Y: b.Min.Y, Width: b.Dx(), Height: b.Dy(), Viewable: !f.unmapped}, nil
}

func (f *fakeMachine) Window(id uint32) (desktop.Window, error) {
	if w, found := f.other(id); found {
		return w, nil
	}
	return f.window()
}

func (f *fakeMachine) FindWindow(ctx context.Context, m desktop.WindowMatch) (desktop.Window, error) {
	if f.hasOthers() {
		return f.findAmong(ctx, m)
	}
	if f.noWindow {
		<-ctx.Done()
		return desktop.Window{}, desktop.ErrNoWindow
	}
	return f.window()
}

func (f *fakeMachine) Windows() ([]desktop.Window, error) {
	if f.noWindow {
		return nil, nil
	}
	w, err := f.window()
	if err != nil {
		return f.otherWindows(), nil
	}
	return append([]desktop.Window{w}, f.otherWindows()...), nil
}

// FocusedWindow is the app's window while it is there: the double has no
// other windows to take the focus.
func (f *fakeMachine) FocusedWindow() (desktop.Window, bool, error) {
	if w, found := f.focusedOther(); found {
		return w, true, nil
	}
	w, err := f.window()
	return w, err == nil, nil
}

// WaitPainted finds the window painted at once: the double's frames are
// drawn before anyone looks.
func (f *fakeMachine) WaitPainted(ctx context.Context, w desktop.Window, _ desktop.SettleOptions) (bool, error) {
	f.mu.Lock()
	f.painted = append(f.painted, w.ID)
	wait := f.paintsOnDiscovery
	f.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return false, nil
		}
	}
	return true, nil
}

func (f *fakeMachine) Focus(w desktop.Window) error {
	if _, found := f.other(w.ID); found {
		return f.focusOn(w.ID)
	}
	if _, err := f.window(); err != nil {
		return err
	}
	if f.focusErr != nil {
		return f.focusErr
	}
	return f.focusOn(w.ID)
}

func (f *fakeMachine) ScreenSize() (int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.width, f.height
}

func (f *fakeMachine) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

// fakeApp is the double's application process.
type fakeApp struct {
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	status proc.Status
	out    io.Writer
	stops  int
}

func (a *fakeApp) exit(st proc.Status) {
	a.once.Do(func() {
		a.mu.Lock()
		a.status = st
		a.mu.Unlock()
		close(a.done)
	})
}

func (a *fakeApp) PID() int              { return fakePID }
func (a *fakeApp) Done() <-chan struct{} { return a.done }

func (a *fakeApp) Alive() bool {
	select {
	case <-a.done:
		return false
	default:
		return true
	}
}

func (a *fakeApp) ExitStatus() proc.Status {
	if a.Alive() {
		return proc.Status{Running: true, Code: -1}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.status
}

// Stop ends the app as the runtime's stop would: SIGTERM.
func (a *fakeApp) Stop(time.Duration) error {
	a.mu.Lock()
	a.stops++
	a.mu.Unlock()
	a.exit(proc.Status{Code: -1, Signal: syscall.SIGTERM})
	return nil
}

// fakeSession is the double's X server.
type fakeSession struct {
	done chan struct{}
	once sync.Once
}

func (s *fakeSession) Display() string       { return ":fake" }
func (s *fakeSession) Owned() bool           { return true }
func (s *fakeSession) WindowManager() string { return "" }
func (s *fakeSession) Done() <-chan struct{} { return s.done }
func (s *fakeSession) Close() error          { s.close(); return nil }
func (s *fakeSession) close()                { s.once.Do(func() { close(s.done) }) }

func (f *fakeMachine) LaunchBrowser(context.Context, cdp.LaunchOptions) (browser, error) {
	if f.browserErr != nil {
		return nil, f.browserErr
	}
	return f.newBrowser(""), nil
}

func (f *fakeMachine) AttachBrowser(_ context.Context, debuggerURL string) (browser, error) {
	if f.browserErr != nil {
		return nil, f.browserErr
	}
	return f.newBrowser(debuggerURL), nil
}

func (f *fakeMachine) newBrowser(debuggerURL string) *fakeBrowser {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.browser = &fakeBrowser{done: make(chan struct{}), debuggerURL: debuggerURL, tab: &fakeTab{f: f, filled: map[string]string{}}}
	return f.browser
}

// fakeBrowser is the double's Chromium, with one tab.
type fakeBrowser struct {
	done        chan struct{}
	once        sync.Once
	debuggerURL string
	tab         *fakeTab
}

func (b *fakeBrowser) Tab() browserTab         { return b.tab }
func (b *fakeBrowser) PID() int                { return fakePID + 1 }
func (b *fakeBrowser) Done() <-chan struct{}   { return b.done }
func (b *fakeBrowser) DebuggerURL() string     { return b.debuggerURL }
func (b *fakeBrowser) Close() error            { b.exit(); return nil }
func (b *fakeBrowser) exit()                   { b.once.Do(func() { close(b.done) }) }
func (b *fakeBrowser) ExitStatus() proc.Status { return proc.Status{Code: 0} }

// fakeTab is the double's browser tab: a page of named elements; every
// navigation, click and fill is recorded as input.
type fakeTab struct {
	f      *fakeMachine
	mu     sync.Mutex
	url    string
	filled map[string]string
}

// WatchConsole hands the page's scripted console messages to fn.
func (t *fakeTab) WatchConsole(_ context.Context, fn func(cdp.ConsoleMessage)) (stop func()) {
	t.f.mu.Lock()
	msgs := slices.Clone(t.f.console)
	t.f.mu.Unlock()
	for _, m := range msgs {
		fn(m)
	}
	return func() {}
}

func (t *fakeTab) URL(context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.url, nil
}

func (t *fakeTab) Navigate(_ context.Context, url string) error {
	if t.f.navigateErr != nil {
		return t.f.navigateErr
	}
	if err := t.f.navigateFails[url]; err != nil {
		return err
	}
	t.mu.Lock()
	t.url = url
	t.mu.Unlock()
	return t.f.record("navigate " + url)
}

func (t *fakeTab) ListInteractive(_ context.Context, filter string) ([]cdp.Element, error) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	var out []cdp.Element
	for _, e := range t.f.interactive {
		if filter == "" || strings.Contains(e.Name, filter) {
			out = append(out, e)
		}
	}
	return out, nil
}

func (t *fakeTab) ClickDescribed(_ context.Context, handle, text string) (cdp.Element, error) {
	t.f.mu.Lock()
	var found []cdp.Element
	for _, e := range t.f.interactive {
		if handle != "" && e.Handle == handle || text != "" && e.Name == text {
			found = append(found, e)
		}
	}
	t.f.mu.Unlock()
	switch len(found) {
	case 0:
		return cdp.Element{}, &cdp.DescribedNotFoundError{Handle: handle, Text: text}
	case 1:
		return found[0], t.f.record("click " + found[0].Handle)
	}
	return cdp.Element{}, &cdp.AmbiguousError{Text: text, Candidates: found}
}

func (t *fakeTab) ViewportOrigin(context.Context) (image.Point, error) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.viewport, nil
}

// Focus answers as the page's script does: the origin of the page's URL
// and the names among selectors whose selector is the focused element's.
func (t *fakeTab) Focus(ctx context.Context, selectors map[string]string) (cdp.Focus, error) {
	page, _ := t.URL(ctx)
	u, err := url.Parse(page)
	if err != nil {
		return cdp.Focus{}, fmt.Errorf("the page's origin: %w", err)
	}
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	focus := cdp.Focus{Origin: u.Scheme + "://" + u.Host}
	for name, sel := range selectors {
		if t.f.focusSel != "" && sel == t.f.focusSel {
			focus.Targets = append(focus.Targets, name)
		}
	}
	slices.Sort(focus.Targets)
	return focus, nil
}

// Box is where the element is in the viewport; ":focus" is the focused
// element.
func (t *fakeTab) Box(_ context.Context, selector string) (image.Rectangle, bool, error) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	if t.f.boxErr != nil {
		return image.Rectangle{}, false, t.f.boxErr
	}
	if selector == ":focus" {
		selector = t.f.focusSel
	}
	b, ok := t.f.boxes[selector]
	return b, ok, nil
}

func (t *fakeTab) Query(_ context.Context, selector string) (cdp.ElementState, error) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.f.page[selector], nil
}

func (t *fakeTab) Click(_ context.Context, selector string) error {
	t.f.mu.Lock()
	t.f.spoilNext = t.f.spoilAfterClick
	t.f.mu.Unlock()
	return t.f.record("click " + selector)
}

func (t *fakeTab) Fill(_ context.Context, selector, value string) error {
	t.mu.Lock()
	t.filled[selector] = value
	t.mu.Unlock()
	return t.f.record("fill " + selector)
}

// Wait succeeds at once for an element on the page or a URL already
// reached, and otherwise waits until ctx ends.
func (t *fakeTab) Wait(ctx context.Context, spec cdp.WaitSpec) error {
	t.f.mu.Lock()
	st := t.f.page[spec.Selector]
	t.f.mu.Unlock()
	url, _ := t.URL(ctx)
	if spec.Selector != "" && st.Found && st.Visible || spec.URLContains != "" && strings.Contains(url, spec.URLContains) {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// CapturePNG captures the page as image/png encodes it, after failing
// shotFails times as a page between documents does; shots counts every
// attempt.
func (t *fakeTab) CapturePNG(context.Context) ([]byte, error) {
	t.f.mu.Lock()
	t.f.shots++
	fail := t.f.shotFails > 0
	if fail {
		t.f.shotFails--
	}
	spoil := t.f.spoilNext || t.f.spoilShots
	t.f.spoilNext = false
	t.f.mu.Unlock()
	if fail {
		return nil, errors.New("Page.captureScreenshot: no frame")
	}
	img, err := t.f.screen()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	if spoil {
		// The image data ends early; the header before it is whole.
		data = data[:len(data)-16]
	}
	t.f.mu.Lock()
	t.f.shotPNG = append(t.f.shotPNG, data)
	t.f.mu.Unlock()
	return data, nil
}

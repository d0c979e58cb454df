package cdp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// DefaultExecPath is Debian's Chromium; kasmrt never downloads a browser.
const DefaultExecPath = "/usr/bin/chromium"

// stopGrace is how long a launched Chromium gets to exit after SIGTERM
// before its process group is killed.
const stopGrace = 2 * time.Second

// LaunchOptions says how to start Chromium.
type LaunchOptions struct {
	// ExecPath is the browser binary; empty means DefaultExecPath.
	ExecPath string
	// Display is the X display of a headful browser (":7"); empty means
	// $DISPLAY. It is ignored when Headless is set.
	Display string
	// Headless runs Chromium without a window.
	Headless bool
	// StartURL is the first page; empty means about:blank.
	StartURL string
	// Width and Height size the window (the viewport when headless); zero
	// values mean 1280x800.
	Width, Height int
	// UserDataDir is the profile directory; empty means a temporary one that
	// Close removes.
	UserDataDir string
	// Args are extra command-line switches, appended after kasmrt's own.
	Args []string
	// Unset names inherited environment variables the browser must not
	// see (the ones that hold secrets).
	Unset []string
	// Output receives Chromium's stdout and stderr line by line; nil
	// discards them (the last few KiB are kept for error messages anyway).
	Output io.Writer
	// StartTimeout bounds how long the DevTools endpoint may take to appear;
	// zero means 20 s.
	StartTimeout time.Duration
}

// Browser is a Chromium that kasmrt launched or attached to, with one page
// target attached as its Tab.
type Browser struct {
	proc       *proc.Process // nil when attached
	tempDir    string        // profile directory to remove, or ""
	wsURL      string
	output     *proc.Tail
	tab        *Tab
	cancelConn context.CancelFunc

	closeOnce sync.Once
	closeErr  error
}

// ExitStatus reports how a launched browser's process ended, or Running
// while it runs. An attached browser has no process of ours: it reports
// Running, and its connection tells when it is gone.
func (b *Browser) ExitStatus() proc.Status {
	if b.proc == nil {
		return proc.Status{Running: true, Code: -1}
	}
	return b.proc.ExitStatus()
}

// Launch starts Chromium in its own process group with remote debugging on
// a free loopback port, attaches to its first tab and, when headful, brings
// that tab to the front (a background tab gets no input or frames).
func Launch(ctx context.Context, opts LaunchOptions) (*Browser, error) {
	execPath := opts.ExecPath
	if execPath == "" {
		execPath = DefaultExecPath
	}
	display := opts.Display
	if display == "" {
		display = os.Getenv("DISPLAY")
	}
	if !opts.Headless && display == "" {
		return nil, errors.New("launch chromium: a headful browser needs an X display")
	}
	w, h := opts.Width, opts.Height
	if w == 0 {
		w = 1280
	}
	if h == 0 {
		h = 800
	}
	timeout := opts.StartTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}

	b := &Browser{output: proc.NewTail(4 << 10)}
	profile := opts.UserDataDir
	if profile == "" {
		dir, err := os.MkdirTemp("", "kasmrt-chromium-")
		if err != nil {
			return nil, fmt.Errorf("launch chromium: profile directory: %w", err)
		}
		profile, b.tempDir = dir, dir
	} else {
		// A profile reused from an earlier run may hold a stale port file,
		// which would send us to a dead port.
		_ = os.Remove(filepath.Join(profile, "DevToolsActivePort"))
	}

	startURL := opts.StartURL
	if startURL == "" {
		startURL = "about:blank"
	}
	argv := []string{execPath,
		"--no-sandbox",
		"--disable-gpu",
		"--disable-quic",
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--password-store=basic",
		"--remote-debugging-address=127.0.0.1",
		// Port 0 lets Chromium pick a free port and write it to
		// DevToolsActivePort, so two runs never race for one port.
		"--remote-debugging-port=0",
		"--user-data-dir=" + profile,
		fmt.Sprintf("--window-size=%d,%d", w, h),
	}
	if opts.Headless {
		argv = append(argv, "--headless")
	} else {
		argv = append(argv, "--window-position=0,0")
	}
	argv = append(argv, opts.Args...)
	argv = append(argv, startURL)

	var out io.Writer = b.output
	if opts.Output != nil {
		out = io.MultiWriter(b.output, opts.Output)
	}
	var env []string
	if !opts.Headless {
		env = append(env, "DISPLAY="+display)
	}
	// The process must outlive the launch context: Close ends it.
	p, err := proc.Start(context.WithoutCancel(ctx), proc.Spec{Argv: argv, Env: env, Unset: opts.Unset, Output: out})
	if err != nil {
		b.removeProfile()
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	b.proc = p

	wsURL, err := waitDevToolsPort(ctx, p, profile, timeout)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("launch chromium: %w: %s", err, b.output.String())
	}
	if err := b.attach(ctx, wsURL); err != nil {
		b.Close()
		return nil, fmt.Errorf("launch chromium: %w", err)
	}
	if !opts.Headless {
		if err := b.tab.run(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, page.BringToFront, cdp.Empty{})
			return err
		})); err != nil {
			b.Close()
			return nil, fmt.Errorf("launch chromium: bring tab to front: %w", err)
		}
	}
	return b, nil
}

// waitDevToolsPort polls the profile for the DevToolsActivePort file that
// Chromium writes once its endpoint listens, and returns the browser's
// websocket address.
func waitDevToolsPort(ctx context.Context, p *proc.Process, profile string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	file := filepath.Join(profile, "DevToolsActivePort")
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := os.ReadFile(file); err == nil {
			// Line 1 is the port, line 2 the browser target's path; the file
			// can be seen half written.
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) == 2 {
				if port, err := strconv.Atoi(lines[0]); err == nil && port > 0 {
					return fmt.Sprintf("ws://127.0.0.1:%d%s", port, strings.TrimSpace(lines[1])), nil
				}
			}
		}
		select {
		case <-p.Done():
			return "", fmt.Errorf("chromium exited (%s) before its DevTools endpoint was ready", p.ExitStatus())
		case <-ctx.Done():
			return "", fmt.Errorf("wait for DevTools endpoint: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// Attach connects to a Chromium that is already running with remote
// debugging, given its browser websocket address
// ("ws://127.0.0.1:9222/devtools/browser/…") or its HTTP endpoint
// ("http://127.0.0.1:9222"). It attaches to the browser's first page tab.
// Close disconnects and leaves that browser and its tabs running.
func Attach(ctx context.Context, debuggerURL string) (*Browser, error) {
	wsURL, err := resolveDebuggerURL(ctx, debuggerURL)
	if err != nil {
		return nil, fmt.Errorf("attach to chromium: %w", err)
	}
	b := &Browser{output: proc.NewTail(1)}
	if err := b.attach(ctx, wsURL); err != nil {
		return nil, fmt.Errorf("attach to chromium at %s: %w", wsURL, err)
	}
	return b, nil
}

// resolveDebuggerURL turns an HTTP endpoint into the browser websocket
// address by asking /json/version, and passes a websocket address through.
func resolveDebuggerURL(ctx context.Context, raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("debugger URL: %w", err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("debugger URL %q has no host", raw)
	}
	if (u.Scheme == "ws" || u.Scheme == "wss") && strings.Contains(u.Path, "/devtools/browser/") {
		return raw, nil
	}
	scheme := "http"
	if u.Scheme == "https" || u.Scheme == "wss" {
		scheme = "https"
	}
	version := scheme + "://" + u.Host + "/json/version"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, version, nil)
	if err != nil {
		return "", fmt.Errorf("ask %s: %w", version, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("ask %s: %w", version, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("ask %s: %s", version, resp.Status)
	}
	var v struct {
		WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil {
		return "", fmt.Errorf("read %s: %w", version, err)
	}
	if v.WebSocketDebuggerURL == "" {
		return "", fmt.Errorf("%s names no webSocketDebuggerUrl", version)
	}
	return v.WebSocketDebuggerURL, nil
}

// attach connects to wsURL and attaches to the browser's page tab.
func (b *Browser) attach(ctx context.Context, wsURL string) error {
	b.wsURL = wsURL
	// The connection lives until Close, not until the caller's context
	// ends.
	connCtx, cancel := context.WithCancel(context.Background())
	b.cancelConn = cancel
	allocCtx, _ := chromedp.NewAllocatorContext(connCtx, &attachAllocator{wsURL: wsURL})
	browserCtx, _ := chromedp.NewContext(allocCtx)

	// The first call dials the browser and binds the connection's life to
	// the context it gets, so it must get browserCtx; the caller's context
	// only bounds the wait.
	id, err := boundedBy(ctx, cancel, func() (target.ID, error) { return pickPage(ctx, browserCtx) })
	if err != nil {
		return err
	}
	// Detach, never close, when the connection ends: an attached browser's
	// tab belongs to someone else, and a launched one is killed anyway.
	opts := []chromedp.ContextOption{chromedp.WithDetachOnCancel()}
	if id != "" {
		opts = append(opts, chromedp.WithTargetID(id))
	}
	tabCtx, _ := chromedp.NewContext(browserCtx, opts...)
	if _, err := boundedBy(ctx, cancel, func() (struct{}, error) { return struct{}{}, chromedp.Do(tabCtx) }); err != nil {
		return fmt.Errorf("attach tab: %w", err)
	}
	// Chromium gives a page's main frame its target's id.
	loads := newPageLoads(cdp.FrameID(chromedp.FromContext(tabCtx).Target.TargetID))
	if err := chromedp.Listen(tabCtx, loads.onEvent); err != nil {
		return fmt.Errorf("attach tab: follow page loads: %w", err)
	}
	b.tab = &Tab{ctx: tabCtx, loads: loads}
	return nil
}

// boundedBy runs f, which ignores ctx, and gives up when ctx ends first:
// abort then cancels the connection so that f returns.
func boundedBy[T any](ctx context.Context, abort context.CancelFunc, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			abort()
		}
		return r.v, r.err
	case <-ctx.Done():
		abort()
		<-done
		var zero T
		return zero, ctx.Err()
	}
}

// pickPage chooses the tab to attach to: the first ordinary page that shows
// something, else the first page. It waits briefly for a freshly launched
// browser to list its first tab, and returns "" when there is none (a new
// tab is then opened).
func pickPage(ctx context.Context, browserCtx context.Context) (target.ID, error) {
	const settle = 2 * time.Second
	deadline := time.Now().Add(settle)
	for {
		infos, err := chromedp.Targets(browserCtx)
		if err != nil {
			return "", fmt.Errorf("list targets: %w", err)
		}
		var blank target.ID
		for _, in := range infos {
			if in.Type != "page" || strings.HasPrefix(in.URL, "chrome") || strings.HasPrefix(in.URL, "devtools:") {
				continue
			}
			if in.URL != "about:blank" && in.URL != "" {
				return in.TargetID, nil
			}
			if blank == "" {
				blank = in.TargetID
			}
		}
		if blank != "" || time.Now().After(deadline) || ctx.Err() != nil {
			return blank, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PID is the process ID of a launched Chromium (also its process group), or
// 0 for an attached one.
func (b *Browser) PID() int {
	if b.proc == nil {
		return 0
	}
	return b.proc.PID()
}

// DebuggerURL is the browser's websocket address, for another client that
// wants to attach.
func (b *Browser) DebuggerURL() string { return b.wsURL }

// Tab is the attached page.
func (b *Browser) Tab() *Tab { return b.tab }

// Done is closed when a launched Chromium has exited; it is nil for an
// attached browser, whose process is not ours to watch.
func (b *Browser) Done() <-chan struct{} {
	if b.proc == nil {
		return nil
	}
	return b.proc.Done()
}

// Close disconnects from the browser. A launched Chromium is stopped with
// its whole process group and its temporary profile is removed; an attached
// one is left running with its tabs open. Calling Close again returns the
// first result.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if b.cancelConn != nil {
			b.cancelConn()
		}
		var errs []error
		if b.proc != nil {
			if err := b.proc.Stop(stopGrace); err != nil {
				errs = append(errs, err)
			}
		}
		if err := b.removeProfile(); err != nil {
			errs = append(errs, err)
		}
		if err := errors.Join(errs...); err != nil {
			b.closeErr = fmt.Errorf("close chromium: %w", err)
		}
	})
	return b.closeErr
}

func (b *Browser) removeProfile() error {
	if b.tempDir == "" {
		return nil
	}
	if err := os.RemoveAll(b.tempDir); err != nil {
		return fmt.Errorf("remove profile: %w", err)
	}
	return nil
}

// attachAllocator connects chromedp to a browser that runs already. Unlike
// remote.Allocator it never sends Browser.close when its context ends:
// closing is the Browser's decision (kill the group we launched, leave an
// attached browser alone).
type attachAllocator struct {
	wsURL string
	wg    sync.WaitGroup
}

func (a *attachAllocator) Allocate(ctx context.Context, opts ...chromedp.BrowserOption) (*chromedp.Browser, error) {
	connCtx, cancel := context.WithCancel(context.Background())
	a.wg.Go(func() {
		<-ctx.Done()
		cancel()
	})
	dialCtx, dialCancel := context.WithTimeout(ctx, 10*time.Second)
	defer dialCancel()
	conn, err := remote.DialContext(dialCtx, a.wsURL)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("dial %s: %w", a.wsURL, err)
	}
	// Chromium's own logging of protocol events it does not know is noise
	// for a test run; errors still surface through the calls that fail.
	opts = append(opts, chromedp.WithBrowserLogf(func(string, ...any) {}), chromedp.WithBrowserErrorf(func(string, ...any) {}))
	return chromedp.NewBrowserTransport(connCtx, conn, opts...)
}

func (a *attachAllocator) Wait() { a.wg.Wait() }

// Attaches tells chromedp that this allocator starts no process.
func (a *attachAllocator) Attaches() bool { return true }

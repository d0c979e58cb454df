package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	kcdp "github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/report"
)

// loadedPage is a report page open in Debian's headless Chromium, with
// everything the browser complained about while it ran.
type loadedPage struct {
	ctx context.Context

	mu       sync.Mutex
	problems []string // console errors, exceptions, CSP and load failures
	dialogs  []string // alert, confirm or prompt: script that was not ours ran
}

// openPage loads path (report.html or an index) from the file system in
// real headless Chromium and waits until it has loaded.
func openPage(t testing.TB, path string) *loadedPage {
	t.Helper()
	if _, err := os.Stat(kcdp.DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", kcdp.DefaultExecPath, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(kcdp.DefaultExecPath), chromedp.NoSandbox, chromedp.Headless,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	p := &loadedPage{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			p.problems = append(p.problems, fmt.Sprintf("exception: %s %+v", ev.ExceptionDetails.Text, ev.ExceptionDetails.Exception))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				p.problems = append(p.problems, fmt.Sprintf("console %s: %v", ev.Type, ev.Args))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				p.problems = append(p.problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *page.EventJavascriptDialogOpening:
			p.dialogs = append(p.dialogs, string(ev.Type)+": "+ev.Message)
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable chromium's log: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("enable chromium's runtime: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("load %s in chromium: %v", path, err)
	}
	// Lazy images and late errors get a moment to arrive.
	p.eval(t, `new Promise(r => setTimeout(() => r(true), 300))`, nil)
	return p
}

// reload loads the page again and returns how long Chromium took until
// the page was ready to use (domContentLoadedEventEnd) and until it had
// loaded with its visible screens (loadEventEnd), in milliseconds.
func (p *loadedPage) reload(t testing.TB) (ready, loaded float64) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
		t.Fatalf("reload: %v", err)
	}
	var ms [2]float64
	p.eval(t, `new Promise(r => { const done = () => { const n = performance.getEntriesByType("navigation")[0]; if (n && n.loadEventEnd > 0) { r([n.domContentLoadedEventEnd, n.loadEventEnd]) } else { setTimeout(done, 5) } }; done() })`, &ms)
	return ms[0], ms[1]
}

// eval evaluates a test expression in the page (the test's own script,
// run through DevTools; the page's policy does not apply to it) and
// decodes its value into out (nil: ignore it).
func (p *loadedPage) eval(t testing.TB, expr string, out any) {
	t.Helper()
	raw, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("evaluate %s: decode %s: %v", expr, raw, err)
		}
	}
}

func (p *loadedPage) int(t testing.TB, expr string) int {
	t.Helper()
	var n int
	p.eval(t, expr, &n)
	return n
}

func (p *loadedPage) str(t testing.TB, expr string) string {
	t.Helper()
	var s string
	p.eval(t, expr, &s)
	return s
}

// press sends a key to the page as a person would type it.
func (p *loadedPage) press(t testing.TB, key string) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(key)); err != nil {
		t.Fatalf("press %q: %v", key, err)
	}
}

// wantClean fails the test for every console error, exception or dialog
// the page caused.
func (p *loadedPage) wantClean(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.problems {
		t.Errorf("the page caused a problem in Chromium: %s", pr)
	}
	for _, d := range p.dialogs {
		t.Errorf("the page opened a dialog (a script ran that is not the page's): %s", d)
	}
}

// checkReportPage loads dir/report.html and checks what every page must
// do: load without a complaint, show as many steps as report.json has,
// open at the first failed step, move the selection with the arrow keys
// and show the final capture.
func checkReportPage(t *testing.T, dir string) (*loadedPage, report.Report) {
	t.Helper()
	rep, _ := readReport(t, dir)
	p := openPage(t, filepath.Join(dir, "report.html"))
	if n := p.int(t, `document.querySelectorAll("article.step").length`); n != len(rep.Steps) {
		t.Errorf("the page shows %d steps, report.json has %d", n, len(rep.Steps))
	}
	if n := p.int(t, `document.querySelectorAll(".steplist li").length`); n != len(rep.Steps) {
		t.Errorf("the step list has %d entries, report.json has %d steps", n, len(rep.Steps))
	}
	if len(rep.Steps) > 1 {
		selected := func() string {
			return p.str(t, `document.querySelector("article.step.selected").dataset.n + "/" + document.querySelector(".steplist li[aria-current=true]").dataset.n`)
		}
		// The page opens at the first step that did not succeed, else at
		// the first step; the arrows move from there.
		open := 0
		for i, st := range rep.Steps {
			if st.Status != "ok" {
				open = i
				break
			}
		}
		at := func(i int) string { return fmt.Sprintf("%d/%d", rep.Steps[i].N, rep.Steps[i].N) }
		if got := selected(); got != at(open) {
			t.Errorf("selected step (article/list) %s at load, want %s", got, at(open))
		}
		next, key, back := open+1, kb.ArrowRight, kb.ArrowLeft
		if next == len(rep.Steps) {
			next, key, back = open-1, kb.ArrowLeft, kb.ArrowRight
		}
		p.press(t, key)
		if got := selected(); got != at(next) {
			t.Errorf("after an arrow the selected step is %s, want %s", got, at(next))
		}
		p.press(t, back)
		if got := selected(); got != at(open) {
			t.Errorf("after the other arrow the selected step is %s, want %s", got, at(open))
		}
	}
	if rep.Final == nil || rep.Final.Screen == "" {
		t.Fatalf("report.json has no final capture: %+v", rep.Final)
	}
	src := p.str(t, `document.querySelector("#final img").getAttribute("src")`)
	if src != rep.Final.Screen {
		t.Errorf("the page's final capture is %q, report.json's %q", src, rep.Final.Screen)
	}
	if w := p.int(t, `(async () => { const i = document.querySelector("#final img"); i.loading = "eager"; await i.decode(); return i.naturalWidth })()`); w != rep.Final.Width {
		t.Errorf("the final capture shows %d pixels wide, want %d: not loaded", w, rep.Final.Width)
	}
	p.wantClean(t)
	return p, rep
}

package page

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
)

// failingLaterEvents is a run of three steps of which the third failed.
func failingLaterEvents() []events.Event {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []events.Event{
		{T: at(0), Kind: events.KindRunStarted, Data: events.RunStarted{Scenario: "later failure", File: "f.yaml", Mode: "goal", Goal: "g", DeadlineS: 60}},
		{T: at(10), Kind: events.KindStepEnded, Step: 1, Tool: "observe_screen", Source: events.SourceModel, Status: events.StatusOK, Message: "observed"},
		{T: at(20), Kind: events.KindStepEnded, Step: 2, Tool: "press_key", Args: map[string]any{"key": "a"}, Source: events.SourceModel, Status: events.StatusOK, Message: "pressed a"},
		{T: at(30), Kind: events.KindStepEnded, Step: 3, Tool: "click", Args: map[string]any{"target": "center"}, Source: events.SourceModel, Status: events.StatusError, Message: "click failed"},
		{T: at(40), Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictAppFailed, Outcome: "completed", Reasons: []string{"step 3 failed"}}},
		{T: at(50), Kind: events.KindRunEnded, Data: events.RunEnded{Report: "r"}},
	}
	for i := range evs {
		evs[i].Seq = int64(i + 1)
	}
	return evs
}

// TestPageLinksAndOpening checks the generated page: every step and check
// has an anchor the step list and the checks table link to, the page names
// the first failed step to open at, and a step's capture is kept compact.
func TestPageLinksAndOpening(t *testing.T) {
	t.Parallel()
	dir := writeFixture(t, failingLaterEvents(), "")
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	for _, want := range []string{
		`<a href="#step-1">`, `<a href="#step-3">`, `id="step-3"`,
		`<section id="steps" data-open="3">`,
		`<a href="#step-3" id="first-failure">first failure: step 3</a>`,
		`id="check-process_alive"`, `<a href="#check-process_alive">`,
		`.step .shot img{max-height:55vh`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// TestPageOpensAtStep loads the page in headless Chromium: with #step-2
// it shows step 2, without a fragment the first failed step (3), and the
// shown step's capture fits in the window.
func TestPageOpensAtStep(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(cdp.DefaultExecPath); err != nil {
		t.Skipf("Debian chromium is not installed at %s: %v", cdp.DefaultExecPath, err)
	}
	dir := writeFixture(t, failingLaterEvents(), "")
	if err := Write(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(cdp.DefaultExecPath), chromedp.NoSandbox, chromedp.Headless,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	for _, tc := range []struct{ fragment, want string }{
		{"#step-2", "2"},
		{"", "3"},
		{"#step-1", "1"},
	} {
		t.Run("fragment="+tc.fragment, func(t *testing.T) {
			ctx, cancel := chromedp.NewContext(allocCtx)
			defer cancel()
			ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
			defer cancelTimeout()
			if err := chromedp.Do(ctx,
				chromedp.Navigate("file://"+filepath.Join(dir, FileName)+tc.fragment),
				chromedp.WaitReady("body")); err != nil {
				t.Fatalf("load the page: %v", err)
			}
			shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".step.selected").getAttribute("data-n")`))
			if err != nil {
				t.Fatalf("read the shown step: %v", err)
			}
			visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(function(){var s=document.querySelectorAll(".step");for(var i=0;i<s.length;i++){if(s[i].classList.contains("selected")!==(getComputedStyle(s[i]).display!=="none"))return false}return true})()`))
			if err != nil {
				t.Fatalf("read which steps show: %v", err)
			}
			if shown != tc.want {
				t.Errorf("the page shows step %s, want %s", shown, tc.want)
			}
			if !visible {
				t.Error("the steps shown are not exactly the selected one")
			}
		})
	}
}

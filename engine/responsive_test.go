package engine

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// hangApp is the scenario's app: section for testdata/hangapp.py, a GTK 3
// window whose "Freeze" button blocks its main loop for 1000 s and whose
// "Slow" button blocks it for slowS seconds.
func hangApp(t *testing.T, slowS, extra string) string {
	t.Helper()
	python := testkit.GTKPython(t)
	script, err := filepath.Abs("testdata/hangapp.py")
	if err != nil {
		t.Fatal(err)
	}
	return "name: hang\napp:\n  command: [" + python + ", " + script + ", '" + slowS + "']\n  window: {title: hang test}\n" + extra
}

// TestAppHung clicks a real GTK 3 application's button whose handler
// blocks its main loop: the run ends app-failed (app-hung) on the failed
// app_responsive check, the next step never runs, and the report keeps the
// screen, the windows and the application's threads. A handler that is
// slow but lets the main loop answer within app.hang_timeout_s is not a
// hang.
func TestAppHung(t *testing.T) {
	t.Parallel()
	scriptNeed(t, "dbus-daemon")
	t.Run("a handler that blocks the main loop", func(t *testing.T) {
		t.Parallel()
		o := scriptRun(t, scriptRunSpec{scenario: hangApp(t, "1.5", "  hang_timeout_s: 2\n") +
			"steps:\n  - observe_screen: {}\n  - click_element: {name: Freeze}\n  - observe_screen: {}\n"})
		o.want(t, events.VerdictAppFailed, OutcomeAppHung, "did not answer _NET_WM_PING within 2s (app.hang_timeout_s)")
		if len(o.rep.Steps) != 2 {
			t.Errorf("%d steps ran, want the run to stop after the click that hung the app", len(o.rep.Steps))
		}
		if s := o.step(t, 2); s.Status != events.StatusOK || !strings.Contains(s.Message, "with the pointer") {
			t.Errorf("step 2: %s %q, want the click itself done with the pointer", s.Status, s.Message)
		}
		if c := o.check(checkAppResponsive); c == nil || c.OK {
			t.Errorf("final check %s = %+v, want failed", checkAppResponsive, c)
		}
		h := o.rep.Hung
		if h == nil {
			t.Fatal("report.json has no hung diagnostics")
		}
		if h.Screen == "" || h.TimeoutS != 2 || !strings.Contains(h.Window, "hang test") {
			t.Errorf("hung = %+v, want the screen, the 2 s bound and the window asked", h)
		}
		if !slices.ContainsFunc(h.Windows, func(w events.WindowSeen) bool { return w.Application && w.Title == "hang test" }) {
			t.Errorf("hung windows = %+v, want the application's window", h.Windows)
		}
		page, err := os.ReadFile(filepath.Join(o.info.reportDir, "report.html"))
		if err != nil || !strings.Contains(string(page), `<section id="hung"><h2>The application stopped answering</h2>`) {
			t.Errorf("report.html (%v) has no section on the hang", err)
		}
		// The main thread (its id is the process's) sleeps in the handler.
		if !slices.ContainsFunc(h.Threads, func(th events.ThreadSeen) bool {
			return th.TID == th.PID && th.TID == o.info.appPID && th.State == "S"
		}) {
			t.Errorf("hung threads = %+v, want the app's main thread (%d) asleep", h.Threads, o.info.appPID)
		}
	})
	t.Run("a slow handler that answers in time", func(t *testing.T) {
		t.Parallel()
		o := scriptRun(t, scriptRunSpec{scenario: hangApp(t, "3", "") +
			"steps:\n  - click_element: {name: Slow}\n  - observe_screen: {}\n"})
		o.want(t, events.VerdictPass, OutcomeCompleted)
		if c := o.check(checkAppResponsive); c == nil || !c.OK {
			t.Errorf("final check %s = %+v, want it held", checkAppResponsive, c)
		}
		if o.rep.Hung != nil {
			t.Errorf("hung diagnostics %+v in a run whose app answered", o.rep.Hung)
		}
	})
}

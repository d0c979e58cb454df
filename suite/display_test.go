package suite

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

const (
	// leaver's app leaves a client behind in a session of its own, out of
	// reach of the run's teardown of its process group, and a property on
	// the root window.
	leaver = `name: leaver
app:
  command: [sh, -c, 'xprop -root -f KASMRT_LEFT 8s -set KASMRT_LEFT stale; setsid xmessage -title leaked -geometry +300+10 leaked & exec xmessage -title first -geometry +40+40 first']
  window: {title: first}
steps:
  - observe_screen: {}
`
	// follower checks that no window of an earlier run is on its display.
	follower = `name: follower
app:
  command: [xmessage, -title, second, -geometry, +40+40, second]
  window: {title: second}
steps:
  - observe_screen: {}
  - nothing_left: {}
tools:
  nothing_left:
    run: shell
    command: '! xwininfo -root -tree | grep -q leaked && ! xprop -root KASMRT_LEFT | grep -q stale'
`
)

// One worker keeps its display for its next run, and the reset between
// them leaves nothing of the earlier run: a client it left in a session
// of its own is gone and so is the root property it set, so the next run
// sees a display as a new one.
func TestWorkerKeepsItsDisplay(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	for _, tc := range []struct {
		name  string
		fresh bool
	}{{"kept", false}, {"fresh", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := suiteDir(t, map[string]string{"a.yaml": leaver, "b.yaml": follower, "operator.yaml": suiteOperator})
			sum, out := runSuite(t, dir, []string{"a.yaml", "b.yaml"}, Options{Workers: 1, FreshDisplays: tc.fresh})
			var kept []bool
			for _, r := range sum.Runs {
				if r.Verdict != "pass" {
					t.Errorf("%s: %s %v", r.Key, r.Verdict, r.Reasons)
				}
				evs, err := events.ReadFile(filepath.Join(out, r.Report, "events.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if d, ok := e.Data.(events.DisplayStarted); ok {
						kept = append(kept, d.Kept)
					}
				}
			}
			if want := []bool{false, !tc.fresh}; !slices.Equal(kept, want) {
				t.Errorf("session.started kept = %v, want %v", kept, want)
			}
		})
	}
}

const (
	// wmQuitter tells the display's window manager to exit once its
	// window is up.
	wmQuitter = `name: wm quitter
app:
  command: [xmessage, -title, first, -geometry, +40+40, first]
  window: {title: first}
steps:
  - observe_screen: {}
  - quit_window_manager: {}
tools:
  quit_window_manager:
    run: shell
    command: 'openbox --exit'
`
	// wmChecker checks that a window manager still announces itself on
	// the display: the window _NET_SUPPORTING_WM_CHECK names exists.
	wmChecker = `name: wm checker
app:
  command: [xmessage, -title, second, -geometry, +40+40, second]
  window: {title: second}
steps:
  - observe_screen: {}
  - window_manager_runs: {}
tools:
  window_manager_runs:
    run: shell
    command: 'id=$(xprop -root _NET_SUPPORTING_WM_CHECK | sed -n "s/.*# //p") && xprop -id "$id" _NET_SUPPORTING_WM_CHECK >/dev/null'
`
)

// A display whose window manager exited during a run is not kept: the
// next run gets a new display with a window manager, as session.started
// says it has.
func TestKeptDisplayKeepsItsWindowManager(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	testkit.Need(t, "openbox", "xprop")
	dir := suiteDir(t, map[string]string{"a.yaml": wmQuitter, "b.yaml": wmChecker, "operator.yaml": suiteOperator})
	sum, out := runSuite(t, dir, []string{"a.yaml", "b.yaml"}, Options{Workers: 1})
	for _, r := range sum.Runs {
		if r.Verdict != "pass" {
			t.Errorf("%s: %s %v", r.Key, r.Verdict, r.Reasons)
		}
	}
	evs, err := events.ReadFile(filepath.Join(out, sum.Runs[1].Report, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if d, ok := e.Data.(events.DisplayStarted); ok && d.Kept {
			t.Errorf("the second run was given the display whose window manager had exited: %+v", d)
		}
	}
	// The first run says why its display was not kept.
	evs, err = events.ReadFile(filepath.Join(out, sum.Runs[0].Report, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	told := false
	for _, e := range evs {
		told = told || e.Kind == events.KindLog && strings.Contains(e.Message, "its window manager has exited")
	}
	if !told {
		t.Error("the first run's log does not say why its display was not kept")
	}
}

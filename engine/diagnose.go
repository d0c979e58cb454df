package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

// failureScreenTimeout bounds the capture that documents a failed step: it
// runs even when the step was cut short, so it cannot wait for long.
const failureScreenTimeout = 3 * time.Second

// failureScreenRetry is the pause between attempts at a page that refuses
// to be captured.
const failureScreenRetry = 100 * time.Millisecond

// withFailureScreen attaches a capture of the screen as it is now to a step
// that did not succeed and has no screen of its own, so every failed or
// refused step shows what the application looked like. The capture is
// evidence only: it neither completes nor clears the observation record and
// is not what the loop compares screens with. When no capture can be made
// the message says why.
func (a *actor) withFailureScreen(ctx context.Context, n int, res result) result {
	if res.status == events.StatusOK || res.screen != "" {
		return res
	}
	rel, why := a.failureScreen(ctx, n)
	if rel == "" {
		res.message += "; no screen was captured: " + why
		return res
	}
	res.screen = rel
	return res
}

// failureScreen captures the screen for step n without settling (the
// failure is what is shown, not what follows it), or says why it cannot.
func (a *actor) failureScreen(ctx context.Context, n int) (rel, why string) {
	if a.env.desk == nil {
		return "", "the X session is not running"
	}
	if a.env.session != nil {
		select {
		case <-a.env.session.Done():
			return "", "the X server went away"
		default:
		}
	}
	// The step's own context may be the reason it failed (the deadline, an
	// interrupt); the report's reserve still has room for one capture.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failureScreenTimeout)
	defer cancel()
	var img *image.RGBA
	var err error
	if a.env.web.PageIsTheScreen() {
		if !a.env.web.Alive() {
			return "", "the browser is gone"
		}
		// A page between documents (a failed navigation that is committing
		// its error page) refuses captures for a moment: ask again.
		for {
			img, err = a.env.web.Screenshot(ctx)
			if err == nil || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(failureScreenRetry):
			}
		}
	} else {
		img, err = a.env.desk.Capture(ctx)
	}
	if err != nil {
		return "", fmt.Sprintf("capture the screen: %v", err)
	}
	rel, _, err = a.keepScreen(ctx, img)
	if err != nil {
		return "", err.Error()
	}
	b := img.Bounds()
	a.publish(events.Event{Kind: events.KindScreen, Screen: rel, Step: n,
		Data: events.ScreenCaptured{Width: b.Dx(), Height: b.Dy(), Diagnostic: true, Pixels: report.NewFrame(img)}})
	return rel, ""
}

// OutcomeWindowUnmatched ends a run whose application showed a window that
// the scenario's app.window does not describe: the test is wrong, not the
// application.
const OutcomeWindowUnmatched = "window-unmatched"

// windowLister lists the top-level windows on the display.
type windowLister interface {
	Windows() ([]desktop.Window, error)
}

// startupTimedOut ends a run whose window did not appear in time, with what
// an author needs to fix it: the screen, every window on the display, and
// a suggested app.window for the application's own window. When the
// application did show a window and only the scenario's matcher missed it,
// the run is a test-error; when it showed none, the application failed.
func (s *runState) startupTimedOut(ctx context.Context, m desktop.WindowMatch, timeout time.Duration, what string) {
	rel, noScreen := s.act.failureScreen(ctx, 0)
	seen := s.env.seeWindows()
	why, suggestion, authorsMistake := seen.explain(m)
	reason := fmt.Sprintf("no %s matching %s appeared within %s%s", what, m, timeout, why)
	verdict, outcome := events.VerdictAppFailed, OutcomeStartup
	if authorsMistake {
		verdict, outcome = events.VerdictTestError, OutcomeWindowUnmatched
	}
	s.bus.Publish(events.Event{Kind: events.KindAppWindows, Message: reason, Screen: rel, Data: events.AppWindows{
		Match: m.String(), TimeoutS: timeout.Seconds(), Windows: seen.listed(), Suggestion: suggestion, NoScreen: noScreen,
	}})
	s.outcome.stop(verdict, outcome, reason)
}

// windowsSeen are the display's top-level windows, with the application's
// own sorted into those it shows and those it keeps unmapped.
type windowsSeen struct {
	all, shown, hidden []desktop.Window
	mine               map[uint32]bool
}

// seeWindows lists the display's windows now.
func (e *environment) seeWindows() windowsSeen {
	seen := windowsSeen{mine: map[uint32]bool{}}
	if l, ok := e.desk.(windowLister); ok {
		ws, err := l.Windows()
		if err != nil {
			e.log("list the windows: %v", err)
		}
		seen.all = ws
	}
	appPID := 0
	if e.app != nil {
		appPID = e.app.PID()
	}
	owned := e.session != nil && e.session.Owned()
	for _, w := range seen.all {
		if !ownedBy(w, appPID, owned) {
			continue
		}
		seen.mine[w.ID] = true
		if w.Viewable {
			seen.shown = append(seen.shown, w)
		} else {
			seen.hidden = append(seen.hidden, w)
		}
	}
	return seen
}

// explain says, as the tail of a sentence, what was on the display when m
// found nothing, suggests an app.window for the application's window, and
// reports whether the scenario is to blame: the application showed a window
// that m does not describe.
func (seen windowsSeen) explain(m desktop.WindowMatch) (why, suggestion string, authorsMistake bool) {
	switch {
	case len(seen.shown) > 0:
		suggestion = suggestWindow(seen.shown)
		cause := "the scenario's app.window does not match it"
		if m.PID != 0 && noPID(seen.shown) {
			cause = "it sets no _NET_WM_PID, so matching by process cannot find it"
		}
		return fmt.Sprintf(", but the application showed %s: %s; %s (try %s)",
			plural(len(seen.shown), "window"), describeWindows(seen.shown), cause, suggestion), suggestion, true
	case len(seen.hidden) > 0:
		return fmt.Sprintf("; the application created %s but mapped none: %s",
			plural(len(seen.hidden), "window"), describeWindows(seen.hidden)), "", false
	case len(seen.all) > 0:
		return fmt.Sprintf("; the application showed no window (on the display: %s)", describeWindows(seen.all)), "", false
	}
	return "; no window appeared on the display at all", "", false
}

// windowsInstead is a clause naming the windows a still-running
// application shows after the one the run followed went away, with an
// app.window for them: a splash screen replaced by the main window reads as
// a lost window until the scenario names the right one.
func (e *environment) windowsInstead() string {
	if e.app == nil || !e.app.Alive() {
		return ""
	}
	seen := e.seeWindows()
	var others []desktop.Window
	for _, w := range seen.shown {
		if w.ID != e.win.ID {
			others = append(others, w)
		}
	}
	if len(others) == 0 {
		return "; the application shows no other window"
	}
	return fmt.Sprintf("; the application now shows %s: %s (if that is the window to follow, try %s)",
		plural(len(others), "window"), describeWindows(others), suggestWindow(others))
}

// listed is every window as report.json's startup.windows lists it.
func (seen windowsSeen) listed() []events.WindowSeen {
	out := make([]events.WindowSeen, 0, len(seen.all))
	for _, w := range seen.all {
		out = append(out, events.WindowSeen{
			ID: fmt.Sprintf("0x%x", w.ID), Title: w.Title, Class: w.Class, Instance: w.Instance,
			PID: w.PID, X: w.X, Y: w.Y, Width: w.Width, Height: w.Height,
			Viewable: w.Viewable, Application: seen.mine[w.ID],
		})
	}
	return out
}

// ownedBy reports whether w belongs to the application: its _NET_WM_PID is
// the app or a descendant, or it sets no PID on a display the run owns, where
// nothing but the run's own processes draws windows.
func ownedBy(w desktop.Window, appPID int, displayOwned bool) bool {
	if w.PID == 0 {
		return displayOwned
	}
	return appPID != 0 && desktop.WindowMatch{PID: appPID, IncludeHidden: true}.Matches(w)
}

// suggestWindow proposes an app.window for the largest of the application's
// windows: its class, with the title when the class alone would also pick
// another of them.
func suggestWindow(ws []desktop.Window) string {
	best := ws[0]
	for _, w := range ws[1:] {
		if w.Width*w.Height > best.Width*best.Height {
			best = w
		}
	}
	class := best.Class
	if class == "" {
		class = best.Instance
	}
	if class == "" {
		return fmt.Sprintf("app.window: {title: %s}", yamlScalar(best.Title))
	}
	m := desktop.WindowMatch{Class: class, IncludeHidden: true}
	same := 0
	for _, w := range ws {
		if m.Matches(w) {
			same++
		}
	}
	if same > 1 && best.Title != "" {
		return fmt.Sprintf("app.window: {class: %s, title: %s}", yamlScalar(class), yamlScalar(best.Title))
	}
	return fmt.Sprintf("app.window: {class: %s}", yamlScalar(class))
}

// plainScalar is what YAML reads back unchanged without quotes.
var plainScalar = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9._ -]*[A-Za-z0-9._-]$|^[A-Za-z]$`)

// yamlScalar writes s as a YAML flow scalar, quoted when it must be.
func yamlScalar(s string) string {
	if plainScalar.MatchString(s) && !slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off"}, strings.ToLower(s)) {
		return s
	}
	return strconv.Quote(s)
}

// describeWindows lists windows for a reason line, at most five.
func describeWindows(ws []desktop.Window) string {
	const most = 5
	parts := make([]string, 0, most+1)
	for i, w := range ws {
		if i == most {
			parts = append(parts, fmt.Sprintf("and %d more", len(ws)-most))
			break
		}
		parts = append(parts, describeWindow(w))
	}
	return strings.Join(parts, "; ")
}

// describeWindow says what identifies a window, as app.window can match it.
func describeWindow(w desktop.Window) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q (class %q, instance %q, ", w.Title, w.Class, w.Instance)
	if w.PID == 0 {
		b.WriteString("no pid")
	} else {
		fmt.Fprintf(&b, "pid %d", w.PID)
	}
	fmt.Fprintf(&b, ", %dx%d at %d,%d", w.Width, w.Height, w.X, w.Y)
	if !w.Viewable {
		b.WriteString(", not mapped")
	}
	b.WriteString(")")
	return b.String()
}

// noPID reports whether none of ws carries _NET_WM_PID.
func noPID(ws []desktop.Window) bool {
	for _, w := range ws {
		if w.PID != 0 {
			return false
		}
	}
	return true
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Exit codes a POSIX shell uses for a command it could not run: the
// author's command is wrong (or not installed), whatever the application
// does.
const (
	exitCannotExecute = 126
	exitNotFound      = 127
)

// shellCouldNotRun says, for a shell's exit code, why it could not run a
// command, or "" when the code is the command's own.
func shellCouldNotRun(code int) string {
	switch code {
	case exitNotFound:
		return "the shell did not find the command (exit 127)"
	case exitCannotExecute:
		return "the shell found the command but could not execute it (exit 126)"
	}
	return ""
}

// Bounds of the application's last words quoted when it exits early.
const (
	appLogTailBytes = 400
	appLogTailLines = 3
	appLogSettle    = 50 * time.Millisecond
	appLogSettleMax = 300 * time.Millisecond
)

// lastWords is a clause quoting the application's last output, or "".
func (s *runState) lastWords() string {
	if last := s.appOutputTail(); last != "" {
		return "; its last output: " + last
	}
	return ""
}

// appOutputTail returns the application's last lines of output as app.log
// holds them (redacted), for a reason that would otherwise send the author
// looking: "exited with status 1" says little, "cannot open display" says
// why. The output pump can trail the exit by a moment, so it waits until
// app.log stops growing, briefly.
func (s *runState) appOutputTail() string {
	path := filepath.Join(s.rep.Dir(), "app.log")
	size := int64(-1)
	for waited := time.Duration(0); waited < appLogSettleMax; waited += appLogSettle {
		st, err := os.Stat(path)
		if err != nil {
			return ""
		}
		if st.Size() == size {
			break
		}
		size = st.Size()
		time.Sleep(appLogSettle)
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, appLogTailBytes)
	n, err := f.ReadAt(buf, max(0, size-appLogTailBytes))
	if err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(buf[:n]), "\n") {
		if l = strings.TrimSpace(l); l != "" && utf8.ValidString(l) {
			lines = append(lines, l)
		}
	}
	if len(lines) > appLogTailLines {
		lines = lines[len(lines)-appLogTailLines:]
	}
	return strings.Join(lines, " | ")
}

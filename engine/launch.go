package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/stage"
)

// launch sets the stage (engine/stage): the session, the application and
// its window, the named controls and the browser. What the stage could not
// do is judged here, where the verdicts are: a program that could not
// start is a test error, an application that died or never showed its
// window failed, a window only the scenario's matcher missed is the
// author's mistake.
func (s *runState) launch(ctx context.Context) error {
	s.env.stage = stage.New(stage.Config{
		Files:     s.files,
		Machine:   s.r.machine,
		Display:   s.r.display(),
		ReportDir: s.rep.Dir(),
		AppDir:    s.r.appDir(),
		Unset:     s.r.secretVariables(),
		Getenv:    s.r.getenv,
		Output:    s.outputScanner,
		Redact:    s.r.Redact,
	}, stageReporter{s})
	err := s.env.stage.Set(ctx, s.env.life)
	// What was launched is the run's to check, even when the rest failed.
	st := s.env.stage
	s.env.session, s.env.desk, s.env.app = st.Server, st.Desk, st.App
	s.env.win, s.env.hasWin = st.Window, st.HasWindow
	s.env.web, s.env.a11y, s.env.appEnv = st.Web, st.A11y, st.AppEnv
	var f *stage.Failure
	if errors.As(err, &f) {
		s.judgeLaunch(ctx, f)
	}
	return err
}

// judgeLaunch ends the run the way the stage's failure calls for.
func (s *runState) judgeLaunch(ctx context.Context, f *stage.Failure) {
	switch f.Cause {
	case stage.CouldNotStart:
		s.outcome.stop(events.VerdictTestError, OutcomeLaunchFailed, f.Reason)
	case stage.BrowserCouldNotStart:
		s.outcome.stop(events.VerdictTestError, OutcomeLaunchFailed, explainBrowserStart(f.Attach, f.Address, f.Err))
	case stage.AppExitedBeforeWindow:
		if why := shellCouldNotRun(f.Status.Code); why != "" && f.Status.Signal == 0 {
			s.outcome.stop(events.VerdictTestError, OutcomeLaunchFailed, fmt.Sprintf(
				"the application could not start: %s; check app.command and that its program is installed (app.log has the shell's words)", why))
			return
		}
		s.outcome.stop(events.VerdictAppFailed, OutcomeAppExited, fmt.Sprintf("the application %s before its window appeared%s", f.Status, s.lastWords()))
	case stage.AppExitedBeforeStartPage:
		s.outcome.stop(events.VerdictAppFailed, OutcomeAppExited, fmt.Sprintf("the application %s before the start page opened", f.Status))
	case stage.BrowserExited:
		s.outcome.stop(events.VerdictAppFailed, OutcomeAppExited, f.Reason)
	case stage.NoWindow:
		s.startupTimedOut(ctx, f.Match, f.Timeout, f.What)
	case stage.StartPageFailed:
		// The screen shows what the browser made of it (an error page, a
		// dialog, a blank tab).
		if _, noScreen := s.act.failureScreen(ctx, 0); noScreen != "" {
			s.log("no screen at the start page's failure: %s", noScreen)
		}
		s.outcome.stop(events.VerdictAppFailed, OutcomeStartup, f.Reason)
	default:
		s.outcome.stop(events.VerdictTestError, OutcomeRuntimeFault, f.Error())
	}
}

// stageReporter is how the stage reaches the run's stream and tool list.
type stageReporter struct{ s *runState }

func (r stageReporter) Publish(e events.Event)          { r.s.bus.Publish(e) }
func (r stageReporter) Logf(format string, args ...any) { r.s.log(format, args...) }

// Offer widens the tool list by what the stage found, or says why
// click_element is not on it, in a tools event either way.
func (r stageReporter) Offer(o stage.Offer) {
	s := r.s
	if o.Controls || o.Tab {
		offers := s.book.offers
		offers.ATSPIControls = offers.ATSPIControls || o.Controls
		offers.CDPTab = offers.CDPTab || o.Tab
		s.setTools(offers)
	}
	s.bus.Publish(events.Event{Message: o.Message, Data: events.ToolList{
		Tools: s.book.names, ATSPIControls: o.ControlCount, NoClickElement: o.NoControls, CDPTab: o.Tab,
	}})
}

package engine

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report/page"
	"github.com/kasmrt/kasmrt/inbox"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestInboxUpdateEvents: an answer and an unanswered end carry the
// question's text, so the console and the report can say what was asked
// without looking back.
func TestInboxUpdateEvents(t *testing.T) {
	t.Parallel()
	asked := &inbox.Question{ID: "q1", Text: "which server?"}
	cases := []struct {
		name string
		u    inbox.Update
		want events.Question
	}{
		{"asked", inbox.Update{Entry: inbox.Entry{Kind: inbox.KindAsked, QuestionID: "q1", Text: "which server?"}},
			events.Question{ID: "q1", Text: "which server?"}},
		{"answered", inbox.Update{Entry: inbox.Entry{Kind: inbox.KindAnswered, QuestionID: "q1", Text: "staging", By: "alice"}, Question: asked},
			events.Question{ID: "q1", Text: "which server?", Answer: "staging", By: "alice"}},
		{"answered, question unknown", inbox.Update{Entry: inbox.Entry{Kind: inbox.KindAnswered, QuestionID: "q1", Text: "staging"}},
			events.Question{ID: "q1", Answer: "staging"}},
		{"unanswered", inbox.Update{Entry: inbox.Entry{Kind: inbox.KindUnanswered, QuestionID: "q1", Text: "timed out"}, Question: asked},
			events.Question{ID: "q1", Text: "which server?", Unanswered: "timed out"}},
		{"unanswered, question unknown", inbox.Update{Entry: inbox.Entry{Kind: inbox.KindUnanswered, QuestionID: "q1", Text: "timed out"}},
			events.Question{ID: "q1", Unanswered: "timed out"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []events.Event
			publishInboxUpdate(func(e events.Event) { got = append(got, e) }, c.u)
			if len(got) != 1 || got[0].Question == nil {
				t.Fatalf("events %+v: want one with a question", got)
			}
			if *got[0].Question != c.want {
				t.Errorf("question %+v, want %+v", *got[0].Question, c.want)
			}
		})
	}
}

// TestAppDir: the app and the declared tools run in app.dir, resolved
// against the scenario's directory when relative, and in the scenario's
// directory when app.dir is not set.
func TestAppDir(t *testing.T) {
	t.Parallel()
	file := filepath.Join("/suites", "login", "scenario.yaml")
	cases := []struct {
		name string
		app  *scenarios.App
		want string
	}{
		{"no app", nil, "/suites/login"},
		{"no dir", &scenarios.App{}, "/suites/login"},
		{"relative", &scenarios.App{Dir: "build"}, "/suites/login/build"},
		{"absolute", &scenarios.App{Dir: "/opt/app"}, "/opt/app"},
	}
	for _, c := range cases {
		r := &Runner{files: &scenarios.Files{Scenario: &scenarios.Scenario{File: file, App: c.app}}}
		if got := r.appDir(); got != c.want {
			t.Errorf("%s: appDir %q, want %q", c.name, got, c.want)
		}
	}
}

// TestRulesRunStartedPlan: run.started always carries the plan as a list,
// empty when the scenario has none, so its readers never meet null.
func TestRulesRunStartedPlan(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, scenario string
		want           []string
	}{
		{"no plan", rulesApp + "steps:\n  - observe_screen: {}\n", []string{}},
		{"a plan", rulesApp + "plan: [open the menu, pick Quit]\nsteps:\n  - observe_screen: {}\n", []string{"open the menu", "pick Quit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: c.scenario, operator: "runner: {}\n", machine: &fakeMachine{}})
			for _, e := range r.events {
				if d, ok := e.Data.(events.RunStarted); ok {
					if d.Plan == nil || !slices.Equal(d.Plan, c.want) {
						t.Errorf("run.started plan %#v, want %#v", d.Plan, c.want)
					}
					return
				}
			}
			t.Fatal("no run.started event")
		})
	}
}

// TestRulesRunStartedMode: run.started names how the run takes its
// calls: from steps, from the model, or from an outside agent's session
// (whatever the scenario holds).
func TestRulesRunStartedMode(t *testing.T) {
	t.Parallel()
	started := func(t *testing.T, evs []events.Event) events.RunStarted {
		t.Helper()
		for _, e := range evs {
			if d, ok := e.Data.(events.RunStarted); ok {
				return d
			}
		}
		t.Fatal("no run.started event")
		return events.RunStarted{}
	}
	t.Run("scripted", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: &fakeMachine{}})
		if got := started(t, r.events).Mode; got != "scripted" {
			t.Errorf("mode %q, want scripted", got)
		}
	})
	t.Run("goal", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesGoal, script: []mt.Exchange{loopObserve, loopGoalMet}, machine: &fakeMachine{}})
		if got := started(t, r.events).Mode; got != "goal" {
			t.Errorf("mode %q, want goal", got)
		}
	})
	t.Run("session", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, evs := rulesSession(t, ctx, rulesGoal, &fakeMachine{})
		if _, err := s.Close(ctx, "", ""); err != nil {
			t.Fatal(err)
		}
		if got := started(t, evs()).Mode; got != "session" {
			t.Errorf("mode %q, want session (the scenario has a goal)", got)
		}
	})
}

// TestRulesModelImageSize: the agent sees the screen at its profile's
// size: a profile that downscales gets the smaller image, one that does
// not gets the screen as the report keeps it.
func TestRulesModelImageSize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		profile string
		want    image.Point
	}{
		{"openai-compatible", image.Pt(1280, 800)},
		{"gpt", image.Pt(1229, 768)},
	}
	for _, c := range cases {
		t.Run(c.profile, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{
				machine:  &fakeMachine{},
				scenario: rulesGoal,
				operator: "session:\n  width: 1280\n  height: 800\nmodel:\n  endpoint: ENDPOINT\n  profile: " + c.profile + "\n  retry: 0\n  timeout: 5\n",
				script:   []mt.Exchange{loopObserve, loopGoalMet},
			})
			var sizes []image.Point
			for _, req := range r.reqs {
				imgs, err := req.Images()
				if err != nil {
					t.Fatal(err)
				}
				for _, img := range imgs {
					sizes = append(sizes, img.Bounds().Size())
				}
			}
			if len(sizes) == 0 {
				t.Fatal("no image reached the model")
			}
			for _, s := range sizes {
				if s != c.want {
					t.Errorf("the model got a %v screen, want %v", s, c.want)
				}
			}
		})
	}
}

// TestRulesReportFileErrors: a report file that cannot be written at the
// end of a run is the run's error, so the command does not call an
// incomplete report complete; the manifest, written last, too.
func TestRulesReportFileErrors(t *testing.T) {
	t.Parallel()
	for _, name := range []string{page.FileName, ManifestFile} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := loadRunFiles(t, dir, rulesApp+"steps:\n  - observe_screen: {}\n", "runner: {}\n", nil)
			reportDir := filepath.Join(dir, "report")
			var once sync.Once
			r, err := New(files, Options{ReportDir: reportDir, Display: "-", Machine: &fakeMachine{},
				Getenv: func(string) string { return "" },
				Sinks: []func(events.Event){func(events.Event) {
					// A directory where the file goes (the manifest's
					// first version is already there): nothing can be
					// renamed over it.
					once.Do(func() {
						_ = os.Remove(filepath.Join(reportDir, name))
						if err := os.MkdirAll(filepath.Join(reportDir, name, "x"), 0o755); err != nil {
							t.Error(err)
						}
					})
				}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := r.Run(ctx)
			if err == nil {
				t.Fatalf("the run ended without an error (verdict %s), though %s could not be written", res.Verdict, name)
			}
			if res.Verdict != events.VerdictPass {
				t.Errorf("verdict %s, want pass: the run itself went well", res.Verdict)
			}
		})
	}
}

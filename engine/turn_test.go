package engine

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/scenarios"
)

// scriptedStepper is a stepper double: it plans the replies it was given,
// runs each call by the results it was given (ok otherwise) and says what
// the loop asked of it, in order.
type scriptedStepper struct {
	replies []model.Response
	results map[string]result
	reject  string // approve rejects every call with this, when set
	endApp  int    // checkApp ends the loop at this check (1-based), when set

	asked  []string
	checks int
}

func (f *scriptedStepper) plan(_ context.Context, _ []model.Message) (model.Response, error) {
	f.asked = append(f.asked, "plan")
	if len(f.replies) == 0 {
		return model.Response{}, errReplayEnded
	}
	r := f.replies[0]
	f.replies = f.replies[1:]
	return r, nil
}

func (f *scriptedStepper) approve(_ context.Context, c model.ToolCall, _ map[string]any) (bool, string) {
	f.asked = append(f.asked, "approve "+c.Name)
	if f.reject != "" {
		return false, f.reject
	}
	return true, ""
}

func (f *scriptedStepper) runCall(_ context.Context, c call) result {
	f.asked = append(f.asked, "run "+c.Tool)
	if r, ok := f.results[c.Tool]; ok {
		return r
	}
	return ok("done")
}

func (f *scriptedStepper) unrun(calls []model.ToolCall, status events.Status, _ string) {
	f.asked = append(f.asked, "unrun "+string(status)+" "+string(rune('0'+len(calls))))
}

func (f *scriptedStepper) checkApp(context.Context) string {
	f.checks++
	if f.checks == f.endApp {
		return "the application exited successfully"
	}
	return ""
}

func (f *scriptedStepper) takeoverPoint(context.Context) string { return "" }
func (f *scriptedStepper) budgets()                             {}
func (f *scriptedStepper) surroundings(context.Context, *memory.Memory) {
	f.asked = append(f.asked, "surroundings")
}

// TestRulesGoalLoopDrivesAStepper: the goal loop runs against its stepper
// alone: it plans, runs the one call of a reply, answers it and ends where
// the call or the application's checks end it; a reply with several
// calls runs none and records them unrun; a rejected call is answered with
// the rejection and not run. The loop's counters and the verdict's facts
// are the owned values it was given.
func TestRulesGoalLoopDrivesAStepper(t *testing.T) {
	t.Parallel()
	callOf := func(id, name string) model.ToolCall {
		return model.ToolCall{ID: id, Name: name, Arguments: `{}`}
	}
	reply := func(calls ...model.ToolCall) model.Response { return model.Response{ToolCalls: calls} }
	verdict := ok("recorded")
	verdict.endLoop = "the model recorded a verdict"
	for _, c := range []struct {
		name       string
		stepper    *scriptedStepper
		wantAsked  []string
		wantEnded  string
		malformed  int
		wantAnswer string // the last tool answer in the conversation
	}{
		{
			name: "a call, then a verdict",
			stepper: &scriptedStepper{
				replies: []model.Response{reply(callOf("1", "press_key")), reply(callOf("2", "record_verdict"))},
				results: map[string]result{"record_verdict": verdict},
			},
			wantAsked: []string{"plan", "approve press_key", "run press_key", "surroundings",
				"plan", "approve record_verdict", "run record_verdict", "surroundings"},
			wantEnded:  "the model recorded a verdict",
			wantAnswer: "recorded",
		},
		{
			name: "several calls in one turn run none",
			stepper: &scriptedStepper{
				replies: []model.Response{reply(callOf("1", "press_key"), callOf("2", "click"))},
				endApp:  2,
			},
			wantAsked:  []string{"plan", "unrun malformed 2"},
			wantEnded:  "the application exited successfully",
			malformed:  1,
			wantAnswer: "2 calls in one turn; none was executed. Make exactly one tool call per turn.",
		},
		{
			name: "a rejected call is answered and not run",
			stepper: &scriptedStepper{
				replies: []model.Response{reply(callOf("1", "press_key"))},
				reject:  "the operator rejected this call",
				endApp:  2,
			},
			wantAsked:  []string{"plan", "approve press_key"},
			wantEnded:  "the application exited successfully",
			wantAnswer: "the operator rejected this call",
		},
		{
			name:      "the checks end the loop before its first model call",
			stepper:   &scriptedStepper{endApp: 1},
			wantEnded: "the application exited successfully",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			op := &scenarios.Operator{}
			op.Runner.MaxRetriesPerStep = 3
			op.Runner.MaxToolErrors = 3
			files := &scenarios.Files{Operator: op, Scenario: &scenarios.Scenario{}}
			var stats loopStats
			var facts verdictFacts
			mem := memory.New("", 0)
			l := &goalLoop{
				run: c.stepper, conv: newConversation(mem, model.Message{Role: model.RoleUser, Text: "goal"}), maxIter: 10,
				stats: &stats, facts: &facts, model: &modelState{}, book: &guardBook{}, steer: newSteering(), files: files,
				bus: events.NewBus(nil), redact: func(s string) string { return s },
			}
			for !l.turn(context.Background()) {
			}
			if !slices.Equal(c.stepper.asked, c.wantAsked) {
				t.Errorf("the loop asked %q, want %q", c.stepper.asked, c.wantAsked)
			}
			if stats.ended != c.wantEnded {
				t.Errorf("the loop ended %q, want %q", stats.ended, c.wantEnded)
			}
			if stats.malformed != c.malformed {
				t.Errorf("%d malformed replies counted, want %d", stats.malformed, c.malformed)
			}
			var last string
			for _, m := range l.conv.history {
				if m.Role == model.RoleTool {
					last = m.Text
				}
			}
			if last != c.wantAnswer {
				t.Errorf("the last answer to the model is %q, want %q", last, c.wantAnswer)
			}
		})
	}
}

// recordingStepper is a run's stepper with what its calls became written
// down.
type recordingStepper struct {
	stepper
	ran []string
}

func (r *recordingStepper) runCall(ctx context.Context, c call) result {
	res := r.stepper.runCall(ctx, c)
	r.ran = append(r.ran, c.Tool+" "+string(res.status))
	return res
}

// TestRulesGoalLoopStepsARunOnTheMachineDouble: the goal loop steps a run
// launched on the machine double through the stepper interface alone: a
// stepper wrapped around the run sees each of the model's calls, the run
// records them as steps with the model as their source, and the model's
// verdict ends the loop.
func TestRulesGoalLoopStepsARunOnTheMachineDouble(t *testing.T) {
	t.Parallel()
	srv := mt.New(t, mt.Call("observe_screen", `{}`), loopGoalMet)
	dir := t.TempDir()
	files := loadRunFiles(t, dir, rulesGoal, strings.ReplaceAll(loopOperator, "ENDPOINT", srv.URL()), nil)
	r, err := New(files, Options{ReportDir: filepath.Join(dir, "report"), Display: "-", ModelSleep: loopSleep, Machine: &fakeMachine{}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Create(r.opts.ReportDir, r.Redact)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		steps []events.Event
	)
	bus := events.NewBus(r.Redact, rep.Event, func(e events.Event) {
		if e.Kind == events.KindStepEnded {
			mu.Lock()
			steps = append(steps, e)
			mu.Unlock()
		}
	})
	ctx := t.Context()
	s := newRunState(r, bus, rep)
	s.env.life = ctx
	s.start()
	if err := s.launch(ctx); err != nil {
		t.Fatalf("launch on the double: %v", err)
	}
	if err := s.model.setUpModel(); err != nil {
		t.Fatal(err)
	}
	s.loop.ran = true
	rec := &recordingStepper{stepper: s}
	l := newGoalLoop(s, rec)
	for !l.turn(ctx) {
	}
	s.finish(context.WithoutCancel(ctx))
	if err := rep.Close(); err != nil {
		t.Fatal(err)
	}

	if want := []string{"observe_screen ok", "record_verdict ok"}; !slices.Equal(rec.ran, want) {
		t.Errorf("the stepper ran %q, want %q", rec.ran, want)
	}
	if s.outcome.modelVerdict != events.ModelGoalMet || !strings.Contains(s.loop.ended, "verdict") {
		t.Errorf("model verdict %q, loop ended %q: the model's verdict did not end the loop", s.outcome.modelVerdict, s.loop.ended)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(steps) != 2 {
		t.Fatalf("%d steps published, want 2: %+v", len(steps), steps)
	}
	for _, e := range steps {
		if e.Source != events.SourceModel {
			t.Errorf("step %d (%s) has source %q, want the model's", e.Step, e.Tool, e.Source)
		}
	}
}

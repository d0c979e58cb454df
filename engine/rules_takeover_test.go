package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/vnc"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// fakeVNC stands in for x11vnc on the machine double: it "listens" at
// once, and its one client leaves when the test says so.
type fakeVNC struct {
	mu      sync.Mutex
	started []vnc.Options
	srv     *fakeVNCServer
}

type fakeVNCServer struct {
	done    chan struct{}
	once    sync.Once
	stopped bool
}

func (f *fakeVNC) StartVNC(_ context.Context, o vnc.Options) (vncServer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, o)
	f.srv = &fakeVNCServer{done: make(chan struct{})}
	return f.srv, nil
}

// clientLeaves ends the server as x11vnc -once does when its client
// disconnects.
func (f *fakeVNC) clientLeaves() {
	f.mu.Lock()
	s := f.srv
	f.mu.Unlock()
	s.once.Do(func() { close(s.done) })
}

func (s *fakeVNCServer) Addr() string          { return "127.0.0.1:5999" }
func (s *fakeVNCServer) Done() <-chan struct{} { return s.done }
func (s *fakeVNCServer) Stop() error           { s.once.Do(func() { close(s.done) }); return nil }

// takeoverCase sets a run up for a takeover asked for before it starts,
// so the run's first pause point begins it; the access the operator got
// comes on the returned channel.
func takeoverBefore(fake *fakeVNC, pauses bool, got chan<- takeoverReply) func(r *Runner) {
	return func(r *Runner) {
		r.takeover, r.vnc = newTakeoverDesk("127.0.0.1:0", pauses), fake
		// The request is waiting before Run starts.
		askTakeover(r, got)
	}
}

// askTakeover asks for the desktop and returns once the request is
// waiting for the run's next pause point; the access the operator got
// comes on got.
func askTakeover(r *Runner, got chan<- takeoverReply) {
	go func() {
		a, err := r.TakeOver(context.Background(), "api")
		got <- takeoverReply{access: a, err: err}
	}()
	for {
		r.takeover.mu.Lock()
		n := len(r.takeover.waiting)
		r.takeover.mu.Unlock()
		if n > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func eventsOf(evs []events.Event, kind events.Kind) []events.Event {
	var out []events.Event
	for _, e := range evs {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// wantNoSecret fails when secret appears in any file of the report or in
// any request the model server received.
func wantNoSecret(t *testing.T, r loopResult, secret string) {
	t.Helper()
	if secret == "" {
		t.Fatal("no password to look for")
	}
	err := filepath.Walk(r.dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("the VNC password is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range r.reqs {
		if strings.Contains(string(req.Raw), secret) {
			t.Errorf("the VNC password reached the model in request %d", req.N)
		}
	}
}

// TestRulesTakeover takes the desktop over from a goal run and hands it
// back: the loop waits for the hand-back, the model's next turn is told
// what changed, the report notes the takeover as a concern, and the
// password reaches no file and not the model.
func TestRulesTakeover(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		ended string
		// back hands the desktop back once the takeover has begun.
		back func(r *Runner, f *fakeVNC, m *fakeMachine)
	}{
		{"handed back", events.TakeoverHandedBack, func(r *Runner, _ *fakeVNC, m *fakeMachine) {
			_ = m.record("type by hand") // what the operator did: the screen changed
			// The password shows where the run looks: the app prints it,
			// and the focused window's title, which the model is told of,
			// names it. Both are redacted.
			a, _ := r.TakenOver()
			m.say("the operator typed " + a.Password)
			m.mu.Lock()
			m.title = "signed in as " + a.Password
			m.mu.Unlock()
			if err := r.HandBack(); err != nil {
				panic(err)
			}
		}},
		{"the VNC client left", events.TakeoverClientLeft, func(_ *Runner, f *fakeVNC, m *fakeMachine) {
			_ = m.record("type by hand")
			f.clientLeaves()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fake, machine := &fakeVNC{}, &fakeMachine{}
			got := make(chan takeoverReply, 1)
			r := loopRun(t, loopCase{
				machine: machine,
				script:  []mt.Exchange{loopObserve, loopGoalMet},
				before:  takeoverBefore(fake, false, got),
				sink: func(r *Runner, e events.Event) {
					if e.Kind == events.KindTakeoverStarted {
						go c.back(r, fake, machine)
					}
				},
			})
			rep := <-got
			if rep.err != nil || rep.access.Password == "" || rep.access.Addr != "127.0.0.1:5999" {
				t.Fatalf("TakeOver = %+v, %v", rep.access, rep.err)
			}
			if len(fake.started) != 1 || fake.started[0].Password != rep.access.Password || fake.started[0].Display != ":fake" {
				t.Fatalf("the VNC server was started with %+v", fake.started)
			}
			started, ended := eventsOf(r.events, events.KindTakeoverStarted), eventsOf(r.events, events.KindTakeoverEnded)
			if len(started) != 1 || len(ended) != 1 {
				t.Fatalf("%d takeover.started and %d takeover.ended events, want 1 each", len(started), len(ended))
			}
			if started[0].Screen == "" || ended[0].Screen == "" {
				t.Errorf("a takeover event without its screen: %q, %q", started[0].Screen, ended[0].Screen)
			}
			d, _ := ended[0].Data.(events.TakeoverEnded)
			if d.Ended != c.ended || !d.ScreenChanged || ended[0].Box == nil {
				t.Errorf("takeover.ended = %+v, box %v; want ended %s and the changed screen", d, ended[0].Box, c.ended)
			}
			// The loop waited: the model's first turn came after the
			// hand-back, and was told what changed.
			if len(r.reqs) == 0 {
				t.Fatal("no model turn")
			}
			first := string(r.reqs[0].Raw)
			wants := []string{"The operator took over the desktop", "the screen changed in", "Observe the screen"}
			if c.ended == events.TakeoverHandedBack {
				wants = append(wants, "the focus moved from")
			}
			for _, want := range wants {
				if !strings.Contains(first, want) {
					t.Errorf("the first request does not say %q:\n%s", want, first)
				}
			}
			if !strings.Contains(strings.Join(r.rep.Concerns, "\n"), "the operator took over the desktop") {
				t.Errorf("concerns = %q, want the takeover", r.rep.Concerns)
			}
			if r.rep.Verdict != events.VerdictPassConcerns {
				t.Errorf("verdict = %s, want %s", r.rep.Verdict, events.VerdictPassConcerns)
			}
			wantNoSecret(t, r, rep.access.Password)
		})
	}
}

// TestRulesTakeoverDeadline checks the deadline during a takeover: it
// keeps counting, so a takeover held past it ends the run; with
// --takeover-pauses-deadline it stops while the operator has the desktop,
// and the script goes on after the hand-back.
func TestRulesTakeoverDeadline(t *testing.T) {
	t.Parallel()
	// The work ends 1 s in (a third of 1.5 s is the report's reserve).
	env := map[string]string{"KASM_RUNTIME_DEADLINE_S": "1.5"}
	const scenario = rulesApp + "steps:\n  - observe_screen: {}\n  - observe_screen: {}\n"
	t.Run("keeps counting", func(t *testing.T) {
		t.Parallel()
		got := make(chan takeoverReply, 1)
		r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", env: env, machine: &fakeMachine{},
			before: takeoverBefore(&fakeVNC{}, false, got)})
		<-got
		loopWant(t, r, events.VerdictTestError, OutcomeDeadline, 0, 0)
		ended := eventsOf(r.events, events.KindTakeoverEnded)
		if len(ended) != 1 {
			t.Fatalf("%d takeover.ended events", len(ended))
		}
		if d, _ := ended[0].Data.(events.TakeoverEnded); d.Ended != events.TakeoverRunEnded {
			t.Errorf("takeover.ended says %q, want %q", d.Ended, events.TakeoverRunEnded)
		}
		loopWantSteps(t, r.rep)
	})
	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		got := make(chan takeoverReply, 1)
		r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", env: env, machine: &fakeMachine{},
			before: takeoverBefore(&fakeVNC{}, true, got),
			sink: func(r *Runner, e events.Event) {
				if e.Kind != events.KindTakeoverStarted {
					return
				}
				// Hold the desktop past the deadline the run began
				// with, then hand it back.
				go func() {
					time.Sleep(1500 * time.Millisecond)
					_ = r.HandBack()
				}()
			}})
		<-got
		loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 0, 0)
		loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"observe_screen", "ok", ""})
	})
	t.Run("paused, in a goal run", func(t *testing.T) {
		t.Parallel()
		got := make(chan takeoverReply, 1)
		r := loopRun(t, loopCase{env: env, machine: &fakeMachine{}, script: []mt.Exchange{loopObserve, loopGoalMet},
			before: takeoverBefore(&fakeVNC{}, true, got),
			sink: func(r *Runner, e events.Event) {
				if e.Kind == events.KindTakeoverStarted {
					go func() {
						time.Sleep(1500 * time.Millisecond)
						_ = r.HandBack()
					}()
				}
			}})
		<-got
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
		// The deadline's gauge counts only the time its clock ran.
		seen := 0
		for _, e := range eventsOf(r.events, events.KindBudget) {
			for _, b := range e.Budgets {
				if b.Name != "deadline" {
					continue
				}
				seen++
				if b.Used >= b.Limit {
					t.Errorf("the deadline budget shows %gs of %gs used: the takeover's pause is counted", b.Used, b.Limit)
				}
			}
		}
		if seen == 0 {
			t.Error("no deadline budget")
		}
	})
}

// TestRulesTakeoverWhilePaused takes over a loop the operator paused: the
// takeover begins at once, and after the hand-back the loop stays paused
// until the operator resumes it.
func TestRulesTakeoverWhilePaused(t *testing.T) {
	t.Parallel()
	got := make(chan takeoverReply, 1)
	fake := &fakeVNC{}
	r := loopRun(t, loopCase{
		machine: &fakeMachine{},
		env:     map[string]string{"KASM_RUNTIME_DEADLINE_S": "30"},
		script:  []mt.Exchange{loopObserve, loopGoalMet},
		before: func(r *Runner) {
			if err := r.Steer(events.Steer{Action: events.SteerPause}); err != nil {
				t.Fatal(err)
			}
			takeoverBefore(fake, false, got)(r)
		},
		sink: func(r *Runner, e events.Event) {
			switch e.Kind {
			case events.KindTakeoverStarted:
				go func() { _ = r.HandBack() }()
			case events.KindTakeoverEnded:
				go func() { _ = r.Steer(events.Steer{Action: events.SteerResume}) }()
			}
		},
	})
	if rep := <-got; rep.err != nil {
		t.Fatalf("TakeOver: %v", rep.err)
	}
	var order []string
	for _, e := range r.events {
		switch {
		case e.Kind == events.KindTakeoverStarted, e.Kind == events.KindTakeoverEnded, e.Kind == events.KindModelRequest:
			order = append(order, string(e.Kind))
		case e.Kind == events.KindSteer && e.Steer.Action == events.SteerResume:
			order = append(order, "resume")
		}
	}
	if len(order) < 4 || strings.Join(order[:4], " ") != "takeover.started takeover.ended resume model.request" {
		t.Errorf("events in the order %q, want the takeover, the resume, then the model's turn", order)
	}
}

// TestRulesTakeoverAfterLastStep takes a scripted run over when its last
// step is under way: the takeover begins after that step and ends before
// the final checks, which look at what the operator left.
func TestRulesTakeoverAfterLastStep(t *testing.T) {
	t.Parallel()
	const scenario = rulesApp + "steps:\n  - observe_screen: {}\n"
	got := make(chan takeoverReply, 1)
	fake, machine := &fakeVNC{}, &fakeMachine{}
	asked := false
	r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", machine: machine,
		before: func(r *Runner) { r.takeover, r.vnc = newTakeoverDesk("127.0.0.1:0", false), fake },
		sink: func(r *Runner, e events.Event) {
			switch {
			case e.Kind == events.KindStepStarted && e.Step == 1 && !asked:
				// The request is waiting before the step ends: sinks
				// run in the run's goroutine.
				asked = true
				askTakeover(r, got)
			case e.Kind == events.KindTakeoverStarted:
				go func() {
					_ = machine.record("type by hand")
					_ = r.HandBack()
				}()
			}
		}})
	if rep := <-got; rep.err != nil {
		t.Fatalf("TakeOver after the last step: %v", rep.err)
	}
	var order []string
	for _, e := range r.events {
		switch e.Kind {
		case events.KindStepEnded, events.KindTakeoverStarted, events.KindTakeoverEnded, events.KindVerdict:
			order = append(order, string(e.Kind))
		case events.KindCheck:
			if len(order) == 0 || order[len(order)-1] != "checks" {
				order = append(order, "checks")
			}
		}
	}
	if want := "step.ended takeover.started takeover.ended checks verdict"; strings.Join(order, " ") != want {
		t.Errorf("events in the order %q, want %q", order, want)
	}
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 0, 0)
	loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""})
}

// TestRulesTakeoverWhileAQuestionWaits: while the model's ask_human
// question waits for its answer, a takeover asked for (or waiting when the
// question is asked) begins at once, after the question is on the record;
// the run goes on waiting for the answer once the desktop is handed back.
// An answer given during the takeover is kept until the hand-back. The
// ask_human result the model gets carries both the answer and the
// takeover's Environment Update, and the report notes the takeover.
func TestRulesTakeoverWhileAQuestionWaits(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// ask asks for the desktop on event e: with the question waiting,
		// or just before it is asked.
		ask func(r *Runner, e events.Event, got chan<- takeoverReply)
		// answerFirst answers during the takeover, then hands back; else
		// the hand-back comes first, then the answer.
		answerFirst bool
		// order is the events the test follows, in the order they come.
		order string
	}{
		{"asked while the question waits, handed back before the answer", func(r *Runner, e events.Event, got chan<- takeoverReply) {
			if e.Kind == events.KindQuestion {
				go func() {
					a, err := r.TakeOver(context.Background(), "console")
					got <- takeoverReply{access: a, err: err}
				}()
			}
		}, false, "question takeover.started takeover.ended answer step.ended"},
		{"waiting when the question is asked, answered during the takeover", func(r *Runner, e events.Event, got chan<- takeoverReply) {
			// The turn's pause point has passed: the request waits for
			// the next one, and the model's answer asks the question.
			if e.Kind == events.KindModelRequest {
				askTakeover(r, got)
			}
		}, true, "question takeover.started answer takeover.ended step.ended"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fake, machine := &fakeVNC{}, &fakeMachine{}
			got := make(chan takeoverReply, 1)
			var requests atomic.Int32
			r := loopRun(t, loopCase{
				machine:  machine,
				scenario: loopNoValues,
				operator: inboxOperator("30"),
				script:   []mt.Exchange{mt.Call("ask_human", `{"question": "Which file?"}`), loopGoalMet},
				before: func(r *Runner) {
					r.takeover, r.vnc = newTakeoverDesk("127.0.0.1:0", false), fake
				},
				sink: func(r *Runner, e events.Event) {
					if e.Kind == events.KindModelRequest && requests.Add(1) > 1 {
						return // only the turn that asks the question
					}
					c.ask(r, e, got)
					answer := func() {
						if err := r.Answer("q1", "notes.txt"); err != nil {
							t.Errorf("answer: %v", err)
						}
					}
					switch {
					case e.Kind == events.KindTakeoverStarted && c.answerFirst:
						go answer()
					case e.Kind == events.KindTakeoverStarted:
						go func() {
							_ = machine.record("open the app's menu by hand")
							if err := r.HandBack(); err != nil {
								t.Errorf("hand back: %v", err)
							}
						}()
					case e.Kind == events.KindAnswer && c.answerFirst:
						go func() {
							_ = machine.record("open the app's menu by hand")
							if err := r.HandBack(); err != nil {
								t.Errorf("hand back: %v", err)
							}
						}()
					case e.Kind == events.KindTakeoverEnded && !c.answerFirst:
						go answer()
					}
				},
			})
			rep := <-got
			if rep.err != nil || rep.access.Password == "" || len(fake.started) != 1 {
				t.Fatalf("TakeOver while q1 waits = %+v, %v; %d VNC servers; want the desktop taken over", rep.access, rep.err, len(fake.started))
			}
			var order []string
			for _, e := range r.events {
				switch e.Kind {
				case events.KindQuestion, events.KindAnswer, events.KindTakeoverStarted, events.KindTakeoverEnded:
					order = append(order, string(e.Kind))
				case events.KindStepEnded:
					if e.Tool == "ask_human" {
						order = append(order, string(e.Kind))
					}
				}
			}
			if strings.Join(order, " ") != c.order {
				t.Errorf("events in the order %q, want %q", order, c.order)
			}
			loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, 2, 0)
			loopWantSteps(t, r.rep, loopStep{"ask_human", "ok", ""}, loopStep{"record_verdict", "ok", ""})
			// The model's turn after ask_human hears the answer and what
			// the operator changed, in the ask_human result.
			if len(r.reqs) != 2 {
				t.Fatalf("%d model turns, want 2", len(r.reqs))
			}
			second := string(r.reqs[1].Raw)
			for _, want := range []string{"the operator answered", "Environment Update", "The operator took over the desktop", "the screen changed in"} {
				if !strings.Contains(second, want) {
					t.Errorf("the turn after ask_human does not say %q:\n%s", want, second)
				}
			}
			// In the ask_human result itself, after the answer.
			if !strings.Contains(second, `ref \"answer_q1\"\n\nEnvironment Update\nThe operator took over the desktop`) {
				t.Errorf("the ask_human result does not carry the takeover's Environment Update after the answer:\n%s", second)
			}
			if n := strings.Count(second, "The operator took over the desktop"); n != 1 {
				t.Errorf("the turn after ask_human tells of the takeover %d times, want once", n)
			}
			if !strings.Contains(strings.Join(r.rep.Concerns, "\n"), "the operator took over the desktop") {
				t.Errorf("concerns = %q, want the takeover", r.rep.Concerns)
			}
			wantNoSecret(t, r, rep.access.Password)
		})
	}
}

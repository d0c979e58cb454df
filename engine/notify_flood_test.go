package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestWebhookNoticesInFlightAreBounded asks two questions more than the
// notices a run keeps in flight (bounded to 3 here, 64 in a real run), each
// answered at once on the console while the receiver holds every notice
// until the model's verdict: the notices in flight are told, and one concern says how many
// questions got none.
func TestWebhookNoticesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	const inFlight = 3
	const questions = inFlight + 2
	release := make(chan struct{})
	var once sync.Once
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	defer once.Do(func() { close(release) })
	// Questions that differ, so the loop does not look stuck.
	var script []mt.Exchange
	for i := range questions {
		script = append(script, mt.Call("ask_human", fmt.Sprintf(`{"question": "Go on to part %d?"}`, i+1)))
	}
	script = append(script, loopGoalMet)
	op := loopOp("  max_iterations: 10\n", "") + "inbox:\n  session_token: s3cret-console-token\n  answer_timeout_s: 10\n" +
		"  notify:\n    webhook:\n      url: " + hook.URL + "\n      timeout_s: 30\n"
	r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: op, script: script,
		before: func(r *Runner) { r.notifier.inFlight = inFlight },
		sink: func(run *Runner, e events.Event) {
			if e.Kind == events.KindQuestion {
				go func() {
					if err := run.Answer(e.Question.ID, "yes"); err != nil {
						t.Errorf("answer %s: %v", e.Question.ID, err)
					}
				}()
			}
			if e.Kind == events.KindStepStarted && e.Tool == "record_verdict" {
				once.Do(func() { close(release) })
			}
		}})
	loopWant(t, r, events.VerdictPassConcerns, OutcomeCompleted, questions+1, 0)
	told := 0
	for _, e := range r.events {
		if e.Kind == events.KindLog && strings.HasPrefix(e.Message, "the webhook was told of question ") {
			told++
		}
	}
	if told != inFlight {
		t.Errorf("the webhook was told of %d questions, want %d", told, inFlight)
	}
	want := "the webhook was not told of 2 questions: 3 notices were already in flight"
	// The goal declares no success criteria: that is the second concern.
	if len(r.rep.Concerns) != 2 || r.rep.Concerns[1] != nothingVerified || !strings.Contains(r.rep.Concerns[0], want) {
		t.Errorf("concerns %q, want one saying %q", r.rep.Concerns, want)
	}
}

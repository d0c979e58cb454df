package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestModelRequestEventSaysWhy checks that every model.request event
// carries what the model decided on — the tools the request offered, its
// Environment Update and the messages it added since the previous reply —
// as the model test server received them, with a secret in an operator's
// note redacted in the event and in events.jsonl.
func TestModelRequestEventSaysWhy(t *testing.T) {
	t.Parallel()
	const pin = "4711-0815"
	scenario := loopXterm + "  pin: {secret: {env: LOOP_PIN}}\n"
	r := loopRun(t, loopCase{scenario: scenario, env: map[string]string{"LOOP_PIN": pin}, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("wait", `{"seconds": 0.2}`), loopGoalMet},
		sink: func(run *Runner, e events.Event) {
			if e.Kind == events.KindStepEnded && e.Step == 1 {
				go run.Steer(events.Steer{Action: events.SteerNote, Value: "the pin is " + pin})
			}
		}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
	reqs := loopEvents(r, events.KindModelRequest)
	if len(reqs) != len(r.reqs) {
		t.Fatalf("%d model.request events for %d requests", len(reqs), len(r.reqs))
	}
	noted := false
	for i, e := range reqs {
		d := e.Data.(events.ModelRequest)
		got := r.reqs[i]
		if want := slices.Sorted(slices.Values(got.ToolNames())); !slices.Equal(slices.Sorted(slices.Values(d.Tools)), want) {
			t.Errorf("request %d: the event names tools %v, the model was offered %v", i+1, d.Tools, want)
		}
		if len(d.Sent) == 0 {
			t.Errorf("request %d: the event says nothing was sent", i+1)
		}
		told := loopLastText(got)
		for _, m := range d.Sent {
			text := strings.TrimSuffix(m.Text, "…")
			if m.Role != "user" && m.Role != "tool" || !strings.Contains(told, text) {
				t.Errorf("request %d: the event's %s message %q is not what the model was told:\n%s", i+1, m.Role, m.Text, told)
			}
			if strings.HasPrefix(m.Text, "Operator note: ") {
				noted = true
			}
		}
		switch {
		case i == 0 && (d.Update != "" || !strings.HasPrefix(d.Sent[0].Text, "Goal: ")):
			t.Errorf("request 1: update %q, sent %+v; want no update and the goal", d.Update, d.Sent)
		case i > 0 && (!strings.HasPrefix(d.Update, "Environment Update") || !strings.Contains(got.Text(), d.Update)):
			t.Errorf("request %d: update %q is not the request's Environment Update", i+1, d.Update)
		}
	}
	if !noted {
		t.Error("no request event shows the operator's note")
	}
	raw, err := os.ReadFile(filepath.Join(r.dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range reqs {
		line, _ := json.Marshal(e)
		if strings.Contains(string(line), pin) {
			t.Errorf("a model.request event carries the secret: %s", line)
		}
	}
	if strings.Contains(string(raw), pin) {
		t.Error("events.jsonl carries the secret")
	}
	if !strings.Contains(string(raw), `"update":"Environment Update`) {
		t.Error("events.jsonl has no model.request with its Environment Update")
	}
}

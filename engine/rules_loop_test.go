package engine

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestRulesModelConfig checks the operator file's model section as the
// adapter gets it: an endpoint that is set must be one the adapter can
// call (and is refused at its key otherwise), none set is not refused
// here, and a transport the caller gives carries the requests.
func TestRulesModelConfig(t *testing.T) {
	t.Parallel()
	given := http.RoundTripper(&http.Transport{})
	tests := []struct {
		name, model string
		scripted    bool // a scripted scenario, which needs no model
		transport   http.RoundTripper
		problem     string // in the error; "" for none
	}{
		{name: "an endpoint of the other protocol is refused at its key", model: "  endpoint: http://127.0.0.1:9/v1/responses\n",
			problem: "model endpoint is a responses URL but the profile speaks chat_completions"},
		{name: "no endpoint is not the configuration's problem", model: "  retry: 0\n", scripted: true},
		{name: "a given transport carries the requests", model: "  endpoint: http://127.0.0.1:9/v1\n", transport: given},
		{name: "no transport leaves the adapter's own", model: "  endpoint: http://127.0.0.1:9/v1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := rulesGoal
			if tt.scripted {
				sc = rulesApp + "steps:\n  - press_key: a\n"
			}
			files := loadRunFiles(t, t.TempDir(), sc, "model:\n"+tt.model, nil)
			cfg, err := ModelConfig(files.Operator, tt.transport)
			switch {
			case tt.problem == "" && err != nil:
				t.Fatalf("ModelConfig: %v", err)
			case tt.problem != "":
				if err == nil || !strings.Contains(err.Error(), tt.problem) || !strings.Contains(err.Error(), "operator.yaml:2:") {
					t.Fatalf("ModelConfig error = %v, want %q at the endpoint's line", err, tt.problem)
				}
				return
			}
			switch {
			case tt.transport == nil && cfg.HTTPClient != nil:
				t.Errorf("HTTPClient = %+v, want the adapter's own", cfg.HTTPClient)
			case tt.transport != nil && (cfg.HTTPClient == nil || cfg.HTTPClient.Transport != tt.transport):
				t.Errorf("HTTPClient = %+v, want one on the given transport", cfg.HTTPClient)
			}
		})
	}
}

// TestRulesEnvironmentUpdate checks that a successful turn is followed by
// the Environment Update, with the application's windows in it, and a
// failed one is not.
func TestRulesEnvironmentUpdate(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{machine: &fakeMachine{title: "Main"},
		script: []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "F35"}`), loopGoalMet}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 3, 0)
	loopWantSteps(t, r.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"press_key", "error", ""}, loopStep{"record_verdict", "ok", ""})
	if got := loopLastText(r.reqs[1]); !strings.Contains(got, "Environment Update") || !strings.Contains(got, `"Main" (focused)`) {
		t.Errorf("after a successful turn the model got no Environment Update with the windows:\n%s", got)
	}
	if got := loopLastText(r.reqs[2]); strings.Contains(got, "Environment Update") {
		t.Errorf("after a failed turn the model got an Environment Update:\n%s", got)
	}
}

// TestRulesProposalSteps checks that in step mode each proposal names the
// step its call becomes, so the console shows the operator which step is
// waiting for a decision.
func TestRulesProposalSteps(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("press_key", `{"key": "q"}`), loopGoalMet},
		before: func(run *Runner) { run.Steer(events.Steer{Action: events.SteerStep, Value: "on"}) },
		sink: func(run *Runner, e events.Event) {
			if e.Kind == events.KindProposal {
				go run.Steer(events.Steer{Action: events.SteerApprove})
			}
		}})
	loopWant(t, r, events.VerdictPass, OutcomeCompleted, 3, 0)
	var steps []int
	for _, e := range loopEvents(r, events.KindProposal) {
		steps = append(steps, e.Step)
	}
	if !slices.Equal(steps, []int{1, 2, 3}) {
		t.Errorf("proposals name steps %v, want 1, 2, 3", steps)
	}
}

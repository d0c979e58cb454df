package engine

import (
	"fmt"
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
		{name: "a tool_choice the profile's API does not take is refused at its key", model: "  tool_choice: required\n  profile: kimi-k3\n  endpoint: http://127.0.0.1:9/v1\n",
			problem: `model profile kimi-k3 does not accept tool_choice "required" (it takes auto, none)`},
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
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
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
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
	var steps []int
	for _, e := range loopEvents(r, events.KindProposal) {
		steps = append(steps, e.Step)
	}
	if !slices.Equal(steps, []int{1, 2, 3}) {
		t.Errorf("proposals name steps %v, want 1, 2, 3", steps)
	}
}

// TestRulesProposalAfterGuard checks that in step mode a call the guard
// refuses anyway (here input before any observation) is refused at once,
// never offered to the operator for approval; the calls after it are.
func TestRulesProposalAfterGuard(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{machine: &fakeMachine{},
		script: []mt.Exchange{mt.Call("press_key", `{"key": "q"}`), loopObserve, loopGoalMet},
		before: func(run *Runner) { run.Steer(events.Steer{Action: events.SteerStep, Value: "on"}) },
		sink: func(run *Runner, e events.Event) {
			if e.Kind == events.KindProposal {
				go run.Steer(events.Steer{Action: events.SteerApprove})
			}
		}})
	loopWantSteps(t, r.rep, loopStep{"press_key", "refused", "observation"}, loopStep{"observe_screen", "ok", ""}, loopStep{"record_verdict", "ok", ""})
	var proposed []string
	for _, e := range loopEvents(r, events.KindProposal) {
		proposed = append(proposed, fmt.Sprintf("%d %s", e.Step, e.Tool))
	}
	if want := []string{"2 observe_screen", "3 record_verdict"}; !slices.Equal(proposed, want) {
		t.Errorf("proposed %q, want %q: a call the guard refuses is not offered", proposed, want)
	}
}

// budgetTools declares a tool with a budget and one without.
const budgetTools = `tools:
  counted:
    description: Has a budget.
    run: shell
    command: "true"
    budget: 2
  free:
    description: Has none.
    run: shell
    command: "true"
`

// TestRulesBudgetEvent checks the bounds the budget event publishes: the
// scenario's agentic_max_iterations over the operator's, the model's
// failures, and a declared tool's calls only when it has a budget.
func TestRulesBudgetEvent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, scenario string
		iterations     float64
	}{
		{"the operator's bound", rulesGoal + budgetTools, 9},
		{"the scenario's own bound", rulesGoal + "agentic_max_iterations: 7\n" + budgetTools, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: tt.scenario, operator: loopOp("  max_iterations: 9\n", ""), machine: &fakeMachine{},
				script: []mt.Exchange{mt.Call("counted", `{}`), loopGoalMet}})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
			evs := loopEvents(r, events.KindBudget)
			if len(evs) == 0 {
				t.Fatal("no budget event")
			}
			got := map[string]events.Budget{}
			for _, b := range evs[len(evs)-1].Budgets {
				got[b.Name] = b
			}
			if b := got["iterations"]; b.Limit != tt.iterations {
				t.Errorf("iterations budget %+v, want limit %g", b, tt.iterations)
			}
			if b, found := got["model_failures"]; !found || b.Limit != 2 {
				t.Errorf("model_failures budget %+v (found %v), want limit 2 (model.disable_after)", b, found)
			}
			if b := got["tool:counted"]; b.Limit != 2 || b.Used != 1 {
				t.Errorf("tool:counted budget %+v, want 1 of 2", b)
			}
			if b, found := got["tool:free"]; found {
				t.Errorf("a tool without a budget has one: %+v", b)
			}
		})
	}
}

// TestRulesUnrunSteps checks that calls the runtime refuses are steps of
// their own, numbered in turn, with their arguments as sent: parsed when
// they are JSON, raw when they are not.
func TestRulesUnrunSteps(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: loopOperatorRetry,
		script: []mt.Exchange{mt.Call("no_such_tool", `{"a": 1}`), mt.Call("press_key", `{"key": `), loopObserve, loopGoalMet}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 2)
	loopWantSteps(t, r.rep, loopStep{"no_such_tool", "malformed", "unknown tool"}, loopStep{"press_key", "malformed", ""},
		loopStep{"observe_screen", "ok", ""}, loopStep{"record_verdict", "ok", ""})
	for i, st := range r.rep.Steps {
		if st.N != i+1 {
			t.Errorf("step %d is numbered %d", i+1, st.N)
		}
	}
	if a := r.rep.Steps[0].Args; a["a"] != float64(1) {
		t.Errorf("the unknown tool's arguments = %v, want them parsed", a)
	}
	if a := r.rep.Steps[1].Args; len(a) != 1 || !strings.HasPrefix(fmt.Sprint(a["raw"]), `{"key":`) {
		t.Errorf("the unparsable arguments = %v, want them raw", a)
	}
}

// TestRulesGoalPrompt checks the first message a goal run sends: the goal,
// the plan numbered from 1, the refs by name with where a bound secret may
// go, and the click targets with their descriptions; a scenario without
// them says nothing of them.
func TestRulesGoalPrompt(t *testing.T) {
	t.Parallel()
	const bare = "name: rules\napp:\n  command: [fake-app]\ngoal: Print the greeting.\n"
	tests := []struct {
		name, scenario, want string
	}{
		{"everything the scenario gives", bare + `plan:
  - Observe the screen.
  - Type the greeting.
provides:
  greeting: echo hello
  password: {secret: {env: APP_PASSWORD, into: [{role: password text}, {role: text, name: PIN}]}}
click_targets:
  ok_button: {x: 30, y: 190, description: the OK button}
  corner: {x: 300, y: 10}
`, "Goal: Print the greeting.\n\nPlan:\n1. Observe the screen.\n2. Type the greeting.\n\n" +
			"Values you can type by ref (type_text): greeting, password.\n" +
			`password may only go into role "password text", or role "text" and name "PIN"; anywhere else is refused.` + "\n\n" +
			"Click targets besides center: corner, ok_button (the OK button).\n\nStart by observing the screen."},
		{"the goal alone", bare, "Goal: Print the greeting.\n\nStart by observing the screen."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{scenario: tt.scenario, machine: &fakeMachine{}, env: map[string]string{"APP_PASSWORD": "pw-Secr3t"},
				script: []mt.Exchange{loopGoalMet}})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 1, 0)
			var first string
			for _, m := range r.reqs[0].Messages() {
				if m["role"] == "user" {
					first = loopContentText(m)
					break
				}
			}
			if first != tt.want {
				t.Errorf("first message\n got %q\nwant %q", first, tt.want)
			}
		})
	}
}

// TestRulesManyCallsInOneTurn gives the loop a reply of 500 calls: the
// first few are steps of their own, the rest one summary step, the turn
// has one screen and counts as one malformed reply, and the next request
// answers only the calls the history kept.
func TestRulesManyCallsInOneTurn(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 500} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			many := make([]mt.Exchange, n)
			for i := range many {
				many[i] = mt.Call("press_key", `{"key": "a"}`)
				if i%5 == 4 {
					many[i] = mt.Call("click", `{"target": "center"}`)
				}
			}
			r := loopRun(t, loopCase{machine: &fakeMachine{}, script: []mt.Exchange{mt.Calls(many...), loopObserve, loopGoalMet}})
			// goal-met after input that never ran: a concern, and each call
			// counts in the verdict's reasons, however many the turn held.
			loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 1)
			summary := fmt.Sprintf("calls that did not succeed: %d malformed (press_key ×%d, click ×%d)", n, n-n/5, n/5)
			if n == 2 {
				summary = "calls that did not succeed: 2 malformed (press_key ×2)"
			}
			if !slices.Contains(r.rep.Reasons, summary) {
				t.Errorf("reasons %q lack %q", r.rep.Reasons, summary)
			}
			lastFive := "; the last 5: press_key (malformed), press_key (malformed), press_key (malformed), press_key (malformed), click (malformed)"
			if n == 2 {
				lastFive = ": press_key (malformed), press_key (malformed)"
			}
			if want := fmt.Sprintf("the model recorded goal-met while its last %d input actions were all refused or failed%s", n, lastFive); !loopHasConcern(r.rep, want) {
				t.Errorf("concerns %q lack %q", r.rep.Concerns, want)
			}
			kept := min(n, maxCallsRecorded)
			msg := fmt.Sprintf("%d calls in one turn; none was executed", n)
			var want []loopStep
			for range kept {
				want = append(want, loopStep{"press_key", "malformed", msg})
			}
			if n > kept {
				want = append(want, loopStep{"more_calls", "malformed", fmt.Sprintf("%d more calls in this turn (press_key ×397, click ×100)", n-kept)})
			}
			loopWantSteps(t, r.rep, append(want, loopOKSteps...)...)
			diagnostic := 0
			for _, e := range r.events {
				if d, _ := e.Data.(events.ScreenCaptured); e.Kind == events.KindScreen && d.Diagnostic {
					diagnostic++
				}
			}
			if diagnostic != 1 {
				t.Errorf("%d screens captured for the turn, want 1", diagnostic)
			}
			var answered, asked int
			for _, m := range r.reqs[1].Messages() {
				if m["role"] == "tool" {
					answered++
				}
				if calls, ok := m["tool_calls"].([]any); ok {
					asked += len(calls)
				}
			}
			if answered != kept || asked != kept {
				t.Errorf("the next request holds %d calls and %d answers, want %d of each", asked, answered, kept)
			}
		})
	}
}

package engine

import (
	"image"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// fakeControl is a named control of the double's application: enabled,
// with a click action, 80x30 at x,y.
func fakeControl(name, role string, x, y int) atspi.Control {
	return atspi.Control{Name: name, Role: role, Extents: image.Rect(x, y, x+80, y+30), Actions: []string{"click"}, Enabled: true}
}

// fakeDialog is a dialog's OK and Cancel buttons and a check box that a
// press of it ticks.
func fakeDialog() *fakeMachine {
	f := &fakeMachine{controls: []atspi.Control{
		fakeControl("OK", "push button", 40, 200), fakeControl("Cancel", "push button", 140, 200),
		fakeControl("Remember me", "check box", 40, 150),
	}}
	f.on = func(f *fakeMachine, input string) {
		if input != "press Remember me" && input != "click 80,165" {
			return
		}
		cs := f.showing()
		for i := range cs {
			if cs[i].Name == "Remember me" {
				cs[i].Checked = true
			}
		}
		f.setControls(cs...)
	}
	return f
}

// fakeDialogWith is fakeDialog with each control changed by change.
func fakeDialogWith(change func(c *atspi.Control)) *fakeMachine {
	f := fakeDialog()
	for i := range f.controls {
		change(&f.controls[i])
	}
	return f
}

// TestRulesClickElement runs click_element and the controls checks on the
// double's accessibility bus: a control on the screen is clicked with the
// pointer at its centre, one no pointer reaches is pressed through its
// action, an action refused or stuck is an error, a missing name lists the
// names there are, an application without a bridge is told why, and a
// control's state decides an expect.
func TestRulesClickElement(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		machine func() *fakeMachine
		steps   string
		verdict events.Verdict
		outcome events.Outcome
		want    []loopStep
		inputs  []string
		reason  string
	}{
		{
			name: "a control on the screen is clicked with the pointer at its centre", machine: fakeDialog,
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `clicked the push button "OK" with the pointer at its centre`}},
			inputs: []string{"click 80,215"},
		},
		{
			name: "a name in another case still finds the control", machine: fakeDialog,
			steps:   "  - click_element: {name: cancel}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `clicked the push button "Cancel"`}},
			inputs: []string{"click 180,215"},
		},
		{
			name:    "a control without extents is pressed through its action",
			machine: func() *fakeMachine { return fakeDialogWith(func(c *atspi.Control) { c.Extents = image.Rectangle{} }) },
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `clicked the push button "OK" through its accessibility action (no pointer click reaches it: the toolkit reports no extents)`}},
			inputs: []string{"press OK"},
		},
		{
			name: "a control off the screen is pressed through its action",
			machine: func() *fakeMachine {
				return fakeDialogWith(func(c *atspi.Control) { c.Extents = c.Extents.Add(image.Pt(2000, 0)) })
			},
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `through its accessibility action (no pointer click reaches it: its centre 2080,215 is off the 1280x800 screen)`}},
			inputs: []string{"press OK"},
		},
		{
			name: "a control under another program's window is pressed through its action",
			machine: func() *fakeMachine {
				f := fakeDialog()
				f.others = []desktop.Window{{ID: 0x500001, PID: 4242, Class: "Other", Title: "on top", X: 0, Y: 180, Width: 300, Height: 100, Viewable: true}}
				return f
			},
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `through its accessibility action (no pointer click reaches it: another program's window ("on top"`}},
			inputs: []string{"press OK"},
		},
		{
			name: "a control under a dialog of the same application is pressed through its action",
			machine: func() *fakeMachine {
				f := fakeDialog()
				f.others = []desktop.Window{{ID: 0x500002, PID: fakePID, Class: "Fake", Title: "Save As", X: 40, Y: 150, Width: 200, Height: 100, Viewable: true}}
				return f
			},
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `through its accessibility action (no pointer click reaches it: another of the application's windows ("Save As"`}},
			inputs: []string{"press OK"},
		},
		{
			name: "a refused action is an error, not a success",
			machine: func() *fakeMachine {
				f := fakeDialogWith(func(c *atspi.Control) { c.Extents = image.Rectangle{} })
				f.refuse = true
				return f
			},
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"click_element", "error", `the toolkit refused the action`}},
		},
		{
			name: "an action that does not return is an error, not a success",
			machine: func() *fakeMachine {
				f := fakeDialogWith(func(c *atspi.Control) { c.Extents = image.Rectangle{} })
				f.stuck = true
				return f
			},
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"click_element", "error", `pressed the push button "OK" through its accessibility action (no pointer click reaches it: the toolkit reports no extents), and the call did not return: `}},
		},
		{
			name: "a missing name lists the names there are", machine: fakeDialog,
			steps:   "  - click_element: {name: Apply}\n",
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"click_element", "error", `no control named "Apply"; available: "OK", "Cancel", "Remember me"`}},
		},
		{
			name:    "an application without a bridge is told why click_element is not offered",
			machine: func() *fakeMachine { return &fakeMachine{} },
			steps:   "  - click_element: {name: OK}\n",
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			want: []loopStep{{"click_element", "malformed", "unknown tool \"click_element\" (click_element is not offered: the application did not connect to the accessibility bus"}},
		},
		{
			name: "a control's state after a press passes its expect", machine: fakeDialog,
			steps:   "  - click_element: {name: Remember me}\n    expect:\n      controls:\n        Remember me: {checked: true}\n        Apply: {present: false}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want:   []loopStep{{"click_element", "ok", `clicked the check box "Remember me"`}},
			inputs: []string{"click 80,165"},
		},
		{
			name: "a control in the wrong state fails its expect", machine: fakeDialog,
			steps:   "  - expect:\n      controls:\n        OK: {enabled: false, within_s: 0.3}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reason: `"OK"`,
		},
		{
			name: "a box not yet ticked fails an expect that it is", machine: fakeDialog,
			steps:   "  - expect:\n      controls:\n        Remember me: {checked: true, within_s: 0.3}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reason: `"Remember me"`,
		},
		{
			name: "an expected control that is not there fails", machine: fakeDialog,
			steps:   "  - expect:\n      controls:\n        Apply: {present: true, within_s: 0.3}\n",
			verdict: events.VerdictAppFailed, outcome: OutcomeStepFailed,
			reason: "Apply",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := c.machine()
			r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n" + c.steps, operator: "runner: {}\n", machine: f})
			loopWant(t, r, c.verdict, c.outcome, 0, 0)
			if c.want != nil {
				loopWantSteps(t, r.rep, c.want...)
			}
			if got := f.inputs(); !slices.Equal(got, c.inputs) {
				t.Errorf("input = %q, want %q", got, c.inputs)
			}
			if why := strings.Join(r.rep.Reasons, " "); !strings.Contains(why, c.reason) {
				t.Errorf("reasons = %q, want one containing %q", r.rep.Reasons, c.reason)
			}
		})
	}
}

// TestRulesControlsOffer checks that named controls decide the tool list:
// a goal run on an application that publishes them offers click_element
// and the model's call presses the control; one that publishes none is
// not offered it, and the tools event says why.
func TestRulesControlsOffer(t *testing.T) {
	t.Parallel()
	offered := func(r loopResult) (tools []string, why string) {
		for _, e := range r.events {
			if d, ok := e.Data.(events.ToolList); ok && e.Kind == events.KindTools {
				tools, why = d.Tools, d.NoClickElement
			}
		}
		return tools, why
	}
	t.Run("published", func(t *testing.T) {
		t.Parallel()
		f := fakeDialog()
		r := loopRun(t, loopCase{scenario: rulesGoal, machine: f,
			script: []mt.Exchange{mt.Call("click_element", `{"name": "OK"}`), loopGoalMet}})
		loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
		loopWantSteps(t, r.rep, loopStep{"click_element", "ok", `clicked the push button "OK"`}, loopStep{"record_verdict", "ok", ""})
		if tools, _ := offered(r); !slices.Contains(tools, "click_element") {
			t.Errorf("tools = %q, want click_element offered", tools)
		}
		if !slices.ContainsFunc(r.events, func(e events.Event) bool {
			return e.Kind == events.KindTools && strings.HasPrefix(e.Message, `fake (GTK 3.24.38) published 3 named controls in `) &&
				strings.HasSuffix(e.Message, `: OK, Cancel, Remember me`)
		}) {
			t.Error("no tools event names the application, its toolkit and its controls")
		}
		if got := f.inputs(); !slices.Equal(got, []string{"click 80,215"}) {
			t.Errorf("input = %q", got)
		}
	})
	t.Run("looked for while the window paints", func(t *testing.T) {
		// The controls are looked for as soon as the window maps, not
		// after it painted: the two waits overlap.
		t.Parallel()
		f := fakeDialog()
		f.paintsOnDiscovery = make(chan struct{})
		r := loopRun(t, loopCase{scenario: strings.Replace(rulesGoal, "command: [fake-app]", "command: [fake-app]\n  startup_timeout_s: 3", 1), machine: f,
			script: []mt.Exchange{loopGoalMet}})
		if tools, _ := offered(r); !slices.Contains(tools, "click_element") {
			t.Errorf("tools = %q, want click_element offered", tools)
		}
		if slices.ContainsFunc(r.events, func(e events.Event) bool { return strings.Contains(e.Message, "was still blank") }) {
			t.Error("the window's paint was waited for before the controls were looked for")
		}
	})
	t.Run("switched off", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesGoal, operator: strings.Replace(loopOperator, "session:\n", "session:\n  accessibility: false\n", 1), machine: fakeDialog(),
			script: []mt.Exchange{loopGoalMet}})
		if tools, why := offered(r); slices.Contains(tools, "click_element") || why != "accessibility is off (session.accessibility: false)" {
			t.Errorf("tools = %q, no click_element because %q", tools, why)
		}
	})
	t.Run("not needed by the script", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: fakeDialog()})
		if tools, why := offered(r); slices.Contains(tools, "click_element") || why != "" {
			t.Errorf("tools = %q, no click_element because %q: a script that cannot use it is not told why", tools, why)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		r := loopRun(t, loopCase{scenario: rulesGoal, machine: &fakeMachine{controls: []atspi.Control{}},
			script: []mt.Exchange{mt.Call("click_element", `{"name": "OK"}`), loopGoalMet}})
		tools, why := offered(r)
		if slices.Contains(tools, "click_element") || !strings.Contains(why, "shows no named controls") {
			t.Errorf("tools = %q, no click_element because %q", tools, why)
		}
		if r.rep.Loop.Malformed != 1 {
			t.Errorf("loop = %+v, want the unoffered call malformed", r.rep.Loop)
		}
	})
}

// TestRulesSecretIntoRole checks secret.into by accessible role on the
// double: the secret is typed when the focused accessible has the bound
// role, refused (and never typed) when it has another or when nothing
// says which has the focus.
func TestRulesSecretIntoRole(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-double-secret"
	const scenario = `name: secret role
app:
  command: [fake-app]
provides:
  pw:
    secret:
      env: ROLE_SECRET
      into:
        - role: password text
steps:
  - type_text: pw
`
	cases := []struct {
		name    string
		focused *atspi.Accessible
		status  events.Status
		message string
		inputs  []string
	}{
		{"a password field takes it", &atspi.Accessible{Role: "password text", Name: "Password"}, events.StatusOK, "", typedChunks(secret)},
		{"a plain entry is refused", &atspi.Accessible{Role: "text"}, events.StatusRefused, "this type_text would put it into the focused text", nil},
		{"no known focus is refused", nil, events.StatusRefused, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fakeDialog()
			f.focused = c.focused
			r := loopRun(t, loopCase{scenario: scenario, operator: "runner: {}\n", machine: f, env: map[string]string{"ROLE_SECRET": secret}})
			if len(r.rep.Steps) != 1 || r.rep.Steps[0].Status != c.status || !strings.Contains(r.rep.Steps[0].Message, c.message) {
				t.Fatalf("steps = %+v, want one %s containing %q", r.rep.Steps, c.status, c.message)
			}
			if got := f.inputs(); !slices.Equal(got, c.inputs) {
				t.Errorf("input = %q, want %q", got, c.inputs)
			}
		})
	}
}

// TestRulesAccessibilityBus checks which session bus the application's
// controls are looked for on: the isolated run's own, the runtime's when
// the run is not isolated, and one the run starts when there is neither.
func TestRulesAccessibilityBus(t *testing.T) {
	t.Parallel()
	const runtimeBus = "unix:path=/nonexistent/runtime-bus"
	cases := []struct {
		name, operator string
		env            map[string]string
		buses          int
		dialled        string
	}{
		{"isolated: the run's own bus", "runner: {}\n", nil, 1, "unix:path=/nonexistent/kasmrt-fake-bus-1"},
		{"not isolated: the runtime's bus", "session:\n  isolate: false\n", map[string]string{"DBUS_SESSION_BUS_ADDRESS": runtimeBus}, 0, runtimeBus},
		{"not isolated and no bus: one for the controls", "session:\n  isolate: false\n", nil, 1, "unix:path=/nonexistent/kasmrt-fake-bus-1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fakeDialog()
			r := loopRun(t, loopCase{scenario: rulesApp + "steps:\n  - click_element: {name: OK}\n", operator: c.operator, env: c.env, machine: f})
			loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.buses != c.buses || !slices.Equal(f.dialled, []string{c.dialled}) {
				t.Errorf("%d buses started, controls looked for through %q; want %d and %q", f.buses, f.dialled, c.buses, c.dialled)
			}
		})
	}
}

package scenarios

import (
	"sort"
)

// Presence says when a built-in tool is on a run's list (docs/architecture.md's
// presence table).
type Presence string

// The presence conditions (docs/architecture.md, "The rules").
const (
	Always        Presence = "always"
	ATSPIControls Presence = "atspi_controls" // decided at launch
	ModelEndpoint Presence = "model_endpoint"
	// ModelOrText is a model endpoint, or a script whose checks all quote
	// text that OCR can read (check_expectation).
	ModelOrText    Presence = "model_or_text"
	CDPTab         Presence = "cdp_tab" // decided at launch
	CDPWaits       Presence = "cdp_waits"
	CDPTargets     Presence = "cdp_targets"
	WaitConditions Presence = "wait_conditions"
	Windows        Presence = "windows"
	Respond        Presence = "respond"
	CDPURLs        Presence = "cdp_urls"
	Scripted       Presence = "scripted" // scripted runs only, never the model
	Inbox          Presence = "inbox"
	// Values is a value to type: one the scenario provides, or an
	// operator's answer to ask_human once one has come.
	Values   Presence = "values"
	Declared Presence = "declared"
)

// DecidedAtLaunch reports whether the condition can only be known once the
// application is running.
func (p Presence) DecidedAtLaunch() bool { return p == ATSPIControls || p == CDPTab }

// Param is one argument of a tool, in the closed vocabulary the guards
// check: required keys, types, enums and numeric bounds.
type Param struct {
	Name        string
	Type        string // string | number | integer | boolean
	Description string
	Required    bool
	Enum        []string
	Min, Max    *float64
}

// ToolSpec describes one tool: its schema and how it relates to the
// observation record and the budgets.
type ToolSpec struct {
	Name        string
	Description string
	Params      []Param
	Presence    Presence
	// Observes completes the observation record (observe_screen,
	// check_expectation).
	Observes bool
	// NeedsObservation is set on model-chosen input actions that must follow
	// an observation since the screen last changed.
	NeedsObservation bool
	// ChangesScreen clears the observation record after the tool runs.
	ChangesScreen bool
	// Holds marks waiting tools whose time counts toward runner.max_hold_s.
	Holds bool
	// Declared is set on the scenario's own tools.
	Declared bool
	// Check is set on a declared tool the scenario marks as a check of
	// the application (check: true), which looks and changes nothing.
	Check bool
}

// Required returns the names of the tool's required parameters.
func (t ToolSpec) Required() []string {
	var names []string
	for _, p := range t.Params {
		if p.Required {
			names = append(names, p.Name)
		}
	}
	return names
}

// Param returns the named parameter.
func (t ToolSpec) Param(name string) (Param, bool) {
	for _, p := range t.Params {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// JSONSchema returns the tool's parameters as a JSON Schema object, the form
// a model's tool list takes.
func (t ToolSpec) JSONSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range t.Params {
		prop := map[string]any{"type": p.Type}
		if p.Description != "" {
			prop["description"] = p.Description
		}
		if len(p.Enum) > 0 {
			prop["enum"] = p.Enum
		}
		if p.Min != nil {
			prop["minimum"] = *p.Min
		}
		if p.Max != nil {
			prop["maximum"] = *p.Max
		}
		props[p.Name] = prop
		if p.Required {
			required = append(required, p.Name)
		}
	}
	return map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
}

func ptr(f float64) *float64 { return &f }

func str(name, desc string) Param {
	return Param{Name: name, Type: "string", Description: desc, Required: true}
}

func enum(name, desc string, values []string) Param {
	return Param{Name: name, Type: "string", Description: desc, Required: true, Enum: values}
}

// observers are the tools that complete the observation record.
var observerNames = []string{"observe_screen", "check_expectation"}

// Catalog returns every tool the scenario and operator files could put on
// the run's list, keyed by name, with the enums and bounds those files
// determine (click targets, provided refs, wait limits, declared tools).
// Presence is applied separately by the engine once the session's offers
// are known.
func Catalog(s *Scenario, o *Operator) map[string]ToolSpec {
	clickTargets := append([]string{"center"}, sortedKeys(s.ClickTargets)...)
	refs := sortedKeys(s.Provides)
	cdpTargets := sortedKeys(s.CDPTargets)
	tools := []ToolSpec{
		{Name: "observe_screen", Description: "Capture the screen and look at it. Required before press_key, click, type_text or click_grounded whenever the screen has changed.", Presence: Always, Observes: true},
		{Name: "press_key", Description: "Press one key or chord, e.g. Return, Tab, ctrl+l, shift+Tab.", Presence: Always, NeedsObservation: true, ChangesScreen: true,
			Params: []Param{str("key", "A key name or chord with ctrl, alt, shift or super modifiers.")}},
		{Name: "click", Description: "Click the application window's center or a target the scenario named.", Presence: Always, NeedsObservation: true, ChangesScreen: true,
			Params: []Param{enum("target", "center, or a click target the scenario declares.", clickTargets)}},
		{Name: "type_text", Description: "Type a value by its ref: one the scenario provides, or an operator's answer (answer_<question id>). The value is never shown; the result reports its length.", Presence: Values, NeedsObservation: true, ChangesScreen: true,
			Params: []Param{enumOrFree("ref", "The ref of a value listed under Data bindings.", refs)}},
		{Name: "wait", Description: "Wait a number of seconds for the application.", Presence: Always, ChangesScreen: true, Holds: true,
			Params: []Param{{Name: "seconds", Type: "number", Description: "Seconds to wait.", Required: true, Min: ptr(0), Max: ptr(o.Runner.WaitToolMaxS)}}},
		{Name: "check_expectation", Description: "Ask the vision judge whether the current screen meets an expectation; answers true, false or unavailable.", Presence: ModelOrText, Observes: true,
			Params: []Param{str("expectation", "What should be true of the screen now.")}},
		{Name: "record_verdict", Description: "Record your verdict on the goal and end the loop.", Presence: Always,
			Params: []Param{enum("verdict", "goal-met or goal-not-met.", []string{"goal-met", "goal-not-met"}), str("reason", "Why, in one or two sentences.")}},
		{Name: "escalate", Description: "Stop the test: something needs a human. Locks the verdict to test-error.", Presence: Always,
			Params: []Param{str("reason", "What went wrong.")}},
		{Name: "click_element", Description: "Click a named control the application publishes over accessibility.", Presence: ATSPIControls, ChangesScreen: true,
			Params: []Param{str("name", "The control's accessible name.")}},
		{Name: "click_grounded", Description: "Click something described in words; the runtime locates it on a fresh capture and checks the expected change.", Presence: ModelEndpoint, NeedsObservation: true, ChangesScreen: true,
			Params: []Param{str("description", "What to click, as seen on screen."), str("expect", "The change the click should cause.")}},
		{Name: "cdp_url", Description: "Report the browser tab's current URL.", Presence: CDPTab},
		{Name: "cdp_list_interactive", Description: "List the page's interactive elements with handles.", Presence: CDPTab,
			Params: []Param{{Name: "filter", Type: "string", Description: "Only elements whose text contains this."}}},
		{Name: "cdp_click_described", Description: "Click a page element by handle or by its text.", Presence: CDPTab, ChangesScreen: true,
			Params: []Param{{Name: "handle", Type: "string", Description: "A handle from cdp_list_interactive."}, {Name: "text", Type: "string", Description: "The element's visible text."}}},
		{Name: "cdp_query", Description: "Read the text and state of a page element the scenario names.", Presence: CDPTargets,
			Params: []Param{enum("target", "A cdp_targets name.", cdpTargets)}},
		{Name: "cdp_click", Description: "Click a page element the scenario names.", Presence: CDPTargets, ChangesScreen: true,
			Params: []Param{enum("target", "A cdp_targets name.", cdpTargets)}},
		{Name: "cdp_fill", Description: "Fill a page element the scenario names with a provided value.", Presence: CDPTargets, ChangesScreen: true,
			Params: []Param{enum("target", "A cdp_targets name.", cdpTargets), enumOrFree("ref", "The key of a provided value.", refs)}},
		{Name: "cdp_wait", Description: "Wait for a page condition the scenario names.", Presence: CDPWaits, ChangesScreen: true, Holds: true,
			Params: []Param{enum("name", "A cdp_waits name.", sortedKeys(s.CDPWaits))}},
		{Name: "cdp_navigate", Description: "Open a page the scenario names.", Presence: CDPURLs, ChangesScreen: true,
			Params: []Param{enum("target", "A cdp_urls name.", sortedKeys(s.CDPURLs))}},
		{Name: ExpectTool, Description: "Check what the step's expect: says, with no action first (scripted steps only).", Presence: Scripted},
		{Name: "wait_while", Description: "Wait while a condition the scenario names holds.", Presence: WaitConditions, ChangesScreen: true, Holds: true,
			Params: []Param{enum("condition", "A wait_conditions name.", sortedKeys(s.WaitConditions))}},
		{Name: "switch_window", Description: "Give the focus to an application window the scenario names; later input and click targets act on it.", Presence: Windows, ChangesScreen: true,
			Params: []Param{enum("name", "A windows name.", sortedKeys(s.Windows))}},
		{Name: "respond", Description: "Post a message to the operator.", Presence: Respond,
			Params: []Param{str("message", "The message.")}},
		{Name: "ask_human", Description: "Ask the operator a question and wait for the answer.", Presence: Inbox, Holds: true,
			Params: []Param{str("question", "The question.")}},
	}
	out := make(map[string]ToolSpec, len(tools)+len(s.Tools))
	for _, t := range tools {
		out[t.Name] = t
	}
	for name, dt := range s.Tools {
		spec := ToolSpec{Name: name, Description: dt.Description, Presence: Declared, Declared: true, ChangesScreen: true, Check: dt.Check}
		for _, pn := range dt.ParamNames() {
			p := dt.Parameters[pn]
			spec.Params = append(spec.Params, enum(pn, p.Description, sortedKeys(p.Values)))
		}
		out[name] = spec
	}
	return out
}

// enumOrFree is an enum parameter, or a free string when the scenario
// provides no values (so a schema never carries an empty enum).
func enumOrFree(name, desc string, values []string) Param {
	p := str(name, desc)
	if len(values) > 0 {
		p.Enum = values
	}
	return p
}

// IsBuiltin reports whether name is one of the runtime's own tools.
func IsBuiltin(name string) bool {
	_, ok := builtinNames()[name]
	return ok
}

func builtinNames() map[string]bool {
	names := map[string]bool{}
	for n, t := range Catalog(&Scenario{}, &Operator{}) {
		if !t.Declared {
			names[n] = true
		}
	}
	return names
}

// BuiltinNames returns the runtime's own tool names, sorted.
func BuiltinNames() []string {
	return sortedKeys(builtinNames())
}

// sortedSpecs returns specs sorted by name.
func sortedSpecs(m map[string]ToolSpec) []ToolSpec {
	out := make([]ToolSpec, 0, len(m))
	for _, t := range m {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

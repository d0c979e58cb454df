package scenarios

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits the spec puts on scripted scenarios and plans.
const (
	MaxSteps     = 40
	MaxPlanSteps = 40
)

// Scenario is one test: the application to launch and either scripted steps
// or a goal for the model.
type Scenario struct {
	Pos         Pos      `yaml:"-"`
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	App         *App     `yaml:"app"`
	Browser     *Browser `yaml:"browser"`

	Goal                 string   `yaml:"goal"`
	Steps                []Step   `yaml:"steps"`
	Plan                 []string `yaml:"plan"`
	AgenticMaxIterations int      `yaml:"agentic_max_iterations"`
	// Success is what a goal run must have achieved, checked by the
	// runtime once the loop ends.
	Success *Success `yaml:"success"`

	Provides map[string]Provided `yaml:"provides"`
	// ReferenceImages are PNG files shown to the model with the goal, as
	// input_image_N (e.g. how the finished screen should look).
	ReferenceImages []string                 `yaml:"reference_images"`
	ClickTargets    map[string]ClickTarget   `yaml:"click_targets"`
	CDPTargets      map[string]string        `yaml:"cdp_targets"`
	CDPWaits        map[string]CDPWait       `yaml:"cdp_waits"`
	WaitConditions  map[string]WaitCondition `yaml:"wait_conditions"`
	// Windows names the application's windows switch_window can act on.
	Windows map[string]WindowMatch  `yaml:"windows"`
	Tools   map[string]DeclaredTool `yaml:"tools"`

	// CDPURLs names the pages cdp_navigate may open.
	CDPURLs map[string]string `yaml:"cdp_urls"`

	// Recording is set on a scenario loaded for `kasmrt record`
	// (LoadRecording): its steps come from an operator, who may use any
	// tool the app allows.
	Recording bool `yaml:"-"`

	// File is the path the scenario was loaded from and SHA256 the hex
	// digest of its bytes, for the report.
	File   string `yaml:"-"`
	SHA256 string `yaml:"-"`
	// Warnings are what the file allows but should not go unnoticed
	// (validate and run print them).
	Warnings Problems `yaml:"-"`
	// keyPos remembers where each key was written, by key path.
	keyPos map[string]Pos
	// secrets holds resolved secret values by ref. It is unexported so no
	// printer or encoder ever sees it.
	secrets *secretStore
}

// secretStore is held by pointer so fmt's %v prints an address, never the
// values.
type secretStore struct{ values map[string]string }

// Value returns the provided value for ref, and whether it is a secret.
func (s *Scenario) Value(ref string) (value string, secret, ok bool) {
	p, ok := s.Provides[ref]
	if !ok {
		return "", false, false
	}
	if p.Secret != nil {
		return s.secrets.values[ref], true, true
	}
	return p.Value, false, true
}

// SecretValues returns every resolved secret value, for redaction.
func (s *Scenario) SecretValues() []string {
	if s.secrets == nil {
		return nil
	}
	out := make([]string, 0, len(s.secrets.values))
	for _, k := range sortedKeys(s.secrets.values) {
		out = append(out, s.secrets.values[k])
	}
	return out
}

// App says how to launch the application under test and how to know it is
// healthy.
type App struct {
	Pos            Pos               `yaml:"-"`
	Command        []string          `yaml:"command"`
	Env            map[string]string `yaml:"env"`
	Dir            string            `yaml:"dir"`
	Window         *WindowMatch      `yaml:"window"`
	StartupTimeout float64           `yaml:"startup_timeout_s"`
	// HangTimeout is how long the application may go without answering
	// (its windows' _NET_WM_PING) after an action before it counts as
	// hung; zero means DefaultHangTimeoutS.
	HangTimeout   float64  `yaml:"hang_timeout_s"`
	FatalPatterns []string `yaml:"fatal_patterns"`
	// SuccessExitCodes are exit codes that mean the app finished its job
	// (a dialog that exits on OK): exiting with one ends the run normally
	// instead of failing the process and window checks.
	SuccessExitCodes []int `yaml:"success_exit_codes"`
	// ExpectExit says the application must exit by itself: a run where it
	// does not is app-failed.
	ExpectExit *ExpectExit `yaml:"expect_exit"`
}

// DefaultHangTimeoutS is how long an application may go without answering
// when app.hang_timeout_s is not given.
const DefaultHangTimeoutS = 10

// HangTimeoutS is how long the application may go without answering
// before it counts as hung, in seconds.
func (a *App) HangTimeoutS() float64 {
	if a == nil || a.HangTimeout == 0 {
		return DefaultHangTimeoutS
	}
	return a.HangTimeout
}

// ExpectExit is how the application is expected to end: with one of Codes
// (default 0), within WithinS seconds after the last step or the loop
// (default 10).
type ExpectExit struct {
	Pos     Pos     `yaml:"-"`
	Codes   []int   `yaml:"codes"`
	WithinS float64 `yaml:"within_s"`
}

// DefaultExpectExitWithinS is how long an expected exit may take after
// the last step when within_s is not given.
const DefaultExpectExitWithinS = 10

// ExitCodes returns the codes an expected exit may have.
func (e *ExpectExit) ExitCodes() []int {
	if len(e.Codes) == 0 {
		return []int{0}
	}
	return e.Codes
}

// WindowMatch says how the application's window is found. With no fields
// set, the window is the first top-level window owned by the launched
// process (by _NET_WM_PID).
type WindowMatch struct {
	Pos   Pos    `yaml:"-"`
	PID   *bool  `yaml:"pid"`
	Class string `yaml:"class"`
	Title string `yaml:"title"`
}

// Browser asks for a Chromium tab over the DevTools Protocol, launched by
// the runtime or attached to one already running.
type Browser struct {
	Pos      Pos    `yaml:"-"`
	Mode     string `yaml:"mode"` // launch | attach
	Attach   string `yaml:"attach"`
	StartURL string `yaml:"start_url"`
	Headless bool   `yaml:"headless"`
}

// Provided is a value the scenario provides for type_text and cdp_fill: a
// plain value, or a secret read from the environment or a file.
type Provided struct {
	Pos    Pos
	Value  string
	Secret *SecretSource
}

// SecretSource names where a secret's value comes from. The value itself is
// never part of the loaded configuration's printable form.
type SecretSource struct {
	Pos  Pos    `yaml:"-"`
	Env  string `yaml:"env"`
	File string `yaml:"file"`
	// Into, when given, lists the only places the secret may be typed or
	// filled; type_text and cdp_fill of it anywhere else are refused, so a
	// prompt-injected page cannot have it typed into a search box.
	Into []SecretPlace `yaml:"into"`
}

// SecretPlace is one place a secret may go. Every field that is set must
// hold for the destination: a cdp_targets name (the field cdp_fill fills
// or the page's focused element matches), a browser origin, or the
// focused accessible's role and name (over AT-SPI, for type_text).
type SecretPlace struct {
	Pos       Pos    `yaml:"-"`
	CDPTarget string `yaml:"cdp_target"`
	Origin    string `yaml:"origin"`
	Role      string `yaml:"role"`
	Name      string `yaml:"name"`
}

// Destination is where a type_text or cdp_fill would put a value, as far
// as the runtime can tell. Empty fields are unknown.
type Destination struct {
	CDPTargets []string // the cdp_targets names the field matches
	Origin     string   // the page's origin, scheme://host[:port]
	Role, Name string   // the focused accessible's role and name
}

// Allows reports whether the place admits the destination: each field the
// place sets is known for the destination and equal (roles and names
// compare case-insensitively, as toolkits vary in capitals).
func (p SecretPlace) Allows(d Destination) bool {
	if p.CDPTarget != "" && !slices.Contains(d.CDPTargets, p.CDPTarget) {
		return false
	}
	if p.Origin != "" && (d.Origin == "" || !strings.EqualFold(p.Origin, d.Origin)) {
		return false
	}
	if p.Role != "" && (d.Role == "" || !strings.EqualFold(p.Role, d.Role)) {
		return false
	}
	if p.Name != "" && (d.Name == "" || !strings.EqualFold(p.Name, d.Name)) {
		return false
	}
	return true
}

// String describes the place in the words of the scenario file.
func (p SecretPlace) String() string {
	var parts []string
	for _, f := range []struct{ key, val string }{{"cdp_target", p.CDPTarget}, {"origin", p.Origin}, {"role", p.Role}, {"name", p.Name}} {
		if f.val != "" {
			parts = append(parts, fmt.Sprintf("%s %q", f.key, f.val))
		}
	}
	return strings.Join(parts, " and ")
}

// BindsAccessibles reports whether a secret may go only to accessibles
// of some role or name, which the runtime then reads over AT-SPI.
func (s *Scenario) BindsAccessibles() bool {
	for _, p := range s.Provides {
		if p.Secret == nil {
			continue
		}
		for _, pl := range p.Secret.Into {
			if pl.Role != "" || pl.Name != "" {
				return true
			}
		}
	}
	return false
}

// Bound returns where the secret behind ref may go, or nil when it may go
// anywhere (a plain value, or a secret without into:).
func (s *Scenario) Bound(ref string) []SecretPlace {
	p, ok := s.Provides[ref]
	if !ok || p.Secret == nil {
		return nil
	}
	return p.Secret.Into
}

// MarshalJSON prints a provided value; a secret shows only its source.
func (p Provided) MarshalJSON() ([]byte, error) {
	if p.Secret != nil {
		src := map[string]any{}
		if p.Secret.Env != "" {
			src["env"] = p.Secret.Env
		}
		if p.Secret.File != "" {
			src["file"] = p.Secret.File
		}
		if len(p.Secret.Into) > 0 {
			places := make([]string, len(p.Secret.Into))
			for i, pl := range p.Secret.Into {
				places[i] = pl.String()
			}
			src["into"] = places
		}
		return json.Marshal(map[string]any{"secret": src})
	}
	return json.Marshal(p.Value)
}

func (p *Provided) decodeYAML(d *decoder, n *yaml.Node, path string) {
	p.Pos = d.pos(n, path)
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			d.fail(n, path, "a provided value must be a string or {secret: {env: NAME}} / {secret: {file: PATH}}")
			return
		}
		p.Value, _ = d.scalar(n, path)
	case yaml.MappingNode:
		var w struct {
			Secret *SecretSource `yaml:"secret"`
		}
		d.decodeStruct(n, valueOf(&w), path, 1)
		if w.Secret == nil {
			d.fail(n, path, "a provided mapping must be {secret: {env: NAME}} or {secret: {file: PATH}}")
			return
		}
		if (w.Secret.Env == "") == (w.Secret.File == "") {
			d.fail(n, join(path, "secret"), "a secret names exactly one source: env or file")
		}
		p.Secret = w.Secret
	default:
		d.fail(n, path, "want a string or a {secret: …} mapping, got %s", kindName(n))
	}
}

// ClickTarget is a place the scenario author chose: a point in pixels
// relative to the application window's top-left corner, the visible text
// there (read on a fresh capture) or a control's accessible name. Exactly
// one of the three is set (see targets.go).
type ClickTarget struct {
	Pos         Pos    `yaml:"-"`
	X           int    `yaml:"x"`
	Y           int    `yaml:"y"`
	Description string `yaml:"description"`
	// Text is the words a person reads on the target, in one line.
	Text string `yaml:"text"`
	// Within narrows a text target to a region of the window.
	Within *Region `yaml:"within"`
	// Near picks, among several places the text is read, the one nearest
	// to another click target.
	Near string `yaml:"near"`
	// Name is the control's accessible name; Role narrows it.
	Name string `yaml:"name"`
	Role string `yaml:"role"`
}

// CDPWait is a named condition on the page that cdp_wait waits for.
type CDPWait struct {
	Pos     Pos     `yaml:"-"`
	Target  string  `yaml:"target"` // a cdp_targets name
	State   string  `yaml:"state"`  // visible | hidden | present | absent
	URL     string  `yaml:"url"`    // substring the page URL must contain
	Timeout float64 `yaml:"timeout_s"`
}

// WaitCondition is a named condition wait_while waits out. Exactly one of
// its kinds is set.
type WaitCondition struct {
	Pos            Pos    `yaml:"-"`
	ScreenChanging bool   `yaml:"screen_changing"`
	WindowTitle    string `yaml:"window_title"`
	FileMissing    string `yaml:"file_missing"`
	// TextVisible holds while the text is read in the window; TextAbsent
	// while it is not.
	TextVisible string  `yaml:"text_visible"`
	TextAbsent  string  `yaml:"text_absent"`
	Timeout     float64 `yaml:"timeout_s"`
}

// DeclaredTool is a tool the scenario gives the model. Its parameters are
// all enums; each allowed value names one literal command the author wrote.
type DeclaredTool struct {
	Pos         Pos                      `yaml:"-"`
	Description string                   `yaml:"description"`
	Run         string                   `yaml:"run"`
	Command     string                   `yaml:"command"`
	Parameters  map[string]DeclaredParam `yaml:"parameters"`
	// Env is added to the commands' environment. It is where ${NAME}
	// placeholders belong: the shell reads "$NAME" as data, never as code.
	Env     map[string]string `yaml:"env"`
	Budget  int               `yaml:"budget"`
	Timeout float64           `yaml:"timeout_s"`
	// Service is the capacity group the tool's commands call
	// (services.<group> in the operator file); empty: not bounded.
	Service string `yaml:"service"`
	// Check marks the tool as a check of the application: when its last
	// call in a goal run or a session failed, the run is app-failed.
	Check bool `yaml:"check"`
}

// DeclaredParam is one enum parameter of a declared tool: each allowed value
// maps to the literal command a call with that value runs.
type DeclaredParam struct {
	Pos         Pos               `yaml:"-"`
	Description string            `yaml:"description"`
	Values      map[string]string `yaml:"values"`
}

// ParamNames returns the declared tool's parameter names in sorted order,
// the order in which their commands run.
func (t DeclaredTool) ParamNames() []string {
	names := make([]string, 0, len(t.Parameters))
	for n := range t.Parameters {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Commands returns the literal commands a call with args runs, in order.
func (t DeclaredTool) Commands(args map[string]any) ([]string, error) {
	if len(t.Parameters) == 0 {
		return []string{t.Command}, nil
	}
	var cmds []string
	for _, name := range t.ParamNames() {
		v, _ := args[name].(string)
		cmd, ok := t.Parameters[name].Values[v]
		if !ok {
			return nil, fmt.Errorf("parameter %s: %q is not an allowed value", name, v)
		}
		cmds = append(cmds, cmd)
	}
	return cmds, nil
}

// Step is one scripted tool call: the tool's name and its arguments.
type Step struct {
	Pos  Pos
	Tool string
	// Args holds the arguments as written, typed as JSON would type them
	// (string, float64, bool). A scalar step ("press_key: ctrl+l") is
	// stored under the tool's one required argument once validated.
	Args   map[string]any
	ArgPos map[string]Pos
	// Expect holds the checks the step carries, run once its tool has
	// succeeded; a step whose tool is ExpectTool only checks.
	Expect *Expect
	// scalar is the shorthand value before validation assigns it a name.
	scalar *scalarArg
}

type scalarArg struct {
	value any
	pos   Pos
}

func (s *Step) decodeYAML(d *decoder, n *yaml.Node, path string) {
	s.Pos = d.pos(n, path)
	s.Args = map[string]any{}
	s.ArgPos = map[string]Pos{}
	k, v, ok := d.stepTool(s, n, path)
	if !ok || v == nil {
		return
	}
	s.Tool = k.Value
	s.Pos = d.pos(k, path)
	if s.Tool == ExpectTool {
		return
	}
	p := join(path, s.Tool)
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return
		}
		val, ok := d.typedScalar(v, p)
		if ok {
			s.scalar = &scalarArg{value: val, pos: d.pos(v, p)}
		}
	case yaml.MappingNode:
		d.mappingPairs(v, p, func(key string, kn, vn *yaml.Node) {
			vn = d.resolve(vn, join(p, key), 3)
			if vn == nil {
				return
			}
			if vn.Kind != yaml.ScalarNode {
				d.fail(vn, join(p, key), "tool arguments are plain values, got %s", kindName(vn))
				return
			}
			if val, ok := d.typedScalar(vn, join(p, key)); ok {
				s.Args[key] = val
				s.ArgPos[key] = d.pos(kn, join(p, key))
			}
		})
	default:
		d.fail(v, p, "want the tool's arguments as a mapping or its one argument as a value, got %s", kindName(v))
	}
}

// typedScalar converts a scalar node to string, float64 or bool by its YAML
// tag, after placeholder substitution.
func (d *decoder) typedScalar(n *yaml.Node, path string) (any, bool) {
	s, ok := d.scalar(n, path)
	if !ok {
		return nil, false
	}
	switch n.Tag {
	case "!!int", "!!float":
		var f float64
		if _, err := fmt.Sscan(s, &f); err != nil {
			return s, true
		}
		return f, true
	case "!!bool":
		return s == "true", true
	case "!!null":
		return nil, true
	}
	return s, true
}

// MarshalJSON prints a step as the tool call it is.
func (s Step) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{s.Tool: s.Args})
}

// Mode tells scripted runs from goal runs.
func (s *Scenario) Mode() string {
	if s.Goal != "" {
		return "goal"
	}
	return "scripted"
}

// KeyPos returns where a top-level key was written, or the file's start.
func (s *Scenario) KeyPos(key string) Pos {
	if p, ok := s.keyPos[key]; ok {
		return p
	}
	return Pos{File: s.File, Line: 1, Column: 1, Path: key}
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// nameHoldsNoSecret refuses a scenario name that holds a secret's value
// (through ${NAME}): the name is written unredacted where a run's secrets
// cannot be taken out again, in the report directory's name, manifest.json
// and a suite's suite.json and junit.xml. The directory's name is lower
// case, so the comparison ignores case. A secret shorter than
// minNamedSecret (one letter, a short number) is ordinary text in a name,
// not a sign that ${NAME} put it there.
func (v *validator) nameHoldsNoSecret(s *Scenario, o *Operator) {
	const minNamedSecret = 4
	name := strings.ToLower(s.Name)
	for _, secret := range append(s.SecretValues(), o.Credentials()...) {
		if len(secret) >= minNamedSecret && strings.Contains(name, strings.ToLower(secret)) {
			v.failAt("name", "the name holds the value of a secret; it names the report's directory and is written unredacted in summaries, so name the scenario without it")
			return
		}
	}
}

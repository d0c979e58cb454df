package scenarios

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
)

// Lookup reads an environment variable; os.LookupEnv in production.
type Lookup func(name string) (string, bool)

// Files is a scenario and the operator file it runs under, loaded and
// checked against each other.
type Files struct {
	Scenario *Scenario
	Operator *Operator
}

// Load reads and validates a scenario and an operator file (operatorPath
// may be empty for defaults), resolving ${NAME} placeholders, secrets and
// the runtime's environment variables through lookup (nil means the
// process environment). Every problem found is returned together, as
// Problems.
func Load(scenarioPath, operatorPath string, lookup Lookup) (*Files, error) {
	return load(scenarioPath, operatorPath, lookup, loadRun)
}

// A Check validates a decoded scenario in a way the loader cannot on its
// own (with a driver's tables, say). LoadChecked runs it even on a
// scenario that has other problems, so they are all reported together.
type Check func(*Scenario) Problems

// LoadChecked is Load that also runs checks on the scenario; their
// problems are reported with the loader's, except at a step or key the
// loader has already found wrong, where a check would only restate it.
// The checks run when both files could be decoded: a scenario without its
// operator file has steps whose arguments are not settled yet.
func LoadChecked(scenarioPath, operatorPath string, lookup Lookup, checks ...Check) (*Files, error) {
	return load(scenarioPath, operatorPath, lookup, loadRun, checks...)
}

// loadMode is what a scenario is loaded for: a run, a session (whose goal
// an outside agent pursues) or a recording (whose steps an operator
// demonstrates; record.go).
type loadMode int

const (
	loadRun loadMode = iota
	loadSession
	loadRecording
)

func load(scenarioPath, operatorPath string, lookup Lookup, mode loadMode, checks ...Check) (*Files, error) {
	session := mode == loadSession
	if lookup == nil {
		lookup = osLookup
	}
	var all Problems
	op, ps := LoadOperator(operatorPath, lookup)
	all = append(all, ps...)
	var sc *Scenario
	if data, ps := readInput(scenarioPath); ps != nil {
		all = append(all, ps...)
	} else {
		sc, ps = parseScenario(scenarioPath, data, lookup)
		all = append(all, ps...)
		if session && sc != nil && sc.Goal == "" {
			all = append(all, Problem{Pos: sc.KeyPos("steps"), Msg: sessionNeedsGoal})
		}
	}
	if sc != nil && op != nil {
		for _, p := range crossCheck(sc, op) {
			// An agent, not the model, pursues a session's goal.
			if session && p.Msg == goalNeedsModel {
				continue
			}
			all = append(all, p)
		}
		// The checks see the steps as the cross-check left them, with
		// each scalar argument under its name.
		all = append(all, runChecks(sc, all, checks)...)
	}
	if mode == loadRecording {
		all = slices.DeleteFunc(all, recordingTolerates)
	}
	if len(all) > 0 {
		all.Sort()
		return nil, all
	}
	return &Files{Scenario: sc, Operator: op}, nil
}

// runChecks runs checks on a decoded scenario and returns their problems,
// leaving out those under a part of the file (a step, a top-level key)
// that already has one of found.
func runChecks(sc *Scenario, found Problems, checks []Check) Problems {
	wrong := map[string]bool{}
	for _, p := range found {
		wrong[pathRoot(p.Path)] = true
	}
	var out Problems
	for _, check := range checks {
		for _, p := range check(sc) {
			if !wrong[pathRoot(p.Path)] {
				out = append(out, p)
			}
		}
	}
	return out
}

// pathRoot is a key path's first element: "steps[2]" of
// "steps[2].press_key.key".
func pathRoot(path string) string {
	root, _, _ := strings.Cut(path, ".")
	return root
}

// readInput reads a scenario or operator file: a regular file of at most
// maxFileBytes.
func readInput(path string) ([]byte, Problems) {
	data, err := readBounded(path, maxFileBytes)
	if err != nil {
		return nil, Problems{{Pos: Pos{File: path}, Msg: fmt.Sprintf("cannot read: %v", err)}}
	}
	return data, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// LoadScenario reads and validates one scenario file on its own.
func LoadScenario(path string, lookup Lookup) (*Scenario, Problems) {
	data, ps := readInput(path)
	if ps != nil {
		return nil, ps
	}
	return ParseScenario(path, data, lookup)
}

// ParseScenario validates scenario bytes as if read from path. It returns
// either a scenario or problems, never both.
func ParseScenario(path string, data []byte, lookup Lookup) (*Scenario, Problems) {
	s, ps := parseScenario(path, data, lookup)
	if len(ps) > 0 {
		return nil, ps
	}
	return s, nil
}

// parseScenario is ParseScenario that also returns what it could decode
// alongside the problems, so Load can check it against the operator file
// and report every problem at once. The scenario is nil only when
// decoding could not proceed.
func parseScenario(path string, data []byte, lookup Lookup) (*Scenario, Problems) {
	if lookup == nil {
		lookup = osLookup
	}
	root, ps := parseFile(path, data)
	if ps != nil {
		return nil, ps
	}
	d := &decoder{file: path, getenv: lookup, keys: map[string]Pos{}}
	var s Scenario
	d.decode(root, valueOf(&s), "", 0)
	if d.aborted {
		return nil, d.problems
	}
	sum := sha256.Sum256(data)
	s.File, s.SHA256, s.keyPos = path, hex.EncodeToString(sum[:]), d.keys
	v := &validator{file: path, keys: d.keys, substituted: d.substituted}
	v.scenario(&s, lookup)
	s.Warnings = v.warnings
	all := append(d.problems, v.problems...)
	all.Sort()
	return &s, all
}

// LoadOperator reads and validates an operator file; an empty path gives
// the defaults. The runtime's environment variables are applied here.
func LoadOperator(path string, lookup Lookup) (*Operator, Problems) {
	if lookup == nil {
		lookup = osLookup
	}
	var data []byte
	if path != "" {
		var ps Problems
		if data, ps = readInput(path); ps != nil {
			return nil, ps
		}
	}
	return ParseOperator(path, data, lookup)
}

// ParseOperator validates operator bytes as if read from path; empty data
// with an empty path gives the defaults.
func ParseOperator(path string, data []byte, lookup Lookup) (*Operator, Problems) {
	if lookup == nil {
		lookup = osLookup
	}
	var o Operator
	d := &decoder{file: path, getenv: lookup, keys: map[string]Pos{}}
	if path != "" {
		root, ps := parseFile(path, data)
		if ps != nil {
			return nil, ps
		}
		d.decode(root, valueOf(&o), "", 0)
		if d.aborted {
			return nil, d.problems
		}
	}
	o.File, o.keyPos = path, d.keys
	v := &validator{file: path, keys: d.keys}
	v.operator(&o, lookup)
	all := append(d.problems, v.notAt(d.problems)...)
	all.Sort()
	if len(all) > 0 {
		return nil, all
	}
	o.Warnings = v.warnings
	return &o, nil
}

// validator applies the rules a well-formed file must also satisfy.
type validator struct {
	file     string
	keys     map[string]Pos
	problems Problems
	warnings Problems
	// substituted is the decoder's record of placeholders, by key path.
	substituted map[string][]string
	// baselines are the screenshot checks' baseline names seen so far.
	baselines map[string]bool
}

// at returns where key path was written, falling back to its parent's
// position and then the file's start.
func (v *validator) at(path string) Pos {
	for p := path; ; {
		if pos, ok := v.keys[p]; ok {
			pos.Path = path
			return pos
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			return Pos{File: v.file, Line: 1, Column: 1, Path: path}
		}
		p = p[:i]
	}
}

func (v *validator) fail(pos Pos, format string, args ...any) {
	v.problems = append(v.problems, Problem{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) failAt(path, format string, args ...any) {
	v.fail(v.at(path), format, args...)
}

// notAt returns the validator's problems at keys that have none in
// earlier, so a value the decoder refused is not refused again as zero.
func (v *validator) notAt(earlier Problems) Problems {
	bad := map[string]bool{}
	for _, p := range earlier {
		bad[p.Path] = true
	}
	var out Problems
	for _, p := range v.problems {
		if p.Path == "" || !bad[p.Path] {
			out = append(out, p)
		}
	}
	return out
}

// warnAt records something legal but risky, printed without refusing the
// file.
func (v *validator) warnAt(path, format string, args ...any) {
	v.warnings = append(v.warnings, Problem{Pos: v.at(path), Msg: fmt.Sprintf(format, args...)})
}

var toolNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

func (v *validator) scenario(s *Scenario, lookup Lookup) {
	if strings.TrimSpace(s.Name) == "" {
		v.failAt("name", "a scenario needs a name")
	}
	switch {
	case s.App == nil && s.Browser == nil:
		v.failAt("app", "a scenario needs an app to launch (app.command) or a browser")
	case s.App != nil:
		v.app(s.App)
	}
	if s.Browser != nil {
		v.browser(s.Browser)
	}

	switch {
	case s.Goal != "" && len(s.Steps) > 0:
		v.failAt("steps", "a scenario has either a goal or steps, not both")
	case s.Goal == "" && len(s.Steps) == 0:
		v.failAt("goal", "%s", needsGoalOrSteps)
	}
	if len(s.Steps) > MaxSteps {
		v.failAt("steps", "%d steps; a scripted scenario may have at most %d", len(s.Steps), MaxSteps)
	}
	if len(s.Plan) > MaxPlanSteps {
		v.failAt("plan", "%d plan steps; a plan may have at most %d", len(s.Plan), MaxPlanSteps)
	}
	if s.AgenticMaxIterations < 0 {
		v.failAt("agentic_max_iterations", "must be a positive number of model calls")
	}
	if s.AgenticMaxIterations > 0 && s.Goal == "" {
		v.failAt("agentic_max_iterations", "applies only to a goal scenario")
	}

	dir := filepath.Dir(s.File)
	for i, img := range s.ReferenceImages {
		path := index("reference_images", i)
		if s.Goal == "" {
			v.failAt(path, "reference images are shown to the model, so they need a goal scenario")
			break
		}
		if err := checkPNG(s.ResolvePath(img)); err != nil {
			v.failAt(path, "%v", err)
		}
	}
	for _, key := range sortedKeys(s.Provides) {
		p := s.Provides[key]
		if p.Secret == nil {
			continue
		}
		val, err := p.Secret.resolve(dir, lookup)
		if err != nil {
			v.fail(p.Pos, "secret %s: %v", key, err)
			continue
		}
		if s.secrets == nil {
			s.secrets = &secretStore{values: map[string]string{}}
		}
		s.secrets.values[key] = val
	}
	for _, key := range sortedKeys(s.Provides) {
		if sec := s.Provides[key].Secret; sec != nil && sec.Into != nil {
			v.secretPlaces(s, "provides."+key+".secret.into", sec.Into)
		}
	}
	v.clickTargets(s)
	for _, name := range sortedKeys(s.CDPTargets) {
		if strings.TrimSpace(s.CDPTargets[name]) == "" {
			v.failAt("cdp_targets."+name, "a cdp target is a CSS selector and cannot be empty")
		}
	}
	if (len(s.CDPTargets) > 0 || len(s.CDPWaits) > 0) && s.Browser == nil {
		v.failAt("cdp_targets", "cdp_targets and cdp_waits need a browser: section")
	}
	for _, name := range sortedKeys(s.CDPWaits) {
		w := s.CDPWaits[name]
		path := "cdp_waits." + name
		if w.Target == "" && w.URL == "" {
			v.fail(w.Pos, "cdp wait %s: give a target (a cdp_targets name) or a url substring", name)
		}
		if w.Target != "" {
			if _, ok := s.CDPTargets[w.Target]; !ok {
				v.failAt(path+".target", "%q is not a cdp_targets name", w.Target)
			}
		}
		if !oneOf(w.State, "", "visible", "hidden", "present", "absent") {
			v.failAt(path+".state", "want visible, hidden, present or absent, got %q", w.State)
		}
		if w.Timeout < 0 {
			v.failAt(path+".timeout_s", "cannot be negative")
		}
	}
	for _, name := range sortedKeys(s.WaitConditions) {
		w := s.WaitConditions[name]
		kinds := 0
		for _, set := range []bool{w.ScreenChanging, w.WindowTitle != "", w.FileMissing != "", w.TextVisible != "", w.TextAbsent != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			v.fail(w.Pos, "wait condition %s: set exactly one of screen_changing, window_title, file_missing, text_visible, text_absent", name)
		}
		if w.Timeout < 0 {
			v.failAt("wait_conditions."+name+".timeout_s", "cannot be negative")
		}
	}
	for _, name := range sortedKeys(s.Windows) {
		w := s.Windows[name]
		if !toolNameRE.MatchString(name) {
			v.failAt("windows."+name, "a window name is lower-case letters, digits and underscores, starting with a letter")
		}
		if w.Class == "" && w.Title == "" {
			v.fail(w.Pos, "window %s: give a class or a title to find it by", name)
		}
	}
	if len(s.Windows) > 0 && s.App == nil {
		v.failAt("windows", "windows are the application's: they need an app: section")
	}
	for _, name := range sortedKeys(s.Tools) {
		v.declaredTool(name, s.Tools[name])
	}
	v.cdpURLs(s)
	for i := range s.Steps {
		v.expect(i, &s.Steps[i], s)
	}
	v.success(s)
}

// secretPlaces checks a secret's into: list and writes each origin in the
// form destinations are compared in (scheme://host[:port], lower case).
func (v *validator) secretPlaces(s *Scenario, path string, places []SecretPlace) {
	if len(places) == 0 {
		v.failAt(path, "an empty into: lets the secret go nowhere; list the places it may go, or drop into: to allow any")
	}
	for i := range places {
		p := &places[i]
		at := index(path, i)
		if p.CDPTarget == "" && p.Origin == "" && p.Role == "" && p.Name == "" {
			v.failAt(at, "a place names at least one of cdp_target, origin, role, name")
		}
		if p.CDPTarget != "" {
			if _, ok := s.CDPTargets[p.CDPTarget]; !ok {
				v.failAt(at+".cdp_target", "%q is not a cdp_targets name", p.CDPTarget)
			}
		}
		if p.Origin != "" {
			origin, err := parseOrigin(p.Origin)
			if err != nil {
				v.failAt(at+".origin", "%v", err)
			}
			p.Origin = origin
		}
		if p.Role != "" && strings.TrimSpace(p.Role) == "" || p.Name != "" && strings.TrimSpace(p.Name) == "" {
			v.failAt(at, "role and name cannot be blank")
		}
	}
}

// parseOrigin reads a browser origin, scheme://host[:port] with nothing
// after it, and returns it in lower case.
func parseOrigin(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "", fmt.Errorf("not an origin: %v", redactURLError(err))
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return "", fmt.Errorf("an origin is http(s)://host[:port], e.g. https://login.example.com")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return "", fmt.Errorf("an origin is only scheme://host[:port]: no path, query or credentials")
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

func oneOf(s string, options ...string) bool {
	for _, o := range options {
		if s == o {
			return true
		}
	}
	return false
}

func (v *validator) app(a *App) {
	if len(a.Command) == 0 || strings.TrimSpace(a.Command[0]) == "" {
		v.failAt("app.command", "app.command is the argv list to launch, e.g. [xterm, -T, demo]")
	}
	if a.StartupTimeout < 0 {
		v.failAt("app.startup_timeout_s", "cannot be negative")
	}
	if a.HangTimeout < 0 {
		v.failAt("app.hang_timeout_s", "cannot be negative")
	}
	for i, code := range a.SuccessExitCodes {
		if code < 0 || code > 255 {
			v.failAt(index("app.success_exit_codes", i), "an exit code is between 0 and 255, got %d", code)
		}
	}
	if e := a.ExpectExit; e != nil {
		for i, code := range e.Codes {
			if code < 0 || code > 255 {
				v.failAt(index("app.expect_exit.codes", i), "an exit code is between 0 and 255, got %d", code)
			}
		}
		if e.WithinS < 0 {
			v.failAt("app.expect_exit.within_s", "cannot be negative")
		}
		if len(a.SuccessExitCodes) > 0 {
			v.failAt("app.expect_exit", "expect_exit and success_exit_codes both say how the app ends: keep one")
		}
	}
	for i, p := range a.FatalPatterns {
		if _, err := regexp.Compile(p); err != nil {
			v.failAt(index("app.fatal_patterns", i), "not a valid regular expression: %v", err)
		}
	}
	if a.Window != nil && a.Window.Class == "" && a.Window.Title == "" && a.Window.PID != nil && !*a.Window.PID {
		v.failAt("app.window", "with pid: false, give a class or a title to find the window by")
	}
	v.envNames("app.env", a.Env)
	parsed := shellParsedArgs(a.Command)
	for i := range a.Command {
		why, ok := parsed[i]
		if !ok {
			continue
		}
		path := index("app.command", i)
		for _, name := range v.substituted[path] {
			v.failAt(path, "${%s} in %s would paste the value into code, where ';' or '$(…)' in it would run (no placeholder may stand in an argument a shell will parse); pass it as an argument after the script (sh -c '… \"$1\"' sh \"${%s}\") or through app.env", name, why, name)
		}
	}
}

// envNames refuses environment variable names that cannot be set.
func (v *validator) envNames(path string, env map[string]string) {
	for _, k := range sortedKeys(env) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			v.failAt(path+"."+k, "not a valid environment variable name")
		}
	}
}

func (v *validator) browser(b *Browser) {
	switch b.Mode {
	case "", "launch":
		if b.Attach != "" {
			v.failAt("browser.attach", "attach is only for mode: attach")
		}
	case "attach":
		if b.Attach == "" {
			v.failAt("browser.attach", "mode: attach needs attach: the DevTools address, e.g. http://127.0.0.1:9222")
		} else if err := checkURL(b.Attach); err != nil {
			v.failAt("browser.attach", "%v", err)
		}
	default:
		v.failAt("browser.mode", "want launch or attach, got %q", b.Mode)
	}
	if b.StartURL != "" {
		if _, err := url.Parse(b.StartURL); err != nil {
			v.failAt("browser.start_url", "not a URL: %v", err)
		}
	}
}

func (v *validator) declaredTool(name string, t DeclaredTool) {
	path := "tools." + name
	if !toolNameRE.MatchString(name) {
		v.failAt(path, "a tool name is lower-case letters, digits and underscores, starting with a letter")
	}
	if IsBuiltin(name) {
		v.failAt(path, "%s is a built-in tool; a declared tool needs another name", name)
	}
	if t.Run != "shell" {
		v.failAt(path+".run", "the only kind of declared tool is run: shell")
	}
	if t.Budget < 0 {
		v.failAt(path+".budget", "a budget is a number of calls and cannot be negative")
	}
	if t.Timeout < 0 {
		v.failAt(path+".timeout_s", "cannot be negative")
	}
	v.serviceName(path+".service", t.Service)
	v.envNames(path+".env", t.Env)
	if len(t.Parameters) == 0 {
		if strings.TrimSpace(t.Command) == "" {
			v.failAt(path, "a declared tool without parameters needs command: the literal command it runs")
		}
		return
	}
	if t.Command != "" {
		v.failAt(path+".command", "with parameters, each allowed value names its command under parameters.<name>.values; drop command:")
	}
	for _, pn := range t.ParamNames() {
		p := t.Parameters[pn]
		ppath := path + ".parameters." + pn
		if !toolNameRE.MatchString(pn) {
			v.failAt(ppath, "a parameter name is lower-case letters, digits and underscores")
		}
		if len(p.Values) == 0 {
			v.failAt(ppath, "a declared tool's parameters are enums: list the allowed values under values:, each with the literal command it runs")
		}
		for _, val := range sortedKeys(p.Values) {
			if strings.TrimSpace(p.Values[val]) == "" {
				v.failAt(ppath+".values."+val, "allowed value %q has no command", val)
			}
		}
	}
}

func (v *validator) operator(o *Operator, lookup Lookup) {
	r := o.Runner
	for _, c := range []struct {
		path string
		bad  bool
	}{
		{"runner.max_iterations", r.MaxIterations < 0},
		{"runner.max_retries_per_step", r.MaxRetriesPerStep < 0},
		{"runner.max_tool_errors", r.MaxToolErrors < 0},
		{"runner.max_hold_s", r.MaxHoldS < 0},
		{"runner.wait_tool_max_s", r.WaitToolMaxS < 0},
		{"runner.grounding_attempts", r.GroundingAttempts < 0},
		{"runner.settle_interval_ms", r.SettleIntervalMS < 0},
		{"runner.settle_cap_ms", r.SettleCapMS < 0},
		{"runner.settle_quiet_ms", r.SettleQuietMS < 0},
		{"runner.settle_response_ms", r.SettleResponseMS < 0},
		{"model.timeout", o.Model.Timeout < 0},
		{"model.retry", o.Model.Retry != nil && *o.Model.Retry < 0},
		{"model.disable_after", o.Model.DisableAfter < 0},
		{"memory.keep_images", o.Memory.KeepImages < 0},
		{"memory.reply_max_bytes", o.Memory.ReplyMaxBytes < 0},
		{"runner.app_log_max_bytes", r.AppLogMaxBytes < 0},
		{"inbox.answer_timeout_s", o.Inbox.AnswerTimeoutS < 0},
	} {
		if c.bad {
			v.failAt(c.path, "cannot be negative")
		}
	}
	if r.GroundingAttempts > 10 {
		v.failAt("runner.grounding_attempts", "at most 10 locate attempts per call")
	}
	if r.MaxIterations > 500 {
		v.failAt("runner.max_iterations", "at most 500 model calls per loop")
	}
	s := o.Desktop
	if s.Width != 0 && (s.Width < 320 || s.Width > 7680) || s.Height != 0 && (s.Height < 240 || s.Height > 4320) {
		v.failAt("session", "the screen must be between 320x240 and 7680x4320")
	}
	if !oneOf(s.WindowManager, "", "openbox", "none") {
		v.failAt("session.window_manager", "want openbox or none, got %q", s.WindowManager)
	}
	switch {
	case !oneOf(s.Desktop, "", DesktopX11, DesktopWayland):
		v.failAt("session.desktop", "want x11 or wayland, got %q", s.Desktop)
	case s.Desktop == DesktopWayland && s.Display != "":
		v.failAt("session.display", "a Wayland session is always the run's own compositor; session.display borrows an X display (remove one of session.display and session.desktop: wayland)")
	case s.Desktop == DesktopWayland && s.WindowManager != "":
		v.failAt("session.window_manager", "a Wayland session's compositor (sway) manages its windows; session.window_manager is for the X11 session")
	}
	if s.Home != "" && s.Isolate != nil && !*s.Isolate {
		v.failAt("session.home", "session.home is the isolated HOME; with isolate: false the app keeps the runtime's")
	}
	if !oneOf(fmt.Sprint(s.Depth), "0", "16", "24") {
		v.failAt("session.depth", "want 16 or 24, got %d", s.Depth)
	}
	if !oneOf(o.Cache, "", "read-write", "read-only", "off") {
		v.failAt("cache", "want read-write, read-only or off, got %q", o.Cache)
	}
	if !oneOf(o.Memory.EmitPolicy, "", "always", "on_change") {
		v.failAt("memory.emit_policy", "want always or on_change, got %q", o.Memory.EmitPolicy)
	}
	m := o.Model
	if m.Endpoint == "" {
		if env, ok := lookup(EnvVisionEndpoint); ok && env != "" {
			o.Model.Endpoint, o.EndpointFromEnv = env, true
		}
	}
	if o.Model.Endpoint != "" {
		if err := checkURL(o.Model.Endpoint); err != nil {
			if o.EndpointFromEnv {
				v.fail(Pos{File: "environment", Path: EnvVisionEndpoint}, "%v", err)
			} else {
				v.failAt("model.endpoint", "%v", err)
			}
		}
	}
	if !oneOf(m.ReasoningEffort, "", "none", "minimal", "low", "medium", "high", "xhigh", "max") {
		v.failAt("model.reasoning_effort", "want none, minimal, low, medium, high, xhigh or max, got %q", m.ReasoningEffort)
	}
	for _, c := range []struct {
		path   string
		val    *float64
		lo, hi float64
	}{
		{"model.temperature", m.Temperature, 0, 2},
		{"model.top_p", m.TopP, 1e-9, 1},
		{"model.repetition_penalty", m.RepetitionPenalty, 1e-9, 100},
		{"model.presence_penalty", m.PresencePenalty, -2, 2},
	} {
		if c.val != nil && (*c.val < c.lo || *c.val > c.hi) {
			v.failAt(c.path, "out of range: %g", *c.val)
		}
	}
	if m.MaxTokens != nil && *m.MaxTokens <= 0 {
		v.failAt("model.max_tokens", "must be positive")
	}
	if m.TopK != nil && *m.TopK <= 0 {
		v.failAt("model.top_k", "must be positive")
	}
	if !oneOf(m.ToolChoice, "", "auto", "required", "none") {
		v.failAt("model.tool_choice", "want auto, required or none, got %q", m.ToolChoice)
	}
	if n := m.MaxContextLength; n != nil {
		reserve, which := DefaultContextReserve, "the default reserve when model.max_tokens is unset"
		if m.MaxTokens != nil {
			reserve, which = *m.MaxTokens, "model.max_tokens"
		}
		switch {
		case *n <= 0:
			v.failAt("model.max_context_length", "must be positive")
		case *n <= reserve+512:
			// The reply's tokens and a margin for the prompt must fit.
			v.failAt("model.max_context_length", "must exceed %d (%s) plus 512, got %d", reserve, which, *n)
		}
	}
	if raw, ok := lookup(EnvDeadline); ok && raw != "" {
		if d, err := parseDeadline(raw); err != nil {
			v.fail(Pos{File: "environment", Path: EnvDeadline}, "%v", err)
		} else {
			o.DeadlineS = d
		}
	}
	if s.Display != "" {
		if err := CheckDisplay(s.Display); err != nil {
			v.failAt("session.display", "%v", err)
		}
	}
	v.webhook(o)
	if addr := o.Inbox.Listen; addr != "" {
		exposed, err := checkListen(addr)
		switch {
		case err != nil:
			v.failAt("inbox.listen", "%v", err)
		case exposed:
			v.warnAt("inbox.listen", "%s is reachable from other machines; anyone there with the token can answer questions (use 127.0.0.1:PORT to keep it local)", addr)
		}
		if !o.HasInbox() {
			v.failAt("inbox.listen", "an inbox needs inbox.session_token or inbox.messaging_token to authenticate its HTTP surface")
		}
	}
	seen := map[string]bool{}
	for i, name := range o.Tools.Disabled {
		path := index("tools.disabled", i)
		if !IsBuiltin(name) {
			v.failAt(path, "%q is not a built-in tool (built-ins: %s); declared tools cannot be disabled", name, strings.Join(BuiltinNames(), ", "))
		}
		if seen[name] {
			v.failAt(path, "%s is listed twice", name)
		}
		seen[name] = true
	}
	v.services(o)
	o.applyDefaults()
}

// crossCheck applies the rules that need both files: steps against the
// tool catalogue, tools.disabled against what the scenario uses, and a goal
// against the model endpoint.
func crossCheck(s *Scenario, o *Operator) Problems {
	v := &validator{file: s.File, keys: s.keyPos}
	if s.Goal != "" && !o.HasModel() {
		v.failAt("goal", "%s", goalNeedsModel)
	}
	v.nameHoldsNoSecret(s, o)
	catalog := Catalog(s, o)
	disabled := map[string]bool{}
	for _, n := range o.Tools.Disabled {
		disabled[n] = true
	}
	for i := range s.Steps {
		v.step(i, &s.Steps[i], catalog, o, disabled)
	}
	v.clickTargetsOnScreen(s, o)
	if o.Desktop.Desktop == DesktopWayland && s.Browser != nil {
		v.failAt("browser", "%s", BrowserNeedsX11)
	}
	ov := &validator{file: o.File, keys: nil}
	ov.stranded(catalog, o, disabled)
	for i := range ov.problems {
		if o.File != "" {
			ov.problems[i].Pos = Pos{File: o.File, Line: o.Tools.Pos.Line, Column: o.Tools.Pos.Column, Path: "tools.disabled"}
		}
	}
	return append(v.problems, ov.problems...)
}

// stranded refuses a tools.disabled list that leaves an input tool with no
// way to satisfy its observation prerequisite.
func (v *validator) stranded(catalog map[string]ToolSpec, o *Operator, disabled map[string]bool) {
	observer := false
	for _, n := range observerNames {
		if !disabled[n] {
			observer = true
		}
	}
	if observer {
		return
	}
	var strandedTools []string
	for _, t := range sortedSpecs(catalog) {
		if t.NeedsObservation && !disabled[t.Name] && (t.Presence != ModelEndpoint || o.HasModel()) {
			strandedTools = append(strandedTools, t.Name)
		}
	}
	if len(strandedTools) > 0 {
		v.fail(Pos{Path: "tools.disabled"}, "disabling %s strands %s: each needs an observation first; keep one of them or disable these too",
			strings.Join(observerNames, " and "), strings.Join(strandedTools, ", "))
	}
}

func (v *validator) step(i int, st *Step, catalog map[string]ToolSpec, o *Operator, disabled map[string]bool) {
	path := index("steps", i)
	spec, ok := catalog[st.Tool]
	if !ok {
		v.fail(st.Pos, "step %d: unknown tool %q (tools: %s)", i+1, st.Tool, strings.Join(sortedToolNames(catalog), ", "))
		return
	}
	if disabled[st.Tool] {
		v.fail(st.Pos, "step %d: %s is disabled by the operator file (tools.disabled)", i+1, st.Tool)
	}
	if spec.Presence == ModelEndpoint && !o.HasModel() {
		v.fail(st.Pos, "step %d: %s needs a model: set %s or model.endpoint", i+1, st.Tool, EnvVisionEndpoint)
	}
	if spec.Presence == Windows && len(spec.Params[0].Enum) == 0 {
		v.fail(st.Pos, "step %d: %s acts on a window the scenario names: declare it under windows:", i+1, st.Tool)
		return
	}
	if st.scalar != nil {
		req := spec.Required()
		if len(req) != 1 {
			v.fail(st.scalar.pos, "step %d: %s takes %d required arguments; write them as a mapping", i+1, st.Tool, len(req))
			return
		}
		st.Args[req[0]] = st.scalar.value
		st.ArgPos[req[0]] = st.scalar.pos
		st.scalar = nil
	}
	if expectation, _ := st.Args["expectation"].(string); st.Tool == "check_expectation" && !o.HasModel() && len(QuotedTexts(expectation)) == 0 {
		v.fail(st.Pos, "step %d: %s needs a model, or an expectation that quotes the text to read (the dialog says \"Saved\"): set %s or model.endpoint", i+1, st.Tool, EnvVisionEndpoint)
	}
	_, hasExpect := st.Args["expect"]
	if st.Tool == "click_grounded" && !hasExpect {
		v.fail(st.Pos, "step %d: a scripted click_grounded needs expect: the change the click should cause", i+1)
	}
	for _, msg := range CheckArgs(spec, st.Args) {
		if st.Tool == "click_grounded" && msg.Param == "expect" && !hasExpect {
			continue // said above, in the scripted form's words
		}
		pos := st.Pos
		if p, ok := st.ArgPos[msg.Param]; ok {
			pos = p
		}
		pos.Path = path + "." + st.Tool
		if msg.Param != "" {
			pos.Path += "." + msg.Param
		}
		v.fail(pos, "step %d: %s", i+1, msg.Text)
	}
}

func sortedToolNames(m map[string]ToolSpec) []string { return sortedKeys(m) }

// ArgProblem is one way a tool call's arguments break the tool's schema.
type ArgProblem struct {
	Param string
	Text  string
}

// CheckArgs checks arguments against a tool's schema: unknown keys,
// required keys, types, enums and numeric bounds. The guards use it for
// model calls and the loader for scripted steps, so both refuse the same
// things with the same words.
func CheckArgs(spec ToolSpec, args map[string]any) []ArgProblem {
	var out []ArgProblem
	for _, k := range sortedKeys(args) {
		if _, ok := spec.Param(k); !ok {
			known := make([]string, len(spec.Params))
			for i, p := range spec.Params {
				known[i] = p.Name
			}
			msg := fmt.Sprintf("%s takes no argument %s", spec.Name, quoteShort(k))
			if len(known) > 0 {
				msg += fmt.Sprintf(" (arguments: %s)", strings.Join(known, ", "))
			}
			out = append(out, ArgProblem{Param: k, Text: msg})
		}
	}
	for _, p := range spec.Params {
		val, present := args[p.Name]
		if !present || val == nil {
			if p.Required {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s needs %s", spec.Name, p.Name)})
			}
			continue
		}
		switch p.Type {
		case "string":
			s, ok := val.(string)
			if !ok {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s must be a string", spec.Name, p.Name)})
				continue
			}
			if len(p.Enum) > 0 && !oneOf(s, p.Enum...) {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s: %s is not one of %s", spec.Name, p.Name, quoteShort(s), strings.Join(p.Enum, ", "))})
			}
			if p.Name == "ref" && len(p.Enum) == 0 {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.ref: %s is not provided (the scenario's provides: defines no values)", spec.Name, quoteShort(s))})
			}
		case "number", "integer":
			f, ok := val.(float64)
			if !ok {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s must be a number", spec.Name, p.Name)})
				continue
			}
			if p.Type == "integer" && f != float64(int64(f)) {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s must be a whole number", spec.Name, p.Name)})
			}
			if p.Min != nil && f < *p.Min || p.Max != nil && f > *p.Max {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s: %g is outside %s", spec.Name, p.Name, f, bounds(p))})
			}
		case "boolean":
			if _, ok := val.(bool); !ok {
				out = append(out, ArgProblem{Param: p.Name, Text: fmt.Sprintf("%s.%s must be true or false", spec.Name, p.Name)})
			}
		}
	}
	return out
}

func bounds(p Param) string {
	switch {
	case p.Min != nil && p.Max != nil:
		return fmt.Sprintf("[%g, %g]", *p.Min, *p.Max)
	case p.Min != nil:
		return fmt.Sprintf("≥ %g", *p.Min)
	default:
		return fmt.Sprintf("≤ %g", *p.Max)
	}
}

// checkURL accepts http(s) URLs without embedded credentials.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", redactURLError(err))
	}
	if u.User != nil {
		return fmt.Errorf("the URL embeds credentials; put the key in model.key (e.g. key: ${MODEL_API_KEY})")
	}
	if u.RawQuery != "" || u.ForceQuery {
		// Keys hide in queries (?api_key=…); treat one like user:password
		// and never repeat it.
		return fmt.Errorf("the URL has a query string, which may carry credentials; drop it and put the key in model.key (e.g. key: ${MODEL_API_KEY})")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("want an http or https URL with a host")
	}
	return nil
}

// redactURLError keeps a URL parse error from echoing the URL, which may
// hold credentials.
func redactURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// resolve reads a secret's value. A relative file is read from dir, the
// scenario's directory.
func (s *SecretSource) resolve(dir string, lookup Lookup) (string, error) {
	if s.Env != "" {
		v, ok := lookup(s.Env)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", s.Env)
		}
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty", s.Env)
		}
		return v, nil
	}
	path := s.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	b, err := readBounded(path, maxSecretBytes)
	if err != nil {
		return "", fmt.Errorf("read secret file: %v", err)
	}
	val := strings.TrimRight(string(b), "\r\n")
	if val == "" {
		return "", fmt.Errorf("secret file %s is empty", s.File)
	}
	return val, nil
}

// checkPNG reports whether path is a readable PNG file.
func checkPNG(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("cannot read %s: %v", path, unwrapPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxImageBytes {
		return fmt.Errorf("%s is %d bytes; a reference image is at most %d", path, st.Size(), maxImageBytes)
	}
	head := make([]byte, 8)
	if _, err := f.Read(head); err != nil || string(head) != "\x89PNG\r\n\x1a\n" {
		return fmt.Errorf("%s is not a PNG file", path)
	}
	return nil
}

// ResolvePath resolves a path written in the scenario against the
// scenario file's directory.
func (s *Scenario) ResolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.File), p)
}

// Package report writes a run's report directory (report.json,
// events.jsonl, screens/, app.log) and derives report.json from the event
// stream, so the summary, the console and the replay never disagree.
package report

import (
	"strings"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// Schema is report.json's schema name.
const Schema = "kasmrt.report/v1"

// Report is report.json.
type Report struct {
	Schema       string                `json:"schema"`
	Scenario     ScenarioInfo          `json:"scenario"`
	Mode         string                `json:"mode"`
	Goal         string                `json:"goal,omitempty"`
	Plan         []string              `json:"plan"`
	Verdict      events.Verdict        `json:"verdict"`
	Outcome      events.Outcome        `json:"outcome"`
	Reasons      []string              `json:"reasons"`
	ModelVerdict *ModelVerdict         `json:"model_verdict"`
	Concerns     []string              `json:"concerns"`
	Checks       Checks                `json:"checks"`
	Loop         Loop                  `json:"loop"`
	Tools        []string              `json:"tools"`
	Steps        []Step                `json:"steps"`
	Grounding    []Grounding           `json:"grounding"`
	Questions    []events.Question     `json:"questions"`
	Steering     []events.Steer        `json:"steering"`
	Budgets      []events.Budget       `json:"budgets"`
	Usage        Usage                 `json:"usage"`
	Display      events.DisplayStarted `json:"session"`
	Timing       Timing                `json:"timing"`
	Screens      int                   `json:"screens"`
	// Final is the capture taken as the run ended; null when the run never
	// had a display.
	Final *Final `json:"final"`
	// Startup is set when the application's window did not appear in time:
	// what was on the display then.
	Startup *Startup `json:"startup,omitempty"`
	// Hung is set when the application stopped answering: its windows
	// and its threads then.
	Hung *Hung `json:"hung,omitempty"`
	// Browser is set when the page's console said anything.
	Browser *Browser `json:"browser,omitempty"`
	// Baselines are the screenshot checks' comparisons, in order.
	Baselines []Baseline `json:"baselines,omitempty"`
	// Cache is the action cache's account of a goal run that used it:
	// hits, misses, the step where the model took over, the model calls
	// saved, and whether the run's trajectory was stored.
	Cache *Cache `json:"cache,omitempty"`
}

// Baseline is one screenshot check's comparison with its baseline: the
// event's payload and the step that held the check.
type Baseline struct {
	Step int `json:"step"`
	events.Baseline
}

// Cache is the last cache event's account.
type Cache struct {
	events.CacheReport
	// Account says it in words.
	Account string `json:"account"`
}

// ScenarioInfo identifies the scenario that ran.
type ScenarioInfo struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// ModelVerdict is the model's record_verdict, which the runtime weighs but
// never lets upgrade a failure.
type ModelVerdict struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// Checks are the deterministic checks at the end of the run.
type Checks struct {
	ProcessAlive  *bool   `json:"process_alive"`
	WindowPresent *bool   `json:"window_present"`
	FatalPattern  *string `json:"fatal_pattern"`
	// ExpectedExit is set when the scenario expects the app to exit
	// (app.expect_exit).
	ExpectedExit *bool `json:"expected_exit,omitempty"`
	// AppResponsive is set once the runtime asked the application whether
	// it still answers (its windows take part in _NET_WM_PING).
	AppResponsive *bool `json:"app_responsive,omitempty"`
	// Declared holds the checks the scenario declared, by name: a goal's
	// success criteria (success.*) and the declared tools marked
	// check: true (tool_check.*).
	Declared map[string]bool   `json:"declared,omitempty"`
	Evidence map[string]string `json:"evidence,omitempty"`
}

// Loop summarises the agentic loop (zeros for a scripted run).
type Loop struct {
	Iterations int    `json:"iterations"`
	Malformed  int    `json:"malformed"`
	ToolErrors int    `json:"tool_errors"`
	Rescued    int    `json:"rescued"`
	Ended      string `json:"ended"`
}

// Step is one tool call as the runtime saw it.
type Step struct {
	N          int            `json:"n"`
	Tool       string         `json:"tool"`
	Args       map[string]any `json:"args"`
	Source     events.Source  `json:"source"`
	Status     events.Status  `json:"status"`
	Message    string         `json:"message"`
	Screen     string         `json:"screen"`
	Started    time.Time      `json:"started"`
	DurationMS int64          `json:"duration_ms"`
}

// Grounding is one locate-and-verify attempt.
type Grounding struct {
	Step        int           `json:"step"`
	Attempt     int           `json:"attempt"`
	Description string        `json:"description"`
	Expect      string        `json:"expect"`
	Point       *events.Point `json:"point"`
	Outcome     string        `json:"outcome"`
	Reason      string        `json:"reason,omitempty"`
	Pass        int           `json:"pass,omitempty"`
	Crop        *events.Rect  `json:"crop,omitempty"`
}

// Final is the run's last capture: the screen as the application was left,
// or why there is none (the display was gone).
type Final struct {
	Screen string         `json:"screen"`
	T      time.Time      `json:"t"`
	Width  int            `json:"width,omitempty"`
	Height int            `json:"height,omitempty"`
	Ending events.Outcome `json:"ending"`
	Note   string         `json:"note,omitempty"`
}

// Usage sums the numeric usage fields of every model response.
type Usage struct {
	Total map[string]float64 `json:"total"`
	Calls int                `json:"calls"`
}

// Timing is when the run started and ended, and its deadline.
type Timing struct {
	Started   time.Time  `json:"started"`
	Ended     *time.Time `json:"ended"`
	DeadlineS float64    `json:"deadline_s"`
}

// Builder folds events into a Report. Feed it every event in order.
type Builder struct {
	r       Report
	started map[int]time.Time
}

// NewBuilder returns a builder with every list present and empty, so a
// report of a run that ended early still has all its fields.
func NewBuilder() *Builder {
	return &Builder{
		r: Report{
			Schema: Schema, Plan: []string{}, Reasons: []string{}, Concerns: []string{},
			Tools: []string{}, Steps: []Step{}, Grounding: []Grounding{},
			Questions: []events.Question{}, Steering: []events.Steer{}, Budgets: []events.Budget{},
			Usage:  Usage{Total: map[string]float64{}},
			Checks: Checks{Evidence: map[string]string{}},
		},
		started: map[int]time.Time{},
	}
}

// Event folds one event into the report.
func (b *Builder) Event(e events.Event) {
	r := &b.r
	switch e.Kind {
	case events.KindRunStarted:
		r.Timing.Started = e.T
		d, ok := events.DataOf[events.RunStarted](e)
		if !ok {
			break
		}
		r.Scenario = ScenarioInfo{Name: d.Scenario, File: d.File, SHA256: d.SHA256}
		r.Mode, r.Goal = d.Mode, d.Goal
		r.Plan = orList(d.Plan, r.Plan)
		r.Tools = orList(d.Tools, r.Tools)
		r.Timing.DeadlineS = d.DeadlineS
	case events.KindTools:
		if d, ok := events.DataOf[events.ToolList](e); ok {
			r.Tools = orList(d.Tools, r.Tools)
		}
	case events.KindDisplayStarted:
		if d, ok := events.DataOf[events.DisplayStarted](e); ok {
			r.Display = d
		}
	case events.KindScreen:
		r.Screens++
	case events.KindFinal:
		if e.Screen != "" {
			r.Screens++
		}
		r.Final = &Final{Screen: e.Screen, T: e.T, Note: e.Message}
		if d, ok := events.DataOf[events.FinalCapture](e); ok {
			r.Final.Width, r.Final.Height, r.Final.Ending = d.Width, d.Height, d.Ending
		}
	case events.KindAppWindows:
		r.Startup = startupFrom(e)
	case events.KindAppHung:
		r.Hung = hungFrom(e)
	case events.KindConsole, events.KindConsoleSummary:
		r.Browser = consoleInto(r.Browser, e)
	case events.KindBaseline:
		if d, ok := events.DataOf[events.Baseline](e); ok {
			r.Baselines = append(r.Baselines, Baseline{Step: e.Step, Baseline: d})
		}
	case events.KindStepStarted:
		b.started[e.Step] = e.T
	case events.KindStepEnded:
		b.stepEnded(e)
	case events.KindGrounding:
		if g := e.Grounding; g != nil {
			r.Grounding = append(r.Grounding, Grounding{Step: g.Step, Attempt: g.Attempt, Description: g.Description,
				Expect: g.Expect, Point: g.Point, Outcome: g.Outcome, Reason: g.Reason, Pass: g.Pass, Crop: g.Crop})
		}
	case events.KindBudget:
		r.Budgets = e.Budgets
	case events.KindConcern:
		r.Concerns = append(r.Concerns, e.Message)
	case events.KindCheck:
		if c := e.Check; c != nil {
			r.Checks.fold(*c)
		}
	case events.KindQuestion:
		if e.Question != nil {
			r.Questions = append(r.Questions, *e.Question)
		}
	case events.KindAnswer:
		if q := e.Question; q != nil {
			r.answer(*q)
		}
	case events.KindSteer:
		if e.Steer != nil {
			r.Steering = append(r.Steering, *e.Steer)
		}
	case events.KindModelReply:
		r.Usage.Calls++
		for k, v := range e.Usage {
			r.Usage.Total[k] += v
		}
	case events.KindCache:
		r.Cache = &Cache{Account: e.Message}
		if d, ok := events.DataOf[events.CacheReport](e); ok {
			r.Cache.CacheReport = d
		}
	case events.KindLoopEnded:
		r.Loop = Loop{Ended: e.Message}
		if d, ok := events.DataOf[events.LoopEnded](e); ok {
			r.Loop.Iterations, r.Loop.Malformed, r.Loop.ToolErrors, r.Loop.Rescued = d.Iterations, d.Malformed, d.ToolErrors, d.Rescued
		}
	case events.KindVerdict:
		if v := e.Verdict; v != nil {
			r.Verdict, r.Outcome = v.Verdict, v.Outcome
			r.Reasons = append([]string{}, v.Reasons...)
		}
	case events.KindRunEnded:
		t := e.T
		r.Timing.Ended = &t
	case events.KindTakeoverStarted, events.KindTakeoverEnded:
		// A takeover's account is in events.jsonl and the concern it
		// raised; report.json keeps no section of its own for it.
	case events.KindAppLaunched, events.KindAppWindow, events.KindAppExited, events.KindProposal,
		events.KindModelRequest, events.KindModelRetry, events.KindModelFailed, events.KindModelDisabled,
		events.KindCapacityWait, events.KindCapacityAcquired, events.KindRespond, events.KindLog:
		// Not summarised in report.json: what they say is in
		// events.jsonl, and the checks, the verdict's reasons and the
		// usage already count what the run made of them.
	}
}

// stepEnded folds a step's end, and the model's verdict when the step
// recorded one.
func (b *Builder) stepEnded(e events.Event) {
	started, ok := b.started[e.Step]
	if !ok {
		started = e.T.Add(-time.Duration(e.DurationMS) * time.Millisecond)
	}
	args := e.Args
	if args == nil {
		args = map[string]any{}
	}
	b.r.Steps = append(b.r.Steps, Step{N: e.Step, Tool: e.Tool, Args: args, Source: e.Source, Status: e.Status,
		Message: e.Message, Screen: e.Screen, Started: started, DurationMS: e.DurationMS})
	if e.Tool == "record_verdict" && e.Status == events.StatusOK {
		verdict, _ := e.Args["verdict"].(string)
		reason, _ := e.Args["reason"].(string)
		b.r.ModelVerdict = &ModelVerdict{Verdict: verdict, Reason: reason}
	}
}

// fold records a check's result, and its evidence when it has one.
func (cs *Checks) fold(c events.Check) {
	ok := c.OK
	switch c.Name {
	case "process_alive":
		cs.ProcessAlive = &ok
	case "window_present":
		cs.WindowPresent = &ok
	case "expected_exit":
		cs.ExpectedExit = &ok
	case "app_responsive":
		cs.AppResponsive = &ok
	case "fatal_pattern":
		if !c.OK {
			line := c.Evidence
			cs.FatalPattern = &line
		}
	default:
		if strings.HasPrefix(c.Name, "success.") || strings.HasPrefix(c.Name, "tool_check.") {
			if cs.Declared == nil {
				cs.Declared = map[string]bool{}
			}
			cs.Declared[c.Name] = ok
		}
	}
	if c.Evidence != "" {
		cs.Evidence[c.Name] = c.Evidence
	}
}

// answer replaces the question the answer is for with its answered form.
func (r *Report) answer(q events.Question) {
	for i := range r.Questions {
		if r.Questions[i].ID == q.ID {
			r.Questions[i] = q
		}
	}
}

// Report returns the report folded so far.
func (b *Builder) Report() Report { return b.r }

// Fold builds a report from a whole event stream, e.g. a killed run's
// events.jsonl.
func Fold(evs []events.Event) Report {
	b := NewBuilder()
	for _, e := range evs {
		b.Event(e)
	}
	return b.Report()
}

// orList is list, or def when the event carried none.
func orList(list, def []string) []string {
	if list == nil {
		return def
	}
	return list
}

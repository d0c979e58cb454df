// Package report writes a run's report directory (report.json,
// events.jsonl, screens/, app.log) and derives report.json from the event
// stream, so the summary, the console and the replay never disagree.
package report

import (
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
)

// Schema is report.json's schema name.
const Schema = "kasmrt.report/v1"

// Report is report.json.
type Report struct {
	Schema       string            `json:"schema"`
	Scenario     ScenarioInfo      `json:"scenario"`
	Mode         string            `json:"mode"`
	Goal         string            `json:"goal,omitempty"`
	Plan         []string          `json:"plan"`
	Verdict      string            `json:"verdict"`
	Outcome      string            `json:"outcome"`
	Reasons      []string          `json:"reasons"`
	ModelVerdict *ModelVerdict     `json:"model_verdict"`
	Concerns     []string          `json:"concerns"`
	Checks       Checks            `json:"checks"`
	Loop         Loop              `json:"loop"`
	Tools        []string          `json:"tools"`
	Steps        []Step            `json:"steps"`
	Grounding    []Grounding       `json:"grounding"`
	Questions    []events.Question `json:"questions"`
	Steering     []events.Steer    `json:"steering"`
	Budgets      []events.Budget   `json:"budgets"`
	Usage        Usage             `json:"usage"`
	Session      map[string]any    `json:"session"`
	Timing       Timing            `json:"timing"`
	Screens      int               `json:"screens"`
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
	ProcessAlive  *bool             `json:"process_alive"`
	WindowPresent *bool             `json:"window_present"`
	FatalPattern  *string           `json:"fatal_pattern"`
	Evidence      map[string]string `json:"evidence,omitempty"`
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
	Source     string         `json:"source"`
	Status     string         `json:"status"`
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
			Usage: Usage{Total: map[string]float64{}}, Session: map[string]any{},
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
		r.Scenario = ScenarioInfo{Name: str(e.Data, "scenario"), File: str(e.Data, "file"), SHA256: str(e.Data, "sha256")}
		r.Mode, r.Goal = str(e.Data, "mode"), str(e.Data, "goal")
		r.Plan = strs(e.Data, "plan", r.Plan)
		r.Tools = strs(e.Data, "tools", r.Tools)
		if d, ok := e.Data["deadline_s"].(float64); ok {
			r.Timing.DeadlineS = d
		}
	case events.KindTools:
		r.Tools = strs(e.Data, "tools", r.Tools)
	case events.KindSessionStarted:
		for k, v := range e.Data {
			r.Session[k] = v
		}
	case events.KindScreen:
		r.Screens++
	case events.KindStepStarted:
		b.started[e.Step] = e.T
	case events.KindStepEnded:
		started, ok := b.started[e.Step]
		if !ok {
			started = e.T.Add(-time.Duration(e.DurationMS) * time.Millisecond)
		}
		args := e.Args
		if args == nil {
			args = map[string]any{}
		}
		r.Steps = append(r.Steps, Step{N: e.Step, Tool: e.Tool, Args: args, Source: e.Source, Status: e.Status,
			Message: e.Message, Screen: e.Screen, Started: started, DurationMS: e.DurationMS})
		if e.Tool == "record_verdict" && e.Status == events.StatusOK {
			verdict, _ := e.Args["verdict"].(string)
			reason, _ := e.Args["reason"].(string)
			r.ModelVerdict = &ModelVerdict{Verdict: verdict, Reason: reason}
		}
	case events.KindGrounding:
		if g := e.Grounding; g != nil {
			r.Grounding = append(r.Grounding, Grounding{Step: g.Step, Attempt: g.Attempt, Description: g.Description,
				Expect: g.Expect, Point: g.Point, Outcome: g.Outcome, Reason: g.Reason})
		}
	case events.KindBudget:
		r.Budgets = e.Budgets
	case events.KindConcern:
		r.Concerns = append(r.Concerns, e.Message)
	case events.KindCheck:
		if c := e.Check; c != nil {
			ok := c.OK
			switch c.Name {
			case "process_alive":
				r.Checks.ProcessAlive = &ok
			case "window_present":
				r.Checks.WindowPresent = &ok
			case "fatal_pattern":
				if !c.OK {
					line := c.Evidence
					r.Checks.FatalPattern = &line
				}
			}
			if c.Evidence != "" {
				r.Checks.Evidence[c.Name] = c.Evidence
			}
		}
	case events.KindQuestion:
		if e.Question != nil {
			r.Questions = append(r.Questions, *e.Question)
		}
	case events.KindAnswer:
		if q := e.Question; q != nil {
			for i := range r.Questions {
				if r.Questions[i].ID == q.ID {
					r.Questions[i] = *q
				}
			}
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
	case events.KindLoopEnded:
		r.Loop.Ended = e.Message
		r.Loop.Iterations = intOf(e.Data, "iterations")
		r.Loop.Malformed = intOf(e.Data, "malformed")
		r.Loop.ToolErrors = intOf(e.Data, "tool_errors")
		r.Loop.Rescued = intOf(e.Data, "rescued")
	case events.KindVerdict:
		if v := e.Verdict; v != nil {
			r.Verdict, r.Outcome = v.Verdict, v.Outcome
			r.Reasons = append([]string{}, v.Reasons...)
		}
	case events.KindRunEnded:
		t := e.T
		r.Timing.Ended = &t
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

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func intOf(m map[string]any, k string) int {
	switch v := m[k].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// strs reads a list of strings that may have been decoded from JSON.
func strs(m map[string]any, k string, def []string) []string {
	switch v := m[k].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return def
}

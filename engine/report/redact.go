package report

import "github.com/kasmrt/kasmrt/engine/events"

// Redacted returns a copy of r with every string value passed through
// redact. What the runtime writes itself — the schema, mode, verdict and
// outcome, statuses, sources, screen paths, check, budget and usage
// names, question ids, steering actions, the scenario's digest, numbers,
// times and keys — is left alone, so no secret value can damage
// report.json's structure.
func (r Report) Redacted(redact func(string) string) Report {
	if redact == nil {
		return r
	}
	strs := func(ss []string) []string {
		if ss == nil {
			return nil
		}
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = redact(s)
		}
		return out
	}
	r.Scenario.Name, r.Scenario.File = redact(r.Scenario.Name), redact(r.Scenario.File)
	r.Goal = redact(r.Goal)
	r.Plan, r.Reasons, r.Concerns, r.Tools = strs(r.Plan), strs(r.Reasons), strs(r.Concerns), strs(r.Tools)
	if r.ModelVerdict != nil {
		mv := *r.ModelVerdict
		mv.Verdict, mv.Reason = redact(mv.Verdict), redact(mv.Reason)
		r.ModelVerdict = &mv
	}
	if r.Checks.FatalPattern != nil {
		line := redact(*r.Checks.FatalPattern)
		r.Checks.FatalPattern = &line
	}
	if r.Checks.Evidence != nil {
		ev := make(map[string]string, len(r.Checks.Evidence))
		for k, v := range r.Checks.Evidence {
			ev[k] = redact(v)
		}
		r.Checks.Evidence = ev
	}
	r.Loop.Ended = redact(r.Loop.Ended)
	if r.Steps != nil {
		steps := make([]Step, len(r.Steps))
		for i, s := range r.Steps {
			s.Tool, s.Message = redact(s.Tool), redact(s.Message)
			if s.Args != nil {
				s.Args, _ = events.RedactValue(s.Args, redact).(map[string]any)
			}
			steps[i] = s
		}
		r.Steps = steps
	}
	if r.Grounding != nil {
		gs := make([]Grounding, len(r.Grounding))
		for i, g := range r.Grounding {
			g.Description, g.Expect, g.Reason = redact(g.Description), redact(g.Expect), redact(g.Reason)
			gs[i] = g
		}
		r.Grounding = gs
	}
	if r.Questions != nil {
		qs := make([]events.Question, len(r.Questions))
		for i, q := range r.Questions {
			q.Text, q.Answer, q.By, q.Unanswered = redact(q.Text), redact(q.Answer), redact(q.By), redact(q.Unanswered)
			qs[i] = q
		}
		r.Questions = qs
	}
	if r.Steering != nil {
		ss := make([]events.Steer, len(r.Steering))
		for i, s := range r.Steering {
			s.Value, s.Reason = redact(s.Value), redact(s.Reason)
			ss[i] = s
		}
		r.Steering = ss
	}
	if r.Baselines != nil {
		bs := make([]Baseline, len(r.Baselines))
		for i, b := range r.Baselines {
			b.Name, b.File = redact(b.Name), redact(b.File)
			b.Expected, b.Actual, b.Diff = redact(b.Expected), redact(b.Actual), redact(b.Diff)
			bs[i] = b
		}
		r.Baselines = bs
	}
	if r.Startup != nil {
		st := *r.Startup
		st.Match, st.Reason, st.Suggestion = redact(st.Match), redact(st.Reason), redact(st.Suggestion)
		st.Windows = redactWindows(st.Windows, redact)
		r.Startup = &st
	}
	r.Hung = r.Hung.redacted(redact)
	r.Browser = r.Browser.redacted(redact)
	if r.Cache != nil {
		// The mode is the runtime's word; the account names windows,
		// controls and page texts.
		c := *r.Cache
		c.Account = redact(c.Account)
		r.Cache = &c
	}
	if r.Final != nil {
		f := *r.Final
		f.Note = redact(f.Note)
		r.Final = &f
	}
	r.Display.Display, r.Display.WindowManager = redact(r.Display.Display), redact(r.Display.WindowManager)
	return r
}

// redacted is a copy of the hang's diagnosis with every string the
// application chose passed through redact; nil stays nil.
func (h *Hung) redacted(redact func(string) string) *Hung {
	if h == nil {
		return nil
	}
	out := *h
	out.Reason, out.Window = redact(out.Reason), redact(out.Window)
	out.Windows = redactWindows(out.Windows, redact)
	if out.Threads != nil {
		ts := make([]events.ThreadSeen, len(out.Threads))
		for i, t := range out.Threads {
			t.Name, t.State, t.WChan = redact(t.Name), redact(t.State), redact(t.WChan)
			ts[i] = t
		}
		out.Threads = ts
	}
	return &out
}

// redacted is a copy of the browser's record with every string the page
// chose passed through redact; nil stays nil.
func (b *Browser) redacted(redact func(string) string) *Browser {
	if b == nil {
		return nil
	}
	out := *b
	if out.Console != nil {
		cs := make([]ConsoleEntry, len(out.Console))
		for i, c := range out.Console {
			c.Level, c.Source, c.Text, c.URL = redact(c.Level), redact(c.Source), redact(c.Text), redact(c.URL)
			cs[i] = c
		}
		out.Console = cs
	}
	return &out
}

// redactWindows passes every string the windows' clients chose through
// redact.
func redactWindows(ws []events.WindowSeen, redact func(string) string) []events.WindowSeen {
	if ws == nil {
		return nil
	}
	out := make([]events.WindowSeen, len(ws))
	for i, w := range ws {
		w.ID, w.Title, w.Class, w.Instance = redact(w.ID), redact(w.Title), redact(w.Class), redact(w.Instance)
		out[i] = w
	}
	return out
}

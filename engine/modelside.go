package engine

import (
	"context"
	"fmt"
	"image"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

// The Environment Update lists at most maxControlsListed of the focused
// window's named controls and counts the rest. click_element's schema
// carries the names as an enum only when the set is small (at most
// maxControlsEnum) and stable: the same names, in the same order, in the
// last two updates, so the schema does not change under the model with
// every action that opens a menu.
const (
	maxControlsListed = 60
	maxControlsEnum   = 30
	windowsBound      = time.Second
)

// surroundings gives the model's memory what the next Environment Update
// says besides the images: the application's windows, the values there
// are to type, the browser's tab and the focused window's named controls.
func (s *runState) surroundings(ctx context.Context, mem *memory.Memory) {
	mem.SetWindows(s.env.windowTitles())
	mem.SetBindings(s.env.bindings())
	mem.SetTabs(s.env.tabs(ctx))
	mem.SetControls(s.act.focusedControls(ctx))
}

// bindings lists the values type_text can type: names and lengths only.
func (e *environment) bindings() []memory.Binding {
	var out []memory.Binding
	for _, ref := range sortedKeys(e.files.Scenario.Provides) {
		v, secret, _ := e.files.Scenario.Value(ref)
		out = append(out, memory.Binding{Ref: ref, Length: utf8.RuneCountInString(v), Secret: secret})
	}
	for _, a := range e.answers {
		out = append(out, memory.Binding{Ref: a.ref, Length: utf8.RuneCountInString(a.value), Secret: a.secret,
			Note: "the operator's answer to " + a.question})
	}
	return out
}

// titledTab is a browser tab that can say its title (the CDP driver's).
type titledTab interface {
	Title(ctx context.Context) (string, error)
}

// tabs describes the attached browser tab, redacted: pages show what
// was typed into them, and their addresses carry query strings.
func (e *environment) tabs(ctx context.Context) []memory.Tab {
	if e.web == nil || e.web.Tab == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
	defer cancel()
	u, err := e.web.Tab.URL(ctx)
	if err != nil {
		e.log("read the tab's address for the Environment Update: %v", err)
		return nil
	}
	var title string
	if t, ok := e.web.Tab.(titledTab); ok {
		if title, err = t.Title(ctx); err != nil {
			e.log("read the tab's title for the Environment Update: %v", err)
		}
	}
	return []memory.Tab{{Title: truncate(e.r.Redact(title), 120), URL: truncate(e.r.Redact(u), 200)}}
}

// focusedControls lists the named controls in the application's focused
// window (every window's, when none has the focus), bounded, and keeps
// the names for click_element's enum.
func (a *actor) focusedControls(ctx context.Context) memory.Controls {
	if _, offered := a.book.tools["click_element"]; !offered || a.env.a11y == nil || !a.env.a11y.Found {
		return memory.Controls{}
	}
	controls, err := a.env.accessibleControls(ctx)
	if err != nil {
		a.log("list the named controls for the Environment Update: %v", err)
		return memory.Controls{}
	}
	var out memory.Controls
	if wins, _, err := a.env.appWindows(); err == nil {
		for _, w := range wins {
			if !w.focused {
				continue
			}
			title := truncate(a.r.Redact(w.win.Title), 120)
			if len(wins) == 1 {
				out.Window = title
				break
			}
			box := image.Rect(w.win.X, w.win.Y, w.win.X+w.win.Width, w.win.Y+w.win.Height)
			if mine := a.env.inWindow(ctx, controls, box); len(mine) > 0 {
				out.Window, controls = title, mine
			}
		}
	}
	var names []string
	for _, c := range controls {
		name := a.r.Redact(c.Name)
		if slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
		if len(out.List) < maxControlsListed {
			out.List = append(out.List, memory.Control{Name: name, Role: c.Role})
		} else {
			out.More++
		}
	}
	a.env.controlsSeen = [2][]string{a.env.controlsSeen[1], names}
	return out
}

// inWindow keeps the controls whose window, as the accessibility tree
// places it, is the X window at box; a control whose window is unknown is
// kept. Controls' own extents cannot tell: GTK 4 gives them relative to
// their window. The walks up to the windows are bounded together by
// windowsBound, so a slow bus costs an update little.
func (e *environment) inWindow(ctx context.Context, controls []atspi.Control, box image.Rectangle) []atspi.Control {
	ctx, cancel := context.WithTimeout(ctx, windowsBound)
	defer cancel()
	var out []atspi.Control
	for _, c := range controls {
		win, err := e.a11y.App.WindowExtents(ctx, c)
		if err != nil || win.Empty() || sameBox(win, box) {
			out = append(out, c)
		}
	}
	return out
}

// withControlNames gives click_element's name the focused window's
// control names as an enum when the set is small and stable (see
// maxControlsEnum). Only the model's copy of the schema carries it: the
// guard takes any name, so a name typed with a plain "-" for the
// application's "−" still reaches the forgiving match.
func (e *environment) withControlNames(t scenarios.ToolSpec) scenarios.ToolSpec {
	prev, last := e.controlsSeen[0], e.controlsSeen[1]
	if len(last) == 0 || len(last) > maxControlsEnum || !slices.Equal(prev, last) {
		return t
	}
	return withEnum(t, "name", last)
}

// withAnswerRefs adds the refs of the operator's answers to a tool's ref
// enum, so type_text and cdp_fill take them like provided values (a ref
// without an enum is refused as no value provided).
func (e *environment) withAnswerRefs(t scenarios.ToolSpec) scenarios.ToolSpec {
	if len(e.answers) == 0 {
		return t
	}
	i := slices.IndexFunc(t.Params, func(p scenarios.Param) bool { return p.Name == "ref" })
	if i < 0 {
		return t
	}
	refs := slices.Clone(t.Params[i].Enum)
	for _, a := range e.answers {
		if !slices.Contains(refs, a.ref) {
			refs = append(refs, a.ref)
		}
	}
	return withEnum(t, "ref", refs)
}

// withEnum returns t with its parameter name's enum set to values, leaving
// the catalogue's spec as it was.
func withEnum(t scenarios.ToolSpec, name string, values []string) scenarios.ToolSpec {
	t.Params = slices.Clone(t.Params)
	for i := range t.Params {
		if t.Params[i].Name == name {
			t.Params[i].Enum = slices.Clone(values)
		}
	}
	return t
}

// screenChange says, after an input action the model chose, whether the
// screen changed: without it an unchanged screen is only a handle sent
// again, which the model easily takes for progress.
func (l *goalLoop) screenChange(tool string, args map[string]any, before [32]byte, res result) string {
	if !l.book.isAction(tool) || res.status != events.StatusOK || res.screen == "" || before == ([32]byte{}) {
		return ""
	}
	what := strings.TrimSpace(tool + " " + mainArg(args))
	if l.lastSum() == before {
		// The runtime waited runner.settle_response_ms for the app to
		// start drawing; an app that answers later (ImageMagick's display
		// rotating an image, opening its file browser) has changed the
		// screen by the next turn, so the sentence says how long it looked.
		if res.response > 0 {
			return fmt.Sprintf("The screen did not change within %dms after %s.", res.response.Milliseconds(), what)
		}
		return "The screen did not change after " + what + "."
	}
	return "The screen changed after " + what + "."
}

// mainArg is a call's argument in a few words, for a sentence about it:
// the key, target, name or ref (never a typed value, which calls do not
// carry).
func mainArg(args map[string]any) string {
	for _, k := range []string{"key", "target", "name", "ref", "handle", "text"} {
		if v, ok := args[k].(string); ok && v != "" {
			return truncate(v, 60)
		}
	}
	return ""
}

// fitContext trims a request's messages to the operator's
// model.max_context_length by the memory's token estimate, after the
// reply's max_tokens (or the default reserve), the system prompt and the
// tool schemas; without one the server enforces its own limit.
func fitContext(m scenarios.ModelConfig, req model.Request) []model.Message {
	if m.MaxContextLength == nil {
		return req.Messages
	}
	budget := *m.MaxContextLength - scenarios.DefaultContextReserve
	if m.MaxTokens != nil {
		budget = *m.MaxContextLength - *m.MaxTokens
	}
	budget -= memory.TextTokens(req.System)
	for _, t := range req.Tools {
		budget -= memory.TextTokens(t.Name) + memory.TextTokens(t.Description) + memory.TextTokens(string(t.Parameters))
	}
	return memory.Fit(req.Messages, budget)
}

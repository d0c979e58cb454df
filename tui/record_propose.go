package tui

import (
	"fmt"
	"image"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/scenarios"
)

// maxProposals is how many checks the recorder proposes after a step: one
// digit key each.
const maxProposals = 9

// maxQuoted bounds the text a proposed check quotes: a long line read by
// OCR is likely to be read differently on the replay.
const maxQuoted = 60

// proposal is a check the recorder proposes after a step, which the
// operator accepts into the step's expect: with one key.
type proposal struct {
	// label says what the check checks, in the operator's terms.
	label string
	// add puts the check into an expect.
	add func(*scenarios.Expect)
	// baseline is the image a screenshot check compares with, written
	// beside the scenario when the check is accepted.
	baseline image.Image
}

// proposeChecks proposes the checks that describe what a step changed,
// then what holds after it: the window title, the states of the named
// controls, the page elements' text and the text OCR reads near the
// pointer — and, last, that the window looks as it does now, a screenshot
// check named after the step (baseline). Nothing that shows a secret (a
// masked text) is proposed: the check would quote it.
func proposeChecks(before, after engine.Seen, baseline string) []proposal {
	// Buckets in the order they are offered: what the step changed
	// first, the controls that came and went (a menu's items) bounded so
	// they do not push the rest out, then what merely holds.
	var changed, appeared, gone, holds []proposal
	if t := after.Title; usable(t) {
		title := t
		if t != before.Title {
			changed = append(changed, proposal{
				label: fmt.Sprintf("the window title became %q", title),
				add:   func(e *scenarios.Expect) { e.WindowTitle = &scenarios.TitleCheck{Equals: title} },
			})
		} else {
			holds = append(holds, proposal{
				label: fmt.Sprintf("the window title is %q", title),
				add:   func(e *scenarios.Expect) { e.WindowTitle = &scenarios.TitleCheck{Equals: title} },
			})
		}
	}
	was := map[string]engine.SeenControl{}
	for _, c := range before.Controls {
		was[c.Name] = c
	}
	now := map[string]bool{}
	for _, c := range after.Controls {
		now[c.Name] = true
		if !usable(c.Name) {
			continue
		}
		b, existed := was[c.Name]
		switch {
		case !existed && len(before.Controls) > 0:
			appeared = append(appeared, controlProposal(c, fmt.Sprintf("the %s %q appeared", roleOr(c.Role), c.Name), nil))
		case existed && c.Stated && b.Stated && (b.Checked != c.Checked || b.Enabled != c.Enabled || b.Focused != c.Focused):
			changed = append(changed, controlProposal(c, "", &b))
		}
	}
	for _, c := range before.Controls {
		if !now[c.Name] && usable(c.Name) && len(after.Controls) > 0 {
			name := c.Name
			f := false
			gone = append(gone, proposal{
				label: fmt.Sprintf("the %s %q is gone", roleOr(c.Role), name),
				add:   func(e *scenarios.Expect) { setControl(e, name, scenarios.ControlCheck{Present: &f}) },
			})
		}
	}
	wasEl := map[string]engine.SeenElement{}
	for _, el := range before.Elements {
		wasEl[el.Target] = el
	}
	for _, el := range after.Elements {
		if !el.Found || !usable(el.Text) {
			continue
		}
		text := quotable(el.Text)
		target := el.Target
		p := proposal{
			label: fmt.Sprintf("the page's %s reads %q", target, text),
			add: func(e *scenarios.Expect) {
				if e.CDP == nil {
					e.CDP = map[string]scenarios.ElementCheck{}
				}
				e.CDP[target] = scenarios.ElementCheck{TextContains: text}
			},
		}
		if b := wasEl[el.Target]; !b.Found || b.Text != el.Text {
			changed = append(changed, p)
		} else {
			holds = append(holds, p)
		}
	}
	if t, where := readText(before, after); t != "" {
		changed = append(changed, proposal{
			label: fmt.Sprintf("the screen shows %q (OCR, %s)", t, where),
			add:   func(e *scenarios.Expect) { e.ScreenText = &scenarios.ScreenTextCheck{Contains: t} },
		})
	}
	out := changed
	out = append(out, appeared[:min(len(appeared), maxComeAndGone)]...)
	out = append(out, gone[:min(len(gone), maxComeAndGone)]...)
	out = append(out, holds...)
	room := maxProposals
	shot, ok := screenshotProposal(after, baseline)
	if ok {
		room--
	}
	if len(out) > room {
		out = out[:room]
	}
	if ok {
		out = append(out, shot)
	}
	return out
}

// screenshotProposal proposes a screenshot check named name whose
// baseline is the window as the look captured it: the capture a
// screenshot check makes, secrets blacked out, so the replay compares
// like with like. None when the window could not be captured steady.
func screenshotProposal(after engine.Seen, name string) (proposal, bool) {
	if after.Window == nil || name == "" {
		return proposal{}, false
	}
	b := after.Window.Bounds()
	return proposal{
		label:    fmt.Sprintf("the window looks like this (screenshot %s, %dx%d)", name, b.Dx(), b.Dy()),
		add:      func(e *scenarios.Expect) { e.Screenshot = &scenarios.ScreenshotCheck{Name: name} },
		baseline: after.Window,
	}, true
}

// maxComeAndGone bounds the controls proposed as appeared, and as gone:
// a menu that opens brings dozens, and one or two of them show it opened.
const maxComeAndGone = 3

// readText picks the text a screen_text check quotes: the line read
// nearest the pointer, or, where the pointer is not known (a key, typed
// text), the first line the step made appear; "" when there is none.
func readText(before, after engine.Seen) (text, where string) {
	if t := quotable(after.NearText); after.Pointer != nil && worthQuoting(t) {
		return t, "near the pointer"
	}
	for _, l := range after.Lines {
		if t := quotable(l); worthQuoting(t) && !slices.Contains(before.Lines, l) {
			return t, "new in the window"
		}
	}
	return "", ""
}

// worthQuoting reports whether OCR's text is likely to be read the same
// on the replay: three characters or more, with a word of two letters.
func worthQuoting(t string) bool {
	if !usable(t) || len([]rune(t)) < 3 {
		return false
	}
	return slices.ContainsFunc(strings.Fields(t), func(w string) bool {
		n := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				n++
			}
		}
		return n >= 2
	})
}

// controlProposal checks that a control is present (and checked, when it
// is); with was, only the states that changed from it.
func controlProposal(c engine.SeenControl, label string, was *engine.SeenControl) proposal {
	var check scenarios.ControlCheck
	var words []string
	set := func(now bool, before *bool, word string, field **bool) {
		if was != nil && before != nil && *before == now {
			return
		}
		v := now
		*field = &v
		if now {
			words = append(words, word)
		} else {
			words = append(words, "not "+word)
		}
	}
	if was != nil {
		set(c.Checked, &was.Checked, "checked", &check.Checked)
		set(c.Enabled, &was.Enabled, "enabled", &check.Enabled)
		set(c.Focused, &was.Focused, "focused", &check.Focused)
	} else {
		p := true
		check.Present = &p
		if c.Stated && c.Checked {
			set(true, nil, "checked", &check.Checked)
		}
	}
	if label == "" {
		label = fmt.Sprintf("the %s %q is now %s", roleOr(c.Role), c.Name, strings.Join(words, ", "))
	}
	name := c.Name
	return proposal{label: label, add: func(e *scenarios.Expect) { setControl(e, name, check) }}
}

func setControl(e *scenarios.Expect, name string, c scenarios.ControlCheck) {
	if e.Controls == nil {
		e.Controls = map[string]scenarios.ControlCheck{}
	}
	e.Controls[name] = c
}

func roleOr(role string) string {
	if role == "" {
		return "control"
	}
	return role
}

// usable reports whether a text can be quoted by a check: not empty and
// showing no masked secret.
func usable(s string) bool {
	return strings.TrimSpace(s) != "" && !strings.Contains(s, redact.Mask)
}

var spaces = regexp.MustCompile(`\s+`)

// quotable shortens a text a check will quote to whole words within
// maxQuoted runes, as the check compares it (white space collapsed).
func quotable(s string) string {
	// A text cursor is read as a bar at the end of a line, or not, as it
	// blinks.
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(spaces.ReplaceAllString(s, " ")), "|"))
	r := []rune(s)
	if len(r) <= maxQuoted {
		return s
	}
	cut := string(r[:maxQuoted])
	if i := strings.LastIndex(cut, " "); i > maxQuoted/2 {
		cut = cut[:i]
	}
	return cut
}

// slug makes a scenario name (lower-case letters, digits, _) of a title
// or a control's name, e.g. "Save As…" → "save_as".
func slug(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			under = false
		case b.Len() > 0 && !under:
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.TrimRight(b.String(), "_")
	if out == "" || out[0] >= '0' && out[0] <= '9' {
		out = "w_" + out
	}
	if len(out) > 40 {
		out = strings.TrimRight(out[:40], "_")
	}
	return out
}

// unique returns name, or name with the first free suffix _2, _3 … when
// taken says it is in use.
func unique(name string, taken func(string) bool) string {
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s_%d", name, i); !taken(n) {
			return n
		}
	}
}

// windowMatch proposes how a window is found again: its class and its
// title. The title is kept whole when it is short, else its first words,
// since a title that carries a file name or a count changes.
func windowMatch(w engine.SeenWindow) scenarios.WindowMatch {
	m := scenarios.WindowMatch{Class: w.Class, Title: quotable(w.Title)}
	if m.Class == "" {
		m.Class = w.Instance
	}
	return m
}

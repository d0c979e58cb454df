// Package memory is the model's view of a run (docs/architecture.md, "The model side"): it registers
// screens and input images under handles, keeps the request bounded by
// dropping old images from the context, and writes the Environment Update.
package memory

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/engine/model"
)

// Emit policies for the Environment Update.
const (
	EmitAlways   = "always"
	EmitOnChange = "on_change"
)

// Image is a registered image: its handle and what it shows, never its
// bytes (the messages that carry it hold those while it is in context).
type Image struct {
	Handle      string
	Description string
	Input       bool // an input image: always kept in context
	// used orders screens by their latest registration, so a screen seen
	// again counts as new and stays in context.
	used int
}

// Memory holds one run's registered images. It is used from the loop's
// goroutine only.
type Memory struct {
	policy    string
	keep      int
	images    []Image
	byHandle  map[string]int // lower-case handle → index
	byHash    map[[32]byte]int
	inputs    int
	generated int
	// lastUpdate is the last emitted update, which on_change compares to.
	lastUpdate string
	// windows lists the application's open windows, one line.
	windows string
	// bindings are the values the model can type by ref, tabs the
	// browser's tabs and controls the focused window's named controls, as
	// the loop last set them.
	bindings []Binding
	tabs     []Tab
	controls Controls
	emitted  bool
	clock    int // counts registrations, for Image.used
}

// New returns a memory with the given emit policy (always | on_change) that
// keeps the newest keep images in the model's context (0: 3).
func New(policy string, keep int) *Memory {
	if keep <= 0 {
		keep = 3
	}
	if policy == "" {
		policy = EmitAlways
	}
	return &Memory{policy: policy, keep: keep, byHandle: map[string]int{}, byHash: map[[32]byte]int{}}
}

// AddInput registers an input image (one the scenario provides) as
// input_image_N. Identical data resolves to its existing handle.
func (m *Memory) AddInput(png []byte, description string) string {
	return m.add(sha256.Sum256(png), description, true)
}

// AddScreen registers a capture a tool made as tool_generated_image_N,
// by the SHA-256 of its pixels: a screen seen before resolves to its
// existing handle. Only the sum is kept, so a long run holds no screens.
func (m *Memory) AddScreen(sum [32]byte, description string) string {
	return m.add(sum, description, false)
}

func (m *Memory) add(sum [32]byte, description string, input bool) string {
	m.clock++
	if i, ok := m.byHash[sum]; ok {
		m.images[i].used = m.clock
		return m.images[i].Handle
	}
	var handle string
	if input {
		m.inputs++
		handle = fmt.Sprintf("input_image_%d", m.inputs)
	} else {
		m.generated++
		handle = fmt.Sprintf("tool_generated_image_%d", m.generated)
	}
	m.images = append(m.images, Image{Handle: handle, Description: description, Input: input, used: m.clock})
	m.byHandle[strings.ToLower(handle)] = len(m.images) - 1
	m.byHash[sum] = len(m.images) - 1
	return handle
}

// Lookup finds an image by handle, ignoring case.
func (m *Memory) Lookup(handle string) (Image, bool) {
	i, ok := m.byHandle[strings.ToLower(strings.TrimSpace(handle))]
	if !ok {
		return Image{}, false
	}
	return m.images[i], true
}

// SetWindows records the application's open windows, one line, for the
// next Environment Update; a change counts as news under on_change.
func (m *Memory) SetWindows(line string) { m.windows = line }

// Binding is a value the model can type by ref: its name and length only,
// never the value, so the update can say what there is to type without
// putting a secret (or an operator's unshared answer) in the request.
type Binding struct {
	Ref    string
	Length int // in characters
	Secret bool
	// Note says where the value came from, when that helps the model
	// ("the operator's answer to q1").
	Note string
}

// Tab is a browser tab: its title and address.
type Tab struct {
	Title, URL string
}

// Control is a named control the model can click by name.
type Control struct {
	Name, Role string
}

// Controls are the focused window's named controls: the first ones, in
// the application's order, and how many more there were.
type Controls struct {
	Window string // the window's title, when known
	List   []Control
	More   int
}

// SetBindings records the values the model can type, for the next update.
func (m *Memory) SetBindings(b []Binding) { m.bindings = slices.Clone(b) }

// SetTabs records the browser's tabs, for the next update.
func (m *Memory) SetTabs(t []Tab) { m.tabs = slices.Clone(t) }

// SetControls records the focused window's named controls, for the next
// update.
func (m *Memory) SetControls(c Controls) { m.controls = c }

// LatestScreen is the handle of the screen registered or seen again most
// recently, or "" before the first.
func (m *Memory) LatestScreen() string {
	var latest Image
	for _, img := range m.images {
		if !img.Input && img.used > latest.used {
			latest = img
		}
	}
	return latest.Handle
}

// Len is the number of registered images.
func (m *Memory) Len() int { return len(m.images) }

// updateHeader starts every Environment Update, which is how Context
// finds the ones a later update superseded.
const updateHeader = "Environment Update\n"

// KeepTurns is how many of the latest model turns Context sends verbatim;
// older turns are summarised, a line each, and only the newest
// summaryLines of those lines are kept, so a request stops growing after
// the first few turns.
const (
	KeepTurns    = 8
	summaryLines = 12
)

// EnvironmentUpdate returns the inventory text to append after a
// successful tool turn, or "" when the policy says to stay quiet: on_change
// with the same images in context, in the same order, as the last update
// said. A screen seen again is the newest again, so it changes the
// inventory even when no image is new.
func (m *Memory) EnvironmentUpdate() string {
	text := m.inventory()
	if m.policy == EmitOnChange && m.emitted && m.lastUpdate == text {
		return ""
	}
	m.emitted, m.lastUpdate = true, text
	return text
}

func (m *Memory) inventory() string {
	var b strings.Builder
	b.WriteString(updateHeader + "Images by handle (newest last; only the newest are shown to you):\n")
	if len(m.images) == 0 {
		b.WriteString("- (none yet)\n")
	}
	visible := m.visible()
	// Dropped screens are named as ranges of consecutive handles: the
	// oldest ones form one range, so the update keeps its size however
	// long the run is, unless screens seen again break it up.
	var dropped []string
	for i := 0; i < len(m.images); {
		if visible[m.images[i].Handle] || m.images[i].Input {
			i++
			continue
		}
		j := i
		for j+1 < len(m.images) && !visible[m.images[j+1].Handle] && !m.images[j+1].Input {
			j++
		}
		if j == i {
			dropped = append(dropped, m.images[i].Handle)
		} else {
			dropped = append(dropped, m.images[i].Handle+" to "+m.images[j].Handle)
		}
		i = j + 1
	}
	if len(dropped) > 0 {
		fmt.Fprintf(&b, "- %s: dropped from context\n", strings.Join(dropped, ", "))
	}
	shown := slices.Clone(m.images)
	slices.SortStableFunc(shown, func(a, b Image) int { return cmp.Compare(a.used, b.used) })
	for _, img := range shown {
		if visible[img.Handle] {
			fmt.Fprintf(&b, "- %s: %s (in context)\n", img.Handle, img.Description)
		}
	}
	if m.windows != "" {
		b.WriteString("Application windows (top first): " + m.windows + ".\n")
	}
	m.writeControls(&b)
	m.writeBindings(&b)
	m.writeTabs(&b)
	return strings.TrimSuffix(b.String(), "\n")
}

func (m *Memory) writeControls(b *strings.Builder) {
	c := m.controls
	if len(c.List) == 0 {
		return
	}
	where := "the application"
	if c.Window != "" {
		where = fmt.Sprintf("%q", c.Window)
	}
	fmt.Fprintf(b, "Named controls in %s (click_element takes the name):\n", where)
	for _, ctl := range c.List {
		fmt.Fprintf(b, "- %q (%s)\n", ctl.Name, ctl.Role)
	}
	if c.More > 0 {
		fmt.Fprintf(b, "- and %d more not listed\n", c.More)
	}
}

func (m *Memory) writeBindings(b *strings.Builder) {
	if len(m.bindings) == 0 {
		b.WriteString("Data bindings: none.\n")
		return
	}
	b.WriteString("Data bindings (type_text takes the ref; the values are not shown to you):\n")
	for _, v := range m.bindings {
		kind := "value"
		if v.Secret {
			kind = "secret value"
		}
		fmt.Fprintf(b, "- %s: a %s of %d characters", v.Ref, kind, v.Length)
		if v.Note != "" {
			b.WriteString(", " + v.Note)
		}
		b.WriteString("\n")
	}
}

func (m *Memory) writeTabs(b *strings.Builder) {
	if len(m.tabs) == 0 {
		return
	}
	b.WriteString("Browser tabs:\n")
	for _, t := range m.tabs {
		title := t.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(b, "- %q at %s\n", title, t.URL)
	}
}

// visible returns the handles still sent to the model: every input image
// and the newest keep screens.
func (m *Memory) visible() map[string]bool {
	out := map[string]bool{}
	var screens []Image
	for _, img := range m.images {
		if img.Input {
			out[img.Handle] = true
		} else {
			screens = append(screens, img)
		}
	}
	slices.SortFunc(screens, func(a, b Image) int { return cmp.Compare(b.used, a.used) })
	for i := 0; i < len(screens) && i < m.keep; i++ {
		out[screens[i].Handle] = true
	}
	return out
}

// Forget drops the bytes of the images in history that have left the
// context: Context never sends them again (a screen seen again comes with
// its new message), so a long run's history holds only the newest
// screens' bytes.
func (m *Memory) Forget(history []model.Message) {
	visible := m.visible()
	for i := range history {
		for j := range history[i].Images {
			img := &history[i].Images[j]
			if img.PNG != nil && !visible[img.Handle] {
				img.PNG = nil
			}
		}
	}
}

// Context returns history as it is sent, bounded however long the run is:
// turns before the newest KeepTurns are summarised, only the newest
// Environment Update is kept (it supersedes the others), images registered
// before the newest keep are replaced by a line naming their handle, and a
// screen registered again under the same handle is sent once, with its
// latest message. history is not modified.
func (m *Memory) Context(history []model.Message) []model.Message {
	history = collapseTurns(history)
	visible := m.visible()
	// The walk goes from the newest message back, so the first update it
	// meets is the newest one and every other one it meets is superseded.
	updateKept := false
	sent := map[string]bool{}
	out := make([]model.Message, 0, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		msg := history[i]
		if isUpdate(msg) {
			if updateKept {
				continue
			}
			updateKept = true
		}
		var keep []model.Image
		var dropped, again []string
		for _, img := range msg.Images {
			switch {
			case !visible[img.Handle]:
				dropped = append(dropped, img.Handle)
			case sent[img.Handle]:
				again = append(again, img.Handle)
			default:
				sent[img.Handle] = true
				keep = append(keep, img)
			}
		}
		msg.Images = keep
		if len(dropped) > 0 {
			msg.Text = strings.TrimSpace(msg.Text + "\n[" + strings.Join(dropped, ", ") + " dropped from context; see the Environment Update]")
		}
		if len(again) > 0 {
			msg.Text = strings.TrimSpace(msg.Text + "\n[" + strings.Join(again, ", ") + " is shown with a later message]")
		}
		out = append(out, msg)
	}
	slices.Reverse(out)
	return out
}

func isUpdate(msg model.Message) bool {
	return msg.Role == model.RoleUser && strings.HasPrefix(msg.Text, updateHeader)
}

// collapseTurns replaces the turns before the newest KeepTurns with one
// user message that summarises them. A turn starts at an assistant
// message and takes the tool results and notes after it, so no tool
// result is ever separated from its call.
func collapseTurns(history []model.Message) []model.Message {
	var starts []int
	for i, msg := range history {
		if msg.Role == model.RoleAssistant {
			starts = append(starts, i)
		}
	}
	if len(starts) <= KeepTurns {
		return history
	}
	first, cut := starts[0], starts[len(starts)-KeepTurns]
	var lines []string
	// history[first] is an assistant message, which adds a line, so a
	// tool result always has a call's line to go on.
	for _, msg := range history[first:cut] {
		switch {
		case msg.Role == model.RoleAssistant && len(msg.ToolCalls) == 0:
			lines = append(lines, "- you replied without a tool call")
		case msg.Role == model.RoleAssistant:
			for _, c := range msg.ToolCalls {
				lines = append(lines, fmt.Sprintf("- you called %s %s", c.Name, clip(c.Arguments, 80)))
			}
		case msg.Role == model.RoleTool:
			lines[len(lines)-1] += " → " + clip(firstLine(msg.Text), 100)
		case msg.Role == model.RoleUser && !isUpdate(msg):
			lines = append(lines, "- "+clip(firstLine(msg.Text), 100))
		}
	}
	omitted := max(len(lines)-summaryLines, 0)
	lines = lines[omitted:]
	var b strings.Builder
	fmt.Fprintf(&b, "The %d earlier turns are summarised to keep this request bounded", len(starts)-KeepTurns)
	if omitted > 0 {
		fmt.Fprintf(&b, " (the oldest %d lines are left out)", omitted)
	}
	b.WriteString(":\n" + strings.Join(lines, "\n"))
	return slices.Concat(history[:first], []model.Message{{Role: model.RoleUser, Text: b.String()}}, history[cut:])
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

package memory

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

func TestHandlesAndDedup(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 2)
	a := m.AddScreen(sha256.Sum256([]byte("screen-a")), "screen 0001")
	b := m.AddScreen(sha256.Sum256([]byte("screen-b")), "screen 0002")
	again := m.AddScreen(sha256.Sum256([]byte("screen-a")), "screen 0003")
	in := m.AddInput([]byte("ref"), "reference")
	if a != "tool_generated_image_1" || b != "tool_generated_image_2" || again != a || in != "input_image_1" {
		t.Fatalf("handles: %s %s %s %s", a, b, again, in)
	}
	if _, ok := m.Lookup("TOOL_GENERATED_IMAGE_2"); !ok {
		t.Error("lookup is not case-insensitive")
	}
	if _, ok := m.Lookup("tool_generated_image_9"); ok {
		t.Error("found a handle that was never registered")
	}
}

func TestEmitPolicy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		policy        string
		second, third bool
	}{{EmitAlways, true, true}, {EmitOnChange, false, true}} {
		m := New(c.policy, 3)
		m.AddScreen(sha256.Sum256([]byte("a")), "screen 1")
		if m.EnvironmentUpdate() == "" {
			t.Fatalf("%s: first update empty", c.policy)
		}
		if got := m.EnvironmentUpdate() != ""; got != c.second {
			t.Errorf("%s: unchanged inventory emitted=%v, want %v", c.policy, got, c.second)
		}
		m.AddScreen(sha256.Sum256([]byte("b")), "screen 2")
		if got := m.EnvironmentUpdate() != ""; got != c.third {
			t.Errorf("%s: changed inventory emitted=%v, want %v", c.policy, got, c.third)
		}
	}
}

// TestWindowsInUpdate lists the application's windows in the update, and
// a change of windows (a dialog opening) is news under on_change.
func TestWindowsInUpdate(t *testing.T) {
	t.Parallel()
	m := New(EmitOnChange, 3)
	m.SetWindows(`"Untitled - Mousepad" (focused)`)
	if upd := m.EnvironmentUpdate(); !strings.Contains(upd, "Application windows (top first): \"Untitled - Mousepad\" (focused).") {
		t.Errorf("update without the windows:\n%s", upd)
	}
	if upd := m.EnvironmentUpdate(); upd != "" {
		t.Errorf("unchanged windows emitted again:\n%s", upd)
	}
	m.SetWindows(`"Save As" (focused), "Untitled - Mousepad"`)
	if upd := m.EnvironmentUpdate(); !strings.Contains(upd, `"Save As" (focused)`) {
		t.Errorf("a new dialog is not news:\n%s", upd)
	}
}

func TestContextKeepsNewestImages(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 2)
	var history []model.Message
	for i := 0; i < 5; i++ {
		h := m.AddScreen(sha256.Sum256([]byte{byte(i)}), "screen")
		history = append(history, model.Message{Role: model.RoleUser, Text: "observed", Images: []model.Image{{Handle: h, PNG: []byte{byte(i)}}}})
	}
	ctx := m.Context(history)
	images := 0
	for _, msg := range ctx {
		images += len(msg.Images)
	}
	if images != 2 {
		t.Fatalf("context carries %d images, want 2", images)
	}
	if !strings.Contains(ctx[0].Text, "tool_generated_image_1 dropped") {
		t.Errorf("dropped image not named: %q", ctx[0].Text)
	}
	if len(history[0].Images) != 1 {
		t.Error("Context modified the history it was given")
	}
	if u := m.EnvironmentUpdate(); !strings.Contains(u, "tool_generated_image_5: screen (in context)") || !strings.Contains(u, "tool_generated_image_1 to tool_generated_image_3: dropped from context") {
		t.Errorf("update:\n%s", u)
	}
}

func TestInputImagesStayInContext(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 1)
	in := m.AddInput([]byte("reference"), "reference image")
	history := []model.Message{{Role: model.RoleUser, Text: "goal", Images: []model.Image{{Handle: in}}}}
	for i := 0; i < 3; i++ {
		h := m.AddScreen(sha256.Sum256([]byte{byte(i)}), "screen")
		history = append(history, model.Message{Role: model.RoleTool, Images: []model.Image{{Handle: h}}})
	}
	ctx := m.Context(history)
	if len(ctx[0].Images) != 1 {
		t.Error("the input image was dropped from context")
	}
	if len(ctx[1].Images)+len(ctx[2].Images) != 0 || len(ctx[3].Images) != 1 {
		t.Errorf("screens kept: %d %d %d, want only the newest", len(ctx[1].Images), len(ctx[2].Images), len(ctx[3].Images))
	}
}

func TestContextBoundsTurnsUpdatesAndRepeats(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 3)
	history := []model.Message{{Role: model.RoleUser, Text: "Goal: g"}}
	same := m.AddScreen(sha256.Sum256([]byte("same")), "screen")
	for i := 0; i < 30; i++ {
		id := fmt.Sprintf("call_%d", i)
		history = append(history,
			model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "observe_screen", Arguments: "{}"}}},
			model.Message{Role: model.RoleTool, CallID: id, Text: fmt.Sprintf("observed %d", i), Images: []model.Image{{Handle: same, PNG: []byte("same")}}},
			model.Message{Role: model.RoleUser, Text: m.EnvironmentUpdate()})
	}
	ctx := m.Context(history)
	var updates, images, assistants int
	for _, msg := range ctx {
		if isUpdate(msg) {
			updates++
		}
		images += len(msg.Images)
		if msg.Role == model.RoleAssistant {
			assistants++
		}
	}
	if updates != 1 || images != 1 || assistants != KeepTurns {
		t.Errorf("context has %d updates, %d images, %d turns; want 1, 1 (one handle), %d", updates, images, assistants, KeepTurns)
	}
	if ctx[0].Text != "Goal: g" || !strings.HasPrefix(ctx[1].Text, "The 22 earlier turns are summarised") ||
		!strings.Contains(ctx[1].Text, "- you called observe_screen {} → observed 21") || strings.Count(ctx[1].Text, "\n- ") != summaryLines {
		t.Errorf("summary:\n%s", ctx[1].Text)
	}
	if ctx[2].Role != model.RoleAssistant || ctx[3].CallID != ctx[2].ToolCalls[0].ID {
		t.Errorf("the kept turns do not start with a call and its result: %+v %+v", ctx[2], ctx[3])
	}
	if len(history) != 91 || len(history[2].Images) != 1 {
		t.Error("Context modified the history it was given")
	}
}

// TestRepeatedScreenStaysInContext: a screen seen again (the app went back
// to its first state) is the newest screen, so it is sent, not dropped.
func TestRepeatedScreenStaysInContext(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 2)
	var history []model.Message
	for _, data := range []string{"start", "b", "c", "start"} {
		h := m.AddScreen(sha256.Sum256([]byte(data)), "screen")
		history = append(history, model.Message{Role: model.RoleTool, Text: "The screen is " + h + ".", Images: []model.Image{{Handle: h}}})
	}
	ctx := m.Context(history)
	last := ctx[len(ctx)-1]
	if len(last.Images) != 1 || last.Images[0].Handle != "tool_generated_image_1" {
		t.Fatalf("the newest message carries %v, want tool_generated_image_1", last.Images)
	}
}

// TestOnChangeEmitsWhenAScreenIsSeenAgain checks on_change against the
// images in context rather than their count: a dropped screen seen again
// comes back into context (and another one leaves), so an update is due
// although no image is new; the same newest screen again changes nothing.
func TestOnChangeEmitsWhenAScreenIsSeenAgain(t *testing.T) {
	t.Parallel()
	m := New(EmitOnChange, 2)
	for _, png := range []string{"a", "b", "c"} {
		m.AddScreen(sha256.Sum256([]byte(png)), "screen "+png)
	}
	first := m.EnvironmentUpdate()
	if !strings.Contains(first, "- tool_generated_image_1: dropped from context") {
		t.Fatalf("first update:\n%s", first)
	}
	m.AddScreen(sha256.Sum256([]byte("a")), "screen a")
	again := m.EnvironmentUpdate()
	if again == "" {
		t.Fatal("on_change stayed quiet after a dropped screen came back into context")
	}
	for _, want := range []string{"- tool_generated_image_2: dropped from context", "- tool_generated_image_3: screen c (in context)\n- tool_generated_image_1: screen a (in context)"} {
		if !strings.Contains(again, want) {
			t.Errorf("update after the screen was seen again lacks %q:\n%s", want, again)
		}
	}
	m.AddScreen(sha256.Sum256([]byte("a")), "screen a")
	if u := m.EnvironmentUpdate(); u != "" {
		t.Errorf("on_change emitted for the newest screen seen once more:\n%s", u)
	}
	m.AddScreen(sha256.Sum256([]byte("c")), "screen c")
	if u := m.EnvironmentUpdate(); u == "" {
		t.Error("on_change stayed quiet when the screens in context changed order")
	}
}

// TestForgetKeepsOnlyContextBytes checks that a long run's history holds
// the bytes of the screens still in context and no others, that what is
// sent is the same with and without forgetting, and that a screen seen
// again is sent with its new message.
func TestForgetKeepsOnlyContextBytes(t *testing.T) {
	t.Parallel()
	kept, plain := New(EmitAlways, 3), New(EmitAlways, 3)
	var history, full []model.Message
	for i := 0; i < 30; i++ {
		screen := []byte{byte(i % 25)} // the first screens come back at the end
		for _, run := range []struct {
			m *Memory
			h *[]model.Message
		}{{kept, &history}, {plain, &full}} {
			h := run.m.AddScreen(sha256.Sum256(screen), "screen")
			*run.h = append(*run.h, model.Message{Role: model.RoleTool, CallID: fmt.Sprint(i), Text: "observed",
				Images: []model.Image{{Handle: h, PNG: bytes.Repeat(screen, 1000)}}})
		}
		kept.Forget(history)
		if got, want := fmt.Sprint(kept.Context(history)), fmt.Sprint(plain.Context(full)); got != want {
			t.Fatalf("turn %d: forgetting changed what is sent", i)
		}
		held := 0
		for _, msg := range history {
			for _, img := range msg.Images {
				held += len(img.PNG)
			}
		}
		if held > 3*1000 {
			t.Fatalf("turn %d: history holds %d image bytes, want at most the 3 screens in context", i, held)
		}
	}
}

// screens registers n distinct screens and returns their handles.
func screens(m *Memory, n int) []string {
	var hs []string
	for i := range n {
		hs = append(hs, m.AddScreen(sha256.Sum256(fmt.Appendf(nil, "screen-%d", i)), fmt.Sprintf("screen %d", i+1)))
	}
	return hs
}

// TestInventoryLines: an update says there is no image yet only when
// there is none, names what was dropped only when something was, keeps
// three screens by default, and names a dropped range that reaches the
// last registered screen (one seen again makes older ones the newest).
func TestInventoryLines(t *testing.T) {
	t.Parallel()
	if upd := New("", 0).EnvironmentUpdate(); !strings.Contains(upd, "- (none yet)\n") {
		t.Errorf("an empty memory's update:\n%s", upd)
	}
	m := New("", 0)
	screens(m, 3)
	if upd := m.EnvironmentUpdate(); strings.Contains(upd, "(none yet)") || strings.Contains(upd, "dropped from context") || strings.Count(upd, "(in context)") != 3 {
		t.Errorf("three screens, all kept by default:\n%s", upd)
	}
	m = New("", 3)
	hs := screens(m, 4)
	for _, i := range []int{0, 1, 2} {
		m.AddScreen(sha256.Sum256(fmt.Appendf(nil, "screen-%d", i)), "again")
	}
	if upd := m.EnvironmentUpdate(); !strings.Contains(upd, "- "+hs[3]+": dropped from context\n") {
		t.Errorf("the last registered screen, dropped, is not named:\n%s", upd)
	}
}

// TestContextMarksOnlyWhatItDrops: a message whose images are all still
// in context is sent as it is, with no note of dropped or repeated
// images.
func TestContextMarksOnlyWhatItDrops(t *testing.T) {
	t.Parallel()
	m := New("", 3)
	h := screens(m, 1)[0]
	msg := model.Message{Role: model.RoleTool, CallID: "1", Text: "observed", Images: []model.Image{{Handle: h, PNG: []byte("png")}}}
	out := m.Context([]model.Message{msg})
	if len(out) != 1 || out[0].Text != "observed" || len(out[0].Images) != 1 {
		t.Errorf("context %+v, want the message as it was", out)
	}
}

// TestCollapseTurnsBounds: exactly KeepTurns turns are sent as they are;
// a summary of fewer than summaryLines lines leaves none out and says
// nothing of leaving out.
func TestCollapseTurnsBounds(t *testing.T) {
	t.Parallel()
	turns := func(n int) []model.Message {
		var h []model.Message
		for i := range n {
			id := fmt.Sprint(i)
			h = append(h, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "wait", Arguments: `{"seconds": 1}`}}},
				model.Message{Role: model.RoleTool, CallID: id, Text: "waited"})
		}
		return h
	}
	if got := collapseTurns(turns(KeepTurns)); len(got) != 2*KeepTurns {
		t.Errorf("%d turns became %d messages, want them as they are", KeepTurns, len(got))
	}
	got := collapseTurns(turns(KeepTurns + 2))
	if len(got) != 1+2*KeepTurns || !strings.HasPrefix(got[0].Text, "The 2 earlier turns are summarised to keep this request bounded:\n") ||
		strings.Contains(got[0].Text, "left out") {
		t.Errorf("collapsed to %d messages, first %q", len(got), got[0].Text)
	}
}

// TestClip: a text as long as the bound is kept whole; a longer one is cut
// on a character and marked.
func TestClip(t *testing.T) {
	t.Parallel()
	if got := clip("abcd", 4); got != "abcd" {
		t.Errorf("clip at its length = %q", got)
	}
	if got := clip("abcé", 4); got != "abc…" {
		t.Errorf("clip through a character = %q", got)
	}
}

// TestSummaryLines checks what the summary of older turns says of each
// kind of message: a call with its result's first line, a reply without a
// call, the operator's note, and nothing of an Environment Update, which
// the newest update supersedes.
func TestSummaryLines(t *testing.T) {
	t.Parallel()
	h := []model.Message{
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "1", Name: "wait", Arguments: `{"seconds": 1}`}}},
		{Role: model.RoleTool, CallID: "1", Text: "waited\nmore"},
		{Role: model.RoleUser, Text: updateHeader + "- (none yet)"},
		{Role: model.RoleAssistant, Text: "thinking"},
		{Role: model.RoleUser, Text: "Operator note: look left"},
	}
	for i := range KeepTurns {
		id := fmt.Sprint("kept", i)
		h = append(h, model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "observe_screen"}}},
			model.Message{Role: model.RoleTool, CallID: id, Text: "observed"})
	}
	got := collapseTurns(h)
	want := "The 2 earlier turns are summarised to keep this request bounded:\n" +
		"- you called wait {\"seconds\": 1} → waited\n" +
		"- you replied without a tool call\n" +
		"- Operator note: look left"
	if len(got) != 1+2*KeepTurns || got[0].Text != want {
		t.Errorf("collapsed to %d messages, summary:\n%s\nwant\n%s", len(got), got[0].Text, want)
	}
}

// TestUpdateTellsBindingsTabsAndControls checks the update says what the
// run has, not a fixed "none": the refs the model can type with their
// lengths (never the values), the browser's tabs and the focused window's
// named controls, bounded with the rest counted.
func TestUpdateTellsBindingsTabsAndControls(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 3)
	m.AddScreen(sha256.Sum256([]byte("a")), "screen 1")
	if upd := m.EnvironmentUpdate(); !strings.Contains(upd, "Data bindings: none.") || strings.Contains(upd, "Webpages") || strings.Contains(upd, "Named controls") {
		t.Fatalf("a run with nothing to tell:\n%s", upd)
	}
	m.SetBindings([]Binding{{Ref: "password", Length: 12, Secret: true}, {Ref: "answer_q1", Length: 4, Note: "the operator's answer to q1"}})
	m.SetTabs([]Tab{{Title: "Sign in", URL: "http://127.0.0.1:8080/login"}})
	m.SetControls(Controls{Window: "Calculator", List: []Control{{Name: "−", Role: "push button"}, {Name: "=", Role: "push button"}}, More: 7})
	upd := m.EnvironmentUpdate()
	for _, want := range []string{
		"- password: a secret value of 12 characters\n",
		"- answer_q1: a value of 4 characters, the operator's answer to q1\n",
		"Browser tabs:\n- \"Sign in\" at http://127.0.0.1:8080/login",
		"Named controls in \"Calculator\" (click_element takes the name):\n- \"−\" (push button)\n- \"=\" (push button)\n- and 7 more not listed\n",
	} {
		if !strings.Contains(upd, want) {
			t.Errorf("update lacks %q:\n%s", want, upd)
		}
	}
	if strings.Contains(upd, "none") {
		t.Errorf("update still says none:\n%s", upd)
	}
}

func TestLatestScreen(t *testing.T) {
	t.Parallel()
	m := New(EmitAlways, 3)
	if h := m.LatestScreen(); h != "" {
		t.Fatalf("latest before any screen: %q", h)
	}
	a := m.AddScreen(sha256.Sum256([]byte("a")), "screen 1")
	m.AddScreen(sha256.Sum256([]byte("b")), "screen 2")
	m.AddInput([]byte("in"), "reference")
	if again := m.AddScreen(sha256.Sum256([]byte("a")), "screen 3"); again != a || m.LatestScreen() != a {
		t.Fatalf("latest after seeing %s again: %s", a, m.LatestScreen())
	}
}

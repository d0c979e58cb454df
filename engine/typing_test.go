package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/atspi"
	"github.com/kasmrt/kasmrt/engine/events"
)

// typedChunks is what the double records when type_text types value as a
// secret: one input per secretChunk characters.
func typedChunks(value string) []string {
	var out []string
	for chunk := range slices.Chunk([]rune(value), secretChunk) {
		out = append(out, "type "+string(chunk))
	}
	return out
}

// TestRulesTypeTextWatchesTheFocus moves the keyboard focus from the
// password field to a search box while type_text types a secret: the
// typing stops at the chunk the focus moved in and the step is refused,
// naming both places but not the value, whether or not the secret is bound
// to a place; a focus that stays, or that cannot be read for a moment,
// takes the whole value.
func TestRulesTypeTextWatchesTheFocus(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-moving-focus!"
	const bound = `name: moving focus
app:
  command: [fake-app]
provides:
  pw:
    secret:
      env: FOCUS_SECRET
      into:
        - role: password text
steps:
  - type_text: pw
`
	unbound := strings.Replace(bound, "      into:\n        - role: password text\n", "", 1)
	password := &atspi.Accessible{Role: "password text", Name: "Password"}
	search := &atspi.Accessible{Role: "text", Name: "Search"}
	cases := []struct {
		name, scenario string
		moveAfter      int // characters typed before the focus moves; 0: never
		to             *atspi.Accessible
		status         events.Status
		message        string
		inputs         []string
	}{
		{"bound, the focus stays", bound, 0, nil, events.StatusOK, "typed the secret value \"pw\" (21 characters)", typedChunks(secret)},
		{"bound, the focus cannot be read after a while", bound, 8, nil, events.StatusOK, "typed the secret value", typedChunks(secret)},
		{"bound, the focus moves", bound, 4, search, events.StatusRefused,
			`the focus moved from the focused password text "Password" (window 0x`, typedChunks(secret)[:1]},
		{"unbound, the focus moves", unbound, 8, search, events.StatusRefused,
			`to the focused text "Search" (window 0x`, typedChunks(secret)[:2]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := fakeDialog()
			f.focused = password
			typed := 0
			f.on = func(f *fakeMachine, input string) {
				text, ok := strings.CutPrefix(input, "type ")
				if !ok {
					return
				}
				typed += len([]rune(text))
				if c.moveAfter > 0 && typed >= c.moveAfter {
					f.mu.Lock()
					f.focused = c.to
					f.mu.Unlock()
				}
			}
			r := loopRun(t, loopCase{scenario: c.scenario, operator: "runner: {}\n", machine: f, env: map[string]string{"FOCUS_SECRET": secret}})
			if len(r.rep.Steps) != 1 || r.rep.Steps[0].Status != c.status || !strings.Contains(r.rep.Steps[0].Message, c.message) {
				t.Fatalf("steps = %+v, want one %s containing %q", r.rep.Steps, c.status, c.message)
			}
			if msg := r.rep.Steps[0].Message; strings.Contains(msg, secret[:6]) {
				t.Errorf("the step's message shows the secret: %q", msg)
			}
			if got := f.inputs(); !slices.Equal(got, c.inputs) {
				t.Errorf("input = %q, want %q", got, c.inputs)
			}
		})
	}
}

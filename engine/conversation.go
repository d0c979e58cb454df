package engine

import (
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
)

// conversation is the loop's exchange with the model: the history every
// request resends, the memory of the screens it holds (which screens the
// model still sees, and what changed around them) and the detector of a
// loop that repeats itself. The run steps the calls the model chooses
// (turn.go); the conversation records what each turn said and became.
type conversation struct {
	history []model.Message
	memory  *memory.Memory
	stuck   *stuckDetector
}

// newConversation starts a conversation with its first message.
func newConversation(mem *memory.Memory, first model.Message) *conversation {
	return &conversation{history: []model.Message{first}, memory: mem, stuck: newStuckDetector()}
}

// add appends messages to the history.
func (c *conversation) add(ms ...model.Message) { c.history = append(c.history, ms...) }

// tell appends a user message.
func (c *conversation) tell(text string) {
	c.add(model.Message{Role: model.RoleUser, Text: text})
}

// answer appends a tool result for the call callID.
func (c *conversation) answer(callID, text string) {
	c.add(model.Message{Role: model.RoleTool, CallID: callID, Text: text})
}

// takeNotes passes the operator's notes on to the model, if there are any.
func (c *conversation) takeNotes(notes []string) {
	if len(notes) > 0 {
		c.tell("Operator note: " + strings.Join(notes, "\nOperator note: "))
	}
}

// context is the history as the model's memory lets it see it.
func (c *conversation) context() []model.Message { return c.memory.Context(c.history) }

// forget drops the bytes of the screens that left the model's context:
// they are never sent again, so the history keeps their handles only.
func (c *conversation) forget() { c.memory.Forget(c.history) }

// stuckDetector notices a loop that repeats itself: the same call with no
// screen change, or several actions leaving identical screens.
type stuckDetector struct {
	lastCall   string
	lastScreen [32]byte
	repeats    int
	sameScreen int
}

func newStuckDetector() *stuckDetector { return &stuckDetector{} }

// observe returns a hint for the model when the loop looks stuck, and a
// stable description of how for the report's concern.
func (d *stuckDetector) observe(tool, args string, sum [32]byte, action bool) (hint, kind string) {
	callKey := tool + " " + canonicalJSON(args)
	sameScreen := sum == d.lastScreen
	if callKey == d.lastCall && sameScreen {
		d.repeats++
	} else {
		d.repeats = 0
	}
	switch {
	case !sameScreen:
		d.sameScreen = 0
	case action:
		d.sameScreen++
	}
	d.lastCall, d.lastScreen = callKey, sum
	switch {
	case d.repeats >= 2:
		return fmt.Sprintf("Note: you made the same call (%s) %d times in a row and the screen did not change. Try something else.", tool, d.repeats+1),
			"the same call repeated with no change on the screen"
	case d.sameScreen >= 4:
		return fmt.Sprintf("Note: your last %d actions left the screen unchanged. Reconsider your approach.", d.sameScreen),
			"several actions in a row left the screen unchanged"
	}
	return "", ""
}

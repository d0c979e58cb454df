package engine

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/engine/model"
)

// historyText is a model reply's text as the history keeps it for later
// requests: at most memory.reply_max_bytes bytes, cut on a character
// boundary and marked. Every later request resends the history, so one
// runaway reply must not grow all of them.
func (s *runState) historyText(text string) string {
	limit := s.files.Operator.Memory.ReplyMaxBytes
	if limit <= 0 || len(text) <= limit {
		return text
	}
	n := limit
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + fmt.Sprintf("\n[reply cut: %d of %d bytes kept]", n, len(text))
}

// historyCalls is a reply's tool calls as the history keeps them: a call
// whose arguments are longer than memory.reply_max_bytes keeps its name and
// ID, and its arguments become a small JSON object saying how much was left
// out (the call itself was checked with the whole arguments).
func (s *runState) historyCalls(calls []model.ToolCall) []model.ToolCall {
	limit := s.files.Operator.Memory.ReplyMaxBytes
	out, copied := calls, false
	for i, c := range calls {
		if limit <= 0 || len(c.Arguments) <= limit {
			continue
		}
		if !copied {
			// The caller's calls are still checked and run as they came.
			out, copied = append([]model.ToolCall(nil), calls...), true
		}
		note, _ := json.Marshal(map[string]string{"cut": fmt.Sprintf("%d bytes of arguments left out", len(c.Arguments))})
		out[i].Arguments = string(note)
	}
	return out
}

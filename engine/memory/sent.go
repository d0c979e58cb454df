package memory

import "github.com/kasmrt/kasmrt/engine/model"

// LatestUpdate returns the newest Environment Update among a request's
// messages, or "" when it carries none.
func LatestUpdate(msgs []model.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if isUpdate(msgs[i]) {
			return msgs[i].Text
		}
	}
	return ""
}

// SinceReply returns what a request adds after the model's newest reply,
// Environment Updates left out: the result of its call, notes, corrections.
// On the first turn, with no reply yet, it is every message (the goal).
func SinceReply(msgs []model.Message) []model.Message {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			start = i + 1
			break
		}
	}
	var out []model.Message
	for _, m := range msgs[start:] {
		if !isUpdate(m) {
			out = append(out, m)
		}
	}
	return out
}

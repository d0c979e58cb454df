package engine

import (
	"fmt"
	"unicode/utf8"
)

// historyText is a model reply's text as the history keeps it for later
// requests: at most memory.reply_max_chars bytes, cut on a character
// boundary and marked. Every later request resends the history, so one
// runaway reply must not grow all of them.
func (s *runState) historyText(text string) string {
	limit := s.files.Operator.Memory.ReplyMaxChars
	if limit <= 0 || len(text) <= limit {
		return text
	}
	n := limit
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n] + fmt.Sprintf("\n[reply cut: %d of %d bytes kept]", n, len(text))
}

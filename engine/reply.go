package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/engine/model"
)

// historyText is a model reply's text as the history keeps it for later
// requests: at most memory.reply_max_bytes bytes, cut on a character
// boundary and marked. Every later request resends the history, so one
// runaway reply must not grow all of them.
func (l *goalLoop) historyText(text string) string {
	limit := l.files.Operator.Memory.ReplyMaxBytes
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
//
// The arguments are redacted first: a model that read a secret somewhere
// (or guessed one) and wrote it in a call must not have it sent back in
// every later request, nor kept in the summary of earlier turns, which
// cuts arguments where a redactor could no longer recognise them.
func (l *goalLoop) historyCalls(calls []model.ToolCall) []model.ToolCall {
	limit := l.files.Operator.Memory.ReplyMaxBytes
	out, copied := calls, false
	for i, c := range calls {
		args := redactArguments(c.Arguments, l.redact)
		if limit > 0 && len(args) > limit {
			note, _ := json.Marshal(map[string]string{"cut": fmt.Sprintf("%d bytes of arguments left out", len(args))})
			args = string(note)
		}
		if args == c.Arguments {
			continue
		}
		if !copied {
			// The caller's calls are still checked and run as they came.
			out, copied = append([]model.ToolCall(nil), calls...), true
		}
		out[i].Arguments = args
	}
	return out
}

// redactArguments returns a call's JSON arguments with the run's secrets
// taken out of every string in them, names included. The arguments are
// decoded and encoded again, so redaction works on values and never
// breaks the JSON around them; arguments that are not JSON are redacted
// as the text they are. Arguments without a secret are returned as they
// came.
func redactArguments(raw string, redact func(string) string) string {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return redact(raw)
	}
	changed := false
	v = redactJSON(v, func(x string) string {
		y := redact(x)
		changed = changed || y != x
		return y
	})
	if !changed {
		return raw
	}
	b, err := json.Marshal(v)
	if err != nil {
		return redact(raw)
	}
	return string(b)
}

// redactJSON passes every string of a decoded JSON value, object names
// included, through redact. Unlike events.RedactValue, which leaves the
// names of a step's arguments alone (the tool's own), it redacts names:
// here the model wrote them, and may have written a secret as one.
func redactJSON(v any, redact func(string) string) any {
	switch x := v.(type) {
	case string:
		return redact(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactJSON(e, redact)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[redact(k)] = redactJSON(e, redact)
		}
		return out
	}
	return v
}

package model

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

var (
	taggedCall = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*</tool_call>`)
	fencedCall = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*\\n?(\\{.*?\\})\\s*```")
)

// rescueCalls recovers tool calls a model wrote into its text instead of
// emitting them natively: <tool_call>{...}</tool_call> (as Qwen writes them)
// or code-fenced JSON objects with a name and arguments. Calls get IDs of
// the form rescued_N and Rescued set.
func rescueCalls(text string) []ToolCall {
	var bodies []string
	for _, m := range taggedCall.FindAllStringSubmatch(text, -1) {
		bodies = append(bodies, m[1])
	}
	if len(bodies) == 0 {
		for _, m := range fencedCall.FindAllStringSubmatch(text, -1) {
			bodies = append(bodies, m[1])
		}
	}
	var calls []ToolCall
	for _, body := range bodies {
		call, ok := parseRescued(body)
		if !ok {
			continue
		}
		call.ID = fmt.Sprintf("rescued_%d", len(calls)+1)
		call.Rescued = true
		calls = append(calls, call)
	}
	return calls
}

func parseRescued(body string) (ToolCall, bool) {
	var v struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		// Some models write "parameters" instead of "arguments".
		Parameters json.RawMessage `json:"parameters"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &v); err != nil || v.Name == "" {
		return ToolCall{}, false
	}
	args := v.Arguments
	if len(args) == 0 {
		args = v.Parameters
	}
	// Arguments may arrive as an object or as a JSON string holding one;
	// either way the engine receives the object's text.
	var s string
	if json.Unmarshal(args, &s) == nil {
		return ToolCall{Name: v.Name, Arguments: s}, true
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return ToolCall{Name: v.Name, Arguments: string(args)}, true
}

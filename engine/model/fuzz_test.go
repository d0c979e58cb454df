package model

import (
	"strings"
	"testing"
)

// A reply body is whatever the endpoint sent: garbage is an error, never a
// panic, and what parses keeps the body as received (the recorder and the
// report quote it).
func FuzzParseReply(f *testing.F) {
	for _, seed := range []string{
		`{"choices":[{"message":{"content":"hi","tool_calls":[{"id":"1","type":"function","function":{"name":"observe_screen","arguments":"{}"}}]}}],"usage":{"prompt_tokens":3}}`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`,
		`{"output":[{"type":"function_call","call_id":"c","name":"press_key","arguments":"{\"key\":\"Return\"}"},{"type":"message","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":1,"input_tokens_details":{"cached_tokens":0}}}`,
		`{"choices":[]}`, `{"choices":null}`, `[]`, `null`, `{"choices":[{"message":{"content":{"x":1}}}]}`,
		`{"usage":{"a":{"b":{"c":1e308}}},"choices":[{"message":{}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		for name, parse := range map[string]func([]byte) (Response, error){"chat": parseChat, "responses": parseResponses} {
			resp, err := parse(raw)
			if err == nil && string(resp.Raw) != string(raw) {
				t.Errorf("%s: the body kept is %q, not %q", name, resp.Raw, raw)
			}
		}
	})
}

// Text a model wrote instead of a native call: any text gives calls that
// each have a name and an ID of their own.
func FuzzRescueCalls(f *testing.F) {
	for _, seed := range []string{
		"<tool_call>{\"name\": \"click\", \"arguments\": {\"target\": \"ok\"}}</tool_call>",
		"<tool_call>{\"name\": \"click\", \"parameters\": \"{\\\"target\\\": \\\"ok\\\"}\"}</tool_call>",
		"```json\n{\"name\": \"wait\", \"arguments\": {\"seconds\": 1}}\n```",
		"<tool_call>{\"name\": \"\"}</tool_call>", "<tool_call></tool_call>",
		"<tool_call>{\"name\": \"a\"}</tool_call><tool_call>{\"name\": \"b\"}</tool_call>", "```{```}```",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		seen := map[string]bool{}
		for i, c := range rescueCalls(text) {
			if c.Name == "" || !c.Rescued || !strings.HasPrefix(c.ID, "rescued_") || seen[c.ID] {
				t.Fatalf("call %d from %q: %+v", i, text, c)
			}
			seen[c.ID] = true
		}
	})
}

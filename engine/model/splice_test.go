package model

import (
	"encoding/json"
	"errors"
	"net/url"
	"testing"
)

// TestSpliceImages: a body marshalled with placeholders comes out with
// each image's data URL where the placeholder was, an image used twice in
// both places, the same bytes a body marshalled with the data URLs
// themselves has.
func TestSpliceImages(t *testing.T) {
	t.Parallel()
	one, two := []byte("first png"), []byte("second png")
	b := newImageURLs().begin()
	body := map[string]any{"a": b.url(one), "b": b.url(two), "c": []any{"text", b.url(one)}}
	got, err := marshalBody(body, b)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(map[string]any{"a": dataURL(one), "b": dataURL(two), "c": []any{"text", dataURL(one)}})
	if string(got) != string(want) {
		t.Errorf("spliced body\n %s\nwant\n %s", got, want)
	}
}

// TestChatBodyShape: a user message with images carries its text before
// them, each image after its handle; an assistant turn of calls alone has
// no content; a tool result without images adds no message of images;
// an empty assistant turn has empty text; a request without tools sends
// no tools field.
func TestChatBodyShape(t *testing.T) {
	t.Parallel()
	req := Request{Messages: []Message{
		{Role: RoleUser, Text: "Goal: look.", Images: []Image{{Handle: "input_image_1", PNG: []byte("png")}}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "observe_screen", Arguments: "{}"}}},
		{Role: RoleTool, CallID: "c1", Text: "observed"},
		{Role: RoleAssistant},
	}}
	raw, err := chatBody("m", GenerationOptions{}, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, found := fields["tools"]; len(body.Messages) != 4 || found {
		t.Fatalf("body %s: want four messages and no tools", raw)
	}
	if c, found := body.Messages[3]["content"]; !found || c != "" {
		t.Errorf("an empty assistant turn's content %v (present %v), want empty text", c, found)
	}
	parts, _ := body.Messages[0]["content"].([]any)
	first, _ := parts[0].(map[string]any)
	label, _ := parts[1].(map[string]any)
	if len(parts) != 3 || first["text"] != "Goal: look." || label["text"] != "input_image_1:" {
		t.Errorf("user content %v, want the text, the handle, the image", parts)
	}
	if c, found := body.Messages[1]["content"]; !found || c != nil {
		t.Errorf("assistant content %v (present %v), want null", c, found)
	}
}

// TestErrorTexts: an API error says its body only when there is one, and
// a long text is cut only past its bound.
func TestErrorTexts(t *testing.T) {
	t.Parallel()
	if got := (&APIError{Status: 503}).Error(); got != "model endpoint replied HTTP 503" {
		t.Errorf("APIError without a body: %q", got)
	}
	if got := (&APIError{Status: 503, Body: "busy"}).Error(); got != "model endpoint replied HTTP 503: busy" {
		t.Errorf("APIError with a body: %q", got)
	}
	if got := truncate("abcd", 4); got != "abcd" {
		t.Errorf("truncate at its length: %q", got)
	}
}

// TestResponsesBodyShape: a tool result without images is sent as its
// text, and a request without tools sends no tools field.
func TestResponsesBodyShape(t *testing.T) {
	t.Parallel()
	req := Request{Messages: []Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "observe_screen", Arguments: "{}"}}},
		{Role: RoleTool, CallID: "c1", Text: "observed"},
	}}
	raw, err := responsesBody("m", GenerationOptions{}, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, found := fields["tools"]; found {
		t.Errorf("body %s: want no tools", raw)
	}
	input, _ := fields["input"].([]any)
	var output any
	for _, item := range input {
		if m, _ := item.(map[string]any); m["type"] == "function_call_output" {
			output = m["output"]
		}
	}
	if output != "observed" {
		t.Errorf("the tool result's output %v, want its text", output)
	}
}

// TestOptionsSet: only the options given a value are named.
func TestOptionsSet(t *testing.T) {
	t.Parallel()
	n := 5
	if got := (GenerationOptions{}).Set(); len(got) != 0 {
		t.Errorf("no options set: %q", got)
	}
	if got := (GenerationOptions{MaxTokens: &n}).Set(); len(got) != 1 || got[0] != OptMaxTokens {
		t.Errorf("max_tokens set: %q", got)
	}
}

// TestRescueEveryFencedCall: every code-fenced call in a reply is
// rescued, not only the first.
func TestRescueEveryFencedCall(t *testing.T) {
	t.Parallel()
	text := "First:\n```json\n{\"name\": \"observe_screen\", \"arguments\": {}}\n```\nthen:\n```json\n{\"name\": \"press_key\", \"arguments\": {\"key\": \"Return\"}}\n```\n"
	calls := rescueCalls(text)
	if len(calls) != 2 || calls[0].Name != "observe_screen" || calls[1].Name != "press_key" {
		t.Errorf("rescued %+v, want both calls", calls)
	}
}

// TestWithoutURLQuery: a transport error names its URL without the
// query, the fragment or a user's credentials.
func TestWithoutURLQuery(t *testing.T) {
	t.Parallel()
	err := &url.Error{Op: "Post", URL: "http://me:pw-secret@model.test/v1/chat?key=sk-1#frag", Err: errors.New("connection refused")}
	if got, want := withoutURLQuery(err), `Post "http://model.test/v1/chat": connection refused`; got != want {
		t.Errorf("withoutURLQuery = %q, want %q", got, want)
	}
	// A URL that does not parse is cut at its query, also when the query
	// is all there is.
	for raw, want := range map[string]string{
		"http://[::1/v1?key=sk-1": `Post "http://[::1/v1": connection refused`,
		"?key=sk-1#%zz":           `Post "": connection refused`,
		"http://[::1/v1#frag%zz":  `Post "http://[::1/v1": connection refused`,
	} {
		err := &url.Error{Op: "Post", URL: raw, Err: errors.New("connection refused")}
		if got := withoutURLQuery(err); got != want {
			t.Errorf("withoutURLQuery(%s) = %q, want %q", raw, got, want)
		}
	}
}

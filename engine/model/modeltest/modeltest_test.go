package modeltest

import (
	"encoding/base64"
	"encoding/json"
	"image"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// post sends body to the server's path and decodes the JSON reply.
func post(t *testing.T, srv *Server, path, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(srv.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("reply %s: %v", raw, err)
	}
	return out
}

// script is a turn of two calls with text, a call without text and a
// text answer: the shapes a client's replies come in.
func script() []Exchange {
	return []Exchange{
		Calls(Call("observe_screen", `{}`), Call("press_key", `{"key":"Return"}`)).WithText("looking"),
		Call("observe_screen", `{}`),
		Text("done"),
	}
}

// TestChatCompletionsReplies: each reply is shaped as Chat Completions
// shapes it: a call's text kept, content null for calls alone, call IDs
// numbered across the run, finish_reason tool_calls only with calls; the
// requests are numbered from 1 and answered one at a time.
func TestChatCompletionsReplies(t *testing.T) {
	t.Parallel()
	srv := New(t, script()...)
	type want struct {
		content any
		ids     []string
		finish  string
	}
	for i, w := range []want{
		{"looking", []string{"call_1", "call_2"}, "tool_calls"},
		{nil, []string{"call_3"}, "tool_calls"},
		{"done", nil, "stop"},
	} {
		reply := post(t, srv, "/v1/chat/completions", `{"model": "m"}`)
		choices, _ := reply["choices"].([]any)
		choice, _ := choices[0].(map[string]any)
		msg, _ := choice["message"].(map[string]any)
		var ids []string
		for _, c := range objects(msg["tool_calls"]) {
			ids = append(ids, c["id"].(string))
		}
		_, hasCalls := msg["tool_calls"]
		if msg["content"] != w.content || !reflect.DeepEqual(ids, w.ids) || choice["finish_reason"] != w.finish || hasCalls != (w.ids != nil) {
			t.Errorf("reply %d: %v, want content %v, calls %v, finish %s", i+1, choice, w.content, w.ids, w.finish)
		}
	}
	for i, r := range srv.Requests() {
		if r.N != i+1 || r.Model() != "m" {
			t.Errorf("request %d numbered %d, model %q", i+1, r.N, r.Model())
		}
	}
	if p := srv.PeakConcurrency(); p != 1 {
		t.Errorf("peak concurrency %d, want 1 for requests one after another", p)
	}
}

// TestResponsesReplies: each reply is shaped as Responses shapes it: a
// message item only for text or a turn without calls, each call its own
// item with an ID numbered by request and place.
func TestResponsesReplies(t *testing.T) {
	t.Parallel()
	srv := New(t, script()...)
	for i, want := range [][]string{
		{"message:looking", "function_call:fc_1_1:call_1", "function_call:fc_1_2:call_2"},
		{"function_call:fc_2_1:call_3"},
		{"message:done"},
	} {
		reply := post(t, srv, "/v1/responses", `{"model": "m"}`)
		var got []string
		for _, item := range objects(reply["output"]) {
			switch item["type"] {
			case "message":
				content := objects(item["content"])
				got = append(got, "message:"+content[0]["text"].(string))
			default:
				got = append(got, item["type"].(string)+":"+item["id"].(string)+":"+item["call_id"].(string))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("reply %d output %q, want %q", i+1, got, want)
		}
	}
}

// TestRequestHelpers: a request shows itself as indented JSON, and an
// image that is not a data URL or does not decode is named by its place.
func TestRequestHelpers(t *testing.T) {
	t.Parallel()
	r := Request{N: 2, Path: "/v1/chat/completions", Raw: []byte(`{"model":"m"}`)}
	if got, want := r.String(), "request 2 /v1/chat/completions\n{\n  \"model\": \"m\"\n}"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	for _, c := range []struct{ url, want string }{
		{"http://model.test/a.png", "image 2 is not a base64 data URL"},
		{"data:image/png;base64,!!", "image 2: illegal base64"},
		{"data:image/png;base64,bm90IGEgcG5n", "image 2: image: unknown format"},
	} {
		body := map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + b64png()}},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": c.url}},
		}}}}
		r := Request{Protocol: ChatCompletions, Body: body}
		if _, err := r.Images(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
}

// b64png is a one-pixel PNG as base64.
func b64png() string {
	return base64.StdEncoding.EncodeToString(PNG(image.NewGray(image.Rect(0, 0, 1, 1))))
}

package model_test

import (
	"context"
	"errors"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// kimiReply is a Chat Completions reply as Kimi's API writes one: the
// reasoning apart in reasoning_content, tool-call IDs of the form
// functions.NAME:N and an index on each call.
const kimiReply = `{"id":"chatcmpl-kimi-1","object":"chat.completion","created":1764750000,"model":"kimi-k3",
"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"",
"reasoning_content":"The dialog is open; I look at it first.",
"tool_calls":[{"index":0,"id":"functions.observe_screen:0","type":"function","function":{"name":"observe_screen","arguments":"{}"}}]}}],
"usage":{"prompt_tokens":1520,"completion_tokens":41,"total_tokens":1561,"cached_tokens":0}}`

// TestKimiProfile checks the kimi-k3 profile against a reply in Kimi's
// shape: the request speaks Chat Completions with the profile's model,
// options and tool_choice, and the reply's call is read with its ID; the
// tool_choice its API does not take is refused before any request.
func TestKimiProfile(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Garbage(kimiReply))
	temp := 0.6
	c, _ := newClient(t, srv, "kimi-k3", func(cfg *model.Config) {
		cfg.Options = model.GenerationOptions{Temperature: &temp, ReasoningEffort: "high"}
	})
	resp, err := c.Turn(context.Background(), model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Text: "Goal: confirm the dialog."}},
		Tools:    []model.Tool{{Name: "observe_screen", Description: "Capture the screen."}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "observe_screen" || resp.ToolCalls[0].ID != "functions.observe_screen:0" {
		t.Errorf("calls = %+v", resp.ToolCalls)
	}
	req := srv.Requests()[0]
	body := req.Body
	if req.Path != "/v1/chat/completions" || body["model"] != "kimi-k3" || body["tool_choice"] != "auto" ||
		body["reasoning_effort"] != "high" || body["temperature"] != 0.6 {
		t.Errorf("request %s: %v", req.Path, body)
	}
	p := profile(t, "kimi-k3")
	err = model.ValidateOptions(p, model.GenerationOptions{ToolChoice: model.ToolChoiceRequired})
	if _, ok := errors.AsType[*model.UnsupportedToolChoiceError](err); !ok {
		t.Errorf("tool_choice required: %v, want refused", err)
	}
	topK := 20
	if err := model.ValidateOptions(p, model.GenerationOptions{TopK: &topK}); err == nil {
		t.Error("kimi-k3 accepted top_k")
	}
}

// TestToolChoiceSent checks tool_choice goes out as the operator set it,
// and as the profile's default (auto) otherwise.
func TestToolChoiceSent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ profile, set, want string }{
		{"openai-compatible", "", "auto"},
		{"openai-compatible", "required", "required"},
		{"qwen3-vl-8b-instruct", "none", "none"},
		{"gpt", "required", "required"},
	} {
		srv := modeltest.New(t, modeltest.Text("ok"))
		c, _ := newClient(t, srv, tt.profile, func(cfg *model.Config) { cfg.Options.ToolChoice = tt.set })
		if _, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}},
			Tools: []model.Tool{{Name: "wait", Description: "Wait."}}}); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].Body["tool_choice"]; got != tt.want {
			t.Errorf("%s with %q: tool_choice = %v, want %s", tt.profile, tt.set, got, tt.want)
		}
	}
}

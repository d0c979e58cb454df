package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw     string
		want    reply
		wantErr bool
	}{
		{raw: "observe_screen\n", want: reply{tool: "observe_screen", args: "{}"}},
		{raw: `press_key {"key":"Return"}` + "\nThe name is typed; I confirm.", want: reply{tool: "press_key", args: `{"key":"Return"}`, text: "The name is typed; I confirm."}},
		{raw: "text: I am done.", want: reply{text: "I am done."}},
		{raw: `click {"target":`, wantErr: true},
		{raw: "\n", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseReply(tt.raw)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseReply(%q) = %+v, %v; want %+v, error %v", tt.raw, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestChatTurn plays one turn: the request's text and image are written
// out, and the reply file written afterwards becomes the tool call.
func TestChatTurn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := &handler{dir: dir, model: "hand", poll: 5 * time.Millisecond}
	srv := httptest.NewServer(h)
	defer srv.Close()

	png := []byte("\x89PNG fake bytes")
	body, _ := json.Marshal(map[string]any{
		"model": "hand",
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "observe_screen", "parameters": map[string]any{}}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "You test apps."},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "text", "text": "The screen is tool_generated_image_1"},
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)}},
			}},
		},
	})
	done := make(chan map[string]any, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Error(err)
			done <- nil
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		done <- out
	}()

	md := filepath.Join(dir, "0001.md")
	for {
		if _, err := os.Stat(md); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	text, _ := os.ReadFile(md)
	for _, want := range []string{"- observe_screen", "You test apps.", "tool_generated_image_1", "[image: 0001-1.png]"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("0001.md lacks %q:\n%s", want, text)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "0001-1.png")); string(got) != string(png) {
		t.Errorf("image written as %q, want the request's bytes", got)
	}
	// Written elsewhere and renamed into place, as a person's editor
	// does: the handler polls for the reply and drops one it cannot
	// parse, so a reply caught half written (empty) was lost and the
	// test waited for ever.
	tmp := filepath.Join(dir, "reply.tmp")
	if err := os.WriteFile(tmp, []byte(`click {"target":"ok"}`+"\nClicking OK."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "0001.reply")); err != nil {
		t.Fatal(err)
	}
	out := <-done
	choice := out["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	call := choice["tool_calls"].([]any)[0].(map[string]any)["function"].(map[string]any)
	if call["name"] != "click" || call["arguments"] != `{"target":"ok"}` || choice["content"] != "Clicking OK." {
		t.Errorf("reply = %v, want the click on ok with its text", choice)
	}
}

// Command handmodel is an OpenAI-compatible Chat Completions endpoint
// played by a person: it writes each request out — the new messages as
// readable text, every new image as a PNG — and answers with the reply the
// person writes back after looking at them. It is how the goal gallery's
// model turns are chosen by eye and then recorded with kasmrt's
// --record-model.
//
//	go run ./scripts/handmodel -dir /tmp/turns -addr 127.0.0.1:8931 &
//	KASM_RUNTIME_VISION_ENDPOINT=http://127.0.0.1:8931/v1 \
//	  kasmrt run SCENARIO --headless --record-model SCENARIO.model.jsonl
//
// `handmodel -replies-only REC > NAME.model.jsonl` drops the requests (and
// their screenshots) from the recording; replay needs only the replies.
//
// For request N it writes DIR/NNNN.md (the offered tools and the messages
// the previous request did not have) and DIR/NNNN-K.png (their images),
// then waits for DIR/NNNN.reply: a first line `TOOL {json arguments}`, and
// any further lines the assistant's text. Write the reply elsewhere and
// rename it into place, so the server never reads half a file.
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	dir := flag.String("dir", "", "where requests are written and replies are read")
	addr := flag.String("addr", "127.0.0.1:8931", "the loopback address to listen on")
	modelName := flag.String("model", "hand/played-by-eye", "the model name GET /v1/models lists")
	repliesOnly := flag.String("replies-only", "", "instead of serving, print this --record-model file with each request left out (the screenshots make it large; replay needs only the replies)")
	flag.Parse()
	if *repliesOnly != "" {
		if err := keepReplies(*repliesOnly, os.Stdout); err != nil {
			log.Fatalf("handmodel: %v", err)
		}
		return
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "handmodel: -dir is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatalf("handmodel: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h := &handler{dir: *dir, model: *modelName, poll: 200 * time.Millisecond}
	srv := &http.Server{Addr: *addr, Handler: h}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	log.Printf("handmodel: listening on http://%s/v1, requests in %s", *addr, *dir)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatalf("handmodel: %v", err)
	}
}

// handler serves the two paths an OpenAI-compatible client uses.
type handler struct {
	dir   string
	model string
	// poll is how often a waiting request looks for its reply file: a
	// person answers in seconds, so a fifth of a second is plenty.
	poll time.Duration

	mu sync.Mutex
	// n counts chat requests.
	n int
}

// newMessages is where the messages the person has not seen begin: after
// the last assistant message, which was the person's previous reply. The
// runtime trims old images from the history, so counting messages would not
// do.
func newMessages(msgs []message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return i + 1
		}
	}
	return 0
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": h.model, "object": "model"}}})
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		h.chat(w, r)
	default:
		http.Error(w, `{"error":{"message":"handmodel serves GET /v1/models and POST /v1/chat/completions"}}`, http.StatusNotFound)
	}
}

func (h *handler) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "handmodel: "+err.Error(), http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.n++
	n := h.n
	h.mu.Unlock()
	from := newMessages(req.Messages)

	base := filepath.Join(h.dir, fmt.Sprintf("%04d", n))
	if err := writeRequest(base, body, req, from); err != nil {
		http.Error(w, "handmodel: "+err.Error(), http.StatusInternalServerError)
		return
	}
	log.Printf("request %d waiting: %s.md → reply in %s.reply", n, base, base)
	rep, err := h.waitReply(r.Context(), base+".reply")
	if err != nil {
		log.Printf("request %d: %v", n, err)
		return
	}
	writeJSON(w, completion(n, h.model, rep))
}

// chatRequest is the part of a Chat Completions request a person reads.
type chatRequest struct {
	Messages []message `json:"messages"`
	Tools    []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// writeRequest writes the whole body, the new messages as text and their
// images as PNG files, the text last so a watcher that waits for it finds
// the images already there.
func writeRequest(base string, body []byte, req chatRequest, from int) error {
	if err := os.WriteFile(base+".json", body, 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# request %s (%d messages, %d new)\n\n## tools\n", filepath.Base(base), len(req.Messages), len(req.Messages)-from)
	for _, t := range req.Tools {
		fmt.Fprintf(&b, "- %s %s\n", t.Function.Name, compact(t.Function.Parameters))
	}
	images := 0
	for i, m := range req.Messages[from:] {
		fmt.Fprintf(&b, "\n## message %d: %s", from+i+1, m.Role)
		if m.ToolCallID != "" {
			fmt.Fprintf(&b, " (for %s)", m.ToolCallID)
		}
		b.WriteString("\n")
		if len(m.ToolCalls) > 0 {
			fmt.Fprintf(&b, "tool_calls: %s\n", compact(m.ToolCalls))
		}
		var text string
		if json.Unmarshal(m.Content, &text) == nil {
			b.WriteString(text + "\n")
			continue
		}
		var parts []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if err := json.Unmarshal(m.Content, &parts); err != nil {
			fmt.Fprintf(&b, "(content not read: %v)\n", err)
			continue
		}
		for _, p := range parts {
			switch p.Type {
			case "text":
				b.WriteString(p.Text + "\n")
			case "image_url":
				images++
				name := fmt.Sprintf("%s-%d.png", base, images)
				if err := writeDataURL(name, p.ImageURL.URL); err != nil {
					fmt.Fprintf(&b, "[image not written: %v]\n", err)
					continue
				}
				fmt.Fprintf(&b, "[image: %s]\n", filepath.Base(name))
			}
		}
	}
	return os.WriteFile(base+".md", []byte(b.String()), 0o644)
}

func writeDataURL(name, url string) error {
	_, data, ok := strings.Cut(url, ";base64,")
	if !ok {
		return fmt.Errorf("not a base64 data URL")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return err
	}
	return os.WriteFile(name, raw, 0o644)
}

// reply is what the person chose: one tool call, or text alone.
type reply struct {
	tool, args, text string
}

// parseReply reads `TOOL {json}` on the first line and text after it; a
// first line starting with "text:" is a reply without a tool call.
func parseReply(raw string) (reply, error) {
	first, rest, _ := strings.Cut(strings.TrimLeft(raw, "\n"), "\n")
	first = strings.TrimSpace(first)
	if after, ok := strings.CutPrefix(first, "text:"); ok {
		return reply{text: strings.TrimSpace(after + "\n" + rest)}, nil
	}
	tool, args, _ := strings.Cut(first, " ")
	args = strings.TrimSpace(args)
	if args == "" {
		args = "{}"
	}
	if tool == "" {
		return reply{}, errors.New("the first line names no tool")
	}
	if !json.Valid([]byte(args)) {
		return reply{}, fmt.Errorf("the arguments of %s are not JSON: %s", tool, args)
	}
	return reply{tool: tool, args: args, text: strings.TrimSpace(rest)}, nil
}

func (h *handler) waitReply(ctx context.Context, name string) (reply, error) {
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		raw, err := os.ReadFile(name)
		if err == nil {
			rep, perr := parseReply(string(raw))
			if perr == nil {
				return rep, nil
			}
			log.Printf("%s: %v (fix it and rename it into place again)", name, perr)
			os.Remove(name)
		}
		select {
		case <-ctx.Done():
			return reply{}, fmt.Errorf("the client gave up waiting: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

func completion(n int, model string, rep reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": rep.text}
	finish := "stop"
	if rep.tool != "" {
		finish = "tool_calls"
		msg["tool_calls"] = []any{map[string]any{
			"id": fmt.Sprintf("call_%d", n), "type": "function",
			"function": map[string]any{"name": rep.tool, "arguments": rep.args},
		}}
	}
	return map[string]any{
		"id": fmt.Sprintf("hand-%d", n), "object": "chat.completion", "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
	}
}

// keepReplies copies a recording with every request replaced by a note.
func keepReplies(name string, w io.Writer) error {
	raw, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var ex map[string]any
		if err := json.Unmarshal(line, &ex); err != nil {
			return fmt.Errorf("%s:%d: %w", name, i+1, err)
		}
		if _, ok := ex["request"]; ok {
			ex["request"] = "(left out: the model's turns were chosen by a person reading each request; replay needs the replies only)"
		}
		if err := enc.Encode(ex); err != nil {
			return err
		}
	}
	return nil
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

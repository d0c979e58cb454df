package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// sleeps records the waits a client asked for instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

func profile(t *testing.T, name string) model.Profile {
	t.Helper()
	p, err := model.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newClient(t *testing.T, srv *modeltest.Server, profileName string, mod func(*model.Config)) (*model.Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	cfg := model.Config{
		Endpoint: srv.URL(),
		Key:      "sk-test-secret-value",
		Profile:  profile(t, profileName),
		Sleep:    s.sleep,
	}
	if mod != nil {
		mod(&cfg)
	}
	// The default profile names no model: the server's only one is used.
	name, err := model.ResolveName(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profile.ServedModel = name
	c, err := model.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

func tinyPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.RGBA{R: 255, A: 255})
	return modeltest.PNG(img)
}

// history is a conversation that exercises every role: a user message with
// an input image, an assistant tool call, and a tool result with a screen.
func history() model.Request {
	return model.Request{
		System: "system prompt",
		Messages: []model.Message{
			{Role: model.RoleUser, Text: "Test the app.", Images: []model.Image{{Handle: "input_image_1", PNG: tinyPNG()}}},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "native-id-7", Name: "observe_screen", Arguments: "{}"}}},
			{Role: model.RoleTool, CallID: "native-id-7", Text: "Screen captured.", Images: []model.Image{{Handle: "tool_generated_image_1", PNG: tinyPNG()}}},
		},
		Tools: []model.Tool{
			{Name: "wait", Description: "Wait.", Parameters: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number"}},"required":["seconds"]}`)},
			{Name: "click", Description: "Click."},
			{Name: "observe_screen", Description: "Look."},
		},
	}
}

func TestTurnProtocols(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"qwen3-vl-8b-instruct", "gpt", "openai-compatible"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, modeltest.CallID("native-42", "click", `{"target": "center"}`))
			c, _ := newClient(t, srv, name, nil)
			seed := int64(7)
			req := history()
			req.Seed = &seed
			resp, err := c.Turn(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := []model.ToolCall{{ID: "native-42", Name: "click", Arguments: `{"target": "center"}`}}
			if !reflect.DeepEqual(resp.ToolCalls, want) {
				t.Errorf("calls = %+v, want %+v", resp.ToolCalls, want)
			}
			if resp.Attempts != 1 || len(resp.Raw) == 0 {
				t.Errorf("attempts %d, raw %d bytes", resp.Attempts, len(resp.Raw))
			}

			got := srv.Requests()[0]
			p := c.Profile()
			if got.Model() != p.ServedModel {
				t.Errorf("model = %q, want %q", got.Model(), p.ServedModel)
			}
			if names := got.ToolNames(); !slices.Equal(names, []string{"click", "observe_screen", "wait"}) {
				t.Errorf("tools sent as %v, want sorted", names)
			}
			if auth := got.Header.Get("Authorization"); auth != "Bearer sk-test-secret-value" {
				t.Errorf("Authorization = %q", auth)
			}
			urls := got.ImageURLs()
			if len(urls) != 2 {
				t.Fatalf("sent %d images, want 2:\n%s", len(urls), got)
			}
			for _, u := range urls {
				if !strings.HasPrefix(u, "data:image/png;base64,") {
					t.Errorf("image sent as %.40q, want a PNG data URL", u)
				}
			}
			if imgs, err := got.Images(); err != nil || imgs[1].Bounds().Dx() != 4 {
				t.Errorf("images do not decode: %v", err)
			}
			text := got.Text()
			for _, want := range []string{"system prompt", "input_image_1:", "tool_generated_image_1:", "Screen captured."} {
				if !strings.Contains(text, want) {
					t.Errorf("request text lacks %q:\n%s", want, got)
				}
			}

			msgs := got.Messages()
			switch p.Protocol {
			case model.ChatCompletions:
				if got.Path != "/v1/chat/completions" {
					t.Errorf("path %s", got.Path)
				}
				if got.Body["seed"] != 7.0 {
					t.Errorf("seed = %v, want 7", got.Body["seed"])
				}
				roles := []string{}
				for _, m := range msgs {
					roles = append(roles, m["role"].(string))
				}
				// The tool result's screen follows as user-role evidence.
				if !slices.Equal(roles, []string{"system", "user", "assistant", "tool", "user"}) {
					t.Errorf("roles = %v", roles)
				}
				if msgs[3]["tool_call_id"] != "native-id-7" {
					t.Errorf("tool message = %v", msgs[3])
				}
				tc := msgs[2]["tool_calls"].([]any)[0].(map[string]any)
				if tc["id"] != "native-id-7" {
					t.Errorf("assistant call id = %v", tc["id"])
				}
				tool := got.Body["tools"].([]any)[0].(map[string]any)
				if tool["type"] != "function" || tool["function"].(map[string]any)["parameters"] == nil {
					t.Errorf("tool shape = %v", tool)
				}
			case model.Responses:
				if got.Path != "/v1/responses" {
					t.Errorf("path %s", got.Path)
				}
				if got.Body["store"] != false {
					t.Errorf("store = %v, want false", got.Body["store"])
				}
				if _, ok := got.Body["seed"]; ok {
					t.Error("Responses request carries a seed")
				}
				if got.Body["instructions"] != "system prompt" {
					t.Errorf("instructions = %v", got.Body["instructions"])
				}
				if msgs[1]["type"] != "function_call" || msgs[1]["call_id"] != "native-id-7" {
					t.Errorf("function_call item = %v", msgs[1])
				}
				if msgs[2]["type"] != "function_call_output" || msgs[2]["call_id"] != "native-id-7" {
					t.Errorf("function_call_output item = %v", msgs[2])
				}
			}
		})
	}
}

func TestUsageFlattened(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Text("a").WithUsage(map[string]any{"prompt_tokens_details": map[string]any{"cached_tokens": 40, "audio_tokens": 0}}),
		modeltest.Text("b"),
	)
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", nil)
	var total map[string]float64
	for range 2 {
		resp, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		total = model.AddUsage(total, resp.Usage)
	}
	want := map[string]float64{
		"prompt_tokens": 200, "completion_tokens": 20, "total_tokens": 220,
		"prompt_tokens_details.cached_tokens": 40, "prompt_tokens_details.audio_tokens": 0,
	}
	if !reflect.DeepEqual(total, want) {
		t.Errorf("usage total = %v, want %v", total, want)
	}
}

func TestResponsesUsage(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Text("done"))
	c, _ := newClient(t, srv, "gpt", nil)
	resp, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "done" || resp.Usage["input_tokens"] != 100 || resp.Usage["output_tokens_details.reasoning_tokens"] != 0 {
		t.Errorf("response = %q, usage %v", resp.Text, resp.Usage)
	}
	if _, ok := resp.Usage["output_tokens_details.reasoning_tokens"]; !ok {
		t.Errorf("usage lacks nested reasoning_tokens: %v", resp.Usage)
	}
}

func TestGenerationOptionsSent(t *testing.T) {
	t.Parallel()
	maxTokens, temp, topK := 12800, 0.7, 20
	tests := []struct {
		profile string
		opts    model.GenerationOptions
		want    map[string]any
	}{
		{"qwen3-vl-32b-instruct", model.GenerationOptions{MaxTokens: &maxTokens, Temperature: &temp, TopK: &topK},
			map[string]any{"max_tokens": 12800.0, "temperature": 0.7, "top_k": 20.0}},
		{"gpt", model.GenerationOptions{MaxTokens: &maxTokens, ReasoningEffort: "medium"},
			map[string]any{"max_output_tokens": 12800.0, "reasoning": map[string]any{"effort": "medium"}}},
	}
	for _, tt := range tests {
		t.Run(tt.profile, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, modeltest.Text("ok"))
			c, _ := newClient(t, srv, tt.profile, func(cfg *model.Config) { cfg.Options = tt.opts })
			if _, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			body := srv.Requests()[0].Body
			for k, v := range tt.want {
				if !reflect.DeepEqual(body[k], v) {
					t.Errorf("%s = %v, want %v", k, body[k], v)
				}
			}
		})
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		script    []modeltest.Exchange
		retry     int
		wantErr   bool
		wantSleep []time.Duration
		check     func(t *testing.T, err error)
	}{
		{
			name:      "429 then success honours Retry-After",
			script:    []modeltest.Exchange{modeltest.Status(429, 7*time.Second), modeltest.Text("ok")},
			wantSleep: []time.Duration{7 * time.Second},
		},
		{
			name:      "Retry-After is capped at 30 s",
			script:    []modeltest.Exchange{modeltest.Status(503, 120*time.Second), modeltest.Text("ok")},
			wantSleep: []time.Duration{30 * time.Second},
		},
		{
			name:      "every retryable status",
			script:    []modeltest.Exchange{modeltest.Status(408), modeltest.Status(429), modeltest.Status(500), modeltest.Status(502), modeltest.Status(503), modeltest.Status(504), modeltest.Text("ok")},
			wantSleep: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second},
		},
		{
			name:      "500 nine times fails after eight retries",
			script:    slices.Repeat([]modeltest.Exchange{modeltest.Status(500)}, 9),
			wantErr:   true,
			wantSleep: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second},
			check: func(t *testing.T, err error) {
				var api *model.APIError
				if !errors.As(err, &api) || api.Status != 500 {
					t.Errorf("err = %v, want *APIError 500", err)
				}
			},
		},
		{
			name:    "400 fails at once",
			script:  []modeltest.Exchange{modeltest.StatusBody(400, `{"error":{"message":"bad tool schema"}}`)},
			wantErr: true,
			check: func(t *testing.T, err error) {
				var api *model.APIError
				if !errors.As(err, &api) || api.Status != 400 || !strings.Contains(api.Body, "bad tool schema") {
					t.Errorf("err = %v, want *APIError 400 with the body", err)
				}
			},
		},
		{
			name:    "401 fails at once and never shows the key",
			script:  []modeltest.Exchange{modeltest.StatusBody(401, `{"error":"invalid key sk-test-secret-value"}`)},
			wantErr: true,
			check: func(t *testing.T, err error) {
				if strings.Contains(err.Error(), "sk-test-secret-value") {
					t.Errorf("error shows the key: %v", err)
				}
			},
		},
		{
			name:    "no retries when Retry is NoRetry",
			script:  []modeltest.Exchange{modeltest.Status(503)},
			retry:   model.NoRetry,
			wantErr: true,
		},
		{
			name:    "garbage is malformed and not retried",
			script:  []modeltest.Exchange{modeltest.Garbage("{truncated")},
			wantErr: true,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, model.ErrMalformedResponse) {
					t.Errorf("err = %v, want ErrMalformedResponse", err)
				}
			},
		},
		{
			name:    "no choices is malformed",
			script:  []modeltest.Exchange{modeltest.Garbage(`{"choices":[],"usage":{}}`)},
			wantErr: true,
			check: func(t *testing.T, err error) {
				if !errors.Is(err, model.ErrMalformedResponse) {
					t.Errorf("err = %v, want ErrMalformedResponse", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, tt.script...)
			var attempts []model.Attempt
			c, s := newClient(t, srv, "qwen3-vl-8b-instruct", func(cfg *model.Config) {
				cfg.Retry = tt.retry
				cfg.OnAttempt = func(a model.Attempt) { attempts = append(attempts, a) }
			})
			resp, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "hi"}}})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "sk-test-secret-value") {
				t.Errorf("error shows the key: %v", err)
			}
			if tt.check != nil {
				tt.check(t, err)
			} else if !slices.Equal(s.all(), tt.wantSleep) {
				t.Errorf("sleeps = %v, want %v", s.all(), tt.wantSleep)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted replies unused", srv.Remaining())
			}
			if len(attempts) != len(tt.script) {
				t.Errorf("OnAttempt called %d times for %d replies", len(attempts), len(tt.script))
			}
			if err == nil && resp.Attempts != len(tt.script) {
				t.Errorf("Attempts = %d, want %d", resp.Attempts, len(tt.script))
			}
			for i, a := range attempts {
				if a.N != i+1 {
					t.Errorf("attempt %d numbered %d", i+1, a.N)
				}
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Status(429).WithHeader("Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat)),
		modeltest.Text("ok"),
	)
	c, s := newClient(t, srv, "openai-compatible", nil)
	if _, err := c.Turn(context.Background(), model.Request{}); err != nil {
		t.Fatal(err)
	}
	// An HTTP date has one-second resolution and the clock moves on.
	if d := s.all(); len(d) != 1 || d[0] < 8*time.Second || d[0] > 10*time.Second {
		t.Errorf("sleeps = %v, want about 10 s", d)
	}
}

func TestTimeoutRetried(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t,
		modeltest.Delay(5*time.Second, modeltest.Text("too late")),
		modeltest.Text("in time"),
	)
	var attempts []model.Attempt
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", func(cfg *model.Config) {
		cfg.Timeout = 100 * time.Millisecond
		cfg.OnAttempt = func(a model.Attempt) { attempts = append(attempts, a) }
	})
	resp, err := c.Turn(context.Background(), model.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "in time" || len(attempts) != 2 {
		t.Fatalf("text %q after %d attempts", resp.Text, len(attempts))
	}
	var te *model.TransportError
	if !errors.As(attempts[0].Err, &te) || !te.Timeout || !errors.Is(attempts[0].Err, model.ErrTransport) {
		t.Errorf("first attempt error = %v, want a transport timeout", attempts[0].Err)
	}
}

func TestConnectionErrorRetried(t *testing.T) {
	t.Parallel()
	// A closed server refuses connections.
	srv := modeltest.New(t)
	url := srv.URL()
	s := &sleeps{}
	var attempts int
	c, err := model.New(model.Config{
		Endpoint: url, Profile: profile(t, "gpt"), Retry: 2, Sleep: s.sleep,
		HTTPClient: &http.Client{Transport: refusing{}},
		OnAttempt:  func(model.Attempt) { attempts++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Turn(context.Background(), model.Request{})
	if !errors.Is(err, model.ErrTransport) || attempts != 3 {
		t.Errorf("err = %v after %d attempts, want a transport error after 3", err, attempts)
	}
}

// refusing fails every request the way a dial to a closed port does.
type refusing struct{}

func (refusing) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
}

func TestCancelNotRetried(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Delay(5*time.Second, modeltest.Text("late")))
	c, s := newClient(t, srv, "qwen3-vl-8b-instruct", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Turn(ctx, model.Request{})
	if !errors.Is(err, context.DeadlineExceeded) || len(s.all()) != 0 {
		t.Errorf("err = %v, sleeps %v; want the caller's deadline and no retry", err, s.all())
	}
}

func TestReplies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply modeltest.Exchange
		text  string
		calls []model.ToolCall
	}{
		{name: "empty", reply: modeltest.Empty()},
		{name: "text", reply: modeltest.Text("<answer>yes</answer>"), text: "<answer>yes</answer>"},
		{
			name:  "several calls in one turn",
			reply: modeltest.Calls(modeltest.CallID("a", "observe_screen", `{}`), modeltest.CallID("b", "press_key", `{"key":"Return"}`)),
			calls: []model.ToolCall{{ID: "a", Name: "observe_screen", Arguments: `{}`}, {ID: "b", Name: "press_key", Arguments: `{"key":"Return"}`}},
		},
		{
			name:  "arguments kept raw even when invalid",
			reply: modeltest.CallID("x", "click", `{"target": `),
			calls: []model.ToolCall{{ID: "x", Name: "click", Arguments: `{"target": `}},
		},
		{
			name:  "rescued tool_call tag",
			reply: modeltest.Text("I will look.\n<tool_call>\n{\"name\": \"observe_screen\", \"arguments\": {}}\n</tool_call>"),
			text:  "I will look.\n<tool_call>\n{\"name\": \"observe_screen\", \"arguments\": {}}\n</tool_call>",
			calls: []model.ToolCall{{ID: "rescued_1", Name: "observe_screen", Arguments: `{}`, Rescued: true}},
		},
		{
			name:  "rescued fenced JSON",
			reply: modeltest.Text("```json\n{\"name\": \"press_key\", \"arguments\": {\"key\": \"ctrl+l\"}}\n```"),
			text:  "```json\n{\"name\": \"press_key\", \"arguments\": {\"key\": \"ctrl+l\"}}\n```",
			calls: []model.ToolCall{{ID: "rescued_1", Name: "press_key", Arguments: `{"key": "ctrl+l"}`, Rescued: true}},
		},
		{
			name:  "rescued several tags",
			reply: modeltest.Text("<tool_call>{\"name\":\"a\",\"arguments\":\"{\\\"k\\\":1}\"}</tool_call><tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>"),
			text:  "<tool_call>{\"name\":\"a\",\"arguments\":\"{\\\"k\\\":1}\"}</tool_call><tool_call>{\"name\":\"b\",\"arguments\":{}}</tool_call>",
			calls: []model.ToolCall{{ID: "rescued_1", Name: "a", Arguments: `{"k":1}`, Rescued: true}, {ID: "rescued_2", Name: "b", Arguments: `{}`, Rescued: true}},
		},
		{
			name:  "fenced JSON without a name is plain text",
			reply: modeltest.Text("```json\n{\"point\": [1, 2]}\n```"),
			text:  "```json\n{\"point\": [1, 2]}\n```",
		},
	}
	for _, proto := range []string{"qwen3-vl-8b-instruct", "gpt"} {
		for _, tt := range tests {
			t.Run(proto+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				srv := modeltest.New(t, tt.reply)
				c, _ := newClient(t, srv, proto, nil)
				resp, err := c.Turn(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}})
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != tt.text {
					t.Errorf("text = %q, want %q", resp.Text, tt.text)
				}
				if !reflect.DeepEqual(resp.ToolCalls, tt.calls) {
					t.Errorf("calls = %+v, want %+v", resp.ToolCalls, tt.calls)
				}
			})
		}
	}
}

func TestScriptExhaustedFailsLoudly(t *testing.T) {
	t.Parallel()
	// A recorder TB collects the server's complaints.
	tb := &collectTB{TB: t}
	srv := modeltest.New(tb)
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", func(cfg *model.Config) { cfg.Retry = model.NoRetry })
	_, err := c.Turn(context.Background(), model.Request{})
	var api *model.APIError
	if !errors.As(err, &api) || api.Status != 500 || !strings.Contains(api.Body, "script exhausted") {
		t.Errorf("err = %v, want 500 script exhausted", err)
	}
	if srv.Exhausted() != 1 || len(tb.errors()) != 1 {
		t.Errorf("exhausted %d, reported %v", srv.Exhausted(), tb.errors())
	}
}

type collectTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (c *collectTB) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *collectTB) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.errs)
}

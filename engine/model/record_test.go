package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

func TestRecordThenReplay(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"qwen3-vl-8b-instruct", "gpt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "model.jsonl")
			srv := modeltest.New(t,
				modeltest.Status(429, 3*time.Second),
				modeltest.Call("type_text", `{"ref":"password"}`).WithText("typing hunter2-secret"),
				modeltest.Text("<answer>done</answer>"),
			)
			redact := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("hunter2-secret"), []byte("[REDACTED]")) }
			rec, err := model.NewRecorder(path, nil, redact)
			if err != nil {
				t.Fatal(err)
			}
			req := model.Request{System: "sys", Messages: []model.Message{{Role: model.RoleUser, Text: "the password is hunter2-secret"}}}
			run := func(transport http.RoundTripper) ([]model.Response, []time.Duration) {
				s := &sleeps{}
				c, err := model.New(model.Config{
					Endpoint: srv.URL(), Key: "sk-recorded-key", Profile: profile(t, name),
					HTTPClient: &http.Client{Transport: transport}, Sleep: s.sleep,
				})
				if err != nil {
					t.Fatal(err)
				}
				var out []model.Response
				for range 2 {
					resp, err := c.Turn(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Raw = nil
					out = append(out, resp)
				}
				return out, s.all()
			}
			recorded, recSleeps := run(rec)
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}

			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{"hunter2-secret", "sk-recorded-key"} {
				if bytes.Contains(data, []byte(secret)) {
					t.Errorf("recording contains %q:\n%s", secret, data)
				}
			}
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) != 3 {
				t.Fatalf("recording has %d lines, want 3", len(lines))
			}
			var first model.RecordedExchange
			if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Status != 429 || first.RetryAfter != "3" {
				t.Errorf("first exchange = %+v, %v", first, err)
			}

			rep, err := model.NewReplayer(path)
			if err != nil {
				t.Fatal(err)
			}
			replayed, repSleeps := run(rep)
			// The replay serves the redacted bodies: the text differs only
			// where the recording was redacted.
			recorded[0].Text = strings.ReplaceAll(recorded[0].Text, "hunter2-secret", "[REDACTED]")
			if !reflect.DeepEqual(recorded, replayed) {
				t.Errorf("replayed %+v\nrecorded %+v", replayed, recorded)
			}
			if !reflect.DeepEqual(recSleeps, repSleeps) {
				t.Errorf("replay waited %v, recording %v", repSleeps, recSleeps)
			}
			if rep.Remaining() != 0 || len(srv.Requests()) != 3 {
				t.Errorf("replay left %d, server saw %d requests (want 3, none from the replay)", rep.Remaining(), len(srv.Requests()))
			}
		})
	}
}

func TestReplayMismatch(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "model.jsonl")
	line, _ := json.Marshal(model.RecordedExchange{Method: "POST", Path: "/v1/responses", Request: "{}", Status: 200, Response: `{"output":[]}`})
	if err := os.WriteFile(path, append(line, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := model.NewReplayer(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := model.New(model.Config{Endpoint: "http://replay.invalid", Profile: profile(t, "qwen3-vl-8b-instruct"), HTTPClient: &http.Client{Transport: rep}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Turn(context.Background(), model.Request{})
	if !errors.Is(err, model.ErrReplay) || !strings.Contains(err.Error(), "/v1/chat/completions but the recording has POST /v1/responses") {
		t.Errorf("err = %v, want a path mismatch", err)
	}
}

func TestReplayPastEnd(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "empty.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := model.NewReplayer(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := model.New(model.Config{Endpoint: "http://replay.invalid", Profile: profile(t, "gpt"), HTTPClient: &http.Client{Transport: rep}})
	if err != nil {
		t.Fatal(err)
	}
	// A replay error is final: no retries, so no real waits either.
	if _, err := c.Turn(context.Background(), model.Request{}); !errors.Is(err, model.ErrReplay) || !strings.Contains(err.Error(), "past the end") || !strings.Contains(err.Error(), "1 attempts") {
		t.Errorf("err = %v, want past the end", err)
	}
}

// TestReplayerSaysWhere: a damaged recording names the line, and a run
// that asks more or other than was recorded names the request, counted
// from 1.
func TestReplayerSaysWhere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"method": "POST", "path": "/v1/chat/completions"}`+"\n\n{oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := model.NewReplayer(bad); err == nil || !strings.Contains(err.Error(), "bad.jsonl:3:") {
		t.Errorf("a damaged third line: %v", err)
	}
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte(`{"method": "POST", "path": "/v1/chat/completions", "status": 200, "response": "{}"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := model.NewReplayer(good)
	if err != nil {
		t.Fatal(err)
	}
	get, _ := http.NewRequest(http.MethodGet, "http://model.test/v1/models", nil)
	if _, err := r.RoundTrip(get); err == nil || !strings.Contains(err.Error(), "request 1 is GET /v1/models but the recording has POST /v1/chat/completions") {
		t.Errorf("another request: %v", err)
	}
	post, _ := http.NewRequest(http.MethodPost, "http://model.test/v1/chat/completions", strings.NewReader("{}"))
	if resp, err := r.RoundTrip(post); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	post, _ = http.NewRequest(http.MethodPost, "http://model.test/v1/chat/completions", nil)
	if _, err := r.RoundTrip(post); err == nil || !strings.Contains(err.Error(), "request 2 (POST /v1/chat/completions) is past the end of the recording (1 exchanges)") {
		t.Errorf("past the end: %v", err)
	}
}

// countingBody is a reply body of n bytes that counts how many were read.
type countingBody struct{ left, read int64 }

func (b *countingBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	n = min(n, b.left)
	for i := range p[:n] {
		p[i] = 'x'
	}
	b.left -= n
	b.read += n
	return int(n), nil
}

func (b *countingBody) Close() error { return nil }

// TestRecorderCapsTheReply: a reply far over the cap is read, recorded
// and handed on only up to the cap, as the live client reads it, so an
// endless reply cannot grow the recording run's memory without bound.
func TestRecorderCapsTheReply(t *testing.T) {
	t.Parallel()
	const limit = 4 << 10
	body := &countingBody{left: 4 << 20}
	next := roundTripFunc(func(req *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: body, Request: req}, nil
	})
	path := filepath.Join(t.TempDir(), "model.jsonl")
	rec, err := model.NewRecorder(path, next, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	rec.SetLimit(limit)
	req, _ := http.NewRequest(http.MethodPost, "http://model.invalid/v1/chat/completions", strings.NewReader(`{}`))
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if body.read > limit || len(got) > limit {
		t.Errorf("the recorder read %d bytes of the reply and handed on %d; the cap is %d", body.read, len(got), limit)
	}
	b, _ := os.ReadFile(path)
	var ex model.RecordedExchange
	if err := json.Unmarshal(bytes.TrimSpace(b), &ex); err != nil || len(ex.Response) > limit {
		t.Errorf("the recording holds %d bytes of the reply (%v); the cap is %d", len(ex.Response), err, limit)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

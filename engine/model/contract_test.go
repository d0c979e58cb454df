package model

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReplyContent: a reply's content is read as a string, as a list of
// text parts joined, or as nothing when it is neither.
func TestReplyContent(t *testing.T) {
	t.Parallel()
	tests := []struct{ content, want string }{
		{`"plain"`, "plain"},
		{`[{"type":"text","text":"a"},{"type":"text","text":"b"}]`, "ab"},
		{`null`, ""},
		{`7`, ""},
	}
	for _, tt := range tests {
		resp, err := parseChat([]byte(`{"choices":[{"message":{"content":` + tt.content + `}}]}`))
		if err != nil || resp.Text != tt.want {
			t.Errorf("content %s read as %q, %v; want %q", tt.content, resp.Text, err, tt.want)
		}
	}
}

// TestRecorderKeepsRequests: a recording holds what was sent, a POST's
// body included, and a bodiless GET is recorded and forwarded too.
func TestRecorderKeepsRequests(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(append([]byte("echo "), b...))
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "model.jsonl")
	rec, err := NewRecorder(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rec}
	resp, err := client.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"sent":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != `echo {"sent":1}` {
		t.Errorf("the server got %q through the recorder", b)
	}
	resp.Body.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/models", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"request":"{\"sent\":1}"`) || !strings.Contains(lines[1], `"path":"/v1/models"`) {
		t.Errorf("recording:\n%s", b)
	}
}

// deadlineTransport notes the deadline of each request it forwards to the
// real transport.
type deadlineTransport struct{ deadlines []time.Duration }

func (d *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if dl, ok := req.Context().Deadline(); ok {
		d.deadlines = append(d.deadlines, time.Until(dl))
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestResolveNameDeadline: the model list is asked for within the
// client's own timeout when it is shorter than the list's 30 s, and
// within 30 s otherwise. The request's deadline is read, not waited out.
func TestResolveNameDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"id":"org/vlm"}]}`))
	}))
	defer srv.Close()
	for _, tt := range []struct{ timeout, deadline time.Duration }{
		{0, modelListTimeout},
		{5 * time.Second, 5 * time.Second},
		{10 * time.Minute, modelListTimeout},
	} {
		tr := &deadlineTransport{}
		cfg := Config{Endpoint: srv.URL + "/v1", Profile: Profiles()[DefaultProfile], Timeout: tt.timeout, HTTPClient: &http.Client{Transport: tr}}
		if name, err := ResolveName(t.Context(), cfg); err != nil || name != "org/vlm" {
			t.Fatalf("ResolveName = %q, %v", name, err)
		}
		// Measured as the request leaves: a little under the bound, never
		// over it.
		if len(tr.deadlines) != 1 || tr.deadlines[0] > tt.deadline || tr.deadlines[0] < tt.deadline-5*time.Second {
			t.Errorf("timeout %v: the list request's deadline is %v away, want %v", tt.timeout, tr.deadlines, tt.deadline)
		}
	}
}

// failing is a transport whose every request fails with err.
type failing struct{ err error }

func (f failing) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// TestModelListFailureScrubbed: a failed model list request's error never
// repeats the key, whatever the transport's error echoes, and is worded
// as the transport gave it when there is no key.
func TestModelListFailureScrubbed(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sk-echoed-key", ""} {
		cfg := Config{Endpoint: "http://model.invalid/v1", Profile: Profiles()[DefaultProfile], Key: key,
			HTTPClient: &http.Client{Transport: failing{errors.New("proxy refused Bearer sk-echoed-key")}}}
		_, err := ResolveName(t.Context(), cfg)
		var ue *url.Error
		switch {
		case err == nil || errors.As(err, &ue):
			t.Errorf("key %q: err = %v, want the transport's error worded without its URL", key, err)
		case key != "" && (strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "[redacted]")):
			t.Errorf("the error repeats the key: %v", err)
		case key == "" && !strings.Contains(err.Error(), "proxy refused Bearer sk-echoed-key; set model.name"):
			t.Errorf("without a key the error is changed: %v", err)
		}
	}
}

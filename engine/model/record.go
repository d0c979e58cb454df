package model

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
)

// RecordedExchange is one recorded HTTP exchange, one JSON line in a recording.
type RecordedExchange struct {
	Method string `json:"method"`
	// Path is the request path only: host and query are left out because
	// they may identify private infrastructure or carry keys.
	Path    string `json:"path"`
	Request string `json:"request"`
	Status  int    `json:"status,omitempty"`
	// RetryAfter is the reply's Retry-After header, so replayed retries
	// wait the same way.
	RetryAfter string `json:"retry_after,omitempty"`
	Response   string `json:"response,omitempty"`
	// Error is the transport failure of an exchange that got no reply.
	Error string `json:"error,omitempty"`
}

// Recorder is an http.RoundTripper that passes requests to Next and appends
// each exchange to a JSON-lines file, with both bodies passed through Redact
// first. Request headers, which carry the API key, are never written.
//
// Recording never changes the run: when the file cannot be written, the
// exchange still goes through, recording stops for the rest of the run and
// RecordErr reports why (the engine makes it a concern). A write failure
// is never a model failure to retry.
type Recorder struct {
	next   http.RoundTripper
	redact func([]byte) []byte
	mu     sync.Mutex
	file   *os.File
	// failed is the first write failure; nothing is written after it.
	failed error
	// limit bounds how much of a reply is read and kept: the client's own
	// cap (maxResponseBody), so a recorded run holds no more of an endless
	// reply than a live one does.
	limit int64
}

// RecordErr returns the write failure that stopped the recording, or nil.
func (r *Recorder) RecordErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// NewRecorder opens (appending, creating) the recording at path. next nil
// means http.DefaultTransport; redact nil writes bodies unchanged.
func NewRecorder(path string, next http.RoundTripper, redact func([]byte) []byte) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open model recording: %w", err)
	}
	if next == nil {
		next = http.DefaultTransport
	}
	if redact == nil {
		redact = func(b []byte) []byte { return b }
	}
	return &Recorder{next: next, redact: redact, file: f, limit: maxResponseBody}, nil
}

// RoundTrip forwards the request and records the exchange.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var reqBody []byte
	if req.Body != nil {
		var err error
		reqBody, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("record model exchange: read request: %w", err)
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	ex := RecordedExchange{Method: req.Method, Path: req.URL.Path, Request: string(r.redact(reqBody))}
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		ex.Error = string(r.redact([]byte(err.Error())))
		r.write(ex)
		return nil, err
	}
	// The client reads no more than limit of a reply; reading past it here
	// would hold an endless reply in memory before the client ever saw it.
	respBody, rerr := io.ReadAll(io.LimitReader(resp.Body, r.limit))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	ex.Status = resp.StatusCode
	ex.RetryAfter = resp.Header.Get("Retry-After")
	ex.Response = string(r.redact(respBody))
	if rerr != nil {
		ex.Error = string(r.redact([]byte(rerr.Error())))
	}
	r.write(ex)
	if rerr != nil {
		return nil, rerr
	}
	return resp, nil
}

// write appends ex to the recording unless an earlier write failed; a
// failure is kept for RecordErr and ends the recording.
func (r *Recorder) write(ex RecordedExchange) {
	line, err := json.Marshal(ex)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed != nil {
		return
	}
	if err == nil {
		_, err = r.file.Write(append(line, '\n'))
	}
	if err != nil {
		r.failed = fmt.Errorf("record model exchange to %s: %w", r.file.Name(), err)
	}
}

// Close closes the recording file.
func (r *Recorder) Close() error { return r.file.Close() }

// ErrReplay marks a request a replay cannot serve: past the end of the
// recording or not the request that was recorded. It is never retried.
var ErrReplay = errors.New("model replay mismatch")

// Replayer is an http.RoundTripper that answers requests from a recording,
// in order, without any endpoint. A request whose method or path differs
// from the next recorded one, or one past the end, is an error.
type Replayer struct {
	mu        sync.Mutex
	exchanges []RecordedExchange
	next      int
}

// NewReplayer loads the recording at path.
func NewReplayer(path string) (*Replayer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open model replay: %w", err)
	}
	defer f.Close()
	var exs []RecordedExchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxResponseBody*2)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var ex RecordedExchange
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			return nil, fmt.Errorf("read model replay %s:%d: %w", path, line, err)
		}
		exs = append(exs, ex)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read model replay %s: %w", path, err)
	}
	return &Replayer{exchanges: exs}, nil
}

// Remaining is the number of recorded exchanges not yet served.
func (r *Replayer) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.exchanges) - r.next
}

// RoundTrip serves the next recorded exchange.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		// Drain the body so the client sees a normal send.
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	r.mu.Lock()
	n := r.next
	if n >= len(r.exchanges) {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: request %d (%s %s) is past the end of the recording (%d exchanges)", ErrReplay, n+1, req.Method, req.URL.Path, len(r.exchanges))
	}
	ex := r.exchanges[n]
	if ex.Method != req.Method || ex.Path != req.URL.Path {
		r.mu.Unlock()
		return nil, fmt.Errorf("%w: request %d is %s %s but the recording has %s %s", ErrReplay, n+1, req.Method, req.URL.Path, ex.Method, ex.Path)
	}
	r.next++
	r.mu.Unlock()
	if ex.Status == 0 {
		return nil, fmt.Errorf("model replay: recorded failure: %s", ex.Error)
	}
	h := http.Header{"Content-Type": []string{"application/json"}}
	if ex.RetryAfter != "" {
		h.Set("Retry-After", ex.RetryAfter)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", ex.Status, http.StatusText(ex.Status)),
		StatusCode:    ex.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(ex.Response)),
		ContentLength: int64(len(ex.Response)),
		Request:       req,
	}, nil
}

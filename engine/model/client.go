package model

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Config (docs/architecture.md, "The model side").
const (
	DefaultTimeout = 600 * time.Second
	DefaultRetry   = 8
	// NoRetry as Config.Retry makes every failure final.
	NoRetry = -1
	// MaxBackoff caps the wait between attempts, Retry-After included.
	MaxBackoff = 30 * time.Second
	// maxResponseBody bounds how much of a reply is read.
	maxResponseBody = 64 << 20
)

// Config is everything a Client needs. Endpoint and Profile are required.
type Config struct {
	// Endpoint is a service base, a /v1 base or the protocol's full URL.
	Endpoint string
	// Key is the bearer API key; empty for unauthenticated endpoints. It
	// is never put into an error.
	Key     string
	Profile Profile
	// Timeout bounds each HTTP attempt; zero means DefaultTimeout.
	Timeout time.Duration
	// Retry is the number of extra attempts after transient failures;
	// zero means DefaultRetry and NoRetry (any negative value) means none.
	Retry   int
	Options GenerationOptions
	// HTTPClient sends the requests; nil means a fresh http.Client. Its
	// Transport is where recording and replay plug in.
	HTTPClient *http.Client
	// Sleep waits between attempts; nil means a real, cancellable wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnAttempt, when set, is told about every attempt.
	OnAttempt func(Attempt)
	// Gate, when set, is called before each HTTP attempt and may wait for
	// the endpoint's capacity group; release is called once the reply is
	// read. The wait is outside the attempt's Timeout.
	Gate func(ctx context.Context) (release func(), err error)
}

// Client sends turns to one model endpoint with one profile.
type Client struct {
	url       string
	key       string
	profile   Profile
	timeout   time.Duration
	retry     int
	opts      GenerationOptions
	http      *http.Client
	sleep     func(ctx context.Context, d time.Duration) error
	onAttempt func(Attempt)
	gate      func(ctx context.Context) (func(), error)
	images    *imageURLs
}

// New checks the configuration and returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.Profile.Name == "" {
		return nil, errors.New("new model client: no profile")
	}
	if cfg.Profile.ServedModel == "" {
		// Never send a made-up name such as "default": servers that check
		// names reject it.
		return nil, errors.New("new model client: no model name (set model.name, or resolve it with ResolveName)")
	}
	url, err := ResolveEndpoint(cfg.Endpoint, cfg.Profile.Protocol)
	if err != nil {
		return nil, fmt.Errorf("new model client: %w", err)
	}
	if err := ValidateOptions(cfg.Profile, cfg.Options); err != nil {
		return nil, fmt.Errorf("new model client: %w", err)
	}
	cfg.Options.ToolChoice = cfg.Profile.ToolChoice(cfg.Options)
	c := &Client{
		url:       url,
		key:       cfg.Key,
		profile:   cfg.Profile,
		timeout:   cfg.Timeout,
		retry:     cfg.Retry,
		opts:      cfg.Options,
		http:      cfg.HTTPClient,
		sleep:     cfg.Sleep,
		onAttempt: cfg.OnAttempt,
		gate:      cfg.Gate,
		images:    newImageURLs(),
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.retry == 0:
		c.retry = DefaultRetry
	case c.retry < 0:
		c.retry = 0
	}
	if c.http == nil {
		c.http = &http.Client{}
	}
	if c.sleep == nil {
		c.sleep = sleepContext
	}
	return c, nil
}

// Profile returns the client's profile.
func (c *Client) Profile() Profile { return c.profile }

// URL returns the resolved endpoint URL.
func (c *Client) URL() string { return c.url }

// Turn sends one request and returns the model's reply, retrying transient
// failures. When the reply has no native tool calls but its text contains
// some, they are returned with Rescued set.
func (c *Client) Turn(ctx context.Context, req Request) (Response, error) {
	body, err := c.body(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode model request: %w", err)
	}

	for n := 1; ; n++ {
		release, err := c.acquire(ctx)
		if err != nil {
			return Response{}, fmt.Errorf("model turn: %w", err)
		}
		start := time.Now()
		status, raw, retryAfter, err := c.attempt(ctx, body)
		release()
		if ctx.Err() != nil {
			// The caller gave up; that is not the endpoint's failure.
			return Response{}, fmt.Errorf("model turn: %w", ctx.Err())
		}
		var resp Response
		if err == nil {
			if c.profile.Protocol == Responses {
				resp, err = parseResponses(raw)
			} else {
				resp, err = parseChat(raw)
			}
		}
		retry := n <= c.retry && retryable(err)
		var delay time.Duration
		if retry {
			delay = backoff(n, retryAfter)
		}
		if c.onAttempt != nil {
			c.onAttempt(Attempt{N: n, Status: status, Err: err, Delay: delay, Duration: time.Since(start)})
		}
		if err == nil {
			resp.Attempts = n
			if len(resp.ToolCalls) == 0 {
				resp.ToolCalls = rescueCalls(resp.Text)
			}
			return resp, nil
		}
		if !retry {
			return Response{}, fmt.Errorf("model turn (%d attempts): %w", n, err)
		}
		if err := c.sleep(ctx, delay); err != nil {
			return Response{}, fmt.Errorf("model turn: wait before retry: %w", err)
		}
	}
}

// body marshals req in the profile's protocol, with the data URLs of the
// images earlier requests sent reused.
func (c *Client) body(req Request) ([]byte, error) {
	build := chatBody
	if c.profile.Protocol == Responses {
		build = responsesBody
	}
	body, err := build(c.profile.ServedModel, c.opts, req, c.images.begin())
	if errors.Is(err, errPlaceholder) {
		// Text in the conversation looked like a placeholder: marshal the
		// data URLs themselves.
		return build(c.profile.ServedModel, c.opts, req, nil)
	}
	return body, err
}

// acquire passes the client's gate, if it has one.
func (c *Client) acquire(ctx context.Context) (func(), error) {
	if c.gate == nil {
		return func() {}, nil
	}
	return c.gate(ctx)
}

// attempt sends the body once. It returns the status (0 without one), the
// body of a 200, the server's Retry-After and the attempt's error.
func (c *Client) attempt(ctx context.Context, body []byte) (int, []byte, time.Duration, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("build model request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if c.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	hresp, err := c.http.Do(hreq)
	if errors.Is(err, ErrReplay) {
		return 0, nil, 0, err
	}
	if err != nil {
		return 0, nil, 0, c.transportError(actx, err)
	}
	defer hresp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hresp.Body, maxResponseBody))
	if err != nil {
		return hresp.StatusCode, nil, 0, c.transportError(actx, err)
	}
	if hresp.StatusCode != http.StatusOK {
		ra := parseRetryAfter(hresp.Header.Get("Retry-After"), time.Now())
		return hresp.StatusCode, nil, ra, &APIError{Status: hresp.StatusCode, Body: c.scrub(truncate(string(raw), maxErrorBody)), RetryAfter: ra}
	}
	return hresp.StatusCode, raw, 0, nil
}

func (c *Client) transportError(actx context.Context, err error) error {
	timeout := errors.Is(actx.Err(), context.DeadlineExceeded)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		timeout = true
	}
	return &TransportError{Timeout: timeout, Err: errors.New(c.scrub(withoutURLQuery(err)))}
}

// withoutURLQuery words a transport error without the query of the URL it
// names: a redirect can lead to a URL whose query carries a credential.
func withoutURLQuery(err error) string {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err.Error()
	}
	where := ue.URL
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.RawQuery, u.ForceQuery, u.Fragment, u.User = "", false, "", nil
		where = u.String()
	} else if i := strings.IndexAny(where, "?#"); i >= 0 {
		where = where[:i]
	}
	return fmt.Sprintf("%s %q: %v", ue.Op, where, ue.Err)
}

// scrub removes the API key from text that may have echoed it.
func (c *Client) scrub(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

func retryable(err error) bool {
	if err == nil {
		return false
	}
	var api *APIError
	if errors.As(err, &api) {
		return api.Retryable()
	}
	return errors.Is(err, ErrTransport)
}

// backoff is the wait before attempt n+1: 1 s·2^(n-1), or the server's
// Retry-After when it gave one, both capped at MaxBackoff.
func backoff(n int, retryAfter time.Duration) time.Duration {
	d := time.Second << min(n-1, 10)
	if retryAfter > 0 {
		d = retryAfter
	}
	return min(d, MaxBackoff)
}

// parseRetryAfter reads a Retry-After header in seconds or as an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	// A wait of no time or one already past is no wait: never negative.
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		return max(0, time.Duration(secs*float64(time.Second)))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now))
	}
	return 0
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…(truncated)"
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Package remote feeds the live console from a run published over
// kasmrt's HTTP API (kasmrt run --listen, inbox.listen): it follows the
// run's event stream, mirrors the screens its events name into a local
// folder the console reads, and answers and steers through the API. The
// console is the same one a local run has; only its source differs.
package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// Run is one run as the server lists it (GET /v1/runs).
type Run struct {
	Run      string    `json:"run"`
	Name     string    `json:"name"`
	Scenario string    `json:"scenario"`
	Goal     string    `json:"goal"`
	Report   string    `json:"report"`
	Started  time.Time `json:"started"`
}

// Client follows and steers one published run.
type Client struct {
	// base is the run's URL: http://HOST/v1/runs/ID.
	base  string
	token string
	http  *http.Client
	// dir mirrors the run's screens/ folder, so the console reads screens
	// as it does a local run's.
	dir string
	// Info describes the run.
	Info Run

	mu     sync.Mutex
	lastID int64
}

// ErrNoRun is a server with no run or session to attach to.
var ErrNoRun = errors.New("the server has no run or open session")

// Dial finds the run at target: a run's URL (…/v1/runs/ID), or a server's
// (http://HOST:PORT) that publishes exactly one run. Screens are mirrored
// into dir. The token is sent as a bearer token ("" sends none).
func Dial(ctx context.Context, target, token, dir string) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(target, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("attach %s: want an http:// or https:// URL of a server or of a run", target)
	}
	if u.RawQuery != "" {
		// The query may hold a credential: it is not repeated.
		u.RawQuery = ""
		return nil, fmt.Errorf("attach %s: no query string; the token comes from --token-file or $KASMRT_TOKEN", u)
	}
	c := &Client{token: token, http: &http.Client{}, dir: dir}
	root := u.Scheme + "://" + u.Host
	switch p := u.EscapedPath(); {
	case strings.HasPrefix(p, "/v1/runs/"):
		c.base = root + p
		if err := c.getJSON(ctx, c.base, &c.Info); err != nil {
			return nil, fmt.Errorf("attach %s: %w", target, err)
		}
	case strings.HasPrefix(p, "/v1/sessions/"):
		// A session of kasmrt serve: watched, answered and steered (abort,
		// note) like a run; its agent makes the calls.
		c.base = root + p
		if err := c.session(ctx, root, path.Base(p)); err != nil {
			return nil, fmt.Errorf("attach %s: %w", target, err)
		}
	case p == "" || p == "/v1" || p == "/v1/runs":
		if err := c.only(ctx, root); err != nil {
			return nil, fmt.Errorf("attach %s: %w", target, err)
		}
	default:
		return nil, fmt.Errorf("attach %s: not a server's, a run's or a session's URL (want http://HOST:PORT, …/v1/runs/ID or …/v1/sessions/ID)", target)
	}
	if err := os.MkdirAll(filepath.Join(dir, "screens"), 0o700); err != nil {
		return nil, fmt.Errorf("attach: the screens folder: %w", err)
	}
	return c, nil
}

// session describes the open session id of the server at root.
func (c *Client) session(ctx context.Context, root, id string) error {
	sessions, err := c.sessions(ctx, root)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		if s.Session == id {
			c.Info = Run{Run: s.Session, Name: s.Scenario, Scenario: s.Scenario, Goal: s.Goal, Report: s.Report}
			return nil
		}
	}
	return fmt.Errorf("no open session %q", id)
}

type session struct {
	Session, Scenario, Goal, Report string
}

// sessions lists the open sessions of a kasmrt serve (none elsewhere).
func (c *Client) sessions(ctx context.Context, root string) ([]session, error) {
	var list struct {
		Sessions []session `json:"sessions"`
	}
	if err := c.getJSON(ctx, root+"/v1/sessions", &list); err != nil {
		return nil, err
	}
	return list.Sessions, nil
}

// only picks the one run or session the server at root has, or says
// which there are to choose from.
func (c *Client) only(ctx context.Context, root string) error {
	var list struct {
		Runs []Run `json:"runs"`
	}
	if err := c.getJSON(ctx, root+"/v1/runs", &list); err != nil {
		return err
	}
	sessions, err := c.sessions(ctx, root)
	if err != nil {
		return err
	}
	var urls []string
	for _, r := range list.Runs {
		urls = append(urls, root+"/v1/runs/"+url.PathEscape(r.Run))
	}
	for _, s := range sessions {
		urls = append(urls, root+"/v1/sessions/"+url.PathEscape(s.Session))
	}
	switch {
	case len(urls) == 0:
		return ErrNoRun
	case len(urls) > 1:
		return fmt.Errorf("the server has %d runs and sessions; attach to one of %s", len(urls), strings.Join(urls, ", "))
	case len(list.Runs) == 1:
		c.Info = list.Runs[0]
	default:
		s := sessions[0]
		c.Info = Run{Run: s.Session, Name: s.Scenario, Scenario: s.Scenario, Goal: s.Goal, Report: s.Report}
	}
	c.base = urls[0]
	return nil
}

// Dir is the local folder the console reads the run's screens from.
func (c *Client) Dir() string { return c.dir }

// URL is the run's URL.
func (c *Client) URL() string { return c.base }

// LastID is the seq of the last event delivered.
func (c *Client) LastID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastID
}

func (c *Client) request(ctx context.Context, method, u string, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.http.Do(req)
}

// apiError turns a JSON error reply into an error naming the status.
func apiError(resp *http.Response) error {
	var e struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &e) == nil && e.Error != "" {
		return fmt.Errorf("%s: %s", resp.Status, e.Error)
	}
	return errors.New(resp.Status)
}

func (c *Client) getJSON(ctx context.Context, u string, v any) error {
	resp, err := c.request(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (c *Client) post(u string, body any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.request(ctx, http.MethodPost, u, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return apiError(resp)
	}
	return nil
}

// AnswerMarked answers a pending question with the operator's mark; the
// console calls it (tui.Controls). An empty mark is sent as none, which
// the run takes as private.
func (c *Client) AnswerMarked(questionID, text string, mark inbox.Mark) error {
	body := map[string]string{"answer": text, "by": "attach"}
	if mark != "" {
		body["mark"] = string(mark)
	}
	err := c.post(c.base+"/questions/"+url.PathEscape(questionID)+"/answer", body)
	if err != nil {
		return fmt.Errorf("answer %s: %w", questionID, err)
	}
	return nil
}

// Steer sends an operator action to the run (tui.Controls).
func (c *Client) Steer(s events.Steer) error {
	if err := c.post(c.base+"/steer", s); err != nil {
		return fmt.Errorf("steer %s: %w", s.Action, err)
	}
	return nil
}

// Backoff bounds the wait between reconnections.
const (
	firstBackoff = 200 * time.Millisecond
	maxBackoff   = 3 * time.Second
)

// Follow delivers the run's events to sink in order, each after the
// screens it names are in Dir, until run.ended or ctx ends. A dropped
// stream is reconnected with Last-Event-ID, so no event is lost or
// repeated; status (nil for none) hears of each drop and recovery.
func (c *Client) Follow(ctx context.Context, sink func(events.Event), status func(error)) error {
	backoff := firstBackoff
	for {
		ended, delivered, err := c.stream(ctx, sink)
		if ended {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if delivered {
			backoff = firstBackoff
		}
		if status != nil {
			status(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// stream reads one connection's events; it reports whether run.ended came
// and whether any event did.
func (c *Client) stream(ctx context.Context, sink func(events.Event)) (ended, delivered bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/events", nil)
	if err != nil {
		return false, false, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if last := c.LastID(); last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, false, apiError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data[:0], line[len("data: "):]...)
		case len(line) == 0 && len(data) > 0:
			var e events.Event
			if err := json.Unmarshal(data, &e); err != nil {
				return false, delivered, fmt.Errorf("decode an event: %w", err)
			}
			data = data[:0]
			if e.Seq <= c.LastID() {
				continue
			}
			c.mirror(ctx, e)
			sink(e)
			delivered = true
			c.mu.Lock()
			c.lastID = e.Seq
			c.mu.Unlock()
			if e.Kind == events.KindRunEnded {
				return true, true, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return false, delivered, err
	}
	return false, delivered, io.ErrUnexpectedEOF
}

// screenPath is a capture's path in a report.
var screenPath = regexp.MustCompile(`^screens/[0-9]{4,}\.png$`)

// mirror fetches the screens e names that Dir lacks. A screen that cannot
// be fetched is left out: the console shows what it shows for a missing
// file, and the events go on.
func (c *Client) mirror(ctx context.Context, e events.Event) {
	names := []string{e.Screen}
	if g := e.Grounding; g != nil {
		names = append(names, g.Before, g.After)
	}
	for _, rel := range names {
		if !screenPath.MatchString(rel) {
			continue
		}
		local := filepath.Join(c.dir, filepath.FromSlash(rel))
		if _, err := os.Stat(local); err == nil {
			continue
		}
		// A writer that saves captures off the event's path may still be
		// writing this one: a few short retries, then the events go on.
		for attempt := 0; attempt < 3 && c.fetchScreen(ctx, rel, local) != nil; attempt++ {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (c *Client) fetchScreen(ctx context.Context, rel, local string) error {
	resp, err := c.request(ctx, http.MethodGet, c.base+"/screens/"+path.Base(rel), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return apiError(resp)
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), ".screen-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, io.LimitReader(resp.Body, 64<<20))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Renamed into place whole, so the console never reads half a PNG.
		err = os.Rename(tmp.Name(), local)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

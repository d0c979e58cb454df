package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/internal/httpguard"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/serve"
)

// publication serves one run's HTTP API (package serve's /v1 routes):
// its events, screens, questions and steering. The address is bound
// before anything launches, so a busy port is bad input.
type publication struct {
	ln    net.Listener
	m     *serve.Manager
	srv   *http.Server
	files *scenarios.Files
	// url is where the run is: http://ADDR/v1/runs/ID.
	url string
	// stop ends the service once the run has ended.
	stop func()
}

// bindPublication binds --listen, or else inbox.listen, for a run whose
// report goes to reportDir. It returns nil when neither is set. --listen
// takes its token from --token-file or $KASMRT_TOKEN, as serve does;
// inbox.listen takes the operator file's inbox token. Either refuses a
// non-loopback address without a token.
func bindPublication(ctx context.Context, f runFlags, files *scenarios.Files, reportDir string) (*publication, error) {
	if f.tokenFile != "" && f.listen == "" {
		return nil, fmt.Errorf("--token-file is the token of --listen, which is not set")
	}
	addr, token, what, tokenName := f.listen, "", "--listen", "--token-file or $"+envToken
	if addr != "" {
		t, err := serveToken(f.tokenFile)
		if err != nil {
			return nil, err
		}
		token = t
	} else if addr = files.Operator.Inbox.Listen; addr != "" {
		what = "inbox.listen"
		token, tokenName = files.Operator.InboxToken()
	}
	if addr == "" {
		return nil, nil
	}
	if err := httpguard.CheckListen(what, addr, token, tokenName); err != nil {
		return nil, err
	}
	public := !httpguard.Loopback(addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		noun := "the run"
		if what == "inbox.listen" {
			noun = "the inbox"
		}
		return nil, fmt.Errorf("serve %s on %s (%s): %w", noun, addr, what, err)
	}
	// No scenarios folder: this server opens no sessions, it publishes
	// the one run.
	m := serve.NewManager(ctx, serve.Options{})
	p := &publication{
		ln: ln, m: m, files: files,
		url: "http://" + ln.Addr().String() + "/v1/runs/" + url.PathEscape(serve.RunID(reportDir)),
		srv: &http.Server{
			Handler:           serve.NewHandler(m, serve.HTTPOptions{Token: token, Public: public, Listen: addr, Version: version}),
			ReadHeaderTimeout: 10 * time.Second,
		},
	}
	return p, nil
}

// prepare makes the run's options publish it: the run gets an inbox (a
// remote operator can answer), the engine binds no inbox.listen of its
// own, and every event wakes the event streams at once.
func (p *publication) prepare(opts *engine.Options) {
	if p == nil {
		return
	}
	opts.Interactive = true
	opts.Published = p.url
	opts.Sinks = append(opts.Sinks, p.m.Event)
}

// start serves the run until stop; the address goes to w.
func (p *publication) start(w io.Writer, runner *engine.Runner, scenarioPath string) {
	if p == nil {
		return
	}
	// The description is served as the run's events are: redacted (a goal
	// may name a secret through ${NAME}).
	sc := p.files.Scenario
	unpublish := p.m.Publish(serve.RunInfo{Name: runner.Redact(sc.Name), Scenario: runner.Redact(scenarioPath), Goal: runner.Redact(sc.Goal)}, runner)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = p.srv.Serve(p.ln)
	}()
	fmt.Fprintf(w, "kasmrt run: serving this run at %s (kasmrt attach http://%s)\n", p.url, p.ln.Addr())
	p.stop = func() {
		// Event streams end with run.ended; a moment lets them send it.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if p.srv.Shutdown(ctx) != nil {
			_ = p.srv.Close()
		}
		<-served
		unpublish()
	}
}

// close stops serving, or releases the address when serving never began.
func (p *publication) close() {
	switch {
	case p == nil:
	case p.stop != nil:
		p.stop()
	default:
		_ = p.ln.Close()
	}
}

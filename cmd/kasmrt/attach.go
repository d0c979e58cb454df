package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/remote"
)

type attachFlags struct {
	tokenFile string
	graphics  string
	theme     string
	print     bool
}

func newAttachCommand() *cobra.Command {
	var f attachFlags
	cmd := &cobra.Command{
		Use:   "attach URL",
		Short: "Watch and steer a run served elsewhere, in the console",
		Long: `attach shows a run published with kasmrt run --listen (or inbox.listen) in the
same console a local run has: screen, timeline, budgets, inbox and verdict.
Answers typed in its inbox and steering keys (pause, step, approve, reject,
abort, note) go to the run over the HTTP API; several consoles may attach to
one run at once, and an answer given in one leaves the others' inboxes. A
dropped connection is reconnected, and the events missed meanwhile follow.

URL is a run's (http://HOST:PORT/v1/runs/ID), a session's of kasmrt serve
(…/v1/sessions/ID) or a server's (http://HOST:PORT). A server with one run
and no session (kasmrt run --listen) shows that run; any other shows a
table of its runs and sessions (state, step, verdict, questions waiting,
age; / filters), where enter watches one, esc goes back, and one inbox
collects every question. The token comes from --token-file or
$KASMRT_TOKEN, never from a flag's value. Quitting the console leaves the
runs going; x aborts the watched one. --print prints a line per event of
one run or session instead.

Exit codes: 0 detached or the run ended, 2 the server refused (a wrong
token, no such run) or the connection failed after it answered, 3 bad input:
a URL attach does not take, or one where nothing answers (no server
listening, a host name that does not resolve).`,
		Example: `  KASMRT_TOKEN=$(cat ~/.kasmrt-token) kasmrt attach http://127.0.0.1:7401`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return attach(cmd, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token (default: $"+envToken+")")
	fl.StringVar(&f.graphics, "graphics", "auto", "console screenshots: auto, kitty, sixel, blocks or none")
	fl.StringVar(&f.theme, "theme", "", "console theme: auto (the default: light or dark as the terminal's background is), dark, light, high-contrast or a theme file")
	fl.BoolVar(&f.print, "print", false, "print a line per event and the end state instead of the console")
	return cmd
}

// attachServer shows a server's runs and sessions in the fleet console:
// a table, enter watches one, esc goes back, one inbox for all of them.
func attachServer(cmd *cobra.Command, target string, srv *remote.Server, cs consoleSettings) error {
	fleet := tui.NewFleet(cmd.Context(), tui.FleetOptions{Source: srv, Title: target, Detached: true, Run: tui.Options{
		Theme: cs.theme, Graphics: cs.mode, Env: os.Getenv, Profile: colorprofile.Detect(os.Stdout, os.Environ()),
	}})
	p := tea.NewProgram(fleet, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintf(errOut(cmd), "kasmrt: console: %v\n", err)
		return &exitError{code: exitTestError}
	}
	return nil
}

// refuseCredentialsInURL refuses a URL that carries user:password@ (or
// cannot be read as a URL, so where its credentials end is unknown). The
// URL is not repeated: its userinfo would be echoed with it.
func refuseCredentialsInURL(target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return errors.New("attach: the URL is not a URL; want http://HOST:PORT, …/v1/runs/ID or …/v1/sessions/ID")
	}
	if u.User != nil {
		// The query may hold a credential too: neither is repeated.
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return fmt.Errorf("attach %s: the URL carries user:password@, which is never sent; the token comes from --token-file or $%s", u, envToken)
	}
	return nil
}

func attach(cmd *cobra.Command, target string, f attachFlags) error {
	if err := refuseCredentialsInURL(target); err != nil {
		return badInput(err)
	}
	token, err := serveToken(f.tokenFile)
	if err != nil {
		return refuse(cmd, err)
	}
	cs, err := loadConsoleSettings(runFlags{graphics: f.graphics, theme: f.theme})
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "kasmrt-attach-*")
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	defer os.RemoveAll(dir)
	dialCtx, cancelDial := context.WithTimeout(cmd.Context(), 15*time.Second)
	defer cancelDial()
	if remote.IsServerURL(target) {
		srv, err := remote.DialServer(dialCtx, target, token, dir)
		if err != nil {
			return dialFailed(cmd, target, err)
		}
		one, single := srv.Single(dialCtx)
		if !single {
			if f.print {
				return badInput(fmt.Errorf("attach --print takes one run or session; %s has several or none: name one (…/v1/runs/ID, …/v1/sessions/ID)", target))
			}
			return attachServer(cmd, target, srv, cs)
		}
		target = one
	}
	client, err := remote.Dial(dialCtx, target, token, dir)
	if err != nil {
		return dialFailed(cmd, target, err)
	}
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	// A drop is told as a log line, so the operator knows the view is
	// catching up rather than stuck.
	dropped := func(sink func(events.Event)) func(error) {
		return func(err error) {
			sink(events.Event{T: time.Now(), Kind: events.KindLog, Message: fmt.Sprintf("the connection to %s dropped (%v); reconnecting from event %d", client.URL(), err, client.LastID())})
		}
	}
	if f.print {
		printer := tui.NewPrinter(cmd.OutOrStdout())
		err := client.Follow(ctx, printer.Event, dropped(printer.Event))
		if printer.Printed() > 0 {
			_ = printer.Summary(nil)
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(errOut(cmd), "kasmrt: attach: %v\n", err)
			return &exitError{code: exitTestError}
		}
		return nil
	}
	model, sink := tui.NewLive(tui.Options{
		Dir:      client.Dir(),
		Controls: client,
		Theme:    cs.theme,
		Graphics: cs.mode,
		Env:      os.Getenv,
		Profile:  colorprofile.Detect(os.Stdout, os.Environ()),
	})
	go func() { _ = client.Follow(ctx, sink, dropped(sink)) }()
	p := tea.NewProgram(model, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) {
		fmt.Fprintf(errOut(cmd), "kasmrt: console: %v\n", err)
		return &exitError{code: exitTestError}
	}
	return nil
}

// dialFailed says why attaching to target failed and picks the exit code.
// Nothing answering at the URL (no server listening, a name that does not
// resolve) is the URL's fault, as is a URL attach does not take: exit 3,
// said in words rather than as the HTTP client's error. A server that
// answered and refused is exit 2.
func dialFailed(cmd *cobra.Command, target string, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var msg string
	switch {
	case errors.As(err, &dnsErr):
		msg = fmt.Sprintf("attach %s: the host name %s does not resolve (%s); check the URL", target, dnsErr.Name, dnsErr.Err)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		why := "connection refused"
		if !errors.Is(err, syscall.ECONNREFUSED) {
			why = opErr.Err.Error()
		}
		msg = fmt.Sprintf("attach %s: nothing answers at %s (%s); is kasmrt run --listen or kasmrt serve running there?", target, opErr.Addr, why)
	case errors.Unwrap(err) == nil:
		// The URL itself: its scheme, a query string, a path attach does
		// not know. Nothing was asked of a server.
		msg = err.Error()
	default:
		fmt.Fprintf(errOut(cmd), "kasmrt: %v\n", err)
		return &exitError{code: exitTestError}
	}
	fmt.Fprintf(errOut(cmd), "kasmrt: %s\n", msg)
	return &exitError{code: exitBadInput}
}

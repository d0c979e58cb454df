package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/internal/httpguard"
	"github.com/kasmrt/kasmrt/serve"
)

// envToken names the environment variable serve reads its token from when
// no --token-file is given.
const envToken = "KASMRT_TOKEN"

type serveFlags struct {
	mcpFlags
	listen      string
	tokenFile   string
	maxSessions int
	idleTimeout time.Duration
}

func newServeCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve --scenarios DIR",
		Short: "Serve sessions to outside agents over HTTP (MCP at /mcp)",
		Long: `serve is a long-running server of sessions: MCP's streamable HTTP transport
at /mcp, with the tools kasmrt mcp offers over stdio.

Every request needs "Authorization: Bearer TOKEN" when a token is set; the
token comes from --token-file or $KASMRT_TOKEN, never from a flag's value,
and a token in the query string is refused. Without a token, serve only
listens on a loopback address. --max-sessions (default: one per CPU, as
each session runs its own Xvfb and application) bounds the sessions open at
once; a session no call used for --idle-timeout closes with its report.
SIGINT or SIGTERM closes every open session with a complete report.`,
		Example: `  KASMRT_TOKEN=$(cat ~/.kasmrt-token) kasmrt serve --scenarios scenarios/examples`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.reapOrphans, _ = cmd.Context().Value(ownProcessKey{}).(bool)
			return serveHTTP(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenarios, "scenarios", "", "the folder open_session names scenarios in (required)")
	fl.StringVarP(&f.operator, "operator", "o", "", "operator file every session uses (its model.endpoint gives sessions check_expectation and click_grounded)")
	fl.StringVar(&f.reports, "reports", defaultReportsDir, "the folder each session's report directory is created in")
	fl.StringVar(&f.listen, "listen", "127.0.0.1:7400", "address to listen on")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the bearer token (default: $"+envToken+")")
	fl.IntVar(&f.maxSessions, "max-sessions", runtime.NumCPU(), "sessions open at once")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 10*time.Minute, "close a session unused this long (0: never)")
	return cmd
}

// serveToken reads the bearer token from --token-file or the environment.
func serveToken(tokenFile string) (string, error) {
	if tokenFile == "" {
		return strings.TrimSpace(os.Getenv(envToken)), nil
	}
	if err := requireRegularFile("--token-file", tokenFile); err != nil {
		return "", err
	}
	// As ssh does with a key: a token others on the machine can read is
	// no longer the operator's alone, so it is refused rather than used.
	st, err := os.Stat(tokenFile)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", unwrapPath(err))
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("--token-file %s is open to other users (mode %04o): make it the owner's alone (chmod 600 %s)", tokenFile, perm, tokenFile)
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", unwrapPath(err))
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file %s is empty", tokenFile)
	}
	return token, nil
}

func serveHTTP(cmd *cobra.Command, f serveFlags) error {
	token, err := serveToken(f.tokenFile)
	if err != nil {
		return refuse(cmd, err)
	}
	if err := httpguard.CheckListen("--listen", f.listen, token, "--token-file or $"+envToken); err != nil {
		return refuse(cmd, err)
	}
	public := !httpguard.Loopback(f.listen)
	if f.maxSessions < 1 {
		return refuse(cmd, errors.New("--max-sessions must be at least 1"))
	}
	if f.idleTimeout < 0 {
		return refuse(cmd, errors.New("--idle-timeout cannot be negative"))
	}
	if f.reapOrphans {
		becomeSubreaper()
		defer killOrphans()
	}
	sessCtx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
	defer cancel()
	m, err := sessionManager(sessCtx, f.scenarios, f.operator, f.reports, f.maxSessions, f.idleTimeout)
	if err != nil {
		return refuse(cmd, err)
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return refuse(cmd, fmt.Errorf("listen on %s: %w", f.listen, err))
	}
	srv := &http.Server{
		// An idle MCP connection outlives the sessions it opened, which
		// --idle-timeout closes first: a client waiting on them keeps its
		// connection, and one that expires leaves no session behind.
		Handler: serve.NewHandler(m, serve.HTTPOptions{Token: token, Public: public, Listen: f.listen, Version: version,
			MCPIdleTimeout: max(serve.DefaultMCPIdleTimeout, 2*f.idleTimeout)}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(errOut(cmd), "kasmrt serve: MCP at http://%s/mcp\n", ln.Addr())
	select {
	case <-cmd.Context().Done():
	case err = <-served:
	}
	// Sessions close first, with their reports; then the server, whose
	// open event streams never end on their own.
	closeCtx, cancelClose := context.WithTimeout(context.Background(), time.Minute)
	defer cancelClose()
	m.CloseAll(closeCtx)
	shutCtx, cancelShut := context.WithTimeout(context.Background(), time.Second)
	defer cancelShut()
	if srv.Shutdown(shutCtx) != nil {
		_ = srv.Close()
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(errOut(cmd), "kasmrt: serve: %v\n", err)
		return &exitError{code: exitTestError}
	}
	return nil
}

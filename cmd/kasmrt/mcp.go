package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/serve"
)

type mcpFlags struct {
	scenarios   string
	operator    string
	reports     string
	reapOrphans bool
}

func newMCPCommand() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:   "mcp --scenarios DIR",
		Short: "Serve sessions to an MCP client over stdio",
		Long: `mcp is an MCP server on standard input and output, for clients that spawn
their server. list_scenarios names the goal scenarios of --scenarios with
their goals; open_session launches one (named relative
to it; nothing outside it can be opened) as a session: its application in its
own Xvfb with the scenario's vocabulary. Every tool the session offers is then
an MCP tool taking the session's id; close_session returns the runtime's
verdict and the report directory (under --reports).

When the client disconnects, or on SIGINT/SIGTERM, every open session closes
with a complete report.`,
		Example: `  kasmrt mcp --scenarios scenarios/examples -o operator.yaml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.reapOrphans, _ = cmd.Context().Value(ownProcessKey{}).(bool)
			return serveMCPStdio(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenarios, "scenarios", "", "the folder open_session names scenarios in (required)")
	fl.StringVarP(&f.operator, "operator", "o", "", "operator file every session uses (its model.endpoint gives sessions check_expectation and click_grounded)")
	fl.StringVar(&f.reports, "reports", defaultReportsDir, "the folder each session's report directory is created in")
	return cmd
}

// sessionManager checks the flags shared by mcp and serve and returns the
// manager of their sessions.
func sessionManager(ctx context.Context, scenariosDir, operator, reports string, maxSessions int, idle time.Duration) (*serve.Manager, error) {
	if scenariosDir == "" {
		return nil, errors.New("--scenarios is required: the folder sessions' scenarios are named in")
	}
	if st, err := os.Stat(scenariosDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("--scenarios %s is not a folder", scenariosDir)
	}
	if operator != "" {
		if err := requireRegularFile("--operator", operator); err != nil {
			return nil, err
		}
	}
	return serve.NewManager(ctx, serve.Options{
		ScenariosDir: scenariosDir,
		Operator:     operator,
		MaxSessions:  maxSessions,
		IdleTimeout:  idle,
		NewReportDir: func(name string) (string, error) {
			d, err := newDefaultReportDir(reports, name, time.Now())
			return d.path, err
		},
	}), nil
}

func serveMCPStdio(cmd *cobra.Command, f mcpFlags) error {
	if f.reapOrphans {
		becomeSubreaper()
		defer killOrphans()
	}
	// Sessions outlive a cancelled command context long enough to close
	// with their reports.
	sessCtx, cancel := context.WithCancel(context.WithoutCancel(cmd.Context()))
	defer cancel()
	m, err := sessionManager(sessCtx, f.scenarios, f.operator, f.reports, 0, 0)
	if err != nil {
		return refuse(cmd, err)
	}
	srv := serve.NewMCPServer(m, version)
	// One bad line from the client is answered with a JSON-RPC error; it
	// does not end the connection and every session on it.
	runErr := srv.Run(cmd.Context(), serve.NewStdioTransport(cmd.InOrStdin(), cmd.OutOrStdout()))
	closeCtx, cancelClose := context.WithTimeout(context.Background(), time.Minute)
	defer cancelClose()
	m.CloseAll(closeCtx)
	if runErr != nil && cmd.Context().Err() == nil && !errors.Is(runErr, io.EOF) && !errors.Is(runErr, mcp.ErrConnectionClosed) {
		fmt.Fprintf(errOut(cmd), "kasmrt: mcp: %v\n", runErr)
		return &exitError{code: exitTestError}
	}
	return nil
}

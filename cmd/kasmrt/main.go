// Command kasmrt is the agentic GUI-testing runtime's command line: it runs,
// validates and replays scenarios and serves the session to outside agents.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"charm.land/fang/v2"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/tui/sanitize"
)

// Exit codes of `kasmrt run` (README.md, docs/architecture.md); other subcommands use 0, 2 and 3.
const (
	exitPass      = 0
	exitAppFailed = 1
	exitTestError = 2
	exitBadInput  = 3
	exitConcerns  = 4
)

// exitError carries the exit code a subcommand chose, with an optional
// message that has not been printed yet.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// badInput marks an error as bad input (exit 3).
func badInput(err error) error { return &exitError{code: exitBadInput, err: err} }

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	// A reader that leaves early (kasmrt run --json | head -2) must not
	// kill the run before it writes its report and stops what it started:
	// with SIGPIPE caught, writes to the closed stdout fail with EPIPE
	// instead, and the run goes on to its end.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(context.WithValue(context.Background(), ownProcessKey{}, true), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// ownProcessKey marks a context whose process belongs to this one command,
// so it may adopt and kill orphaned descendants.
type ownProcessKey struct{}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCommand(stdin, stdout, stderr)
	root.SetArgs(args)
	// Every command installs its own handlers for the signals that end it,
	// whatever it inherited: a shell starts `kasmrt suite … &` with SIGINT
	// ignored, and Go keeps an inherited SIG_IGN for SIGINT and SIGHUP
	// until signal.Notify asks for them. SIGHUP is the terminal closing:
	// the run ends as for Ctrl-C, with its report, and nothing it started
	// is left behind.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	err := fang.Execute(ctx, root,
		fang.WithVersion(version),
		fang.WithErrorHandler(func(w io.Writer, styles fang.Styles, err error) {
			var ee *exitError
			if errors.As(err, &ee) && ee.err == nil {
				return // the subcommand has already said what happened
			}
			// fang capitalises a message's first word on a terminal, which
			// turns "--graphics: …" into "--Graphics: …", a flag nobody can
			// type: kasmrt's messages are printed as written.
			styles.ErrorText = styles.ErrorText.UnsetTransform()
			// The message may quote untrusted text; the styling is fang's.
			fang.DefaultErrorHandler(w, styles, errors.New(sanitize.Text(err.Error())))
		}),
	)
	if err == nil {
		return exitPass
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// Anything cobra refused (unknown flags, wrong argument counts) is bad
	// input: nothing was launched.
	return exitBadInput
}

func newRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "kasmrt",
		Short: "Agentic GUI testing with an operator console",
		Long: `kasmrt runs GUI tests described in YAML scenarios. A scenario launches an
application in an X11 session and runs either scripted steps or a goal, for
which a vision-language model picks one tool call at a time while the runtime
enforces every rule and decides the verdict itself.

The session is an embedded Xvfb of the run's own. An existing display is used
only when --display or the operator file's session.display names it: $DISPLAY
alone never makes kasmrt drive the desktop it was started from.`,
		Example: `  kasmrt validate scenarios/examples/xterm-greeting.yaml
  kasmrt run scenarios/examples/xterm-greeting.yaml --headless --report out/
  kasmrt replay out/ --print`,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newRunCommand(),
		newValidateCommand(),
		newSchemaCommand(),
		newVersionCommand(),
		newReplayCommand(),
		newSuiteCommand(),
		newMergeCommand(),
		newReportCommand(),
		newMCPCommand(),
		newServeCommand(),
		newAttachCommand(),
		newRecordCommand(),
	)
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print kasmrt's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "kasmrt %s\n", version)
			return err
		},
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/serve"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

func newValidateCommand() *cobra.Command {
	var operator, report, display string
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "validate SCENARIO",
		Short: "Check a scenario and operator file and print the run's tool list",
		Long: `validate loads a scenario (and an operator file) exactly as run would, prints
every problem with its file:line:column and key, or the tool list the run
would have. Given run's --report, --overwrite or --display, it checks them as
run would. It launches and creates nothing. Exit code 3 means the input is bad.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := scenarios.Load(args[0], operator, nil)
			if err == nil {
				err = engine.Check(files)
			}
			if err != nil {
				printProblems(errOut(cmd), err)
				return &exitError{code: exitBadInput}
			}
			if display != "" && display != "-" {
				if err := scenarios.CheckDisplay(display); err != nil {
					return refuse(cmd, fmt.Errorf("--display: %w", err))
				}
			}
			if report != "" {
				if err := checkReportDir(report, overwrite, args[0], operator); err != nil {
					return refuse(cmd, err)
				}
			}
			printWarnings(errOut(cmd), files)
			// The tool list quotes the scenario's own text.
			printToolList(sanitize.NewWriter(cmd.OutOrStdout()), files)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&operator, "operator", "o", "", "operator file (budgets, model, session, inbox)")
	fl.StringVar(&report, "report", "", "check this report directory as run would")
	fl.BoolVar(&overwrite, "overwrite", false, "with --report: accept a directory holding an earlier report")
	fl.StringVar(&display, "display", "", "check this X display name as run would")
	return cmd
}

// printProblems writes every problem, one per line, then a count.
func printProblems(w io.Writer, err error) {
	ps, ok := scenarios.AsProblems(err)
	if !ok {
		fmt.Fprintf(w, "error: %v\n", err)
		return
	}
	for _, p := range ps {
		fmt.Fprintln(w, p.Error())
	}
	noun := "problems"
	if len(ps) == 1 {
		noun = "problem"
	}
	fmt.Fprintf(w, "%d %s; nothing was launched\n", len(ps), noun)
}

func printToolList(w io.Writer, f *scenarios.Files) {
	s := f.Scenario
	detail := fmt.Sprintf("%d steps", len(s.Steps))
	if s.Goal != "" {
		detail = "no plan"
		if len(s.Plan) > 0 {
			detail = fmt.Sprintf("plan of %d", len(s.Plan))
		}
	}
	fmt.Fprintf(w, "%s: scenario %q is valid (%s, %s)\n", s.File, s.Name, s.Mode(), detail)
	tools := engine.ToolList(f, engine.OffersFromFiles(f))
	fmt.Fprintf(w, "tools (%d):\n", len(tools))
	for _, t := range tools {
		fmt.Fprintf(w, "  %-22s %s\n", t.Name, argSummary(t))
	}
	if pending := engine.PendingTools(f); len(pending) > 0 {
		fmt.Fprintf(w, "decided at launch (%d):\n", len(pending))
		for _, t := range pending {
			why := "if the app publishes named controls over AT-SPI"
			if t.Presence == scenarios.CDPTab {
				why = "if a browser tab is attached over CDP"
			}
			fmt.Fprintf(w, "  %-22s %s — %s\n", t.Name, argSummary(t), why)
		}
	}
	if absent := engine.NotOffered(f); len(absent) > 0 {
		fmt.Fprintf(w, "not offered (%d):\n", len(absent))
		for _, u := range absent {
			fmt.Fprintf(w, "  %-22s %s\n", u.Tool.Name, u.Why)
		}
	}
}

// argSummary renders a tool's parameters compactly, e.g.
// "{target: center|ok}".
func argSummary(t scenarios.ToolSpec) string {
	if len(t.Params) == 0 {
		return "{}"
	}
	parts := make([]string, len(t.Params))
	for i, p := range t.Params {
		v := p.Type
		if len(p.Enum) > 0 {
			v = strings.Join(p.Enum, "|")
		}
		if p.Max != nil {
			v += fmt.Sprintf(" ≤%g", *p.Max)
		}
		name := p.Name
		if !p.Required {
			name += "?"
		}
		parts[i] = name + ": " + v
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func newSchemaCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "schema scenario|operator|suite|api",
		Short: "Print the JSON Schema of scenario, operator or suite files, or the HTTP API's OpenAPI document",
		Long: "schema prints a JSON Schema that YAML language servers use to check and complete files in an editor; " +
			"`schema api` prints the OpenAPI 3.1 document of kasmrt serve's HTTP API (also served at /v1/openapi.json).",
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"scenario", "operator", "suite", "api"},
		RunE: func(cmd *cobra.Command, args []string) error {
			var schema map[string]any
			switch args[0] {
			case "scenario":
				schema = scenarios.ScenarioSchema()
			case "operator":
				schema = scenarios.OperatorSchema()
			case "suite":
				schema = scenarios.SuiteSchema()
			case "api":
				schema = serve.OpenAPI()
			default:
				return badInput(fmt.Errorf("schema: want scenario, operator, suite or api, got %q", args[0]))
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(schema)
		},
	}
}

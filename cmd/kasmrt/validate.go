package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/scenarios"
	"github.com/kasmrt/kasmrt/serve"
	"github.com/kasmrt/kasmrt/tui/sanitize"
)

func newValidateCommand() *cobra.Command {
	var operator, report, display, desktop string
	var overwrite, asJSON bool
	cmd := &cobra.Command{
		Use:   "validate SCENARIO",
		Short: "Check a scenario and operator file and print the run's tool list",
		Long: `validate loads a scenario (and an operator file) exactly as run would, prints
every problem with its file:line:column and key, or the tool list the run
would have. Given run's --report, --overwrite or --display, it checks them as
run would. It launches and creates nothing. Exit code 3 means the input is bad.

--json prints one JSON object on stdout instead: valid, the problems and the
warnings (each with file, line, column, key and message; line 0 when the
problem has no place in a file), and for a valid scenario its name, mode and
the tool list (tools with their parameters' JSON Schema, decided_at_launch,
not_offered with why).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			files, err := engine.Load(args[0], operator, nil)
			if err == nil && display != "" && display != "-" {
				if derr := scenarios.CheckDisplay(display); derr != nil {
					err = fmt.Errorf("--display: %w", derr)
				}
			}
			if err == nil {
				if derr := applyDesktop(files, desktop, display); derr != nil {
					err = fmt.Errorf("--desktop: %w", derr)
				}
			}
			if err == nil && report != "" {
				err = checkReportDir(report, overwrite, args[0], operator)
			}
			if asJSON {
				return printValidateJSON(cmd.OutOrStdout(), args[0], files, err)
			}
			if err != nil {
				if _, ok := scenarios.AsProblems(err); ok {
					printProblems(errOut(cmd), err)
					return &exitError{code: exitBadInput}
				}
				return refuse(cmd, err)
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
	fl.StringVar(&desktop, "desktop", "", "check the run on this desktop (x11 or wayland) as run would, and list what it does not offer")
	fl.BoolVar(&asJSON, "json", false, "print the problems, warnings and tool list as one JSON object")
	return cmd
}

// validateJSON is validate --json's output.
type validateJSON struct {
	Valid    bool          `json:"valid"`
	File     string        `json:"file"`
	Problems []problemJSON `json:"problems"`
	Warnings []problemJSON `json:"warnings"`
	// The scenario and its tool list, when it is valid.
	Scenario        string     `json:"scenario,omitempty"`
	Mode            string     `json:"mode,omitempty"`
	Tools           []toolJSON `json:"tools"`
	DecidedAtLaunch []toolJSON `json:"decided_at_launch"`
	NotOffered      []toolJSON `json:"not_offered"`
	// Desktop is the session's desktop when it is not X11, and
	// DesktopLacks what that session lacks that the X11 session offers.
	Desktop      string   `json:"desktop,omitempty"`
	DesktopLacks []string `json:"desktop_lacks,omitempty"`
}

// problemJSON is a problem or a warning at its place: Line and Column are
// 0 when it has none in a file, Key when it is about no one key.
type problemJSON struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Key     string `json:"key"`
	Message string `json:"message"`
}

type toolJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
	// Why the tool waits for the launch, or is not offered.
	Why string `json:"why,omitempty"`
}

func problemsJSON(ps scenarios.Problems) []problemJSON {
	out := make([]problemJSON, 0, len(ps))
	for _, p := range ps {
		out = append(out, problemJSON{File: p.File, Line: p.Line, Column: p.Column, Key: p.Path, Message: p.Msg})
	}
	return out
}

func toolsJSON(specs []scenarios.ToolSpec) []toolJSON {
	out := make([]toolJSON, 0, len(specs))
	for _, t := range specs {
		out = append(out, toolJSON{Name: t.Name, Description: t.Description, Parameters: t.JSONSchema()})
	}
	return out
}

// printValidateJSON writes validate's verdict on the files, or on the
// error that refused them, as one JSON object; bad input still exits 3.
func printValidateJSON(w io.Writer, path string, files *scenarios.Files, err error) error {
	out := validateJSON{File: path, Problems: []problemJSON{}, Warnings: []problemJSON{},
		Tools: []toolJSON{}, DecidedAtLaunch: []toolJSON{}, NotOffered: []toolJSON{}}
	if ps, ok := scenarios.AsProblems(err); ok {
		out.Problems = problemsJSON(ps)
	} else if err != nil {
		// A flag's value, not a place in the files: the message names it.
		out.Problems = []problemJSON{{Message: err.Error()}}
	} else {
		out.Valid = true
		out.Warnings = problemsJSON(append(slices.Clip(files.Scenario.Warnings), files.Operator.Warnings...))
		out.Scenario, out.Mode = files.Scenario.Name, string(files.Scenario.Mode())
		out.Tools = toolsJSON(engine.ToolList(files, engine.OffersFromFiles(files)))
		for _, t := range engine.PendingTools(files) {
			j := toolsJSON([]scenarios.ToolSpec{t})[0]
			j.Why = pendingWhy(t)
			out.DecidedAtLaunch = append(out.DecidedAtLaunch, j)
		}
		out.DesktopLacks = engine.DesktopLacks(files)
		if d := files.Operator.Desktop.Desktop; d != scenarios.DesktopX11 {
			out.Desktop = d
		}
		for _, u := range engine.NotOffered(files) {
			out.NotOffered = append(out.NotOffered, toolJSON{Name: u.Tool.Name, Why: u.Why})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if werr := enc.Encode(out); werr != nil {
		return werr
	}
	if !out.Valid {
		return &exitError{code: exitBadInput}
	}
	return nil
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
			fmt.Fprintf(w, "  %-22s %s — %s\n", t.Name, argSummary(t), pendingWhy(t))
		}
	}
	if absent := engine.NotOffered(f); len(absent) > 0 {
		fmt.Fprintf(w, "not offered (%d):\n", len(absent))
		for _, u := range absent {
			fmt.Fprintf(w, "  %-22s %s\n", u.Tool.Name, u.Why)
		}
	}
	if lacks := engine.DesktopLacks(f); len(lacks) > 0 {
		fmt.Fprintf(w, "the %s session lacks (%d):\n", f.Operator.Desktop.Desktop, len(lacks))
		for _, l := range lacks {
			fmt.Fprintf(w, "  - %s\n", l)
		}
	}
}

// pendingWhy says what decides at launch, or during the run, whether a
// tool is offered.
func pendingWhy(t scenarios.ToolSpec) string {
	switch t.Presence {
	case scenarios.CDPTab:
		return "if a browser tab is attached over CDP"
	case scenarios.Values:
		return "once the operator answers an ask_human question (the answer is typed by ref answer_<question id>)"
	}
	return "if the app publishes named controls over AT-SPI"
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

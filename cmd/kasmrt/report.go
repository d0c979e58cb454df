package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine/report/page"
)

func newReportCommand() *cobra.Command {
	var (
		index bool
		out   string
	)
	cmd := &cobra.Command{
		Use:   "report REPORT_DIR...",
		Short: "Write report.html for report directories, or an index page over many runs",
		Long: `report (re)writes REPORT_DIR/report.html from the directory's events.jsonl
and app.log, so reports written by older versions, or by a run that was
killed, can be read in a browser. The page works offline: screens are
referenced from screens/, and the page runs no script but its own.

With --index, it writes one page (--out, default index.html) listing every
REPORT_DIR with its verdict and final capture, linking each run's
report.html (written when a directory has none). Exit code 3 means a
directory is missing or is not a report directory.`,
		Example: `  kasmrt report out/
  kasmrt report --index reports/* --out reports/index.html`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !index && len(args) > 1 {
				return badInput(errors.New("report takes one REPORT_DIR; use --index for many"))
			}
			for _, dir := range args {
				if err := requireReportDir(dir); err != nil {
					return badInput(err)
				}
			}
			if !index {
				if err := page.Write(args[0], page.Options{}); err != nil {
					return &exitError{code: exitTestError, err: err}
				}
				fmt.Fprintln(cmd.OutOrStdout(), filepath.Join(args[0], page.FileName))
				return nil
			}
			if err := page.WriteIndex(out, args); err != nil {
				return &exitError{code: exitTestError, err: err}
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().BoolVar(&index, "index", false, "write an index page over every REPORT_DIR")
	cmd.Flags().StringVar(&out, "out", "index.html", "where --index writes its page")
	return cmd
}

// requireReportDir refuses a path that is not a report directory (one
// with an events.jsonl regular file), before anything is written.
func requireReportDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("report directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("report directory %s is not a directory", dir)
	}
	ev, err := os.Stat(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return fmt.Errorf("%s is not a report directory (no events.jsonl): %w", dir, err)
	}
	if !ev.Mode().IsRegular() {
		return fmt.Errorf("%s/events.jsonl is not a regular file", dir)
	}
	return nil
}

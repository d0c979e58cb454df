package main

import (
	"fmt"
	"os"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/themes"
	"github.com/kasmrt/kasmrt/tui"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

func newReplayCommand() *cobra.Command {
	var (
		print     bool
		mode      string
		themeFile string
		themeName string
	)
	cmd := &cobra.Command{
		Use:   "replay REPORT_DIR",
		Short: "Step through a saved run, or print it as a transcript",
		Long: `replay opens a report directory in the console and steps through the run
event by event: the screen, the call, its result and the budgets exactly as
they were, with jumps to refusals, grounding attempts, concerns and questions.
It reads only the report directory and also replays killed runs (events.jsonl
only). --print writes a plain-text transcript to stdout instead. Exit code 3
means the report directory is missing or unreadable.`,
		Example: `  kasmrt replay out/
  kasmrt replay out/ --print | less
  kasmrt replay out/ --graphics blocks --theme ~/my-theme.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gm, err := graphics.ParseMode(mode)
			if err != nil {
				return badInput(err)
			}
			report, err := tui.LoadReport(args[0])
			if err != nil {
				return badInput(err)
			}
			if print {
				if report.Warning != "" {
					fmt.Fprintf(errOut(cmd), "warning: %s\n", report.Warning)
				}
				return tui.PrintReport(cmd.OutOrStdout(), report)
			}
			if _, ok := themes.Builtin(themeFile); ok && themeName == "" {
				// --theme also takes a built-in palette's name, as in run.
				themeName, themeFile = themeFile, ""
			}
			theme, err := themes.Load(themeName, themeFile, os.Getenv)
			if err != nil {
				return badInput(err)
			}
			profile := colorprofile.Detect(os.Stdout, os.Environ())
			m := tui.NewReplay(report, tui.Options{
				Theme:    theme,
				Graphics: gm,
				Env:      os.Getenv,
				Profile:  profile,
			})
			p := tea.NewProgram(m, tea.WithContext(cmd.Context()), tea.WithInput(cmd.InOrStdin()), tea.WithOutput(cmd.OutOrStdout()))
			if _, err := p.Run(); err != nil {
				return fmt.Errorf("run the replay console: %w", err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&print, "print", false, "write a plain-text transcript to stdout instead of opening the console")
	f.StringVar(&mode, "graphics", "auto", "how to draw screens: auto, kitty, sixel, blocks or none")
	f.StringVar(&themeFile, "theme", "", "auto, dark, light, high-contrast or a theme file (YAML); default $XDG_CONFIG_HOME/kasmrt/theme.yaml if present, else auto (light or dark as the terminal's background is)")
	f.StringVar(&themeName, "palette", "", "built-in palette: dark, light or high-contrast")
	return cmd
}

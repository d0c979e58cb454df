package main

import (
	"github.com/spf13/cobra"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/scenarios"
)

// runWithConsole runs with the live console.
func runWithConsole(cmd *cobra.Command, files *scenarios.Files, opts engine.Options, f runFlags) error {
	return runHeadless(cmd, files, opts, f)
}

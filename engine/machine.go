package engine

import "github.com/kasmrt/kasmrt/engine/stage"

// The engine's names for what it uses of the stage a run plays on
// (engine/stage): the machine the stage takes its parts from (the real
// drivers, or the rule tests' double), and the parts the rules act on.
type (
	machine       = stage.Machine
	displayServer = stage.DisplayServer
	app           = stage.App
	browser       = stage.Browser
	browserTab    = stage.BrowserTab
	browserRun    = stage.Web
	accessibility = stage.Accessibility
)

package x11

import "github.com/kasmrt/kasmrt/drivers/desktop"

// The driver speaks the desktop contract's types, so its connection and
// session satisfy what the runtime needs of a desktop without a
// translation layer; the names stay here for the driver's own code.
type (
	Window              = desktop.Window
	WindowMatch         = desktop.WindowMatch
	Hit                 = desktop.Hit
	DisplayOptions      = desktop.DisplayOptions
	SettleOptions       = desktop.SettleOptions
	UnknownKeyError     = desktop.UnknownKeyError
	KeyNotOnLayoutError = desktop.KeyNotOnLayoutError
)

// Window managers an owned session can run (desktop.WindowManagerOpenbox).
const (
	WindowManagerOpenbox = desktop.WindowManagerOpenbox
	WindowManagerNone    = desktop.WindowManagerNone
)

// The errors the driver's calls wrap, from the desktop contract.
var (
	ErrWindowGone      = desktop.ErrWindowGone
	ErrNoWindow        = desktop.ErrNoWindow
	ErrOffScreen       = desktop.ErrOffScreen
	ErrPingUnsupported = desktop.ErrPingUnsupported
	ErrUnknownKey      = desktop.ErrUnknownKey
	ErrKeyNotOnLayout  = desktop.ErrKeyNotOnLayout
)

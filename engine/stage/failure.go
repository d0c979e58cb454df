package stage

import (
	"time"

	"github.com/kasmrt/kasmrt/drivers/desktop"
	"github.com/kasmrt/kasmrt/drivers/proc"
)

// Cause is what kept the stage from being set.
type Cause int

const (
	// CouldNotStart: the X session, the isolation or the application did
	// not start; Reason says why.
	CouldNotStart Cause = iota
	// BrowserCouldNotStart: Chromium did not launch, or the DevTools
	// address (Address, when Attach) did not answer.
	BrowserCouldNotStart
	// AppExitedBeforeWindow and AppExitedBeforeStartPage: the application
	// ended (Status) before its window appeared, or before the browser's
	// start page opened.
	AppExitedBeforeWindow
	AppExitedBeforeStartPage
	// BrowserExited: the browser under test ended before its window
	// appeared.
	BrowserExited
	// NoWindow: no window matching Match appeared within Timeout; What
	// names the window ("window", "browser window").
	NoWindow
	// StartPageFailed: the start page did not open; Reason says how.
	StartPageFailed
)

// Failure is why the stage could not be set, with what the run needs to
// judge it and to tell the author.
type Failure struct {
	Cause  Cause
	Reason string
	// Err is the underlying error.
	Err error

	Status  proc.Status
	Match   desktop.WindowMatch
	Timeout time.Duration
	What    string
	Attach  bool
	Address string
}

func (f *Failure) Error() string {
	if f.Reason != "" {
		return f.Reason
	}
	if f.Err != nil {
		return f.Err.Error()
	}
	return "the stage could not be set"
}

func (f *Failure) Unwrap() error { return f.Err }

func couldNotStart(reason string, err error) *Failure {
	return &Failure{Cause: CouldNotStart, Reason: reason, Err: err}
}

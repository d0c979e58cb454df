package engine

import "github.com/kasmrt/kasmrt/inbox"

// ReportDir is where the run's report is written.
func (r *Runner) ReportDir() string { return r.opts.ReportDir }

// Inbox returns the session's inbox, or nil when its operator file gives
// it none.
func (s *AgentRun) Inbox() *inbox.Inbox { return s.r.Inbox() }

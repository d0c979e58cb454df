package engine

import (
	"context"
	"sync"

	"github.com/kasmrt/kasmrt/engine/events"
)

// steering holds the operator's hold on a run: pause, step mode, pending
// approvals, abort and notes for the model. The console sets it from its
// goroutine; the loop reads it before each model turn.
type steering struct {
	mu       sync.Mutex
	paused   bool
	stepMode bool
	aborted  bool
	notes    []string
	// takeover is set while the operator asks for the desktop: a paused
	// loop goes on to its takeover point (engine/takeover.go).
	takeover  bool
	cancel    context.CancelFunc
	changed   chan struct{} // closed and replaced on every change
	decisions chan decision
}

type decision struct {
	approve bool
	reason  string
}

func newSteering() *steering {
	return &steering{changed: make(chan struct{}), decisions: make(chan decision, 1)}
}

// bind makes an abort call cancel, which ends the run's work.
func (s *steering) bind(cancel context.CancelFunc) {
	s.mu.Lock()
	s.cancel = cancel
	aborted := s.aborted
	s.mu.Unlock()
	if aborted {
		cancel()
	}
}

// apply records an operator action.
func (s *steering) apply(a events.Steer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a.Action {
	case events.SteerPause:
		s.paused = true
	case events.SteerResume:
		s.paused = false
	case events.SteerStep:
		s.stepMode = a.Value != "off"
	case events.SteerApprove, events.SteerReject:
		select {
		case s.decisions <- decision{approve: a.Action == events.SteerApprove, reason: a.Reason}:
		default: // a decision is already waiting; the first one counts
		}
	case events.SteerAbort:
		s.aborted = true
		if s.cancel != nil {
			s.cancel()
		}
	case events.SteerNote:
		if a.Value != "" {
			s.notes = append(s.notes, a.Value)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *steering) isAborted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.aborted
}

func (s *steering) inStepMode() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stepMode
}

// waitWhilePaused blocks while the run is paused.
func (s *steering) waitWhilePaused(ctx context.Context) error {
	for {
		s.mu.Lock()
		paused, changed := s.paused && !s.aborted && !s.takeover, s.changed
		s.mu.Unlock()
		if !paused {
			return ctx.Err()
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// takeNotes returns the operator's notes not yet delivered to the model.
func (s *steering) takeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notes
	s.notes = nil
	return n
}

// clearDecision drops a stale decision made before the next proposal
// exists. It is called before the proposal is announced, so an operator
// who answers at once is not mistaken for a stale one.
func (s *steering) clearDecision() {
	select {
	case <-s.decisions:
	default:
	}
}

// awaitDecision waits for the operator to approve or reject a proposed
// call. Leaving step mode approves it.
func (s *steering) awaitDecision(ctx context.Context) (decision, error) {
	for {
		s.mu.Lock()
		stepMode, changed := s.stepMode, s.changed
		s.mu.Unlock()
		if !stepMode {
			return decision{approve: true}, nil
		}
		select {
		case d := <-s.decisions:
			return d, nil
		case <-changed:
		case <-ctx.Done():
			return decision{}, ctx.Err()
		}
	}
}

package tui

import (
	"cmp"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/inbox"
)

// Controls is how the console acts on a live run. The engine implements
// it; each call may block briefly, so the console makes it from a tea.Cmd.
type Controls interface {
	// AnswerMarked answers the pending ask_human question with id
	// questionID, with the operator's mark: the model reads only a
	// shareable answer, and a secret one is redacted like any secret.
	AnswerMarked(questionID, text string, mark inbox.Mark) error
	// Steer performs an operator action: pause, resume, step (Value
	// "on"/"off"), approve, reject (with Reason), abort or note (Value).
	Steer(s events.Steer) error
}

// lossy reports whether only the newest pending event of e's kind matters:
// frames and gauges, which the next one replaces. Model requests and
// replies are not lossy: each is a turn the why view shows, and replies'
// usage is summed into the token count. Everything else (steps, refusals,
// questions, verdicts) must reach the console.
func lossy(e events.Event) bool {
	switch e.Kind {
	case events.KindScreen, events.KindBudget:
		return true
	}
	return false
}

// queue is the hand-off between the engine's bus and the program. Push
// never blocks: it appends under a mutex and signals. Lossy kinds keep
// only their newest pending event; the rest queue without bound, which is
// what must-deliver means (they are few: one per step, question or action).
type queue struct {
	mu      sync.Mutex
	pending []events.Event
	newest  map[events.Kind]int // lossy kind -> index in pending
	closed  bool
	ready   chan struct{} // capacity 1: "pending is not empty"
	done    chan struct{}
	dropped int

	// interval is the shortest time between two batches handed to the
	// program (none when not positive); after is how listen waits it out
	// (time.After, a test's clock in tests); last is when the newest batch
	// was taken, read and set by the one listen at a time.
	interval time.Duration
	after    func(time.Duration) <-chan time.Time
	last     time.Time
}

func newQueue(interval time.Duration) *queue {
	return &queue{newest: map[events.Kind]int{}, ready: make(chan struct{}, 1), done: make(chan struct{}),
		interval: interval, after: time.After}
}

// defaultEventInterval paces the live view's batches at ten a second. A
// run publishes a turn's events (the model's request and reply, the
// step's start and end, its screen, the budgets) a few milliseconds
// apart, and every batch costs an Update, a whole View and the terminal's
// repaint on the run's cores: with a batch per 100 ms a watched goal run
// used 150 ms of CPU more than a headless one, against 230 ms with one per
// 50 ms (docs/benchmarks.md, "A watched run"). A person reads nothing
// faster than that.
const defaultEventInterval = 100 * time.Millisecond

// Push is the sink the engine's bus calls.
func (q *queue) Push(e events.Event) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	if lossy(e) {
		if i, ok := q.newest[e.Kind]; ok {
			// Drop the older one in place (keeping order for the rest);
			// Take filters the tombstone. Nothing of it is kept: a screen
			// event holds its capture in memory.
			q.pending[i] = events.Event{}
			q.dropped++
		}
		q.newest[e.Kind] = len(q.pending)
	}
	q.pending = append(q.pending, e)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns every pending event in order.
func (q *queue) take() []events.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]events.Event, 0, len(q.pending))
	for _, e := range q.pending {
		if e.Kind != "" {
			out = append(out, e)
		}
	}
	q.pending = q.pending[:0]
	clear(q.newest)
	return out
}

// close stops accepting events (the console has quit) and wakes a waiting
// listener.
func (q *queue) close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.pending = nil
		close(q.done)
	}
}

// eventsMsg is a batch of events for Update.
type eventsMsg []events.Event

// listen is the one forwarder: a command that waits for events and hands
// the whole pending batch to the program, re-armed after each batch, so
// Update sees events in order and one repaint absorbs a burst. A batch
// comes at most once per interval: events that arrive sooner wait for the
// rest of it and join the batch.
func (q *queue) listen() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-q.ready:
		case <-q.done:
			return nil
		}
		if wait := q.interval - time.Since(q.last); q.interval > 0 && wait > 0 {
			select {
			case <-q.after(wait):
			case <-q.done:
				return nil
			}
		}
		q.last = time.Now()
		return eventsMsg(q.take())
	}
}

// NewLive returns the console for a live run and the sink to subscribe to
// the run's event bus (events.Bus.Subscribe). The sink never blocks.
func NewLive(opts Options) (*Model, func(events.Event)) {
	q := newQueue(cmp.Or(opts.EventInterval, defaultEventInterval))
	m := newModel(opts)
	m.live = true
	m.queue = q
	return m, q.Push
}

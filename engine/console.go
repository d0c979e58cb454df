package engine

import (
	"context"
	"maps"
	"sync"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
)

// Bounds on what a page's console puts in the run's stream, so a page that
// logs in a loop cannot flood the report: the first messages are events,
// the rest are only counted.
const (
	maxConsoleEvents    = 200
	maxConsoleTextChars = 1000
)

// consoleWatcher is a browser tab whose console can be followed.
type consoleWatcher interface {
	WatchConsole(ctx context.Context, fn func(cdp.ConsoleMessage)) (stop func())
}

// consoleLog counts a page's console messages while they become events.
type consoleLog struct {
	mu       sync.Mutex
	counts   map[string]int
	total    int
	recorded int
}

// watchConsole turns the tab's console messages, uncaught exceptions and
// log entries into browser.console events, redacted like everything the
// run publishes. The returned stop ends the watch and publishes the counts,
// so the report knows how many messages there were beyond those recorded.
func (s *runState) watchConsole(w *browserRun) (stop func()) {
	cw, ok := w.tab.(consoleWatcher)
	if !ok {
		return func() {}
	}
	log := &consoleLog{counts: map[string]int{}}
	stopWatch := cw.WatchConsole(s.life, func(m cdp.ConsoleMessage) {
		log.mu.Lock()
		log.counts[m.Level]++
		log.total++
		record := log.recorded < maxConsoleEvents
		if record {
			log.recorded++
		}
		log.mu.Unlock()
		if !record {
			return
		}
		// Redact before cutting, so no half of a secret survives the cut.
		s.publish(events.Event{Kind: events.KindConsole, Data: events.ConsoleMessage{
			Level: m.Level, Source: m.Source, Text: truncate(s.r.Redact(m.Text), maxConsoleTextChars),
			URL: s.r.Redact(m.URL), Line: m.Line,
		}})
	})
	return func() {
		stopWatch()
		log.mu.Lock()
		defer log.mu.Unlock()
		if log.total == 0 {
			return
		}
		s.publish(events.Event{Kind: events.KindConsoleSummary, Data: events.ConsoleSummary{
			Total: log.total, Recorded: log.recorded, Counts: maps.Clone(log.counts),
		}})
	}
}

package stage

import (
	"context"
	"maps"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kasmrt/kasmrt/drivers/cdp"
	"github.com/kasmrt/kasmrt/engine/events"
)

// Bounds on what a page's console puts in the run's stream, so a page that
// logs in a loop cannot flood the report: the first MaxConsoleEvents
// messages are events, the rest are only counted.
const (
	MaxConsoleEvents    = 200
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
func (st *Stage) watchConsole(life context.Context, w *Web) (stop func()) {
	cw, ok := w.Tab.(consoleWatcher)
	if !ok {
		return func() {}
	}
	log := &consoleLog{counts: map[string]int{}}
	stopWatch := cw.WatchConsole(life, func(m cdp.ConsoleMessage) {
		log.mu.Lock()
		log.counts[m.Level]++
		log.total++
		record := log.recorded < MaxConsoleEvents
		if record {
			log.recorded++
		}
		log.mu.Unlock()
		if !record {
			return
		}
		// Redact before cutting, so no half of a secret survives the cut.
		st.rep.Publish(events.Event{Kind: events.KindConsole, Data: events.ConsoleMessage{
			Level: m.Level, Source: m.Source, Text: Truncate(st.cfg.Redact(m.Text), maxConsoleTextChars),
			URL: st.cfg.Redact(m.URL), Line: m.Line,
		}})
	})
	return func() {
		stopWatch()
		log.mu.Lock()
		defer log.mu.Unlock()
		if log.total == 0 {
			return
		}
		st.rep.Publish(events.Event{Kind: events.KindConsoleSummary, Data: events.ConsoleSummary{
			Total: log.total, Recorded: log.recorded, Counts: maps.Clone(log.counts),
		}})
	}
}

// Truncate shortens s to at most n bytes on a character boundary. Redact
// before truncating: a secret cut in half no longer matches.
func Truncate(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

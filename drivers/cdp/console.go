package cdp

import (
	"context"
	"strings"

	"github.com/chromedp/chromedp"
)

// Console message levels. A call of the console API has the method's level
// (console.log is LevelLog, console.error LevelError); an uncaught exception
// or unhandled promise rejection is LevelException; a browser log entry has
// its own level (verbose entries read as LevelDebug).
const (
	LevelLog       = "log"
	LevelDebug     = "debug"
	LevelInfo      = "info"
	LevelWarning   = "warning"
	LevelError     = "error"
	LevelException = "exception"
)

// Console message sources besides the browser log's own ("network",
// "security", "javascript"…).
const (
	SourceConsole   = "console"   // the page called the console API
	SourceException = "exception" // nothing caught an exception
)

// ConsoleMessage is one message of the page's console: a call of the
// console API, an uncaught exception, or an entry of the browser's log
// (a failed request, a security warning).
type ConsoleMessage struct {
	Level  string
	Source string
	// Text is what the DevTools console shows; for an exception, the error
	// and its message without the stack.
	Text string
	// URL and Line are where the message came from, when the browser says;
	// Line counts from 1 and is 0 when unknown.
	URL  string
	Line int
}

// WatchConsole calls fn for each console message, uncaught exception and
// browser log entry of the tab, in order and on one goroutine, until ctx
// ends or the browser closes. It is subscribed when it returns, so nothing
// the page writes afterwards is missed. stop ends the watch and returns once
// fn will not be called again.
func (t *Tab) WatchConsole(ctx context.Context, fn func(ConsoleMessage)) (stop func()) {
	ctx, cancel := t.callContext(ctx)
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			fn(consoleMessage(m))
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

func consoleMessage(m chromedp.ConsoleMessage) ConsoleMessage {
	out := ConsoleMessage{Level: string(m.Type), Source: m.Source, Text: m.Text, URL: m.URL}
	if m.Line > 0 || m.URL != "" {
		out.Line = int(m.Line) + 1
	}
	switch {
	case m.IsException():
		out.Source = SourceException
		// The first line names the error; the rest is a stack the report
		// has no room for.
		out.Text, _, _ = strings.Cut(m.Text, "\n")
	case out.Source == "":
		out.Source = SourceConsole
	}
	if out.Level == "" {
		out.Level = LevelLog
	}
	return out
}

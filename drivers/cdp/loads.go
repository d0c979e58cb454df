package cdp

import (
	"context"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// maxLoadWait bounds how long a capture waits for a document to finish
// loading: a slow page is shown as it is by then rather than not at all.
const maxLoadWait = 3 * time.Second

// maxRequestWait bounds the wait for a navigation the page asked for to
// start loading; one that never starts (cancelled, or a download) is given
// up on.
const maxRequestWait = 500 * time.Millisecond

// pageLoads follows whether the tab's main frame is loading a document,
// from the browser's frame events. Page.captureScreenshot asked for while a
// navigation replaces the document waits for a frame that may not come for
// seconds (measured about one capture in four right after a click on a
// link), so a capture waits for the load to end first.
//
// A navigation the page starts (a link, a form, a script) is announced by
// Page.frameRequestedNavigation before the click that caused it returns,
// while Page.frameStartedLoading was seen to arrive up to 10 ms after it;
// so a request counts as a load that has begun.
type pageLoads struct {
	mainFrame cdp.FrameID

	mu        sync.Mutex
	loading   bool
	requested bool          // only asked for: no frameStartedLoading yet
	loaded    chan struct{} // closed when the load under way ends
	// navigated is set when a load begins and cleared once the document
	// it brought was seen rendering, for Screenshot.
	navigated bool
	// begun counts the loads that began, so that a caller can tell
	// whether one began while it looked at the page.
	begun uint64
	// begins is closed, and replaced, when a load begins, for a caller
	// that must stop waiting on the page the load replaces.
	begins chan struct{}
}

func newPageLoads(mainFrame cdp.FrameID) *pageLoads {
	return &pageLoads{mainFrame: mainFrame, loaded: make(chan struct{}), begins: make(chan struct{})}
}

// onEvent runs on the tab's message loop, so it only flips the state.
func (l *pageLoads) onEvent(ev any) {
	switch ev := ev.(type) {
	case *page.EventFrameRequestedNavigation:
		if ev.FrameID == l.mainFrame && ev.Disposition == page.ClientNavigationDispositionCurrentTab {
			l.set(true, true)
		}
	case *page.EventFrameStartedLoading:
		if ev.FrameID == l.mainFrame {
			l.set(true, false)
		}
	case *page.EventFrameStoppedLoading:
		if ev.FrameID == l.mainFrame {
			l.set(false, false)
		}
	case *page.EventNavigatedWithinDocument:
		// A fragment or history.pushState navigation keeps the document.
		if ev.FrameID == l.mainFrame {
			l.mu.Lock()
			requested := l.requested
			l.mu.Unlock()
			if requested {
				l.set(false, false)
			}
		}
	}
}

func (l *pageLoads) set(loading, requested bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case loading && !l.loading:
		l.loading, l.requested, l.loaded = true, requested, make(chan struct{})
		l.navigated = true
		l.begun++
		close(l.begins)
		l.begins = make(chan struct{})
	case loading:
		l.requested = l.requested && requested
	case l.loading:
		l.loading, l.requested = false, false
		close(l.loaded)
	}
}

// busy reports whether a navigation is asked for or loading.
func (l *pageLoads) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loading
}

// loadsBegun is how many loads have begun since the tab was attached.
func (l *pageLoads) loadsBegun() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.begun
}

// nextBegin returns how many loads have begun and a channel closed when
// the next one begins.
func (l *pageLoads) nextBegin() (uint64, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.begun, l.begins
}

// newDocument reports whether a load began since the last call of
// rendered, which clears it.
func (l *pageLoads) newDocument() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.navigated
}

// rendered notes that the current document was seen rendering, unless a
// load is under way again.
func (l *pageLoads) rendered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.loading {
		l.navigated = false
	}
}

// wait returns once the main frame is not loading, or after maxLoadWait
// (at most half the time ctx has left, so that a capture after a slow load
// still fits in it), or with ctx's error when it ends first.
func (l *pageLoads) wait(ctx context.Context) error {
	budget := maxLoadWait
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl)/2)
	}
	deadline := time.Now().Add(budget)
	for {
		l.mu.Lock()
		loading, requested, loaded := l.loading, l.requested, l.loaded
		l.mu.Unlock()
		if !loading {
			return nil
		}
		wait := time.Until(deadline)
		if requested {
			wait = min(wait, maxRequestWait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-loaded:
			timer.Stop()
			return nil
		case <-timer.C:
			l.mu.Lock()
			started := l.loading && !l.requested && l.loaded == loaded
			l.mu.Unlock()
			if !started || time.Now().After(deadline) {
				return nil
			}
			// The request turned into a load: wait for it until the
			// deadline.
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		}
	}
}

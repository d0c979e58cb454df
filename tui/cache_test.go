package tui

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// The action cache's account (a fall back, and the run's last word on
// it) is a timeline row and a transcript line, and the summary pane keeps
// the last: the operator sees the hits, the misses, where the model took
// over and the model calls saved.
func TestCacheAccountShown(t *testing.T) {
	t.Parallel()
	evs := []events.Event{
		{Seq: 1, T: fleetAt(0), Kind: events.KindCache, Message: "action cache (read-write): fell back to the model at step 6 after 5 replayed calls: the cdp target sign_up reads \"Subscribe\"",
			Data: events.CacheReport{Mode: "read-write", Cached: 9, Hits: 5, Misses: 1, FellBackAt: 6, Saved: 5}},
		{Seq: 2, T: fleetAt(3), Kind: events.KindCache, Message: "action cache (read-write): 5 hits, 1 misses (of 9 cached calls), 5 model calls saved; fell back to the model at step 6",
			Data: events.CacheReport{Mode: "read-write", Cached: 9, Hits: 5, Misses: 1, FellBackAt: 6, Saved: 5, Stored: true, Final: true}},
	}
	st := FoldState(evs)
	if len(st.Rows) != 2 {
		t.Fatalf("rows = %+v, want both accounts", st.Rows)
	}
	for i, r := range st.Rows {
		text, _ := rowText(r)
		if !strings.Contains(text, evs[i].Message) {
			t.Errorf("row %d = %q, want %q in it", i, text, evs[i].Message)
		}
		if got := transcriptLine(evs[i]); got != evs[i].Message {
			t.Errorf("transcript line %d = %q", i, got)
		}
	}
	if st.Cache != evs[1].Message {
		t.Errorf("the state's cache account = %q, want the last", st.Cache)
	}
}

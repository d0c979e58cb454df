package tui

import (
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// A wait for a capacity group, and its end, are timeline rows and
// transcript lines: the operator sees why a run stands still.
func TestCapacityWaitShown(t *testing.T) {
	t.Parallel()
	evs := []events.Event{
		{Seq: 1, T: fleetAt(0), Kind: events.KindCapacityWait, Message: "model waits for capacity group model",
			Data: events.CapacityWait{Group: "model", Limit: 1, For: "model"}},
		{Seq: 2, T: fleetAt(1.2), Kind: events.KindCapacityAcquired, Message: "model has a slot of capacity group model after waiting 1.2s", DurationMS: 1200,
			Data: events.CapacityAcquired{Group: "model", Limit: 1, For: "model", WaitedMS: 1200}},
	}
	st := FoldState(evs)
	if len(st.Rows) != 2 {
		t.Fatalf("rows = %+v, want the wait and its end", st.Rows)
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
}

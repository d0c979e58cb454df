package report

import (
	"encoding/json"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestFoldConsole checks the browser section: the first messages listed,
// every message counted, and the closing summary's counts (which include
// messages past the event cap) taking over; as published or as read back
// from events.jsonl.
func TestFoldConsole(t *testing.T) {
	t.Parallel()
	var evs []events.Event
	for i := range MaxConsoleEntries + 10 {
		level := "log"
		if i%10 == 0 {
			level = "error"
		}
		evs = append(evs, events.Event{Kind: events.KindConsole,
			Data: events.ConsoleMessage{Level: level, Source: "console", Text: "m", URL: "http://x/", Line: i + 1}})
	}
	tests := []struct {
		name                     string
		summary                  *events.Event
		total, recorded, errorsN int
	}{
		{"killed before the summary", nil, MaxConsoleEntries + 10, MaxConsoleEntries + 10, 6},
		{"with the summary", &events.Event{Kind: events.KindConsoleSummary, Data: events.ConsoleSummary{
			Total: 500, Recorded: MaxConsoleEntries + 10, Counts: map[string]int{"log": 400, "error": 100},
		}}, 500, MaxConsoleEntries + 10, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			all := append([]events.Event{}, evs...)
			if tc.summary != nil {
				all = append(all, *tc.summary)
			}
			for _, form := range []string{"published", "from events.jsonl"} {
				in := all
				if form == "from events.jsonl" {
					in = roundTrip(t, all)
				}
				b := Fold(in).Browser
				if b == nil {
					t.Fatalf("%s: no browser section", form)
				}
				if len(b.Console) != MaxConsoleEntries || b.Total != tc.total || b.Recorded != tc.recorded || b.Counts["error"] != tc.errorsN {
					t.Errorf("%s: listed %d, total %d, recorded %d, counts %v", form, len(b.Console), b.Total, b.Recorded, b.Counts)
				}
				if c := b.Console[3]; c.Level != "log" || c.Line != 4 || c.URL != "http://x/" {
					t.Errorf("%s: entry 4 = %+v", form, c)
				}
			}
		})
	}
	if Fold(nil).Browser != nil {
		t.Error("a run without a browser has a browser section")
	}
}

// roundTrip encodes and decodes events as events.jsonl holds them.
func roundTrip(t *testing.T, evs []events.Event) []events.Event {
	t.Helper()
	out := make([]events.Event, len(evs))
	for i, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

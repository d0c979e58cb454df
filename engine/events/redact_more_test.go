package events

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// redactPlanted masks the planted marker, as the run's redactor masks a
// secret.
func redactPlanted(s string) string { return strings.ReplaceAll(s, planted, "[REDACTED]") }

// TestBusNumbersEvents: the bus numbers the events it publishes from 1 in
// the order they were published, and delivers each to every sink.
func TestBusNumbersEvents(t *testing.T) {
	t.Parallel()
	var got []int64
	b := NewBus(nil, func(e Event) { got = append(got, e.Seq) })
	for range 3 {
		b.Publish(Event{Kind: KindLog, Message: "hello"})
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("sequence numbers %v, want 1, 2, 3", got)
	}
}

// TestConsoleSummaryRedactsLevels: the levels a console summary counts are
// the browser's words and pass through the redactor, counts kept; a
// summary without counts stays without.
func TestConsoleSummaryRedactsLevels(t *testing.T) {
	t.Parallel()
	p := ConsoleSummary{Total: 3, Counts: map[string]int{"error": 1, "x" + planted: 2}}.redacted(redactPlanted).(ConsoleSummary)
	if len(p.Counts) != 2 || p.Counts["error"] != 1 || p.Counts["x[REDACTED]"] != 2 {
		t.Errorf("counts %v, want the planted level redacted", p.Counts)
	}
	if p := (ConsoleSummary{Total: 0}).redacted(redactPlanted).(ConsoleSummary); p.Counts != nil {
		t.Errorf("counts %v, want none", p.Counts)
	}
}

// TestRawDataRedacted: the data of a kind this version does not know is
// redacted as JSON, keys and numbers kept; data that is no JSON is
// dropped rather than written unredacted; no data stays none.
func TestRawDataRedacted(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, in, want string }{
		{"strings redacted", `{"note":"a ` + planted + `","n":12345678901234567890}`, `{"n":12345678901234567890,"note":"a [REDACTED]"}`},
		{"no JSON", `{"note":`, ``},
		{"none", ``, ``},
	} {
		got := RawData{kind: "window.focused", JSON: []byte(c.in)}.redacted(redactPlanted).(RawData)
		if string(got.JSON) != c.want || got.Kind() != "window.focused" {
			t.Errorf("%s: %s %q, want %q", c.name, got.Kind(), got.JSON, c.want)
		}
	}
}

// TestReadFailure: a stream that cannot be read further is an error that
// names the line it stopped at, with the events before it.
func TestReadFailure(t *testing.T) {
	t.Parallel()
	broken := errors.New("disk gone")
	content := `{"seq":1,"kind":"log"}` + "\n" + `{"seq":2,"kind":"log"}` + "\n"
	evs, err := Read(io.MultiReader(strings.NewReader(content), iotest.ErrReader(broken)))
	if !errors.Is(err, broken) || !strings.HasPrefix(err.Error(), "line 3: ") || len(evs) != 2 {
		t.Errorf("Read = %d events, %v; want both events and the error at line 3", len(evs), err)
	}
}

// TestRedactedListsKeepTheirShape: a list of strings is redacted item by
// item, and an empty list stays empty and a missing one missing, so
// run.started's plan is still a list in events.jsonl.
func TestRedactedListsKeepTheirShape(t *testing.T) {
	t.Parallel()
	p := RunStarted{Plan: []string{"Log in.", "Type " + planted + "."}, Tools: []string{}}.redacted(redactPlanted).(RunStarted)
	if len(p.Plan) != 2 || p.Plan[0] != "Log in." || p.Plan[1] != "Type [REDACTED]." {
		t.Errorf("plan %q, want its items redacted", p.Plan)
	}
	if p.Tools == nil || len(p.Tools) != 0 {
		t.Errorf("tools %#v, want an empty list", p.Tools)
	}
	if q := (AppLaunched{}).redacted(redactPlanted).(AppLaunched); q.Command != nil {
		t.Errorf("command %#v, want none", q.Command)
	}
}

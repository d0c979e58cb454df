package page

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

func plainBuilder() *builder {
	return &builder{redact: func(s string) string { return s }, sizes: map[string][2]int{}}
}

// TestCleanShowsBytes: a byte that starts no character is shown as that
// byte, a replacement character the text really holds as itself, and the
// text around an escape as written.
func TestCleanShowsBytes(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"a\xffb", `a\xffb`},
		{"\ufffd", "\ufffd"},
		{"a b\x1b", `a b\x1b`},
		{"a\nb\tc\x00", "a\nb\tc\\x00"},
	}
	b := plainBuilder()
	for _, tt := range tests {
		if got := b.clean(tt.in); got != tt.want {
			t.Errorf("clean(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestTimelineRows: each kind of event reads as a row of its own class
// and text.
func TestTimelineRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		e           events.Event
		class, text string
	}{
		{events.Event{Kind: events.KindCheck, Check: &events.Check{Name: "process_alive", OK: true}}, "ok", "check process_alive ok"},
		{events.Event{Kind: events.KindCheck, Check: &events.Check{Name: "window_present", Evidence: "gone"}}, "error", "check window_present FAILED: gone"},
		{events.Event{Kind: events.KindAnswer, Question: &events.Question{ID: "q1", Text: "which?", Unanswered: "timeout"}}, "question", "answer q1: which? (unanswered: timeout)"},
		{events.Event{Kind: events.KindSteer, Steer: &events.Steer{Action: "pause"}}, "info", "operator pause"},
		{events.Event{Kind: events.KindSteer, Steer: &events.Steer{Action: "hint", Value: "the OK button", Reason: "stuck"}}, "info", "operator hint the OK button stuck"},
		{events.Event{Kind: events.KindModelFailed, Message: "503"}, "concern", "model.failed: 503"},
		{events.Event{Kind: events.KindVerdict, Verdict: &events.Decision{Verdict: events.VerdictPass, Outcome: "completed"}}, "ok", "verdict pass (completed)"},
		{events.Event{Kind: events.KindAppLaunched, Data: events.AppLaunched{Command: []string{"xterm", "-e", "true"}, PID: 7}}, "info", "app launched: xterm -e true (pid 7)"},
		{events.Event{Kind: events.KindRunEnded}, "info", "run.ended"},
		{events.Event{Kind: events.KindCache, Message: "action cache (read-write): 5 hits, 1 misses (of 9 cached calls), 5 model calls saved; fell back to the model at step 6",
			Data: events.CacheReport{Mode: "read-write", Hits: 5, Misses: 1, FellBackAt: 6, Saved: 5}}, "info",
			"action cache (read-write): 5 hits, 1 misses (of 9 cached calls), 5 model calls saved; fell back to the model at step 6"},
	}
	b := plainBuilder()
	for _, tt := range tests {
		rows := b.timeline([]events.Event{tt.e})
		if len(rows) != 1 || rows[0].Class != tt.class || strings.TrimSpace(rows[0].Text) != tt.text {
			t.Errorf("%s row %+v, want class %q text %q", tt.e.Kind, rows, tt.class, tt.text)
		}
	}
}

// TestExchanges: each model request is paired with the reply or failure
// after it; a reply whose request the stream lacks (a torn start) still
// has its row.
func TestExchanges(t *testing.T) {
	t.Parallel()
	evs := []events.Event{
		{Kind: events.KindModelReply, Message: "orphan", DurationMS: 5},
		{Kind: events.KindModelRequest, Data: events.ModelRequest{Iteration: 1, Messages: 2, Images: 1, ImageBytes: 9}},
		{Kind: events.KindModelFailed, Message: "503", DurationMS: 1500},
		{Kind: events.KindModelRequest, Data: events.ModelRequest{Iteration: 2, Messages: 3}},
		{Kind: events.KindModelReply, Message: "ok", Usage: map[string]float64{"prompt_tokens": 10, "completion_tokens": 2}},
	}
	got := plainBuilder().exchanges(evs)
	want := []exchangeView{
		{Reply: "orphan", Duration: "5ms", Status: "ok"},
		{Iteration: 1, Request: "2 messages, 1 images (9 bytes)", Reply: "503", Duration: "1.5s", Status: "error"},
		{Iteration: 2, Request: "3 messages, 0 images (0 bytes)", Reply: "ok", Duration: "0ms", Status: "ok", Usage: "completion_tokens 2, prompt_tokens 10"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d exchanges %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("exchange %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestAppLogTailCutAtANewline: when the tail's cut falls just before a
// newline, the tail starts at the line after it, not with the newline.
func TestAppLogTailCutAtANewline(t *testing.T) {
	t.Parallel()
	last := strings.Repeat("b", appLogTailBytes-1)
	path := filepath.Join(t.TempDir(), "app.log")
	if err := os.WriteFile(path, []byte(strings.Repeat("a", 999)+"\n"+last), 0o600); err != nil {
		t.Fatal(err)
	}
	tail, _, err := appLogTail(path)
	if err != nil || tail != last {
		t.Errorf("tail of %d bytes starting %.10q, %v; want the last line alone (%d bytes)", len(tail), tail, err, len(last))
	}
}

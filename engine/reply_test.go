package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestLoopCapsReplyTextInHistory has the model send a 5 MB reply: the run
// goes on, and no later request resends it; the history keeps the start
// of the reply and says it was cut.
func TestLoopCapsReplyTextInHistory(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("thinking out loud ", 5<<20/18)
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("observe_screen", `{}`).WithText(huge),
		mt.Call("observe_screen", `{}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "seen"}`),
	}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
	for _, req := range r.reqs[1:] {
		if len(req.Raw) > 1<<20 {
			t.Errorf("request %d is %d bytes: the 5 MB reply was resent", req.N, len(req.Raw))
		}
		if !strings.Contains(req.Text(), "[reply cut: 8192 of ") {
			t.Errorf("request %d does not mark the cut reply", req.N)
		}
	}
}

// TestLoopCapsToolCallArgumentsInHistory has the model send a call with 5
// MB of arguments: the call is refused as it came, and later requests
// carry a note in its place rather than the arguments.
func TestLoopCapsToolCallArgumentsInHistory(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", 5<<20)
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("observe_screen", `{}`),
		mt.Call("type_text", `{"ref": "`+huge+`"}`),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "seen"}`),
	}})
	if len(r.reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(r.reqs))
	}
	last := r.reqs[2]
	if len(last.Raw) > 1<<20 || !strings.Contains(string(last.Raw), "bytes of arguments left out") {
		t.Errorf("the last request is %d bytes and does not note the cut arguments", len(last.Raw))
	}
	if s := r.rep.Steps; len(s) < 2 || s[1].Tool != "type_text" || s[1].Status == "ok" {
		t.Errorf("steps %+v: the oversized call must not run", s)
	}
}

// TestRulesHistoryCuts: the history keeps a reply's text and a call's
// arguments whole up to memory.reply_max_bytes, and past it cuts the text
// on a character boundary (never before its start) and replaces the
// arguments with a note, leaving the calls the run checks as they came.
func TestRulesHistoryCuts(t *testing.T) {
	t.Parallel()
	state := func(limit int) *goalLoop {
		op := &scenarios.Operator{}
		op.Memory.ReplyMaxBytes = limit
		return &goalLoop{redact: (&Runner{}).Redact, files: &scenarios.Files{Operator: op}}
	}
	for _, c := range []struct {
		name  string
		limit int
		text  string
		want  string
	}{
		{"no limit", 0, "0123456789abc", "0123456789abc"},
		{"at the limit", 10, "0123456789", "0123456789"},
		{"one byte over", 10, "0123456789a", "0123456789\n[reply cut: 10 of 11 bytes kept]"},
		{"a character across the limit", 10, "012345678é", "012345678\n[reply cut: 9 of 11 bytes kept]"},
		{"no character start at all", 2, "\x80\x80\x80", "\n[reply cut: 0 of 3 bytes kept]"},
	} {
		if got := state(c.limit).historyText(c.text); got != c.want {
			t.Errorf("%s: historyText = %q, want %q", c.name, got, c.want)
		}
	}

	calls := []model.ToolCall{
		{ID: "c1", Name: "type_text", Arguments: `{"ref":"abc"}`},
		{ID: "c2", Name: "type_text", Arguments: `{"ref":"abcdefgh"}`},
		{ID: "c3", Name: "type_text", Arguments: `{"ref":"abcdefghi"}`},
	}
	given := slices.Clone(calls)
	note := func(n int) string { return fmt.Sprintf(`{"cut":"%d bytes of arguments left out"}`, n) }
	for _, c := range []struct {
		name  string
		limit int
		want  []string
	}{
		{"no limit", 0, []string{calls[0].Arguments, calls[1].Arguments, calls[2].Arguments}},
		{"the second at the limit", len(calls[1].Arguments), []string{calls[0].Arguments, calls[1].Arguments, note(len(calls[2].Arguments))}},
		{"two over", len(calls[0].Arguments), []string{calls[0].Arguments, note(len(calls[1].Arguments)), note(len(calls[2].Arguments))}},
	} {
		got := state(c.limit).historyCalls(calls)
		var args []string
		for i, g := range got {
			args = append(args, g.Arguments)
			if g.ID != calls[i].ID || g.Name != calls[i].Name {
				t.Errorf("%s: call %d became %+v", c.name, i, g)
			}
		}
		if !slices.Equal(args, c.want) {
			t.Errorf("%s: history's arguments %q, want %q", c.name, args, c.want)
		}
		if !slices.Equal(calls, given) {
			t.Fatalf("%s: the calls the run checks changed to %+v", c.name, calls)
		}
	}
}

// TestLoopRedactsToolCallArgumentsInHistory: a model that writes a secret
// (or a prefix of one) in a call's arguments never gets it back: the
// history's copy of its call, resent in every later request, is redacted,
// while the call itself was checked as it came.
func TestLoopRedactsToolCallArgumentsInHistory(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-history-Secret"
	r := loopRun(t, loopCase{machine: &fakeMachine{}, env: map[string]string{"KASM_HISTORY_PW": secret},
		scenario: rulesApp + "  pw: {secret: {env: KASM_HISTORY_PW}}\ngoal: Print the greeting.\n",
		script: []mt.Exchange{
			mt.Call("press_key", `{"key": "Return", "why": "the password is `+secret+`, typed `+secret[:9]+`"}`),
			loopGoalMet,
		}})
	if len(r.reqs) < 2 {
		t.Fatalf("%d requests, want 2", len(r.reqs))
	}
	raw := string(r.reqs[1].Raw)
	if !strings.Contains(raw, "press_key") {
		t.Fatalf("the second request does not resend the call:\n%s", raw)
	}
	for _, leak := range []string{secret, secret[:9]} {
		if strings.Contains(raw, leak) {
			t.Errorf("the second request resends %q of the model's own call", leak)
		}
	}
}

// TestHistoryCallsRedacted: the history's arguments have every string
// redacted, names included, and stay JSON; arguments without a secret
// and the calls the run checks are left as they came.
func TestHistoryCallsRedacted(t *testing.T) {
	t.Parallel()
	const secret = "Quokka-Velvet-8342"
	s := &goalLoop{redact: (&Runner{redact: redact.New(secret)}).Redact, files: &scenarios.Files{Operator: &scenarios.Operator{}}}
	calls := []model.ToolCall{
		{ID: "c1", Name: "type_text", Arguments: `{"text": "` + secret + `", "n": 1.50}`},
		{ID: "c2", Name: "press_key", Arguments: `{"key":"Return","notes":["typed Quokka-Vel"],"` + secret + `":true}`},
		{ID: "c3", Name: "observe_screen", Arguments: `{ "why":  "look" }`},
		{ID: "c4", Name: "observe_screen", Arguments: `{"why": "` + secret},
	}
	given := slices.Clone(calls)
	got := s.historyCalls(calls)
	want := []string{
		`{"n":1.50,"text":"[REDACTED]"}`,
		`{"[REDACTED]":true,"key":"Return","notes":["typed [REDACTED]"]}`,
		`{ "why":  "look" }`,
		`{"why": "[REDACTED]`,
	}
	for i, g := range got {
		if g.Arguments != want[i] {
			t.Errorf("call %d's arguments in the history: %s, want %s", i+1, g.Arguments, want[i])
		}
	}
	if !slices.Equal(calls, given) {
		t.Errorf("the calls the run checks changed to %+v", calls)
	}
}

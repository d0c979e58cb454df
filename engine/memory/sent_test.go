package memory

import (
	"slices"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

func TestLatestUpdateAndSinceReply(t *testing.T) {
	t.Parallel()
	goal := model.Message{Role: model.RoleUser, Text: "Goal: print it"}
	call := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "1", Name: "observe_screen"}}}
	result := model.Message{Role: model.RoleTool, CallID: "1", Text: "observed"}
	older := model.Message{Role: model.RoleUser, Text: updateHeader + "- screen 1"}
	newer := model.Message{Role: model.RoleUser, Text: updateHeader + "- screen 2"}
	note := model.Message{Role: model.RoleUser, Text: "Operator note: look left"}
	cases := []struct {
		name   string
		msgs   []model.Message
		update string
		since  []string
	}{
		{"first turn", []model.Message{goal}, "", []string{goal.Text}},
		{"after a call", []model.Message{goal, older, call, result, newer}, newer.Text, []string{result.Text}},
		{"a note, no new update", []model.Message{goal, older, call, result, note}, older.Text, []string{result.Text, note.Text}},
		{"a reply first", []model.Message{call, result}, "", []string{result.Text}},
		{"an update alone", []model.Message{newer}, newer.Text, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := LatestUpdate(c.msgs); got != c.update {
				t.Errorf("LatestUpdate = %q, want %q", got, c.update)
			}
			var since []string
			for _, m := range SinceReply(c.msgs) {
				since = append(since, m.Text)
			}
			if !slices.Equal(since, c.since) {
				t.Errorf("SinceReply = %q, want %q", since, c.since)
			}
		})
	}
}

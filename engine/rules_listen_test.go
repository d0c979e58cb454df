package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestRulesListen checks when a run binds the inbox's address itself: only
// with an inbox and inbox.listen, once, and not when the caller publishes
// the inbox.
func TestRulesListen(t *testing.T) {
	t.Parallel()
	const inbox = "inbox:\n  session_token: s3cret-console-token\n"
	tests := []struct {
		name, operator string
		published      string
		listens        bool
	}{
		{name: "an inbox with an address listens", operator: inbox + "  listen: 127.0.0.1:0\n", listens: true},
		{name: "an inbox without one does not", operator: inbox},
		{name: "a published inbox is the caller's", operator: inbox + "  listen: 127.0.0.1:0\n", published: "http://127.0.0.1:9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := loadRunFiles(t, t.TempDir(), rulesApp+"steps:\n  - press_key: a\n", tt.operator, nil)
			r, err := New(files, Options{ReportDir: t.TempDir(), Published: tt.published})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Listen()
			if err != nil {
				t.Fatal(err)
			}
			first := r.inboxListener
			if first != nil {
				defer first.Close()
			}
			if got := first != nil; got != tt.listens {
				t.Fatalf("listening = %v, want %v", got, tt.listens)
			}
			if err := r.Listen(); err != nil || r.inboxListener != first {
				t.Errorf("a second Listen = %v and changed the listener: the first one stays", err)
			}
		})
	}
}

// TestRulesListenTokenStrength: an inbox.listen that other machines can
// reach (a suite's runs bind it here) needs a token strong enough to
// withstand guessing; a loopback address does not.
func TestRulesListenTokenStrength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, operator string
		refused        bool
	}{
		{name: "a short token on every interface", operator: "inbox:\n  session_token: s3cret\n  listen: 0.0.0.0:0\n", refused: true},
		{name: "a strong token on every interface", operator: "inbox:\n  session_token: 9f3a61c07be24d58a1e0c6d4b2f87a39\n  listen: 0.0.0.0:0\n"},
		{name: "a short token on loopback", operator: "inbox:\n  session_token: s3cret\n  listen: 127.0.0.1:0\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := loadRunFiles(t, t.TempDir(), rulesApp+"steps:\n  - press_key: a\n", tt.operator, nil)
			r, err := New(files, Options{ReportDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			err = r.Listen()
			if r.inboxListener != nil {
				r.inboxListener.Close()
			}
			var notStarted *NotStartedError
			if refused := errors.As(err, &notStarted); refused != tt.refused {
				t.Fatalf("Listen = %v, want refused %v", err, tt.refused)
			}
			if tt.refused && (r.inboxListener != nil || !strings.Contains(err.Error(), "inbox.session_token")) {
				t.Errorf("Listen = %v (listening %v), want a refusal naming the token's key and nothing bound", err, r.inboxListener != nil)
			}
		})
	}
}

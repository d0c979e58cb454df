package engine

import "testing"

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

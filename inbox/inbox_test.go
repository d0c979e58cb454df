package inbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/inbox"
)

// askedIDs returns a channel that receives the ID of every question asked
// after the call, so a test can answer without polling.
func askedIDs(t *testing.T, in *inbox.Inbox) <-chan string {
	t.Helper()
	ids := make(chan string, 64)
	stop := in.Observe(func(u inbox.Update) {
		if u.Kind == inbox.KindAsked {
			ids <- u.QuestionID
		}
	})
	t.Cleanup(stop)
	return ids
}

func TestAskAnswerAcrossGoroutines(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	ids := askedIDs(t, in)

	const n = 20
	go func() {
		for range n {
			id := <-ids
			if err := in.Answer(id, "answer to "+id, "console"); err != nil {
				t.Errorf("Answer(%s): %v", id, err)
			}
		}
	}()

	var wg sync.WaitGroup
	answers := make([]inbox.Answer, n)
	for i := range n {
		wg.Go(func() {
			a, err := in.Ask(t.Context(), fmt.Sprintf("question %d?", i))
			if err != nil {
				t.Errorf("Ask %d: %v", i, err)
			}
			answers[i] = a
		})
	}
	wg.Wait()

	seen := map[string]bool{}
	for i, a := range answers {
		if a.Text != "answer to "+a.QuestionID || a.By != "console" {
			t.Errorf("answer %d = %+v, want the answer to its own question, by console", i, a)
		}
		if seen[a.QuestionID] {
			t.Errorf("question ID %s given out twice", a.QuestionID)
		}
		seen[a.QuestionID] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[fmt.Sprintf("q%d", i)] {
			t.Errorf("no question got ID q%d", i)
		}
	}
	if p := in.Pending(); len(p) != 0 {
		t.Errorf("Pending() = %v after every question was answered", p)
	}
	h := in.History()
	if len(h) != 2*n {
		t.Fatalf("History() has %d entries, want %d", len(h), 2*n)
	}
	asked := map[string]bool{}
	for i, e := range h {
		if e.Seq != i+1 {
			t.Errorf("entry %d has Seq %d", i, e.Seq)
		}
		switch e.Kind {
		case inbox.KindAsked:
			asked[e.QuestionID] = true
		case inbox.KindAnswered:
			if !asked[e.QuestionID] {
				t.Errorf("entry %d answers %s before it was asked", i, e.QuestionID)
			}
		default:
			t.Errorf("entry %d has kind %q", i, e.Kind)
		}
	}
}

func TestAskUntilContextEnds(t *testing.T) {
	t.Parallel()
	holdLimit := errors.New("max_hold_s (1) reached")
	tests := []struct {
		name       string
		ctx        func(context.Context) (context.Context, context.CancelFunc)
		wantErr    error
		wantReason string
	}{
		{
			name: "deadline",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeout(ctx, 20*time.Millisecond)
			},
			wantErr:    context.DeadlineExceeded,
			wantReason: "context deadline exceeded",
		},
		{
			name: "deadline with cause",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				return context.WithTimeoutCause(ctx, 20*time.Millisecond, holdLimit)
			},
			wantErr:    holdLimit,
			wantReason: holdLimit.Error(),
		},
		{
			name: "cancelled before asking",
			ctx: func(ctx context.Context) (context.Context, context.CancelFunc) {
				ctx, cancel := context.WithCancel(ctx)
				cancel()
				return ctx, cancel
			},
			wantErr:    context.Canceled,
			wantReason: "context canceled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := inbox.New(inbox.Options{})
			ctx, cancel := tt.ctx(t.Context())
			defer cancel()

			a, err := in.Ask(ctx, "Which account?")
			if !errors.Is(err, inbox.ErrUnanswered) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("Ask = %+v, %v; want an error matching ErrUnanswered and %v", a, err, tt.wantErr)
			}
			ue, ok := errors.AsType[*inbox.UnansweredError](err)
			if !ok || ue.QuestionID != "q1" || ue.Reason != tt.wantReason {
				t.Fatalf("error %#v, want *UnansweredError for q1 with reason %q", err, tt.wantReason)
			}
			if p := in.Pending(); len(p) != 0 {
				t.Errorf("Pending() = %v, want the unanswered question gone", p)
			}
			h := in.History()
			if len(h) != 2 || h[1].Kind != inbox.KindUnanswered || h[1].QuestionID != "q1" || h[1].Text != tt.wantReason {
				t.Errorf("History() = %+v, want asked then unanswered q1 with reason %q", h, tt.wantReason)
			}
			if err := in.Answer("q1", "the test account", "console"); !errors.Is(err, inbox.ErrExpired) {
				t.Errorf("answering an expired question: %v, want ErrExpired", err)
			}
		})
	}
}

func TestAnswerErrors(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	ids := askedIDs(t, in)
	done := make(chan error, 1)
	go func() {
		_, err := in.Ask(t.Context(), "Proceed?")
		done <- err
	}()
	id := <-ids
	if err := in.Answer(id, "yes", "console"); err != nil {
		t.Fatalf("first Answer: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Ask: %v", err)
	}

	go func() { _, _ = in.Ask(t.Context(), "Still pending?") }()
	pendingID := <-ids

	tests := []struct {
		name string
		id   string
		text string
		want error
	}{
		{"answered twice", id, "no", inbox.ErrAlreadyAnswered},
		{"unknown id", "q99", "yes", inbox.ErrUnknownQuestion},
		{"empty answer", pendingID, "", inbox.ErrEmptyText},
		{"blank answer", pendingID, " \n\t", inbox.ErrEmptyText},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := in.Answer(tt.id, tt.text, "console"); !errors.Is(err, tt.want) {
				t.Errorf("Answer(%q, %q) = %v, want %v", tt.id, tt.text, err, tt.want)
			}
		})
	}
	if p := in.Pending(); len(p) != 1 || p[0].ID != pendingID {
		t.Errorf("Pending() = %v, want only %s: a refused answer must leave it open", p, pendingID)
	}
	if _, err := in.Ask(t.Context(), "  "); !errors.Is(err, inbox.ErrEmptyText) {
		t.Errorf("Ask with a blank question: %v, want ErrEmptyText", err)
	}
}

func TestRedactionAppliesToEverything(t *testing.T) {
	t.Parallel()
	const secret = "hunter2"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	var notified []inbox.Question
	in := inbox.New(inbox.Options{
		Redact: redact,
		Notify: func(q inbox.Question) { notified = append(notified, q) },
	})
	var updates []inbox.Update
	in.Observe(func(u inbox.Update) { updates = append(updates, u) })
	ids := askedIDs(t, in)

	type result struct {
		a   inbox.Answer
		err error
	}
	results := make(chan result, 1)
	go func() {
		a, err := in.Ask(t.Context(), "Is the password "+secret+"?")
		results <- result{a, err}
	}()
	id := <-ids
	pending := in.Pending()
	if err := in.Answer(id, "yes, "+secret, "bot-"+secret); err != nil {
		t.Fatal(err)
	}
	r := <-results
	if r.err != nil {
		t.Fatal(r.err)
	}
	in.Post("logged in with " + secret)
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(errors.New("operator typed " + secret))
	_, err := in.Ask(ctx, "again?")

	everything := fmt.Sprintf("%+v %+v %+v %+v %+v %v", pending, r.a, in.History(), notified, updates, err)
	for _, u := range updates {
		if u.Question != nil {
			everything += " " + u.Question.Text
		}
	}
	if strings.Contains(everything, secret) {
		t.Errorf("secret leaked: %s", everything)
	}
	if !strings.Contains(r.a.Text, "[redacted]") || !strings.Contains(pending[0].Text, "[redacted]") {
		t.Errorf("redaction not applied: answer %q, question %q", r.a.Text, pending[0].Text)
	}
	if len(notified) != 2 {
		t.Errorf("Notify called %d times, want once per question (2)", len(notified))
	}
}

func TestObserve(t *testing.T) {
	t.Parallel()
	var notified []string
	in := inbox.New(inbox.Options{Notify: func(q inbox.Question) { notified = append(notified, q.ID) }})

	var got []string
	var inside []int
	stop := in.Observe(func(u inbox.Update) {
		got = append(got, fmt.Sprintf("%d %s %s %s", u.Seq, u.Kind, u.QuestionID, u.Text))
		// An observer may call back into the inbox, even to change it,
		// without deadlock; its own change is delivered after this one.
		inside = append(inside, len(in.Pending()))
		if u.Kind == inbox.KindAsked {
			if u.Question == nil || u.Question.Text != u.Text {
				t.Errorf("asked update carries question %+v, want the asked question", u.Question)
			}
			if err := in.Answer(u.QuestionID, "ok", "observer"); err != nil {
				t.Errorf("Answer from an observer: %v", err)
			}
		}
	})
	in.Post("starting")
	if _, err := in.Ask(t.Context(), "Go?"); err != nil {
		t.Fatal(err)
	}
	stop()
	in.Post("after stop")

	want := []string{"1 posted  starting", "2 asked q1 Go?", "3 answered q1 ok"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observer saw %q, want %q", got, want)
	}
	if fmt.Sprint(inside) != "[0 1 0]" {
		t.Errorf("Pending() inside the observer gave lengths %v, want [0 1 0]", inside)
	}
	if fmt.Sprint(notified) != "[q1]" {
		t.Errorf("Notify saw %v, want [q1]", notified)
	}
	if h := in.History(); len(h) != 4 || h[3].Kind != inbox.KindPosted {
		t.Errorf("History() = %+v, want the post after stop recorded", h)
	}
}

// A panicking observer must not stop later updates from being delivered.
func TestObserverPanicDoesNotWedgeDelivery(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	stop := in.Observe(func(inbox.Update) { panic("observer bug") })
	func() {
		defer func() { _ = recover() }()
		in.Post("first")
	}()
	stop()
	var got []string
	in.Observe(func(u inbox.Update) { got = append(got, u.Text) })
	in.Post("second")
	if fmt.Sprint(got) != "[second]" {
		t.Errorf("after a panicking observer, got %v, want [second]", got)
	}
}

func BenchmarkAskAnswer(b *testing.B) {
	in := inbox.New(inbox.Options{})
	in.Observe(func(u inbox.Update) {
		if u.Kind == inbox.KindAsked {
			_ = in.Answer(u.QuestionID, "yes", "bench")
		}
	})
	ctx := b.Context()
	for b.Loop() {
		if _, err := in.Ask(ctx, "Proceed?"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAnswerMarks checks that an answer is private unless the operator
// marks it otherwise, whichever way it is given, and that a mark the inbox
// does not know is refused with the question still waiting.
func TestAnswerMarks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer func(in *inbox.Inbox, id string) error
		want   inbox.Mark
		err    error
	}{
		{"Answer", func(in *inbox.Inbox, id string) error { return in.Answer(id, "4721", "console") }, inbox.MarkPrivate, nil},
		{"no mark", func(in *inbox.Inbox, id string) error { return in.AnswerMarked(id, "4721", "console", "") }, inbox.MarkPrivate, nil},
		{"shareable", func(in *inbox.Inbox, id string) error {
			return in.AnswerMarked(id, "4721", "console", inbox.MarkShareable)
		}, inbox.MarkShareable, nil},
		{"secret", func(in *inbox.Inbox, id string) error {
			return in.AnswerMarked(id, "4721", "console", inbox.MarkSecret)
		}, inbox.MarkSecret, nil},
		{"unknown", func(in *inbox.Inbox, id string) error { return in.AnswerMarked(id, "4721", "console", "public") }, "", inbox.ErrUnknownMark},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := inbox.New(inbox.Options{})
			ids := askedIDs(t, in)
			answers := make(chan inbox.Answer, 1)
			go func() {
				a, _ := in.Ask(t.Context(), "The code?")
				answers <- a
			}()
			id := <-ids
			err := tt.answer(in, id)
			if !errors.Is(err, tt.err) {
				t.Fatalf("answer: %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				if p := in.Pending(); len(p) != 1 {
					t.Errorf("pending %v after a refused answer, want the question waiting", p)
				}
				return
			}
			if a := <-answers; a.Mark != tt.want || a.Value() != "4721" {
				t.Errorf("answer %+v (value %q), want mark %q", a, a.Value(), tt.want)
			}
		})
	}
}

// TestMarkNext checks the order the console cycles the marks in: from the
// default, private, to shareable, secret and back.
func TestMarkNext(t *testing.T) {
	t.Parallel()
	var got []inbox.Mark
	m := inbox.Mark("")
	for range 4 {
		m = m.Next()
		got = append(got, m)
	}
	want := []inbox.Mark{inbox.MarkShareable, inbox.MarkSecret, inbox.MarkPrivate, inbox.MarkShareable}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Next from the zero mark: %v, want %v", got, want)
	}
}

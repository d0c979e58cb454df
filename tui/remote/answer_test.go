package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/inbox"
)

// TestClientAnswerCarriesTheMark answers a run's questions through a
// real inbox behind the run's routes, once with each mark the console can
// give: the inbox records the mark the operator chose, and an answer sent
// without one is private.
func TestClientAnswerCarriesTheMark(t *testing.T) {
	t.Parallel()
	in := inbox.New(inbox.Options{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/runs/7", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"run":"7","scenario":"marks"}`))
	})
	mux.Handle("/v1/runs/7/", http.StripPrefix("/v1/runs/7", in.Routes()))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, srv.URL+"/v1/runs/7", "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan string, 1)
	stop := in.Observe(func(u inbox.Update) {
		if u.Kind == inbox.KindAsked {
			asked <- u.QuestionID
		}
	})
	defer stop()
	for _, tt := range []struct {
		sent, want inbox.Mark
	}{
		{"", inbox.MarkPrivate},
		{inbox.MarkPrivate, inbox.MarkPrivate},
		{inbox.MarkShareable, inbox.MarkShareable},
		{inbox.MarkSecret, inbox.MarkSecret},
	} {
		answers := make(chan inbox.Answer, 1)
		go func() {
			a, _ := in.Ask(ctx, "The code?")
			answers <- a
		}()
		id := <-asked
		if err := c.AnswerMarked(id, "4721", tt.sent); err != nil {
			t.Fatalf("answer marked %q: %v", tt.sent, err)
		}
		if a := <-answers; a.Mark != tt.want || a.By != "attach" {
			t.Errorf("sent marked %q, the run got %+v; want mark %q by attach", tt.sent, a, tt.want)
		}
	}
}

package model_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
)

// TestEndpointQueryIsACredential checks that an endpoint whose query string
// may carry a key is refused without repeating the key.
func TestEndpointQueryIsACredential(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"https://api.example.com/v1?api_key=sk-live-123",
		"https://api.example.com/v1/chat/completions?key=sk-live-123",
		"http://host:8000?sk-live-123",
	} {
		_, err := model.ResolveEndpoint(raw, model.ChatCompletions)
		if err == nil || !strings.Contains(err.Error(), "query") {
			t.Errorf("ResolveEndpoint(%q) err = %v, want a refusal of the query", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-live-123") {
			t.Errorf("the refusal repeats the key: %v", err)
		}
	}
}

// TestTransportErrorsOmitTheQuery follows a hostile server's redirect to a
// URL whose query holds a credential and checks that neither the attempts
// nor the final error name it.
func TestTransportErrorsOmitTheQuery(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/v1/chat/completions?api_key=sk-redirected-456", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	var said []string
	prof := profile(t, "openai-compatible")
	prof.ServedModel = "served-model"
	c, err := model.New(model.Config{
		Endpoint: srv.URL + "/v1", Profile: prof, Retry: 1,
		Sleep:     (&sleeps{}).sleep,
		OnAttempt: func(a model.Attempt) { said = append(said, a.Err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Turn(context.Background(), model.Request{})
	if err == nil {
		t.Fatal("a turn against a redirect to a closed port succeeded")
	}
	said = append(said, err.Error())
	for _, s := range said {
		if strings.Contains(s, "sk-redirected-456") || strings.Contains(s, "api_key") {
			t.Errorf("an error names the URL's query: %s", s)
		}
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1/v1/chat/completions") {
		t.Errorf("the error no longer says where it failed: %v", err)
	}
}

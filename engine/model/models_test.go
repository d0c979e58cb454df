package model_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestResolveNameAsksTheServer resolves the default profile's model name
// from GET /v1/models: a server with exactly one model names it; no list,
// an empty list or several models are errors that say to set model.name,
// and a profile with a name never asks.
func TestResolveNameAsksTheServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		profile string
		models  []string
		want    string
		wantErr string
		asked   int
	}{
		{"one model", model.DefaultProfile, []string{"org/vlm-7b"}, "org/vlm-7b", "", 1},
		{"no model", model.DefaultProfile, nil, "", "lists no model", 1},
		{"several models", model.DefaultProfile, []string{"a", "b", "c"}, "", "serves 3 models (a, b, c); set model.name", 1},
		{"named profile", "gpt", []string{"a", "b"}, "gpt-5-2025-08-07", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t)
			srv.ServeModels(tt.models...)
			got, err := model.ResolveName(context.Background(), model.Config{Endpoint: srv.URL() + "/v1", Profile: profile(t, tt.profile)})
			if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ResolveName = %q, %v; want %q, error with %q", got, err, tt.want, tt.wantErr)
			}
			if n := srv.ModelListRequests(); n != tt.asked {
				t.Errorf("%d model list requests, want %d", n, tt.asked)
			}
		})
	}
	t.Run("no model list", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		_, err := model.ResolveName(context.Background(), model.Config{Endpoint: srv.URL + "/v1", Profile: profile(t, model.DefaultProfile)})
		if err == nil || !strings.Contains(err.Error(), "status 404; set model.name") {
			t.Errorf("err = %v", err)
		}
		// An endpoint with a query is refused without repeating it.
		_, err = model.ResolveName(context.Background(), model.Config{Endpoint: srv.URL + "/v1?k=sk-in-query", Profile: profile(t, model.DefaultProfile)})
		if err == nil || strings.Contains(err.Error(), "sk-in-query") {
			t.Errorf("endpoint with a query: err = %v", err)
		}
	})
}

// TestResolveNameSendsTheKey: the model list is asked with the key as a
// bearer token, and without an Authorization header when there is no key;
// a configuration without a timeout still gets the list.
func TestResolveNameSendsTheKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"sk-list-key", ""} {
		auth := make(chan string, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth <- r.Header.Get("Authorization")
			_, _ = w.Write([]byte(`{"object": "list", "data": [{"id": "org/vlm", "object": "model"}]}`))
		}))
		got, err := model.ResolveName(context.Background(), model.Config{Endpoint: srv.URL + "/v1", Key: key, Profile: profile(t, model.DefaultProfile)})
		srv.Close()
		if err != nil || got != "org/vlm" {
			t.Fatalf("key %q: ResolveName = %q, %v", key, got, err)
		}
		want := ""
		if key != "" {
			want = "Bearer " + key
		}
		if a := <-auth; a != want {
			t.Errorf("key %q: Authorization %q, want %q", key, a, want)
		}
	}
}

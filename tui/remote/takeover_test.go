package remote

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestTakeOverDesktop: an attached console takes the run's desktop over
// and hands it back through the run's API, with its token.
func TestTakeOverDesktop(t *testing.T) {
	t.Parallel()
	var calls []string
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/runs/r", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"run":"r","name":"n","scenario":"s","goal":"","report":"/tmp/r","started":"2026-01-01T00:00:00Z"}`))
	})
	for _, route := range []string{"/takeover", "/handback"} {
		mux.HandleFunc("POST /v1/runs/r"+route, func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" {
				http.Error(w, `{"error":"no"}`, http.StatusUnauthorized)
				return
			}
			calls = append(calls, route)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"addr":"127.0.0.1:5901","url":"vnc://127.0.0.1:5901","password":"Pw3xK9mQ","view":"/takeover-view/abc/","handed_back":true}`))
		})
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c, err := Dial(t.Context(), srv.URL+"/v1/runs/r", "tok", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.TakeOverDesktop(t.Context())
	if err != nil || a.Password != "Pw3xK9mQ" || a.URL != srv.URL+"/takeover-view/abc/" {
		t.Fatalf("TakeOverDesktop = %+v, %v", a, err)
	}
	if err := c.HandBackDesktop(); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 {
		t.Errorf("calls %q", calls)
	}
}

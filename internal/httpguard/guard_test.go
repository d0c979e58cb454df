package httpguard_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/internal/httpguard"
)

// TestGuard: what a web page can make the operator's browser send to a
// local server — a rebound Host, another origin, a text/plain or form
// POST — is refused; what curl, attach and an agent send passes.
func TestGuard(t *testing.T) {
	t.Parallel()
	reached := 0
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++ })
	srv := httptest.NewServer(httpguard.Guard("kasmrt.lan:7400", next))
	defer srv.Close()
	self := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := net.SplitHostPort(self)
	const json = "application/json"
	for _, c := range []struct {
		name, method, host, contentType string
		header                          map[string]string
		want                            int
	}{
		{"the address it listens on", "GET", self, "", nil, http.StatusOK},
		{"localhost", "GET", "localhost:" + port, "", nil, http.StatusOK},
		{"LOCALHOST without a port", "GET", "LOCALHOST", "", nil, http.StatusOK},
		{"another loopback address", "GET", "127.0.0.2:" + port, "", nil, http.StatusOK},
		{"IPv6 loopback", "GET", "[::1]:" + port, "", nil, http.StatusOK},
		{"the configured name", "GET", "kasmrt.lan:7400", "", nil, http.StatusOK},
		{"a rebound name", "GET", "evil.example:" + port, "", nil, http.StatusForbidden},
		{"a rebound name on a POST", "POST", "evil.example:" + port, json, nil, http.StatusForbidden},
		{"a name ending in localhost", "GET", "localhost.evil.example:" + port, "", nil, http.StatusForbidden},
		{"the configured name on another port", "GET", "kasmrt.lan:7401", "", nil, http.StatusForbidden},
		{"a JSON POST", "POST", self, json, nil, http.StatusOK},
		{"a JSON POST with a charset", "POST", self, "application/json; charset=utf-8", nil, http.StatusOK},
		{"a text/plain POST", "POST", self, "text/plain;charset=UTF-8", nil, http.StatusUnsupportedMediaType},
		{"a form POST", "POST", self, "application/x-www-form-urlencoded", nil, http.StatusUnsupportedMediaType},
		{"a multipart POST", "POST", self, "multipart/form-data; boundary=x", nil, http.StatusUnsupportedMediaType},
		{"a POST that names no type", "POST", self, "", nil, http.StatusUnsupportedMediaType},
		{"a DELETE", "DELETE", self, "", nil, http.StatusOK},
		{"its own origin", "POST", self, json, map[string]string{"Origin": srv.URL}, http.StatusOK},
		{"another origin", "POST", self, json, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"another origin on a GET", "GET", self, "", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"another port of localhost", "POST", self, json, map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"an opaque origin", "POST", self, json, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"a cross-site fetch without Origin", "GET", self, "", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"a same-site fetch", "GET", self, "", map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"a typed URL", "GET", self, "", map[string]string{"Sec-Fetch-Site": "none"}, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := reached
			req, err := http.NewRequest(c.method, srv.URL+"/v1/sessions", strings.NewReader(`{"scenario":"x.yaml"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Host = c.host
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Errorf("%s with Host %q: %s %s, want %d", c.method, c.host, resp.Status, body, c.want)
			}
			if passed := reached > before; passed != (c.want == http.StatusOK) {
				t.Errorf("the request reached the routes: %v", passed)
			}
		})
	}
}

func TestTokenStrength(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		token string
		ok    bool
	}{
		{"Q", false},
		{"correct-horse", false},
		{"0123456789abcdef0123456789abcde", false},  // 31 hex characters: 124 bits
		{"0123456789abcdef0123456789abcdef", true},  // openssl rand -hex 16
		{"q1Xr0dD4u2n7G5mZkR0aBw", true},            // 22 base64url characters
		{"12345678901234567890123456789012", false}, // 32 digits: 106 bits
	} {
		err := httpguard.CheckToken("the token", c.token)
		if (err == nil) != c.ok {
			t.Errorf("%q (%.0f bits): %v, want ok %v", c.token, httpguard.TokenBits(c.token), err, c.ok)
		}
		if err != nil && strings.Contains(err.Error(), c.token) {
			t.Errorf("the refusal quotes the token: %v", err)
		}
	}
}

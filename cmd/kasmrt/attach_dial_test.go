package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// attach to a URL where nothing answers, or to one it does not take, is
// bad input (exit 3) said in words; a server that answers and refuses is
// exit 2.
func TestAttachDialFailures(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: one the system gave out and took back.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":"no bearer token"}`, http.StatusUnauthorized)
	}))
	defer refusing.Close()
	for _, tc := range []struct {
		url      string
		code     int
		want     string
		notWants []string
	}{
		{dead, exitBadInput, "nothing answers at " + strings.TrimPrefix(dead, "http://") + " (connection refused); is kasmrt run --listen or kasmrt serve running there?",
			[]string{"dial tcp", "Get \""}},
		{dead + "/v1/runs/r1", exitBadInput, "nothing answers at", []string{"dial tcp"}},
		{"http://kasmrt-attach-test.invalid:7400", exitBadInput, "the host name kasmrt-attach-test.invalid does not resolve", []string{"dial tcp"}},
		{"ftp://example.test", exitBadInput, "http:// or https://", nil},
		{refusing.URL, exitTestError, "401", nil},
	} {
		code, _, stderr := kasmrtProcess(t, []string{"KASMRT_TOKEN="}, "attach", "--print", tc.url)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("attach %s: exit %d, want %d, and %q in\n%s", tc.url, code, tc.code, tc.want, stderr)
		}
		for _, not := range tc.notWants {
			if strings.Contains(stderr, not) {
				t.Errorf("attach %s: the raw Go error %q in\n%s", tc.url, not, stderr)
			}
		}
	}
}

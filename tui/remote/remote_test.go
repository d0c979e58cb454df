package remote

import (
	"strings"
	"testing"
)

// TestDialRefusesWhatIsNotARunsURL: a token in the query string, another
// scheme, or a path that names neither a server, a run nor a session is
// refused before any request is sent.
func TestDialRefusesWhatIsNotARunsURL(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ target, want string }{
		{"http://127.0.0.1:9/v1/runs/r?token=abc", "no query string"},
		{"ftp://127.0.0.1:9/", "want an http:// or https:// URL"},
		{"127.0.0.1:9", "want an http:// or https:// URL"},
		{"http://127.0.0.1:9/elsewhere", "not a server's, a run's or a session's URL"},
	} {
		_, err := Dial(t.Context(), c.target, "", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dial %s: %v, want %q", c.target, err, c.want)
		}
		if strings.Contains(c.target, "token=abc") && err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("Dial %s: the error repeats the query", c.target)
		}
	}
	for target, server := range map[string]bool{
		"http://h:1": true, "http://h:1/": true, "http://h:1/v1": true, "http://h:1/v1/sessions": true,
		"http://h:1/v1/runs/r": false, "http://h:1/v1/sessions/s-1": false,
	} {
		if IsServerURL(target) != server {
			t.Errorf("IsServerURL(%s) = %v", target, !server)
		}
	}
}

func TestDialServerRefusesAQueryWithoutRepeatingIt(t *testing.T) {
	t.Parallel()
	_, err := DialServer(t.Context(), "http://127.0.0.1:9/?access_token=s3cr3t", "", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no query string") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("DialServer: %v", err)
	}
}

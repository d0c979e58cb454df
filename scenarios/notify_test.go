package scenarios

import (
	"strings"
	"testing"
)

// TestWebhookRejections: each rule of inbox.notify.webhook refuses with
// the file, line, column and key, and never quotes the URL back.
func TestWebhookRejections(t *testing.T) {
	t.Parallel()
	const head = "inbox:\n  session_token: t0ken-abc\n  notify:\n    webhook:\n"
	for _, c := range []struct {
		name, yaml, want string
	}{
		{"no url", "      headers: {X-Team: qa}\n", "op.yaml:4:5: inbox.notify.webhook.url: a webhook needs url"},
		{"not http", "      url: ftp://hooks.example/Secr3tPath\n", "op.yaml:5:7: inbox.notify.webhook.url: want an http or https URL with a host"},
		{"credentials in the URL", "      url: https://user:pw@hooks.example/x\n", "inbox.notify.webhook.url: the URL embeds credentials"},
		{"bad header name", "      url: https://hooks.example/x\n      headers: {'Bad Name': v}\n", "inbox.notify.webhook.headers.Bad Name: not an HTTP header name"},
		{"a header kasmrt sets", "      url: https://hooks.example/x\n      headers: {content-type: text/plain}\n", "Content-Type is set by kasmrt itself"},
		{"a two-line header", "      url: https://hooks.example/x\n      headers: {X-A: \"a\\nb\"}\n", "inbox.notify.webhook.headers.X-A: a header value is one line"},
		{"a long timeout", "      url: https://hooks.example/x\n      timeout_s: 60\n", "op.yaml:6:7: inbox.notify.webhook.timeout_s: between 0"},
		{"an unknown key", "      url: https://hooks.example/x\n      retries: 3\n", "op.yaml:6:7: inbox.notify.webhook.retries: unknown key"},
		{"a missing variable", "      url: https://hooks.example/x\n      headers: {Authorization: 'Bearer ${NO_SUCH_HOOK_TOKEN}'}\n", "NO_SUCH_HOOK_TOKEN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, ps := ParseOperator("op.yaml", []byte(head+c.yaml), func(string) (string, bool) { return "", false })
			if ps == nil || !strings.Contains(ps.Error(), c.want) {
				t.Fatalf("problems %v, want one with %q", ps, c.want)
			}
			if strings.Contains(ps.Error(), "Secr3tPath") {
				t.Errorf("the URL was quoted back: %v", ps)
			}
		})
	}
	o, ps := ParseOperator("op.yaml", []byte(head+"      url: https://hooks.example/x\n      headers: {Authorization: 'Bearer ${HOOK}'}\n"),
		func(k string) (string, bool) { return "hook-value", k == "HOOK" })
	if ps != nil {
		t.Fatal(ps)
	}
	if got := o.Credentials(); len(got) != 3 || got[1] != "https://hooks.example/x" || got[2] != "Bearer hook-value" {
		t.Errorf("credentials %q, want the token, the URL and the header value", got)
	}
}

package scenarios

import (
	"encoding/base64"
	"slices"
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
}

// TestCredentialsInsideCarriers: the credential inside a webhook's header
// value or URL is a credential of its own,
// not only the whole text that carries it; the public words around it
// (the scheme, the host, "services") are not.
func TestCredentialsInsideCarriers(t *testing.T) {
	t.Parallel()
	basic := base64.StdEncoding.EncodeToString([]byte("hookuser:hook-pass-77"))
	env := map[string]string{"HOOK": "hook-value-5f3a", "SIG": "9c8b7a6f", "PATHTOK": "XyZ0123abcDEF"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, c := range []struct {
		name, yaml string
		want, not  []string
	}{
		{"a bearer token", "headers: {Authorization: 'Bearer ${HOOK}'}", []string{"hook-value-5f3a"}, []string{"Bearer", "Bearer hook-value-5f3a"}},
		{"a key header", "headers: {X-Api-Key: '${HOOK}'}", []string{"hook-value-5f3a"}, nil},
		{"a short token in a credential header", "headers: {X-Token: ab12}", []string{"ab12"}, nil},
		{"basic credentials", "headers: {Authorization: 'Basic " + basic + "'}", []string{basic, "hookuser:hook-pass-77", "hook-pass-77"}, []string{"Basic"}},
		{"signature parameters", "headers: {Stripe-Signature: 't=1700000000,v1=${SIG}'}", []string{"9c8b7a6f", "1700000000"}, nil},
		{"a public header", "headers: {X-Team: qa}", nil, []string{"qa"}},
		{"a path token", "headers: {X-Team: qa}\n      url: https://hooks.example/services/T0A1B2/${PATHTOK}", []string{"T0A1B2", "XyZ0123abcDEF"}, []string{"services", "hooks.example", "https"}},
		{"a query value", "headers: {X-Team: qa}\n      url: 'https://hooks.example/x?passphrase=correct%20horse&channel=general&fmt=json&sig=${SIG}&id=f00ba4'", []string{"correct horse", "9c8b7a6f", "f00ba4"}, []string{"json", "general", "x"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			yaml := "inbox:\n  session_token: t0ken-abc\n  notify:\n    webhook:\n      " + c.yaml + "\n"
			if !strings.Contains(c.yaml, "url:") {
				yaml += "      url: https://hooks.example/x\n"
			}
			o, ps := ParseOperator("op.yaml", []byte(yaml), lookup)
			if ps != nil {
				t.Fatal(ps)
			}
			got := o.Credentials()
			if !slices.Contains(got, "t0ken-abc") {
				t.Errorf("credentials %q lack the session token", got)
			}
			for _, w := range c.want {
				if !slices.Contains(got, w) {
					t.Errorf("credentials %q lack %q", got, w)
				}
			}
			for _, n := range c.not {
				if slices.Contains(got, n) {
					t.Errorf("credentials %q hold %q, a public word", got, n)
				}
			}
			if carriers := o.CredentialCarriers(); len(carriers) < 2 || !strings.HasPrefix(carriers[0], "https://hooks.example/") {
				t.Errorf("carriers %q, want the URL and the header values whole", carriers)
			}
		})
	}
}

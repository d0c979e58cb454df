package engine

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
)

// TestTypedSecretPrefixesNotLogged types a secret into a real page that
// logs its input on every keystroke, so its console holds every prefix of
// the secret as type_text types it a few characters at a time. The
// prefixes of six characters or more are in no file of the report (the
// events replay prints, report.json, app.log), while the shorter ones,
// ordinary text, are there to show the page did log.
func TestTypedSecretPrefixesNotLogged(t *testing.T) {
	t.Parallel()
	browserNeed(t)
	const secret = "Tr0ub4dor-typed-77"
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><html><head><title>Echo</title></head><body>
<input id="q" type="password" autofocus style="width:400px" oninput="console.log('value: ' + this.value); if (this.value.length >= %d) document.getElementById('done').hidden = false">
<p id="done" hidden>typed</p>
</body></html>`, len(secret))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	o := scriptRun(t, scriptRunSpec{
		scenario: `name: typed prefixes
browser:
  start_url: ` + srv.URL + `/
provides:
  pw: {secret: {env: KASM_TYPED_PW}}
cdp_targets:
  q: "#q"
  done: "#done"
cdp_waits:
  typed: {target: done, state: visible, timeout_s: 20}
steps:
  - cdp_click: q
  - type_text: pw
  - cdp_wait: typed
`,
		env: map[string]string{"KASM_TYPED_PW": secret},
	})
	if o.res.Verdict != events.VerdictPass {
		t.Fatalf("verdict %s/%s, want pass: %v", o.res.Verdict, o.res.Outcome, o.res.Reasons)
	}
	var logged []string
	for _, e := range o.events {
		if d, ok := e.Data.(events.ConsoleMessage); ok {
			logged = append(logged, d.Text)
		}
	}
	if !strings.Contains(strings.Join(logged, "\n"), "value: Tr0ub\n") {
		t.Fatalf("the page's log lacks the short prefixes, so it did not log each keystroke:\n%s", strings.Join(logged, "\n"))
	}
	for _, name := range []string{"events.jsonl", "report.json", "app.log"} {
		raw, err := os.ReadFile(filepath.Join(o.info.reportDir, name))
		if err != nil {
			t.Fatal(err)
		}
		for n := 6; n <= len(secret); n++ {
			if strings.Contains(string(raw), secret[:n]) {
				t.Errorf("%s holds %q, a prefix of the typed secret", name, secret[:n])
			}
		}
	}
}

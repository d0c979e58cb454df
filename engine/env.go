package engine

import (
	"os"
	"slices"
	"strings"
)

// secretVariables names the runtime's environment variables that hold a
// secret: every secret's env source, and any variable whose value holds a
// secret the run knows — a scenario's secret, the model key, an inbox
// token, a credential in the webhook's URL or headers — whole, as a prefix
// of six characters or more, or encoded (Redactor.Holds), or that is a
// part of the webhook's URL or a header value, which carry credentials
// among public words (TOKEN=t for "Bearer ${TOKEN}", whatever the parser
// took for the credential). The application, declared tools and the
// browser start without them, so a secret reaches them only where the
// scenario passes it on itself (app.env: {X: ${APP_PASSWORD}}).
func (r *Runner) secretVariables() []string {
	var names []string
	for _, ref := range sortedKeys(r.files.Scenario.Provides) {
		if src := r.files.Scenario.Provides[ref].Secret; src != nil && src.Env != "" {
			names = append(names, src.Env)
		}
	}
	carriers := r.files.Operator.CredentialCarriers()
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if value != "" && (r.redact.Holds(value) || partOf(value, carriers)) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// minCarriedPart is the shortest value counted as a part of a credential's
// carrier: shorter ones ("1", "en", "https") are in any URL.
const minCarriedPart = 6

// partOf reports whether value is a part, long enough to be no accident,
// of one of the carriers.
func partOf(value string, carriers []string) bool {
	if len(strings.TrimSpace(value)) < minCarriedPart {
		return false
	}
	for _, c := range carriers {
		if strings.Contains(c, value) {
			return true
		}
	}
	return false
}

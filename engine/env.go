package engine

import (
	"os"
	"slices"
	"strings"
)

// secretVariables names the runtime's environment variables that hold a
// secret: every secret's env source, and any variable whose value is a
// secret the run knows (a model key or inbox token written as ${VAR} in the
// operator file). The application, declared tools and the browser start
// without them, so a secret reaches them only where the scenario passes it
// on itself (app.env: {X: ${APP_PASSWORD}}).
func (r *Runner) secretVariables() []string {
	var names []string
	for _, ref := range sortedKeys(r.files.Scenario.Provides) {
		if src := r.files.Scenario.Provides[ref].Secret; src != nil && src.Env != "" {
			names = append(names, src.Env)
		}
	}
	values := append(r.files.Scenario.SecretValues(), r.files.Operator.Credentials()...)
	for _, kv := range os.Environ() {
		name, value, _ := strings.Cut(kv, "=")
		if value != "" && slices.Contains(values, value) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

package engine

import (
	"net/http"
	"strings"
	"testing"
)

// TestRulesModelConfig checks the operator file's model section as the
// adapter gets it: an endpoint that is set must be one the adapter can
// call (and is refused at its key otherwise), none set is not refused
// here, and a transport the caller gives carries the requests.
func TestRulesModelConfig(t *testing.T) {
	t.Parallel()
	given := http.RoundTripper(&http.Transport{})
	tests := []struct {
		name, model string
		scripted    bool // a scripted scenario, which needs no model
		transport   http.RoundTripper
		problem     string // in the error; "" for none
	}{
		{name: "an endpoint of the other protocol is refused at its key", model: "  endpoint: http://127.0.0.1:9/v1/responses\n",
			problem: "model endpoint is a responses URL but the profile speaks chat_completions"},
		{name: "no endpoint is not the configuration's problem", model: "  retry: 0\n", scripted: true},
		{name: "a given transport carries the requests", model: "  endpoint: http://127.0.0.1:9/v1\n", transport: given},
		{name: "no transport leaves the adapter's own", model: "  endpoint: http://127.0.0.1:9/v1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := rulesGoal
			if tt.scripted {
				sc = rulesApp + "steps:\n  - press_key: a\n"
			}
			files := loadRunFiles(t, t.TempDir(), sc, "model:\n"+tt.model, nil)
			cfg, err := ModelConfig(files.Operator, tt.transport)
			switch {
			case tt.problem == "" && err != nil:
				t.Fatalf("ModelConfig: %v", err)
			case tt.problem != "":
				if err == nil || !strings.Contains(err.Error(), tt.problem) || !strings.Contains(err.Error(), "operator.yaml:2:") {
					t.Fatalf("ModelConfig error = %v, want %q at the endpoint's line", err, tt.problem)
				}
				return
			}
			switch {
			case tt.transport == nil && cfg.HTTPClient != nil:
				t.Errorf("HTTPClient = %+v, want the adapter's own", cfg.HTTPClient)
			case tt.transport != nil && (cfg.HTTPClient == nil || cfg.HTTPClient.Transport != tt.transport):
				t.Errorf("HTTPClient = %+v, want one on the given transport", cfg.HTTPClient)
			}
		})
	}
}

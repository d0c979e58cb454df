package engine

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/scenarios"
)

// A finished scripted run leaves a complete manifest whose identity is the
// one IdentityOf computes, with the run's verdict and times.
func TestManifestOfScriptedRun(t *testing.T) {
	t.Parallel()
	o := scriptRun(t, scriptRunSpec{scenario: `name: manifest
app:
  command: [xmessage, -geometry, +100+60, hi]
  window: {class: Xmessage}
steps:
  - observe_screen: {}
`})
	m, err := ReadManifest(o.info.reportDir)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Complete() || m.Verdict != o.rep.Verdict || m.Outcome != o.rep.Outcome {
		t.Errorf("manifest ended=%v verdict=%q outcome=%q, report verdict %q outcome %q", m.Ended, m.Verdict, m.Outcome, o.rep.Verdict, o.rep.Outcome)
	}
	if m.Scenario.SHA256 != o.rep.Scenario.SHA256 || m.Scenario.ResolvedSHA256 == "" || m.Scenario.Name != "manifest" {
		t.Errorf("manifest scenario = %+v, report's sha256 %s", m.Scenario, o.rep.Scenario.SHA256)
	}
	if m.IdentitySHA256 != m.Identity.SHA256() {
		t.Errorf("identity_sha256 %s is not the identity's hash %s", m.IdentitySHA256, m.Identity.SHA256())
	}
	if m.Ended.Before(m.Started) || m.DurationMS != m.Ended.Sub(m.Started).Milliseconds() {
		t.Errorf("started %v ended %v duration %d ms", m.Started, m.Ended, m.DurationMS)
	}
	if len(m.Profile.Prompts) != 0 {
		t.Errorf("a run without a model lists prompts %v", m.Profile.Prompts)
	}
}

// A goal run's manifest lists the hash of every prompt it can send, and
// the paired seed it sent shifts by 1,000,003 per sample index.
func TestManifestPromptsAndSampleSeed(t *testing.T) {
	t.Parallel()
	op := loopOperator + "  paired_sampling_seed: true\n"
	r := loopRun(t, loopCase{operator: op,
		before: func(r *Runner) { r.opts.SampleIndex = 2 },
		script: []mt.Exchange{mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "stop"}`)}})
	m, err := ReadManifest(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	profile, _ := model.LookupProfile("")
	want := map[string]string{
		"loop": textSHA256(profile.Prompt.Text),
	}
	if m.Profile.Name != model.DefaultProfile || m.Profile.Prompts["loop"] != want["loop"] || profile.Prompt.SHA256 != want["loop"] {
		t.Errorf("profile = %+v, want %s with loop %s", m.Profile, model.DefaultProfile, want["loop"])
	}
	for _, role := range []string{"locate", "judge"} {
		if len(m.Profile.Prompts[role]) != 64 {
			t.Errorf("prompt %s hash = %q", role, m.Profile.Prompts[role])
		}
	}
	if len(r.reqs) == 0 {
		t.Fatal("no model request")
	}
	sent, _ := r.reqs[0].Body["seed"].(float64)
	first := PairedSeed("loop xterm", 0, 0) + 2*1_000_003
	if int64(sent) != first {
		t.Errorf("seed sent = %v, want sample 2's %d", r.reqs[0].Body["seed"], first)
	}
	if m.Seed.SampleIndex != 2 || !m.Seed.Paired || m.Seed.First == nil || *m.Seed.First != PairedSeed("loop xterm", 0, 2) {
		t.Errorf("manifest seed = %+v", m.Seed)
	}
	if r.rep.Verdict == "" || m.Verdict != r.rep.Verdict {
		t.Errorf("manifest verdict %q, report %q", m.Verdict, r.rep.Verdict)
	}
}

func TestPairedSeed(t *testing.T) {
	t.Parallel()
	if PairedSeed("a", 3, 0) != PairedSeed("a", 3, 0) {
		t.Error("the same sample's seed is not repeatable")
	}
	if d := PairedSeed("a", 3, 1) - PairedSeed("a", 3, 0); d != 1_000_003 {
		t.Errorf("sample 1 is %d from sample 0, want 1,000,003", d)
	}
	if d := PairedSeed("a", 4, 0) - PairedSeed("a", 3, 0); d != 1 {
		t.Errorf("iteration 4 is %d from iteration 3, want 1", d)
	}
	if PairedSeed("a", 0, 0) == PairedSeed("b", 0, 0) {
		t.Error("two scenarios share a seed")
	}
}

// The identity follows what a run does, not the file's layout or its
// credentials, and Differences names what changed.
func TestIdentity(t *testing.T) {
	t.Parallel()
	const scenario = `name: identity
app:
  command: [xterm]
goal: Do the thing.
provides:
  password: {secret: {env: PASSWORD}}
`
	const operator = `model:
  endpoint: http://127.0.0.1:9/v1
  key: sk-very-secret
  temperature: 0.2
inbox:
  session_token: tok-very-secret
`
	load := func(t *testing.T, sc, op string, env map[string]string) Identity {
		t.Helper()
		files := loadRunFiles(t, t.TempDir(), sc, op, env)
		id, err := IdentityOf(files, Options{Version: "v1"})
		if err != nil {
			t.Fatal(err)
		}
		// The test directory differs per load; the path is not what is
		// compared here.
		id.Scenario.File, id.Operator.File = "", ""
		return id
	}
	env := map[string]string{"PASSWORD": "hunter2-secret"}
	base := load(t, scenario, operator, env)
	if len(base.Profile.Prompts) != 3 {
		t.Errorf("prompts = %v, want loop, locate and judge", base.Profile.Prompts)
	}
	tests := []struct {
		name     string
		sc, op   string
		env      map[string]string
		wantDiff []string
	}{
		{"a comment", "# a comment\n" + scenario, operator, env, []string{"scenario.sha256"}},
		{"another key and token", scenario, strings.ReplaceAll(operator, "very-secret", "other"), env, nil},
		{"another secret value", scenario, operator, map[string]string{"PASSWORD": "other"}, nil},
		{"another goal", strings.Replace(scenario, "Do the thing.", "Do another thing.", 1), operator, env, []string{"scenario.resolved_sha256", "scenario.sha256"}},
		{"capacity bounds", scenario, strings.Replace(operator, "model:\n", "services:\n  vision: {max_concurrent: 2}\nmodel:\n  service: vision\n", 1), env, nil},
		{"another temperature", scenario, strings.Replace(operator, "0.2", "0.3", 1), env, []string{"operator.identity_sha256"}},
		{"another profile", scenario, strings.Replace(operator, "model:\n", "model:\n  profile: qwen3-vl-8b-instruct\n", 1), env, []string{"operator.identity_sha256", "profile.name", "profile.prompts.loop"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := load(t, tt.sc, tt.op, tt.env)
			if got := base.Differences(id); !slices.Equal(got, tt.wantDiff) {
				t.Errorf("differences = %v, want %v", got, tt.wantDiff)
			}
			if (len(tt.wantDiff) == 0) != (id.SHA256() == base.SHA256()) {
				t.Errorf("identity hash equal = %v, want %v", id.SHA256() == base.SHA256(), len(tt.wantDiff) == 0)
			}
		})
	}
}

// TestIdentityEndpointCredentials: credentials in the model endpoint's
// URL never reach the identity, which manifest.json stores in the clear.
// The loader refuses such endpoints, so this is checked on the function:
// the identity must not depend on the loader for it.
func TestIdentityEndpointCredentials(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ endpoint, want string }{
		{"http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"},
		{"http://me:pw-secret@127.0.0.1:9/v1", "http://127.0.0.1:9/v1"},
		{"http://127.0.0.1:9/v1?api-key=secret", "http://127.0.0.1:9/v1"},
		{"http://me:pw-secret@127.0.0.1:9/v1?api-key=secret", "http://127.0.0.1:9/v1"},
	} {
		op := &scenarios.Operator{}
		op.Model.Endpoint = c.endpoint
		if got := operatorForIdentity(op).Model.Endpoint; got != c.want {
			t.Errorf("%s: identity's endpoint %q, want %q", c.endpoint, got, c.want)
		}
		if op.Model.Endpoint != c.endpoint {
			t.Errorf("%s: the run's own endpoint became %q", c.endpoint, op.Model.Endpoint)
		}
	}
}

// A run killed before its end leaves a manifest without an end, which is
// not complete.
func TestManifestIncompleteUntilEnded(t *testing.T) {
	t.Parallel()
	m := Manifest{Schema: ManifestSchema, Started: time.Now()}
	if m.Complete() {
		t.Error("a manifest without an end is complete")
	}
	now := time.Now()
	m.Ended, m.Verdict = &now, events.VerdictPass
	if !m.Complete() {
		t.Error("an ended manifest with a verdict is not complete")
	}
}

// An operator that removes escalate (tools.disabled) sends a prompt that
// never tells the model to call it, and the manifest hashes the prompt as
// sent.
func TestManifestPromptWithoutDisabledTools(t *testing.T) {
	t.Parallel()
	op := loopOperator + "tools:\n  disabled: [escalate]\n"
	r := loopRun(t, loopCase{operator: op,
		script: []mt.Exchange{mt.Call("record_verdict", `{"verdict": "goal-not-met", "reason": "stop"}`)}})
	if len(r.reqs) == 0 {
		t.Fatal("no model request")
	}
	var system string
	if msgs, ok := r.reqs[0].Body["messages"].([]any); ok && len(msgs) > 0 {
		if first, ok := msgs[0].(map[string]any); ok && first["role"] == "system" {
			system, _ = first["content"].(string)
		}
	}
	if system == "" || !strings.Contains(system, "record_verdict") || regexp.MustCompile(`\bescalate\b`).MatchString(system) {
		t.Errorf("system prompt sent:\n%s\nwant record_verdict's rule and no word of escalate", system)
	}
	m, err := ReadManifest(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Profile.Prompts["loop"]; got != textSHA256(system) {
		t.Errorf("manifest loop prompt %s, want the hash of the prompt sent %s", got, textSHA256(system))
	}
}

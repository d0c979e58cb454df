package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"

	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/stage"
	"github.com/kasmrt/kasmrt/scenarios"
)

// rulesNavigate is rulesBrowser with pages to open: one named relative to
// the start page, one by an absolute URL.
const rulesNavigate = rulesBrowser + `cdp_urls:
  faq: /docs/faq.html
  status: http://status.test/
`

// errFAQRefused is how the double's tab fails to load the FAQ page, in
// the words chromedp uses for a page that does not load.
var errFAQRefused = errors.New("navigate to http://app.test/docs/faq.html: page load error net::ERR_CONNECTION_REFUSED")

// TestRulesCDPNavigate runs cdp_navigate on the double's tab, from a
// script and from the model: a page opens by its cdp_urls name, resolved
// against the start page when relative, and the step says what was
// opened; a page that does not load fails the step with the browser's
// reason and leaves the tab where it was; a name the scenario does not
// declare never reaches the tab.
func TestRulesCDPNavigate(t *testing.T) {
	t.Parallel()
	const start = "navigate http://app.test/login"
	cases := []struct {
		name    string
		steps   string           // a scripted run's steps, or
		model   []mt.Exchange    // a goal run's model
		fails   map[string]error // pages the tab does not load
		verdict events.Verdict
		outcome events.Outcome
		iters   int
		bad     int
		want    []loopStep
		inputs  []string
		// told is what the model's request after its first call says
		// about that call; reason what the report says of the run.
		told, reason string
	}{
		{name: "a scripted step opens a page named relative to the start page",
			steps:   "  - cdp_navigate: faq\n  - cdp_url: {}\n",
			verdict: events.VerdictPass, outcome: OutcomeCompleted,
			want: []loopStep{
				{"cdp_navigate", events.StatusOK, "opened faq (http://app.test/docs/faq.html) in "},
				{"cdp_url", events.StatusOK, "http://app.test/docs/faq.html"},
			},
			inputs: []string{start, "navigate http://app.test/docs/faq.html"}},
		{name: "a scripted step whose page does not load fails the run",
			steps: "  - cdp_navigate: faq\n  - cdp_url: {}\n", fails: map[string]error{"http://app.test/docs/faq.html": errFAQRefused},
			verdict: events.VerdictTestError, outcome: OutcomeStepError,
			want:   []loopStep{{"cdp_navigate", events.StatusError, "ERR_CONNECTION_REFUSED"}},
			inputs: []string{start},
			reason: "step 1 (cdp_navigate) could not run: navigate to http://app.test/docs/faq.html failed"},
		{name: "the model opens a page by its absolute URL",
			model:   []mt.Exchange{mt.Call("cdp_navigate", `{"target": "status"}`), mt.Call("cdp_url", `{}`), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iters: 3,
			want: []loopStep{
				{"cdp_navigate", events.StatusOK, "opened status (http://status.test/) in "},
				{"cdp_url", events.StatusOK, "http://status.test/"},
				{"record_verdict", events.StatusOK, "recorded goal-met"},
			},
			inputs: []string{start, "navigate http://status.test/"},
			told:   "opened status (http://status.test/)"},
		{name: "the model is told a page did not load and carries on",
			model:   []mt.Exchange{mt.Call("cdp_navigate", `{"target": "faq"}`), mt.Call("cdp_url", `{}`), loopGoalMet},
			fails:   map[string]error{"http://app.test/docs/faq.html": errFAQRefused},
			verdict: loopUnverified, outcome: OutcomeCompleted, iters: 3,
			want: []loopStep{
				{"cdp_navigate", events.StatusError, "ERR_CONNECTION_REFUSED"},
				{"cdp_url", events.StatusOK, "http://app.test/login"},
				{"record_verdict", events.StatusOK, "recorded goal-met"},
			},
			inputs: []string{start},
			told:   "ERR_CONNECTION_REFUSED"},
		{name: "a URL of the model's own is refused before the tab",
			model:   []mt.Exchange{mt.Call("cdp_navigate", `{"target": "http://evil.test/"}`), loopGoalMet},
			verdict: loopUnverified, outcome: OutcomeCompleted, iters: 2, bad: 1,
			want: []loopStep{
				{"cdp_navigate", events.StatusMalformed, `cdp_navigate.target: "http://evil.test/" is not one of faq, status`},
				{"record_verdict", events.StatusOK, "recorded goal-met"},
			},
			inputs: []string{start},
			told:   "is not one of faq, status"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{navigateFails: c.fails}
			lc := loopCase{machine: f, env: map[string]string{"APP_PASSWORD": "pw"}, script: c.model}
			if c.model == nil {
				lc.scenario, lc.operator = rulesNavigate+"steps:\n"+c.steps, "runner: {}\n"
			} else {
				lc.scenario = rulesNavigate + "goal: Open the page.\n"
			}
			r := loopRun(t, lc)
			loopWant(t, r, c.verdict, c.outcome, c.iters, c.bad)
			loopWantSteps(t, r.rep, c.want...)
			if got := f.inputs(); !slices.Equal(got, c.inputs) {
				t.Errorf("input = %q, want %q", got, c.inputs)
			}
			if c.told != "" {
				if told := loopLastText(r.reqs[1]); !strings.Contains(told, c.told) {
					t.Errorf("the model was told %q, want it to contain %q", told, c.told)
				}
			}
			if why := strings.Join(r.rep.Reasons, " "); !strings.Contains(why, c.reason) {
				t.Errorf("reasons = %q, want one containing %q", r.rep.Reasons, c.reason)
			}
			if c.want[0].status == events.StatusOK && r.rep.Steps[0].Screen == "" {
				t.Error("the page opened keeps no screen of it")
			}
		})
	}
}

// TestRulesCDPNavigateUndeclaredName calls cdp_navigate's implementation
// directly, as the guard never lets a call through with a name that has
// no cdp_urls entry (the loader checks every entry, and the tool's schema
// lists only theirs): the name is refused without the tab being asked to
// open anything, rather than opening an empty address.
func TestRulesCDPNavigateUndeclaredName(t *testing.T) {
	t.Parallel()
	// Should the tool ask the tab anyway, the tab's answer is what the
	// step reports, and the test sees it.
	f := &fakeMachine{navigateErr: errors.New("the tab was asked to open a page")}
	s := &runState{}
	s.env.web = &stage.Web{Tab: &fakeTab{f: f, filled: map[string]string{}}, Headless: true}
	s.act = actor{env: &s.env, files: &scenarios.Files{Scenario: &scenarios.Scenario{
		Browser: &scenarios.Browser{StartURL: "http://app.test/login"},
		CDPURLs: map[string]string{"faq": "/docs/faq.html"},
	}}}
	res := builtinTools()["cdp_navigate"](s, t.Context(), 1, call{Tool: "cdp_navigate", Args: map[string]any{"target": "credits"}, Source: events.SourceModel})
	if res.status != events.StatusError || res.fail != failResolution || res.message != `no cdp_urls entry "credits"` {
		t.Errorf("result = %+v, want a resolution failure naming the missing cdp_urls entry", res)
	}
}

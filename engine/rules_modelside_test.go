package engine

import (
	"context"
	"encoding/json"
	"image"
	"image/draw"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/inbox"
)

// loopNoValues is loopXterm without provides: nothing to type until the
// operator answers.
const loopNoValues = `name: loop no values
app:
  command: [xterm, -geometry, 60x12+20+20, -e, sh]
goal: Enter the code the operator knows.
`

func inboxOperator(timeout string) string {
	return loopOp("", "") + "inbox:\n  session_token: s3cret-console-token\n  answer_timeout_s: " + timeout + "\n"
}

// toolSchema returns the parameters schema a request gave the named tool.
func toolSchema(t *testing.T, req mt.Request, name string) map[string]any {
	t.Helper()
	tools, _ := req.Body["tools"].([]any)
	for _, raw := range tools {
		tool, _ := raw.(map[string]any)
		fn, _ := tool["function"].(map[string]any)
		if fn["name"] == name {
			params, _ := fn["parameters"].(map[string]any)
			return params
		}
	}
	t.Fatalf("request %d offers no %s: %v", req.N, name, req.ToolNames())
	return nil
}

// TestRulesAnswerTypedByRef checks that type_text is offered only once
// there is a value to type, and that an operator's answer to ask_human is
// such a value: typed by ref answer_<question id>, listed in the update
// with its length, and shown to the model only when the operator marks it
// shareable; a secret answer is masked everywhere the run writes.
func TestRulesAnswerTypedByRef(t *testing.T) {
	t.Parallel()
	const code = "4721-open-sesame"
	script := []mt.Exchange{
		mt.Call("ask_human", `{"question": "What is the code?"}`),
		mt.Call("observe_screen", `{}`),
		mt.Call("type_text", `{"ref": "answer_q1"}`),
		loopGoalMet,
	}
	for name, c := range map[string]struct {
		mark      inbox.Mark
		shown     bool // the model reads the answer
		masked    bool // the answer shows nowhere in the report
		resultHas string
	}{
		// An answer is never shown to the model unless the operator
		// marks it shareable.
		"unmarked":  {resultHas: `the operator answered (16 characters); the answer is not shown to you; type it with type_text, ref "answer_q1"`},
		"private":   {mark: inbox.MarkPrivate, resultHas: `the operator answered (16 characters); the answer is not shown to you; type it with type_text, ref "answer_q1"`},
		"shareable": {mark: inbox.MarkShareable, shown: true, resultHas: "the operator answered: " + code},
		"secret":    {mark: inbox.MarkSecret, masked: true, resultHas: "a secret of 16 characters"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// The application echoes what is typed into its log.
			f := &fakeMachine{echo: true}
			r := loopRun(t, loopCase{machine: f, scenario: loopNoValues, operator: inboxOperator("10"), script: script,
				sink: func(run *Runner, e events.Event) {
					if e.Kind == events.KindQuestion {
						go func() {
							if err := run.AnswerMarked(e.Question.ID, code, c.mark); err != nil {
								t.Errorf("answer: %v", err)
							}
						}()
					}
				}})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
			if names := r.reqs[0].ToolNames(); slices.Contains(names, "type_text") {
				t.Errorf("type_text offered with nothing to type: %v", names)
			}
			if names := r.reqs[1].ToolNames(); !slices.Contains(names, "type_text") {
				t.Errorf("type_text not offered once the answer came: %v", names)
			}
			after := loopLastText(r.reqs[1])
			if !strings.Contains(after, c.resultHas) {
				t.Errorf("the model was told:\n%s\nwant %q", after, c.resultHas)
			}
			if !strings.Contains(after, "- answer_q1: a ") || !strings.Contains(after, " of 16 characters, the operator's answer to q1") {
				t.Errorf("the update does not list answer_q1 with its length:\n%s", after)
			}
			for _, req := range r.reqs[1:] {
				if got := strings.Contains(string(req.Raw), code); got != c.shown {
					t.Errorf("request %d holds the answer: %v, want %v", req.N, got, c.shown)
				}
			}
			// A secret is typed a few characters at a time.
			var typed string
			for _, in := range f.inputs() {
				if v, ok := strings.CutPrefix(in, "type "); ok {
					typed += v
				}
			}
			if typed != code {
				t.Errorf("inputs = %q, want the answer typed", f.inputs())
			}
			loopWantSteps(t, r.rep, loopStep{"ask_human", "ok", ""}, loopStep{"observe_screen", "ok", ""},
				loopStep{"type_text", "ok", `"answer_q1" (16 characters)`}, loopStep{"record_verdict", "ok", ""})
			raw, _ := os.ReadFile(filepath.Join(r.dir, "events.jsonl"))
			rep, _ := json.Marshal(r.rep)
			if leaked := strings.Contains(string(raw)+string(rep), code); leaked == c.masked {
				t.Errorf("the answer in events.jsonl or the report: %v, want %v", leaked, !c.masked)
			}
			// The secret is typed a few characters at a time, and echoed as
			// typed: no piece of it may reach the log either.
			appLog, _ := os.ReadFile(filepath.Join(r.dir, "app.log"))
			if leaked := strings.Contains(string(appLog), code[len(code)-6:]); leaked == c.masked {
				t.Errorf("the answer in app.log: %v, want %v: %q", leaked, !c.masked, appLog)
			}
		})
	}
}

// TestRulesSecretAnswerMaskedInAppLog types a long answer marked secret
// into an application that echoes its input into its log, a few
// characters at a time: app.log, redacted as it is written by a redactor
// made when the application started, holds no piece of it.
func TestRulesSecretAnswerMaskedInAppLog(t *testing.T) {
	t.Parallel()
	const pass = "4721-open-sesame-and-then-the-rest-of-a-long-passphrase"
	f := &fakeMachine{echo: true}
	r := loopRun(t, loopCase{machine: f, scenario: loopNoValues, operator: inboxOperator("10"),
		script: []mt.Exchange{
			mt.Call("ask_human", `{"question": "What is the passphrase?"}`),
			mt.Call("observe_screen", `{}`),
			mt.Call("type_text", `{"ref": "answer_q1"}`),
			loopGoalMet,
		},
		sink: func(run *Runner, e events.Event) {
			if e.Kind == events.KindQuestion {
				go func() {
					if err := run.AnswerMarked(e.Question.ID, pass, inbox.MarkSecret); err != nil {
						t.Errorf("answer: %v", err)
					}
				}()
			}
		}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
	appLog, err := os.ReadFile(filepath.Join(r.dir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, piece := range []string{"sesame", "long-passphrase", "rest-of"} {
		if strings.Contains(string(appLog), piece) {
			t.Errorf("app.log holds %q of the secret answer: %q", piece, appLog)
		}
	}
	if !strings.Contains(string(appLog), "[REDACTED]") {
		t.Errorf("app.log %q, want the echoed answer masked", appLog)
	}
}

// TestRulesToolResultSaysScreenChange checks an input action's result
// says whether the screen changed, so an unchanged screen is not only a
// handle sent again.
func TestRulesToolResultSaysScreenChange(t *testing.T) {
	t.Parallel()
	screen := func(cursor bool) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 640, 400))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		if cursor {
			draw.Draw(img, image.Rect(100, 60, 102, 78), image.Black, image.Point{}, draw.Src)
		}
		return img
	}
	press := mt.Call("press_key", `{"key": "Return"}`)
	for name, c := range map[string]struct {
		still  bool
		frames []*image.RGBA
		call   mt.Exchange
		want   string
	}{
		"unchanged": {still: true, call: press, want: "The screen did not change within 300ms after press_key Return."},
		"changed":   {call: press, want: "The screen changed after press_key Return."},
		// The key changed nothing; the text cursor blinked meanwhile.
		"a text cursor blinked": {frames: []*image.RGBA{screen(true), screen(false)}, call: press, want: "The screen did not change within 300ms after press_key Return."},
		// A declared tool's screen is taken once the screen is still,
		// without waiting for the app to answer: no time is claimed.
		"a declared tool": {still: true, call: mt.Call("probe", `{}`), want: "The screen did not change after probe."},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{machine: &fakeMachine{still: c.still, frames: c.frames},
				scenario: rulesGoal + "tools:\n  probe:\n    run: shell\n    command: 'true'\n",
				script:   []mt.Exchange{mt.Call("observe_screen", `{}`), c.call, loopGoalMet}})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
			if got := loopLastText(r.reqs[2]); !strings.Contains(got, c.want) {
				t.Errorf("after press_key the model was told:\n%s\nwant %q", got, c.want)
			}
		})
	}
}

// TestRulesUpdateTellsTheRun checks the Environment Update says what the
// run has rather than a fixed "none": the provided values by ref and
// length (never the values) and the focused window's named controls,
// which click_element's schema offers as an enum once the set is stable.
func TestRulesUpdateTellsTheRun(t *testing.T) {
	t.Parallel()
	f := fakeDialog()
	r := loopRun(t, loopCase{machine: f, script: []mt.Exchange{
		mt.Call("observe_screen", `{}`), mt.Call("wait", `{"seconds": 0}`), mt.Call("click_element", `{"name": "cancel"}`), loopGoalMet}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
	upd := loopLastText(r.reqs[1])
	for _, want := range []string{
		"- greeting: a value of 10 characters\n- quit: a value of 4 characters",
		"(click_element takes the name):\n- \"OK\" (push button)\n- \"Cancel\" (push button)\n- \"Remember me\" (check box)\n",
	} {
		if !strings.Contains(upd, want) {
			t.Errorf("update lacks %q:\n%s", want, upd)
		}
	}
	for _, leak := range []string{"echo hello", "Data bindings: none", "Webpages: none"} {
		if strings.Contains(upd, leak) {
			t.Errorf("update holds %q:\n%s", leak, upd)
		}
	}
	name := func(n int) any {
		props, _ := toolSchema(t, r.reqs[n], "click_element")["properties"].(map[string]any)
		p, _ := props["name"].(map[string]any)
		return p["enum"]
	}
	if e := name(1); e != nil {
		t.Errorf("enum after one look at the controls: %v", e)
	}
	if e, _ := name(2).([]any); len(e) != 3 || e[0] != "OK" {
		t.Errorf("enum once the controls held still: %v", name(2))
	}
}

// TestRulesModelToolChoiceAndContext checks the operator's model keys on
// the wire: tool_choice as set (auto by default), and max_context_length
// trimming the oldest screens out of a request that would not fit.
func TestRulesModelToolChoiceAndContext(t *testing.T) {
	t.Parallel()
	observe := mt.Call("observe_screen", `{}`)
	script := []mt.Exchange{observe, mt.Call("wait", `{"seconds": 0}`), observe, loopGoalMet}
	for name, c := range map[string]struct {
		model      string
		toolChoice string
		images     int // in the last request
	}{
		"defaults": {toolChoice: "auto", images: 1},
		"required": {model: "  tool_choice: required\n", toolChoice: "required", images: 1},
		// Room for the text and no screen: the newest screen too is left
		// out (it is the model's only view, so operators size the context
		// for at least one).
		"a small context": {model: "  max_tokens: 1000\n  max_context_length: 2300\n", toolChoice: "auto", images: 0},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := loopRun(t, loopCase{machine: &fakeMachine{}, operator: loopOp("", c.model), script: script})
			loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
			for _, req := range r.reqs {
				if got := req.Body["tool_choice"]; got != c.toolChoice {
					t.Errorf("request %d tool_choice = %v, want %s", req.N, got, c.toolChoice)
				}
			}
			last := r.reqs[len(r.reqs)-1]
			if got := len(last.ImageURLs()); got != c.images {
				t.Errorf("the last request carries %d images, want %d", got, c.images)
			}
			if trimmed := strings.Contains(last.Text(), "left out to fit the model's context"); trimmed != (c.images == 0) {
				t.Errorf("the last request says screens were left out: %v:\n%s", trimmed, last.Text())
			}
		})
	}
}

// TestRulesUpdateTellsTheTab checks a browser run's update names the
// attached tab by title and address, and the secret provided by its
// length only.
func TestRulesUpdateTellsTheTab(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-correct-horse"
	r := loopRun(t, loopCase{scenario: rulesBrowser + "goal: Log in.\n", machine: &fakeMachine{}, env: map[string]string{"APP_PASSWORD": secret},
		script: []mt.Exchange{mt.Call("cdp_url", `{}`), loopGoalMet}})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 2, 0)
	upd := loopLastText(r.reqs[1])
	for _, want := range []string{"Browser tabs:\n- \"Sign in\" at http://app.test/login", "- password: a secret value of 21 characters\n- user: a value of 4 characters"} {
		if !strings.Contains(upd, want) {
			t.Errorf("update lacks %q:\n%s", want, upd)
		}
	}
	if strings.Contains(upd, secret) {
		t.Error("the secret reached the model")
	}
}

// Title gives the double's tab a title, as the CDP driver's tab has.
func (t *fakeTab) Title(context.Context) (string, error) { return "Sign in", nil }

package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// cacheOperator is loopOperator with the action cache read-write.
const cacheOperator = "cache: read-write\n" + loopOperator

// cacheRespondOperator offers respond too.
var cacheRespondOperator = strings.Replace(cacheOperator, "runner:\n", "runner:\n  respond: true\n", 1)

// cacheScenario provides a secret the model could write into a call.
const cacheScenario = `name: rules cache
app:
  command: [fake-app]
goal: Print the greeting.
provides:
  greeting: echo hello
  password: {secret: {env: APP_PASSWORD}}
`

var cacheEnv = map[string]string{"APP_PASSWORD": "pw-Secr3t-cache"}

// cacheFolder is the action cache folder beside a run's scenario.
func cacheFolder(r *Runner) string { return cache.Dir(r.files.Scenario.File) }

// copyCache puts the cache folder from into the folder beside run's
// scenario, as a team's committed cache arrives in another checkout.
func copyCache(t *testing.T, from string, run *Runner) {
	t.Helper()
	to := cacheFolder(run)
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	names, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(from, n.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, n.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// storedTrajectory reads the one trajectory stored in the cache folder.
func storedTrajectory(t *testing.T, folder string) cache.Trajectory {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(folder, "*.json"))
	if len(names) != 1 {
		t.Fatalf("cache folder holds %v", names)
	}
	raw, err := os.ReadFile(names[0])
	if err != nil {
		t.Fatal(err)
	}
	var tr cache.Trajectory
	if err := json.Unmarshal(raw, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// cacheReport is the run's last cache event's payload.
func cacheReport(t *testing.T, r loopResult) events.CacheReport {
	t.Helper()
	evs := loopEvents(r, events.KindCache)
	if len(evs) == 0 {
		t.Fatal("no cache event")
	}
	d, _ := evs[len(evs)-1].Data.(events.CacheReport)
	return d
}

// TestRulesCacheReplayPassesTheGuards: a replayed call is a model call to
// the guards. A cached trajectory whose observation was taken out replays
// its input first, and the observe-before-acting guard refuses it as it
// would the model's; record_verdict is never a replayed step.
func TestRulesCacheReplayPassesTheGuards(t *testing.T) {
	t.Parallel()
	var folder string
	first := loopRun(t, loopCase{scenario: cacheScenario, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("type_text", `{"ref": "greeting"}`), loopGoalMet},
		before: func(run *Runner) { folder = cacheFolder(run) }})
	loopWant(t, first, loopUnverified, OutcomeCompleted, 3, 0)
	if c := cacheReport(t, first); !c.Stored {
		t.Fatalf("the first run stored nothing: %+v", c)
	}
	// Take the observation out: the cached type_text now comes first,
	// made on what the observation was made on.
	tr := storedTrajectory(t, folder)
	if len(tr.Steps) != 2 || tr.Steps[0].Tool != "observe_screen" || tr.Steps[1].Tool != "type_text" || tr.End == nil {
		t.Fatalf("stored trajectory %+v", tr)
	}
	typed := tr.Steps[1]
	typed.Window, typed.Focus, typed.Screen = tr.Steps[0].Window, tr.Steps[0].Focus, tr.Steps[0].Screen
	tr.Steps = []cache.Step{typed}
	if err := cache.Store(folder, tr, nil); err != nil {
		t.Fatal(err)
	}

	second := loopRun(t, loopCase{scenario: cacheScenario, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("type_text", `{"ref": "greeting"}`), loopGoalMet},
		before: func(run *Runner) { copyCache(t, folder, run) }})
	loopWantSteps(t, second.rep, loopStep{"type_text", "refused", "observe_screen"},
		loopStep{"observe_screen", "ok", ""}, loopStep{"type_text", "ok", ""}, loopStep{"record_verdict", "ok", ""})
	if got := []events.Source{second.rep.Steps[0].Source, second.rep.Steps[1].Source}; got[0] != events.SourceCache || got[1] != events.SourceModel {
		t.Errorf("step sources %v, want the replayed call's cache and then the model's", got)
	}
	if c := cacheReport(t, second); c.Hits != 1 || c.FellBackAt != 2 || c.Misses != 1 {
		t.Errorf("cache account %+v, want the one replayed call and a fall back at step 2", c)
	}
	if evs := loopEvents(second, events.KindCache); len(evs) < 2 || !strings.Contains(evs[0].Message, "the replayed call type_text ended refused, the cached one ok") {
		t.Errorf("the fall back does not say why: %v", evs)
	}
}

// TestRulesCacheKeepsSecretsOut: a run whose model wrote a secret value
// into a call's arguments passes, and stores nothing: the cache folder
// never holds the value.
func TestRulesCacheKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	var folder string
	r := loopRun(t, loopCase{scenario: cacheScenario, operator: cacheRespondOperator, env: cacheEnv, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("respond", `{"message": "the password is pw-Secr3t-cache"}`), loopGoalMet},
		before: func(run *Runner) { folder = cacheFolder(run) }})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
	c := cacheReport(t, r)
	if c.Stored {
		t.Errorf("a trajectory with a secret in a call was stored: %+v", c)
	}
	if evs := loopEvents(r, events.KindCache); !strings.Contains(evs[len(evs)-1].Message, "the arguments of respond held a secret value") {
		t.Errorf("the cache's account does not say why nothing was stored: %q", evs[len(evs)-1].Message)
	}
	filepath.Walk(folder, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(path); strings.Contains(string(data), "pw-Secr3t") {
				t.Errorf("%s holds the secret", path)
			}
		}
		return nil
	})
}

// TestRulesCacheGroundedCrop: a grounded click is stored with its point
// and the crop around it, and the warm run replays it after finding the
// crop near the point, clicking there without asking the model to locate
// it (the click is still judged); a run where a secret went into the
// application stores no crop.
func TestRulesCacheGroundedCrop(t *testing.T) {
	t.Parallel()
	grounded := mt.Call("click_grounded", `{"description": "the terminal window", "expect": "the terminal has focus"}`)
	judge := mt.Text("```json\n{\"met\": true, \"reason\": \"judged\"}\n```")
	op := strings.Replace(cacheOperator, "model:\n", "model:\n  profile: qwen3-vl-8b-instruct\n", 1)
	tests := []struct {
		name   string
		before []mt.Exchange
		crop   bool
	}{
		{"no secret", nil, true},
		{"a secret typed first", []mt.Exchange{mt.Call("type_text", `{"ref": "password"}`), loopObserve}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var folder string
			script := append(append([]mt.Exchange{loopObserve}, tt.before...), grounded, mt.Func(loopLocateCentre(t, true)), judge, loopGoalMet)
			first := loopRun(t, loopCase{scenario: cacheScenario, operator: op, env: cacheEnv, machine: &fakeMachine{}, script: script,
				before: func(run *Runner) { folder = cacheFolder(run) }})
			if first.rep.Verdict != loopUnverified || !cacheReport(t, first).Stored {
				t.Fatalf("first run %s, cache %+v", first.rep.Verdict, cacheReport(t, first))
			}
			tr := storedTrajectory(t, folder)
			st := tr.Steps[len(tr.Steps)-1]
			crops, _ := filepath.Glob(filepath.Join(folder, "*.png"))
			if st.Tool != "click_grounded" || st.Point == nil || (st.Crop != "") != tt.crop || len(crops) != len(st.Crop)/max(len(st.Crop), 1) {
				t.Fatalf("stored grounded click %+v, crops %v; want a crop: %v", st, crops, tt.crop)
			}
			if !tt.crop {
				return
			}
			warm := loopRun(t, loopCase{scenario: cacheScenario, operator: op, env: cacheEnv, machine: &fakeMachine{},
				script: []mt.Exchange{judge},
				before: func(run *Runner) { copyCache(t, folder, run) }})
			if c := cacheReport(t, warm); c.Hits != 2 || c.FellBackAt != 0 || len(warm.reqs) != 1 {
				t.Errorf("warm run: cache %+v, %d model requests; want both calls replayed and only the click's judge asked", c, len(warm.reqs))
			}
			if g := warm.rep.Grounding; len(g) != 1 || g[0].Outcome != events.GroundingConfirmed || *g[0].Point != *first.rep.Grounding[0].Point {
				t.Errorf("warm run's grounding %+v, want a confirmed click where the first run's was (%+v)", g, first.rep.Grounding)
			}
		})
	}
}

// cacheChecked is cacheScenario with rulesChecked's tools and success
// criteria the finish tool makes hold.
var cacheChecked = cacheScenario + strings.TrimPrefix(rulesChecked, rulesGoal) + `success:
  tools: [done_file]
`

// TestRulesCacheVerdictMeetsTheSuccessCriteria: a replay that reaches the
// cached verdict ends the loop only when the success criteria hold there;
// evaluated once, they are the run's judgement. When they do not hold
// (the cached trajectory lost the call that made them hold), the model
// plans from there, told why, and the run passes once it gets the app
// where the goal wants it.
func TestRulesCacheVerdictMeetsTheSuccessCriteria(t *testing.T) {
	t.Parallel()
	var folder string
	first := loopRun(t, loopCase{scenario: cacheChecked, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("finish", `{}`), loopGoalMet},
		before: func(run *Runner) { folder = cacheFolder(run) }})
	loopWant(t, first, events.VerdictPass, OutcomeCompleted, 3, 0)
	if c := cacheReport(t, first); !c.Stored {
		t.Fatalf("the first run stored nothing: %+v", c)
	}

	t.Run("the criteria hold: judged once", func(t *testing.T) {
		warm := loopRun(t, loopCase{scenario: cacheChecked, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
			before: func(run *Runner) { copyCache(t, folder, run) }})
		loopWant(t, warm, events.VerdictPass, OutcomeCompleted, 0, 0)
		loopWantSteps(t, warm.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"finish", "ok", ""}, loopStep{"done_file", "ok", ""})
		var checks []string
		for _, e := range loopEvents(warm, events.KindCheck) {
			if strings.HasPrefix(e.Check.Name, successPrefix) {
				checks = append(checks, fmt.Sprintf("%s %v", e.Check.Name, e.Check.OK))
			}
		}
		if got := strings.Join(checks, ", "); got != "success.tools.done_file true" {
			t.Errorf("check events %q, want the one success criterion, held", got)
		}
	})

	t.Run("the criteria do not hold: the model plans from there", func(t *testing.T) {
		tr := storedTrajectory(t, folder)
		if len(tr.Steps) != 2 || tr.Steps[1].Tool != "finish" {
			t.Fatalf("stored trajectory %+v", tr)
		}
		tr.Steps = tr.Steps[:1]
		lost := t.TempDir()
		if err := cache.Store(lost, tr, nil); err != nil {
			t.Fatal(err)
		}
		warm := loopRun(t, loopCase{scenario: cacheChecked, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
			script: []mt.Exchange{mt.Call("finish", `{}`), loopGoalMet},
			before: func(run *Runner) { copyCache(t, lost, run) }})
		loopWant(t, warm, events.VerdictPass, OutcomeCompleted, 2, 0)
		loopWantSteps(t, warm.rep, loopStep{"observe_screen", "ok", ""}, loopStep{"done_file", "error", ""},
			loopStep{"finish", "ok", ""}, loopStep{"record_verdict", "ok", ""}, loopStep{"done_file", "ok", ""})
		c := cacheReport(t, warm)
		if c.Hits != 1 || c.FellBackAt != 3 || c.Misses != 1 {
			t.Errorf("cache account %+v, want the one replayed call and a fall back at step 3", c)
		}
		why := "the cached run's verdict does not hold: success.tools.done_file failed"
		if evs := loopEvents(warm, events.KindCache); len(evs) < 2 || !strings.Contains(evs[0].Message, why) {
			t.Errorf("the fall back does not say why: %v", evs)
		}
		if len(warm.reqs) == 0 || !strings.Contains(string(warm.reqs[0].Raw), why) {
			t.Errorf("the model was not told why it plans from here")
		}
	})
}

// flipBit returns the hex hash h with one bit of its digit i flipped: a
// screen one bit of 256 away, which still fits.
func flipBit(t *testing.T, h string, i int) string {
	t.Helper()
	if len(h) <= i {
		t.Fatalf("no digit %d in the hash %q", i, h)
	}
	b := []byte(h)
	b[i] = "1032547698badcfe"[strings.IndexByte("0123456789abcdef", b[i])]
	return string(b)
}

// waitedFor is the time a replayed wait that ended on its screen says it
// took.
var waitedFor = regexp.MustCompile(`^waited [0-9.]+s of`)

// TestRulesCacheReplayedWaitEndsOnItsScreen: a wait the cache replays ends
// as soon as the screen hashes to the one the cached wait ended on (the
// screen the next cached call was made on), within its seconds, whether
// or not the cached wait changed the screen; when the screen never gets
// there, it waits them all.
func TestRulesCacheReplayedWaitEndsOnItsScreen(t *testing.T) {
	t.Parallel()
	var folder string
	first := loopRun(t, loopCase{scenario: cacheScenario, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
		script: []mt.Exchange{loopObserve, mt.Call("wait", `{"seconds": 0.2}`), loopGoalMet},
		before: func(run *Runner) { folder = cacheFolder(run) }})
	loopWant(t, first, loopUnverified, OutcomeCompleted, 3, 0)
	tests := []struct {
		name string
		// edit makes the stored trajectory's wait and end what the case needs.
		edit func(wait *cache.Step, end *cache.End)
		want string
	}{
		{"the cached wait changed nothing, the screen is there: the wait ends", func(wait *cache.Step, end *cache.End) {
			wait.Args["seconds"] = 10.0
		}, "waited ?s of 10s: the screen looked as the cached run's did when its wait ended"},
		{"the cached wait changed the screen, the screen is there: the wait ends", func(wait *cache.Step, end *cache.End) {
			wait.Args["seconds"] = 10.0
			wait.Screen = flipBit(t, wait.Screen, 0)
		}, "waited ?s of 10s: the screen looked as the cached run's did when its wait ended"},
		{"the screen never gets there: the whole wait", func(wait *cache.Step, end *cache.End) {
			end.Screen = flipBit(t, end.Screen, 1)
		}, "waited 0.2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := storedTrajectory(t, folder)
			if len(tr.Steps) != 2 || tr.Steps[1].Tool != "wait" || tr.End == nil || tr.Steps[1].Screen != tr.End.Screen {
				t.Fatalf("stored trajectory %+v", tr)
			}
			tt.edit(&tr.Steps[1], tr.End)
			edited := t.TempDir()
			if err := cache.Store(edited, tr, nil); err != nil {
				t.Fatal(err)
			}
			warm := loopRun(t, loopCase{scenario: cacheScenario, operator: cacheOperator, env: cacheEnv, machine: &fakeMachine{},
				before: func(run *Runner) { copyCache(t, edited, run) }})
			loopWant(t, warm, loopUnverified, OutcomeCompleted, 0, 0)
			if c := cacheReport(t, warm); c.Hits != 2 || c.FellBackAt != 0 {
				t.Errorf("cache account %+v, want both calls replayed", c)
			}
			// What ended the wait is in its message; how long it took
			// depends on the machine's load, so it is not compared.
			if got := waitedFor.ReplaceAllString(warm.rep.Steps[1].Message, "waited ?s of"); got != tt.want {
				t.Errorf("the replayed wait says %q, want %q", got, tt.want)
			}
		})
	}
}

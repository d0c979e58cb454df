package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"reflect"
	"time"

	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

// planner is the goal loop's planner: the next turn is the action cache's
// next call while the screen still fits it, else the model's reply. To
// replay a cached trajectory it reads what a call is made on (the
// environment, the guard book's last screen and tool list), judges the
// cached verdict by the success criteria (the checker, and the run's
// judgement of whether they are judged now) and ends the loop with that
// verdict (the verdict's facts, the loop's counters); it records the
// run's calls for the next run and publishes the cache's account. It
// holds pointers to the parts of the run it reads and writes, set once in
// newRunState.
type planner struct {
	r     *Runner
	files *scenarios.Files
	bus   *events.Bus

	env     *environment
	book    *guardBook
	model   *modelState
	check   *checker
	outcome *verdictFacts
	loop    *loopStats
	// judges reports whether the success criteria are judged now: the
	// run's judgesSuccess, which first runs the checks after a step.
	judges func(context.Context) bool

	// cache is the goal loop's use of the action cache (actioncache.go),
	// set as the loop plans its first call.
	cache *actionCache
}

func (pl *planner) log(format string, args ...any) { logTo(pl.bus, format, args...) }

// cacheMode is the run's cache mode: the command line's, else the
// operator file's.
func (pl *planner) cacheMode() cache.Mode {
	name := pl.r.opts.Cache
	if name == "" {
		name = pl.files.Operator.Cache
	}
	m, err := cache.ParseMode(name)
	if err != nil {
		// Both are validated before anything launches.
		pl.log("cache: %v; the cache is off", err)
	}
	return m
}

// openCache sets up the run's cache use as the loop starts.
func (pl *planner) openCache() *actionCache {
	ac := &actionCache{mode: pl.cacheMode(), crops: map[string][]byte{}}
	if ac.mode == cache.Off {
		return ac
	}
	key, err := CacheKey(pl.files)
	if err != nil {
		pl.log("cache: %v; the cache is off", err)
		ac.mode = cache.Off
		return ac
	}
	ac.key, ac.dir = key, cache.Dir(pl.files.Scenario.File)
	stored, err := cache.Load(ac.dir, key)
	if err != nil {
		pl.log("cache: %v; the model plans every call", err)
	}
	if stored == nil || len(stored.Steps) == 0 && stored.End == nil {
		ac.misses = 1
		pl.publishCache(ac, "nothing is cached for this scenario; the model plans every call", false, false)
		return ac
	}
	ac.stored, ac.replaying = stored, true
	return ac
}

// plan is the loop's planner: the next turn is the action cache's next
// call while the screen still fits it, else the model's reply to a
// request built from the history, as the model's memory lets it see it
// (seen).
func (pl *planner) plan(ctx context.Context, seen []model.Message) (model.Response, error) {
	if pl.cache == nil {
		pl.cache = pl.openCache()
	}
	ac := pl.cache
	// A replayed call the operator rejected never reached cacheCall.
	ac.replayed = nil
	if ac.replaying {
		resp, ok, err := pl.replay(ctx)
		if ok {
			return resp, err
		}
	}
	m, op := pl.model, pl.files.Operator
	req := model.Request{System: m.profile.Prompt.Text, Messages: pl.model.redactMessages(seen), Tools: pl.model.modelTools(), Seed: pl.model.seed(pl.loop.iterations)}
	if ac.note != "" {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Text: pl.r.Redact(ac.note)})
		ac.note = ""
	}
	req.Messages = fitContext(op.Model, req)
	pl.bus.Publish(events.Event{Data: requestEvent(pl.loop.iterations+1, req)})
	pl.loop.iterations++
	resp, err := pl.model.Turn(ctx, req)
	if err == nil && ac.mode.Writes() && len(resp.ToolCalls) == 1 {
		c := resp.ToolCalls[0]
		args, perr := parseArgs(c.Arguments)
		if perr == nil {
			ac.pending = pl.madeOn(ctx, c.Name, args)
		}
	}
	return resp, err
}

// replay returns the cached next call as the model's turn when the screen
// fits it (ok), or ends the loop where the cached run's verdict did
// (errReplayEnded). When nothing fits it falls back to the model: ok is
// false and the model plans from here on.
func (pl *planner) replay(ctx context.Context) (model.Response, bool, error) {
	ac := pl.cache
	if ac.next == len(ac.stored.Steps) {
		end := ac.stored.End
		if end == nil {
			pl.fallBack(ac, "the cached calls are done and the loop goes on")
			return model.Response{}, false, nil
		}
		now := pl.madeOn(ctx, "record_verdict", nil)
		if why := fits(cache.Step{Window: end.Window, Screen: end.Screen}, now, ac.dir); why != "" {
			pl.fallBack(ac, "before the cached verdict, "+why)
			return model.Response{}, false, nil
		}
		if why := pl.cachedEndUnmet(ctx, ac); why != "" {
			pl.fallBack(ac, why)
			return model.Response{}, false, nil
		}
		ac.endSaved, ac.replaying = true, false
		pl.outcome.modelVerdict, pl.outcome.modelReason = end.Verdict, end.Reason
		pl.loop.ended = fmt.Sprintf("the action cache's trajectory ended where the model recorded its verdict (%s)", end.Verdict)
		return model.Response{}, true, errReplayEnded
	}
	st := ac.stored.Steps[ac.next]
	if _, listed := pl.book.tools[st.Tool]; !listed {
		pl.fallBack(ac, fmt.Sprintf("the cached call %s is not on this run's tool list", st.Tool))
		return model.Response{}, false, nil
	}
	now := pl.madeOn(ctx, st.Tool, st.Args)
	if why := fits(st, now, ac.dir); why != "" {
		pl.fallBack(ac, fmt.Sprintf("the cached call %s no longer fits: %s", st.Tool, why))
		return model.Response{}, false, nil
	}
	raw, err := json.Marshal(st.Args)
	if err != nil {
		pl.fallBack(ac, fmt.Sprintf("the cached call %s cannot be encoded: %v", st.Tool, err))
		return model.Response{}, false, nil
	}
	ac.next++
	ac.hits++
	ac.pending = now
	ac.replayed = &st
	return model.Response{
		Text:      fmt.Sprintf("Replayed from the action cache (call %d of %d).", ac.next, len(ac.stored.Steps)),
		ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("cache_%d", ac.next), Name: st.Tool, Arguments: string(raw)}},
	}, true, nil
}

// cachedEndUnmet evaluates the success criteria where the cached run's
// model recorded its verdict, before the replay ends the loop there. A
// criterion that does not hold says why the model plans from here: the
// app is not where the goal wants it, and the model may still get it
// there. Otherwise the results are kept for the run's judgement. A
// window that differs from its baseline is kept as the verdict too: the
// look is the app's, not something the model plans around.
func (pl *planner) cachedEndUnmet(ctx context.Context, ac *actionCache) string {
	if !pl.judges(ctx) {
		return ""
	}
	var judged []criterion
	pl.check.evaluateSuccess(ctx, func(c criterion) { judged = append(judged, c) })
	if ctx.Err() != nil {
		return ""
	}
	if n := len(judged); n > 0 && judged[n-1].unmet && judged[n-1].name != successPrefix+"screenshot" {
		return fmt.Sprintf("the cached run's verdict does not hold: %s", judged[n-1].reason)
	}
	ac.judged = judged
	return ""
}

// turnSource is the source of the current turn's call: the action cache
// while it replays one, else the model.
func (pl *planner) turnSource() events.Source {
	if ac := pl.cache; ac != nil && ac.replayed != nil {
		return events.SourceCache
	}
	return events.SourceModel
}

// fallBack hands planning to the model from the next step on.
func (pl *planner) fallBack(ac *actionCache, why string) {
	ac.replaying = false
	ac.misses++
	ac.fellBackAt = pl.book.stepN + 1
	ac.note = fmt.Sprintf("The calls so far were replayed from a cached run of this scenario. At this point %s, so you plan from here: observe the screen and carry on towards the goal.", why)
	pl.publishCache(ac, fmt.Sprintf("fell back to the model at step %d after %d replayed calls: %s", ac.fellBackAt, ac.hits, why), false, false)
}

// madeOn reads what a call of tool with args is made on now: the focused
// window, where keys go, the screen's perceptual hash, and the control or
// page element the call names.
func (pl *planner) madeOn(ctx context.Context, tool string, args map[string]any) *pendingCall {
	p := &pendingCall{}
	if pl.env.desk != nil {
		if w, ok, err := pl.env.desk.FocusedWindow(); err == nil && ok {
			p.step.Window = pl.r.Redact(fmt.Sprintf("%q (%s)", w.Title, w.Class))
		}
	}
	if tool != "record_verdict" {
		_, where := pl.env.destination(ctx, "")
		p.step.Focus = pl.r.Redact(where)
	}
	if pl.book.lastFrame != nil {
		if img, err := pl.book.lastFrame.Image(); err == nil {
			p.img = img
			p.step.Screen = cache.Hash(img)
		}
	}
	switch name, _ := args["name"].(string); {
	case tool == "click_element" && pl.env.a11y != nil && pl.env.a11y.Found:
		findCtx, cancel := context.WithTimeout(ctx, findBound)
		defer cancel()
		if ctl, err := pl.env.a11y.App.Find(findCtx, name); err == nil {
			p.step.Control = &cache.Control{Name: pl.r.Redact(ctl.Name), Role: ctl.Role}
		}
	case pl.env.web != nil && args["target"] != nil:
		target, _ := args["target"].(string)
		if sel, found := pl.files.Scenario.CDPTargets[target]; found {
			callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
			defer cancel()
			if el, err := pl.env.web.Tab.Query(callCtx, sel); err == nil {
				p.step.Target = &cache.Target{Name: target, Found: el.Found, Text: truncate(pl.r.Redact(el.Text), maxQueryTextChars)}
			}
		}
	}
	return p
}

// cachedPlace is where a replayed grounded click clicks instead of asking
// the model to locate its target: the cached point, moved as far as its
// crop did. It is given once per replayed call; the click is still judged.
func (pl *planner) cachedPlace() (image.Point, bool) {
	ac := pl.cache
	if ac == nil || ac.replayed == nil || ac.replayed.Tool != "click_grounded" || ac.pending == nil || ac.pending.at == nil {
		return image.Point{}, false
	}
	at := *ac.pending.at
	ac.pending.at = nil
	return at, true
}

// cacheCall records a call that ran, with what it was made on, for the
// trajectory this run may store. Calls the guards stopped did nothing and
// are left out; record_verdict is kept as the trajectory's end, never as
// a call to replay.
func (pl *planner) cacheCall(tool string, args map[string]any, res result) {
	ac := pl.cache
	if ac == nil || ac.mode == cache.Off {
		return
	}
	if st := ac.replayed; st != nil {
		ac.replayed = nil
		if st.Status != "" && string(res.status) != st.Status {
			pl.fallBack(ac, fmt.Sprintf("the replayed call %s ended %s, the cached one %s", tool, res.status, st.Status))
		}
	}
	if !ac.mode.Writes() || ac.pending == nil {
		return
	}
	p := ac.pending
	ac.pending = nil
	if res.fail == failMalformed || res.fail == failRefused {
		return
	}
	if tool == "record_verdict" {
		verdict, _ := args["verdict"].(string)
		reason, _ := args["reason"].(string)
		ac.end = &cache.End{Verdict: verdict, Reason: pl.r.Redact(reason), Window: p.step.Window, Screen: p.step.Screen}
		return
	}
	// Arguments carry refs, never values; a call the model wrote a
	// secret into is not stored at all, and neither is its run.
	if redacted := events.RedactValue(args, pl.r.Redact); !reflect.DeepEqual(redacted, any(args)) {
		ac.unstorable = fmt.Sprintf("the arguments of %s held a secret value", tool)
		return
	}
	st := p.step
	st.Tool, st.Args, st.Status = tool, args, string(res.status)
	if tool == "click_grounded" && res.point != nil {
		st.Point = &cache.Point{X: res.point.X, Y: res.point.Y}
		// The crop is of the screen the call was chosen on, and is left
		// out when a secret may show on a screen: the mask may not cover
		// the crop's copy.
		if p.img != nil && !pl.env.onScreen.any() {
			if png, err := cache.Crop(p.img, image.Pt(st.Point.X, st.Point.Y)); err == nil {
				st.Crop = cache.CropName(ac.key, len(ac.steps)+1)
				ac.crops[st.Crop] = png
			}
		}
	}
	ac.steps = append(ac.steps, st)
}

// closeCache stores the trajectory of a run that passed (read-write), and
// publishes the run's account of the cache.
func (pl *planner) closeCache(verdict events.Verdict) {
	ac := pl.cache
	if ac == nil || ac.mode == cache.Off {
		return
	}
	cached := 0
	if ac.stored != nil {
		cached = len(ac.stored.Steps)
	}
	msg := fmt.Sprintf("%d hits, %d misses (of %d cached calls), %d model calls saved", ac.hits, ac.misses, cached, ac.saved())
	if ac.fellBackAt > 0 {
		msg += fmt.Sprintf("; fell back to the model at step %d", ac.fellBackAt)
	}
	passed := verdict == events.VerdictPass || verdict == events.VerdictPassConcerns
	stored := false
	switch {
	case !ac.mode.Writes():
		msg += "; read-only, nothing stored"
	case !passed:
		msg += "; the run did not pass, nothing stored"
	case pl.loop.iterations == 0:
		msg += "; the model planned nothing, the cache is unchanged"
	case ac.unstorable != "":
		msg += "; not stored: " + ac.unstorable
	default:
		t := cache.Trajectory{Key: ac.key, Scenario: pl.files.Scenario.Name, Stored: time.Now().UTC(), Steps: ac.steps, End: ac.end}
		if err := cache.Store(ac.dir, t, ac.crops); err != nil {
			pl.log("cache: %v", err)
			msg += "; storing it failed: " + err.Error()
			break
		}
		stored = true
		msg += fmt.Sprintf("; stored this run's %d calls in %s", len(ac.steps), ac.dir)
	}
	pl.publishCache(ac, msg, stored, true)
}

func (pl *planner) publishCache(ac *actionCache, msg string, stored, final bool) {
	cached := 0
	if ac.stored != nil {
		cached = len(ac.stored.Steps)
	}
	pl.bus.Publish(events.Event{Message: "action cache (" + string(ac.mode) + "): " + msg, Data: events.CacheReport{
		Mode: string(ac.mode), Cached: cached, Hits: ac.hits, Misses: ac.misses, FellBackAt: ac.fellBackAt,
		Saved: ac.saved(), Stored: stored, Final: final,
	}})
}

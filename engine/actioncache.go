package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"reflect"
	"time"

	"github.com/kasmrt/kasmrt/engine/cache"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/scenarios"
)

// actionCache is a goal run's use of the action cache (engine/cache): the
// stored trajectory it replays while the screen fits it, and the one this
// run records for the next.
type actionCache struct {
	mode     cache.Mode
	dir, key string
	// stored is the trajectory found for the scenario, nil when none;
	// next is the index of its next call to replay.
	stored *cache.Trajectory
	next   int
	// replaying is cleared at the first call that does not fit, and the
	// model plans from there.
	replaying bool
	hits      int
	misses    int
	// endSaved is set when the replay ended the loop as the cached run's
	// verdict did, which saves that turn too.
	endSaved   bool
	fellBackAt int
	// note is told the model with its first request after falling back.
	note string
	// replayed is the cached call being replayed now, nil when the model
	// chose the call.
	replayed *cache.Step
	// judged are the success criteria as the replay found them at the
	// cached verdict, which ended the loop; the run's judgement publishes
	// them rather than evaluating the criteria twice.
	judged []criterion

	// steps are this run's calls with what each was made on, crops their
	// grounded clicks' crops by file name, end the model's verdict.
	steps   []cache.Step
	crops   map[string][]byte
	end     *cache.End
	pending *pendingCall
	// unstorable says why this run's trajectory may not be stored.
	unstorable string
}

// pendingCall is what a call about to run was chosen on.
type pendingCall struct {
	step cache.Step
	img  image.Image
	// at is where a replayed grounded click's cached place is now, once
	// its crop was found.
	at *image.Point
}

// errReplayEnded ends the loop: the replay reached the end of the cached
// trajectory where the cached run's model recorded its verdict.
var errReplayEnded = errors.New("the action cache's trajectory ended with the model's verdict")

// replayDistance is how far, in pixels, a grounded click's crop may have
// moved and still be the same place.
const replayDistance = 24

// cacheMode is the run's cache mode: the command line's, else the
// operator file's.
func (s *runState) cacheMode() cache.Mode {
	name := s.r.opts.Cache
	if name == "" {
		name = s.files.Operator.Cache
	}
	m, err := cache.ParseMode(name)
	if err != nil {
		// Both are validated before anything launches.
		s.log("cache: %v; the cache is off", err)
	}
	return m
}

// CacheKey is the scenario's identity as the action cache keys it: its
// name, what it resolved to and the model profile's prompts, so a cached
// trajectory is replayed only for the same task asked the same way. The
// kasmrt version, the operator's budgets and the sample are left out: they
// do not change what the calls do.
func CacheKey(files *scenarios.Files) (string, error) {
	id, err := IdentityOf(files, Options{})
	if err != nil {
		return "", err
	}
	return canonicalSHA256(struct {
		Name, Resolved string
		Profile        ProfileHashes
	}{id.Scenario.Name, id.Scenario.ResolvedSHA256, id.Profile})
}

// openCache sets up the run's cache use as the loop starts.
func (s *runState) openCache() *actionCache {
	ac := &actionCache{mode: s.cacheMode(), crops: map[string][]byte{}}
	if ac.mode == cache.Off {
		return ac
	}
	key, err := CacheKey(s.files)
	if err != nil {
		s.log("cache: %v; the cache is off", err)
		ac.mode = cache.Off
		return ac
	}
	ac.key, ac.dir = key, cache.Dir(s.files.Scenario.File)
	stored, err := cache.Load(ac.dir, key)
	if err != nil {
		s.log("cache: %v; the model plans every call", err)
	}
	if stored == nil || len(stored.Steps) == 0 && stored.End == nil {
		ac.misses = 1
		s.publishCache(ac, "nothing is cached for this scenario; the model plans every call", false, false)
		return ac
	}
	ac.stored, ac.replaying = stored, true
	return ac
}

// plan is the loop's planner: the next turn is the action cache's next
// call while the screen still fits it, else the model's reply to a
// request built from the history, as the model's memory lets it see it
// (seen).
func (s *runState) plan(ctx context.Context, seen []model.Message) (model.Response, error) {
	if s.actionCache == nil {
		s.actionCache = s.openCache()
	}
	ac := s.actionCache
	// A replayed call the operator rejected never reached cacheCall.
	ac.replayed = nil
	if ac.replaying {
		resp, ok, err := s.replay(ctx)
		if ok {
			return resp, err
		}
	}
	m, op := s.model, s.files.Operator
	req := model.Request{System: m.profile.Prompt.Text, Messages: s.model.redactMessages(seen), Tools: s.model.modelTools(), Seed: s.model.seed(s.loop.iterations)}
	if ac.note != "" {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Text: s.r.Redact(ac.note)})
		ac.note = ""
	}
	req.Messages = fitContext(op.Model, req)
	s.bus.Publish(events.Event{Data: requestEvent(s.loop.iterations+1, req)})
	s.loop.iterations++
	resp, err := s.model.Turn(ctx, req)
	if err == nil && ac.mode.Writes() && len(resp.ToolCalls) == 1 {
		c := resp.ToolCalls[0]
		args, perr := parseArgs(c.Arguments)
		if perr == nil {
			ac.pending = s.madeOn(ctx, c.Name, args)
		}
	}
	return resp, err
}

// replay returns the cached next call as the model's turn when the screen
// fits it (ok), or ends the loop where the cached run's verdict did
// (errReplayEnded). When nothing fits it falls back to the model: ok is
// false and the model plans from here on.
func (s *runState) replay(ctx context.Context) (model.Response, bool, error) {
	ac := s.actionCache
	if ac.next == len(ac.stored.Steps) {
		end := ac.stored.End
		if end == nil {
			s.fallBack(ac, "the cached calls are done and the loop goes on")
			return model.Response{}, false, nil
		}
		now := s.madeOn(ctx, "record_verdict", nil)
		if why := fits(cache.Step{Window: end.Window, Screen: end.Screen}, now, ac.dir); why != "" {
			s.fallBack(ac, "before the cached verdict, "+why)
			return model.Response{}, false, nil
		}
		if why := s.cachedEndUnmet(ctx, ac); why != "" {
			s.fallBack(ac, why)
			return model.Response{}, false, nil
		}
		ac.endSaved, ac.replaying = true, false
		s.outcome.modelVerdict, s.outcome.modelReason = end.Verdict, end.Reason
		s.loop.ended = fmt.Sprintf("the action cache's trajectory ended where the model recorded its verdict (%s)", end.Verdict)
		return model.Response{}, true, errReplayEnded
	}
	st := ac.stored.Steps[ac.next]
	if _, listed := s.book.tools[st.Tool]; !listed {
		s.fallBack(ac, fmt.Sprintf("the cached call %s is not on this run's tool list", st.Tool))
		return model.Response{}, false, nil
	}
	now := s.madeOn(ctx, st.Tool, st.Args)
	if why := fits(st, now, ac.dir); why != "" {
		s.fallBack(ac, fmt.Sprintf("the cached call %s no longer fits: %s", st.Tool, why))
		return model.Response{}, false, nil
	}
	raw, err := json.Marshal(st.Args)
	if err != nil {
		s.fallBack(ac, fmt.Sprintf("the cached call %s cannot be encoded: %v", st.Tool, err))
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

// waitedFor is the perceptual hash of the screen the replayed wait's
// cached run ended its wait on: the screen the next cached call (or the
// verdict) was made on. A wait is how a model lets the app get somewhere,
// and the screen is what it saw there; a replay that gets there sooner
// goes on sooner, and one whose next call then ends otherwise than the
// cached one did hands planning to the model, as any replayed call does.
func (ac *actionCache) waitedFor() string {
	switch {
	case ac.replayed == nil || ac.stored == nil:
		return ""
	case ac.next < len(ac.stored.Steps):
		return ac.stored.Steps[ac.next].Screen
	case ac.stored.End != nil:
		return ac.stored.End.Screen
	}
	return ""
}

// cachedEndUnmet evaluates the success criteria where the cached run's
// model recorded its verdict, before the replay ends the loop there. A
// criterion that does not hold says why the model plans from here: the
// app is not where the goal wants it, and the model may still get it
// there. Otherwise the results are kept for the run's judgement. A
// window that differs from its baseline is kept as the verdict too: the
// look is the app's, not something the model plans around.
func (s *runState) cachedEndUnmet(ctx context.Context, ac *actionCache) string {
	if !s.judgesSuccess(ctx) {
		return ""
	}
	var judged []criterion
	s.check.evaluateSuccess(ctx, func(c criterion) { judged = append(judged, c) })
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
func (s *runState) turnSource() events.Source {
	if ac := s.actionCache; ac != nil && ac.replayed != nil {
		return events.SourceCache
	}
	return events.SourceModel
}

// fallBack hands planning to the model from the next step on.
func (s *runState) fallBack(ac *actionCache, why string) {
	ac.replaying = false
	ac.misses++
	ac.fellBackAt = s.book.stepN + 1
	ac.note = fmt.Sprintf("The calls so far were replayed from a cached run of this scenario. At this point %s, so you plan from here: observe the screen and carry on towards the goal.", why)
	s.publishCache(ac, fmt.Sprintf("fell back to the model at step %d after %d replayed calls: %s", ac.fellBackAt, ac.hits, why), false, false)
}

// madeOn reads what a call of tool with args is made on now: the focused
// window, where keys go, the screen's perceptual hash, and the control or
// page element the call names.
func (s *runState) madeOn(ctx context.Context, tool string, args map[string]any) *pendingCall {
	p := &pendingCall{}
	if s.env.desk != nil {
		if w, ok, err := s.env.desk.FocusedWindow(); err == nil && ok {
			p.step.Window = s.r.Redact(fmt.Sprintf("%q (%s)", w.Title, w.Class))
		}
	}
	if tool != "record_verdict" {
		_, where := s.env.destination(ctx, "")
		p.step.Focus = s.r.Redact(where)
	}
	if s.book.lastFrame != nil {
		if img, err := s.book.lastFrame.Image(); err == nil {
			p.img = img
			p.step.Screen = cache.Hash(img)
		}
	}
	switch name, _ := args["name"].(string); {
	case tool == "click_element" && s.env.a11y != nil && s.env.a11y.Found:
		findCtx, cancel := context.WithTimeout(ctx, findBound)
		defer cancel()
		if ctl, err := s.env.a11y.App.Find(findCtx, name); err == nil {
			p.step.Control = &cache.Control{Name: s.r.Redact(ctl.Name), Role: ctl.Role}
		}
	case s.env.web != nil && args["target"] != nil:
		target, _ := args["target"].(string)
		if sel, found := s.files.Scenario.CDPTargets[target]; found {
			callCtx, cancel := context.WithTimeout(ctx, cdpCallTimeout)
			defer cancel()
			if el, err := s.env.web.Tab.Query(callCtx, sel); err == nil {
				p.step.Target = &cache.Target{Name: target, Found: el.Found, Text: truncate(s.r.Redact(el.Text), maxQueryTextChars)}
			}
		}
	}
	return p
}

// fits says why the screen now does not fit a cached call, or "" when it
// does: the same focused window and focus, a screen within the perceptual
// bound, the named control or page element as it was, and a grounded
// click's crop near its point.
func fits(cached cache.Step, now *pendingCall, dir string) string {
	switch {
	case cached.Window != now.step.Window:
		return fmt.Sprintf("the focused window is %s, the cache's was %s", orNone(now.step.Window), orNone(cached.Window))
	case cached.Focus != "" && now.step.Focus != "" && cached.Focus != now.step.Focus:
		return fmt.Sprintf("keys go to %s, the cache's went to %s", now.step.Focus, cached.Focus)
	case (cached.Screen == "") != (now.step.Screen == ""):
		return "the screen was captured in one run and not in the other"
	}
	if cached.Screen != "" {
		if d := cache.Distance(cached.Screen, now.step.Screen); d < 0 || d > cache.MaxDistance {
			return fmt.Sprintf("the screen differs from the cache's (perceptual distance %d, at most %d fits)", d, cache.MaxDistance)
		}
	}
	if c := cached.Control; c != nil {
		if n := now.step.Control; n == nil || *n != *c {
			return fmt.Sprintf("the %s %q is not there", c.Role, c.Name)
		}
	}
	if t := cached.Target; t != nil {
		n := now.step.Target
		switch {
		case n == nil || n.Found != t.Found:
			return fmt.Sprintf("the cdp target %s is not as it was", t.Name)
		case n.Text != t.Text:
			return fmt.Sprintf("the cdp target %s reads %q, the cache's read %q", t.Name, n.Text, t.Text)
		}
	}
	if cached.Crop != "" && cached.Point != nil {
		crop, err := cache.ReadCrop(dir, cached.Crop)
		if err != nil {
			return err.Error()
		}
		if now.img == nil {
			return "there is no screen to find the grounded click's place on"
		}
		at, found, err := cache.FindCrop(now.img, crop, image.Pt(cached.Point.X, cached.Point.Y), replayDistance)
		if err != nil {
			return err.Error()
		}
		if !found {
			return fmt.Sprintf("the place the grounded click hit is not within %d pixels of %d,%d", replayDistance, cached.Point.X, cached.Point.Y)
		}
		now.at = &at
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// cachedPlace is where a replayed grounded click clicks instead of asking
// the model to locate its target: the cached point, moved as far as its
// crop did. It is given once per replayed call; the click is still judged.
func (s *runState) cachedPlace() (image.Point, bool) {
	ac := s.actionCache
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
func (s *runState) cacheCall(tool string, args map[string]any, res result) {
	ac := s.actionCache
	if ac == nil || ac.mode == cache.Off {
		return
	}
	if st := ac.replayed; st != nil {
		ac.replayed = nil
		if st.Status != "" && string(res.status) != st.Status {
			s.fallBack(ac, fmt.Sprintf("the replayed call %s ended %s, the cached one %s", tool, res.status, st.Status))
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
		ac.end = &cache.End{Verdict: verdict, Reason: s.r.Redact(reason), Window: p.step.Window, Screen: p.step.Screen}
		return
	}
	// Arguments carry refs, never values; a call the model wrote a
	// secret into is not stored at all, and neither is its run.
	if redacted := events.RedactValue(args, s.r.Redact); !reflect.DeepEqual(redacted, any(args)) {
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
		if p.img != nil && !s.env.onScreen.any() {
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
func (s *runState) closeCache(verdict events.Verdict) {
	ac := s.actionCache
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
	case s.loop.iterations == 0:
		msg += "; the model planned nothing, the cache is unchanged"
	case ac.unstorable != "":
		msg += "; not stored: " + ac.unstorable
	default:
		t := cache.Trajectory{Key: ac.key, Scenario: s.files.Scenario.Name, Stored: time.Now().UTC(), Steps: ac.steps, End: ac.end}
		if err := cache.Store(ac.dir, t, ac.crops); err != nil {
			s.log("cache: %v", err)
			msg += "; storing it failed: " + err.Error()
			break
		}
		stored = true
		msg += fmt.Sprintf("; stored this run's %d calls in %s", len(ac.steps), ac.dir)
	}
	s.publishCache(ac, msg, stored, true)
}

// saved is the model calls the replay saved.
func (ac *actionCache) saved() int {
	if ac.endSaved {
		return ac.hits + 1
	}
	return ac.hits
}

func (s *runState) publishCache(ac *actionCache, msg string, stored, final bool) {
	cached := 0
	if ac.stored != nil {
		cached = len(ac.stored.Steps)
	}
	s.bus.Publish(events.Event{Message: "action cache (" + string(ac.mode) + "): " + msg, Data: events.CacheReport{
		Mode: string(ac.mode), Cached: cached, Hits: ac.hits, Misses: ac.misses, FellBackAt: ac.fellBackAt,
		Saved: ac.saved(), Stored: stored, Final: final,
	}})
}

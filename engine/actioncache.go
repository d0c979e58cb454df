package engine

import (
	"errors"
	"fmt"
	"image"

	"github.com/kasmrt/kasmrt/engine/cache"
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

// saved is the model calls the replay saved.
func (ac *actionCache) saved() int {
	if ac.endSaved {
		return ac.hits + 1
	}
	return ac.hits
}

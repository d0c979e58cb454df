package engine

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// TestReplayedEventsMatchLive runs a real goal run (xterm in Xvfb, the
// model test server) and reads its events.jsonl back: every event must be
// the same Go value the sinks saw live — payload types, number types,
// arguments and all — so the console, the report and the replay can never
// read a field differently.
func TestReplayedEventsMatchLive(t *testing.T) {
	t.Parallel()
	r := loopRun(t, loopCase{script: []mt.Exchange{
		mt.Call("click", `{"target": "center"}`),
		loopObserve,
		mt.Call("type_text", `{"ref": "greeting"}`),
		mt.Call("wait", `{"seconds": 0.2}`),
		loopGoalMet,
	}})
	replayed, err := events.ReadFile(filepath.Join(r.dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(replayed) != len(r.events) {
		t.Fatalf("events.jsonl has %d events, the sinks saw %d", len(replayed), len(r.events))
	}
	kinds := map[events.Kind]bool{}
	for i, live := range r.events {
		live.T = live.T.Round(0) // JSON keeps no monotonic reading
		if d, ok := live.Data.(events.ScreenCaptured); ok {
			// The capture in memory is for a console in the run's
			// process; it is never written.
			if d.Pixels == nil {
				t.Errorf("event %d: a live screen event without its pixels", i+1)
			}
			d.Pixels = nil
			live.Data = d
		}
		if !reflect.DeepEqual(replayed[i], live) {
			t.Errorf("event %d (%s) replays as\n%#v\nlive it was\n%#v", i+1, live.Kind, replayed[i], live)
		}
		if live.Data != nil {
			kinds[live.Kind] = true
		}
	}
	for _, k := range []events.Kind{events.KindRunStarted, events.KindDisplayStarted, events.KindAppLaunched, events.KindAppWindow,
		events.KindScreen, events.KindModelRequest, events.KindModelReply, events.KindLoopEnded, events.KindRunEnded} {
		if !kinds[k] {
			t.Errorf("the run published no %s payload to compare", k)
		}
	}
}

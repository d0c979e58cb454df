package engine

import (
	"context"
	"image"
	"image/draw"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// TestGuardBookCheck holds the guard book to its rules on its own, without
// a run: an unknown tool and bad arguments are malformed, model input
// before an observation is refused, a declared tool past its budget fails,
// and the rest may run.
func TestGuardBookCheck(t *testing.T) {
	t.Parallel()
	click := scenarios.ToolSpec{Name: "click", NeedsObservation: true, ChangesScreen: true,
		Params: []scenarios.Param{{Name: "x", Type: "integer", Required: true}}}
	look := scenarios.ToolSpec{Name: "look", Observes: true}
	deploy := scenarios.ToolSpec{Name: "deploy", Declared: true, ChangesScreen: true}
	declared := map[string]scenarios.DeclaredTool{"deploy": {Budget: 2}}
	why := func(tool string) string { return " (" + tool + " is not offered here)" }
	tests := []struct {
		name     string
		observed bool
		calls    int
		c        call
		status   events.Status
		says     string
	}{
		{name: "unknown tool", c: call{Tool: "fly", Source: "model"}, status: events.StatusMalformed,
			says: `unknown tool "fly" (fly is not offered here); the tools available are: click, look, deploy`},
		{name: "bad arguments", observed: true, c: call{Tool: "click", Args: map[string]any{}, Source: "model"},
			status: events.StatusMalformed, says: "x"},
		{name: "model input before observing", c: call{Tool: "click", Args: map[string]any{"x": 1.0}, Source: "model"},
			status: events.StatusRefused, says: "call observe_screen"},
		{name: "model input after observing", observed: true, c: call{Tool: "click", Args: map[string]any{"x": 1.0}, Source: "model"}},
		{name: "scripted input needs no observation", c: call{Tool: "click", Args: map[string]any{"x": 1.0}, Source: "script"}},
		{name: "looking needs no observation", c: call{Tool: "look", Source: "model"}},
		{name: "declared tool within budget", calls: 1, c: call{Tool: "deploy", Source: "model"}},
		{name: "declared tool past budget", calls: 2, c: call{Tool: "deploy", Source: "model"},
			status: events.StatusError, says: "deploy has used its budget of 2 calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b guardBook
			b.setTools(Offers{}, []scenarios.ToolSpec{click, look, deploy}, func(s scenarios.ToolSpec) scenarios.ToolSpec { return s })
			b.observed = tt.observed
			b.declaredCalls = map[string]int{"deploy": tt.calls}
			res := b.check(tt.c, declared, why)
			if res.status != tt.status || !strings.Contains(res.message, tt.says) {
				t.Errorf("check = %q %q, want %q containing %q", res.status, res.message, tt.status, tt.says)
			}
		})
	}
}

// TestGuardBookObservationRecord checks what each kind of tool does to
// the observation record once it has run.
func TestGuardBookObservationRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		spec       scenarios.ToolSpec
		status     events.Status
		before     bool
		wantAfter  bool
		wantAction bool
	}{
		{"an observation completes it", scenarios.ToolSpec{Observes: true}, events.StatusOK, false, true, false},
		{"a failed observation does not", scenarios.ToolSpec{Observes: true}, events.StatusError, false, false, false},
		{"an action clears it", scenarios.ToolSpec{ChangesScreen: true}, events.StatusOK, true, false, true},
		{"a failed action clears it too", scenarios.ToolSpec{ChangesScreen: true}, events.StatusError, true, false, true},
		{"a wait is no action", scenarios.ToolSpec{ChangesScreen: true, Holds: true}, events.StatusOK, true, false, false},
		{"a report leaves it", scenarios.ToolSpec{}, events.StatusOK, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.spec.Name = "tool"
			b := guardBook{observed: tt.before, tools: map[string]scenarios.ToolSpec{"tool": tt.spec}}
			b.recordObservation(tt.spec, result{status: tt.status})
			if b.observed != tt.wantAfter {
				t.Errorf("observed = %v, want %v", b.observed, tt.wantAfter)
			}
			if got := b.isAction("tool"); got != tt.wantAction {
				t.Errorf("isAction = %v, want %v", got, tt.wantAction)
			}
		})
	}
}

// TestGuardBookOverBudget checks the loop's two bounds on the guard book:
// declared-tool failures in a row and the time held waiting, each off at 0.
func TestGuardBookOverBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		errors        int
		held          time.Duration
		maxErrors     int
		maxHoldS      float64
		wantSubstring string
	}{
		{"within both", 2, time.Second, 3, 2, ""},
		{"failures reach the bound", 3, 0, 3, 2, "3 declared-tool failures in a row (runner.max_tool_errors = 3)"},
		{"hold reaches the bound", 0, 2 * time.Second, 3, 2, "the waiting tools used the 2s budget"},
		{"no bounds", 100, time.Hour, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := guardBook{consecutiveToolErrors: tt.errors, held: tt.held}
			got := b.overBudget(tt.maxErrors, tt.maxHoldS)
			if (tt.wantSubstring == "") != (got == "") || !strings.Contains(got, tt.wantSubstring) {
				t.Errorf("overBudget = %q, want %q", got, tt.wantSubstring)
			}
		})
	}
}

// TestGuardBookHold checks the waiting budget: a used-up budget runs
// nothing, a wait longer than what is left is cut to it, and the time a
// wait took is added to the time held.
func TestGuardBookHold(t *testing.T) {
	t.Parallel()
	b := guardBook{held: 2 * time.Second}
	ran := false
	res := b.hold(context.Background(), 2*time.Second, time.Second, func(context.Context) result { ran = true; return ok("") })
	if ran || res.status != events.StatusError || !strings.Contains(res.message, "is used up") {
		t.Errorf("a used-up budget: ran = %v, result %q %q", ran, res.status, res.message)
	}
	b = guardBook{held: time.Second}
	var cut bool
	res = b.hold(context.Background(), 2*time.Second, time.Hour, func(ctx context.Context) result {
		_, cut = ctx.Deadline()
		return ok("waited")
	})
	if !cut || res.message != "waited" {
		t.Errorf("a wait past the budget: cut = %v, result %q", cut, res.message)
	}
	if b.held <= time.Second {
		t.Errorf("held = %v: the wait's time was not added", b.held)
	}
	b = guardBook{}
	b.hold(context.Background(), 0, time.Hour, func(ctx context.Context) result {
		_, cut = ctx.Deadline()
		return ok("")
	})
	if cut {
		t.Error("no budget (0) cut the wait")
	}
}

// TestOnlyCursorBlinked tells a text cursor's blink from a change: a
// difference in a box at most 3 pixels wide and 64 tall, and nothing else.
func TestOnlyCursorBlinked(t *testing.T) {
	t.Parallel()
	screen := func(boxes ...image.Rectangle) *image.RGBA {
		img := image.NewRGBA(image.Rect(0, 0, 320, 200))
		draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
		for _, b := range boxes {
			draw.Draw(img, b, image.Black, image.Point{}, draw.Src)
		}
		return img
	}
	caret := image.Rect(40, 20, 42, 38)
	tests := []struct {
		name string
		a, b *image.RGBA
		want bool
	}{
		{"the same screen", screen(), screen(), false},
		{"a cursor appeared", screen(), screen(caret), true},
		{"a cursor went", screen(caret), screen(), true},
		{"a tall cursor in a large font", screen(), screen(image.Rect(40, 20, 43, 84)), true},
		{"a letter typed (4 pixels wide)", screen(), screen(image.Rect(40, 20, 44, 38)), false},
		{"taller than a line", screen(), screen(image.Rect(40, 20, 41, 85)), false},
		{"the cursor moved on", screen(caret), screen(caret.Add(image.Pt(8, 0))), false},
		{"two changes far apart", screen(), screen(image.Rect(40, 20, 41, 21), image.Rect(40, 150, 41, 151)), false},
		{"another size", screen(), image.NewRGBA(image.Rect(0, 0, 320, 201)), false},
	}
	for _, tt := range tests {
		if got := onlyCursorBlinked(tt.a, tt.b); got != tt.want {
			t.Errorf("%s: onlyCursorBlinked = %v, want %v", tt.name, got, tt.want)
		}
	}
}

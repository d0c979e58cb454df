package atspi

import (
	"context"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
)

func (a App) focusWalks() int {
	a.cache.mu.Lock()
	defer a.cache.mu.Unlock()
	return a.cache.focusWalks
}

func (a App) windowsKnown() int {
	a.cache.windows.mu.Lock()
	defer a.cache.windows.mu.Unlock()
	return len(a.cache.windows.of)
}

// TestCacheFollowsFocusAndWindows: a cache answers the focused accessible
// from the application's focus events and the window of each control from
// what an earlier climb found (one by one and all at once, WindowsOf), and
// each answer is the one a walk of the tree (an App without a cache)
// gives: after the window takes the focus,
// after Tab moves it, and after a control is removed and another added,
// which makes the cache forget the windows.
func TestCacheFollowsFocusAndWindows(t *testing.T) {
	t.Parallel()
	d := newDesktop(t)
	p := d.launch(t, "/usr/bin/python3", "testdata/changing-controls.py")
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	plain := found.App
	app, err := plain.Cached(ctx)
	if err != nil {
		t.Fatalf("Cached: %v", err)
	}
	time.Sleep(registrationLag)
	x, err := x11.Dial(d.display)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	win, err := x.FindWindow(ctx, x11.WindowMatch{PID: p.PID()})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Focus(win); err != nil {
		t.Fatal(err)
	}

	// sameFocus waits until the cache's answer names want and is the
	// walk's.
	sameFocus := func(want string) {
		t.Helper()
		var got, walked Accessible
		for ctx.Err() == nil {
			var ok, wok bool
			got, ok, err = app.Focused(ctx)
			if err != nil {
				t.Fatalf("Focused: %v", err)
			}
			walked, wok, err = plain.Focused(ctx)
			if err != nil {
				t.Fatalf("Focused without a cache: %v", err)
			}
			if ok && wok && got.Name == want && got.node == walked.node && got.Role == walked.Role && got.Extents == walked.Extents {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("the cache says %q (%s) has the focus, the walk %q (%s); want %q", got.Name, got.Role, walked.Name, walked.Role, want)
	}
	// sameWindows checks every control's window, one by one and all at
	// once (WindowsOf), against a climb that remembers nothing.
	sameWindows := func(controls []Control) {
		t.Helper()
		all, errs := WindowsOf(ctx, controls)
		for i, c := range controls {
			if c.windows == nil {
				t.Fatalf("the cached control %q does not remember its window", c.Name)
			}
			got, err := c.WindowExtents(ctx)
			if err != nil || errs[i] != nil {
				t.Fatal(err, errs[i])
			}
			bare := c
			bare.windows = nil
			want, err := bare.WindowExtents(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || all[i] != want || got.Empty() {
				t.Errorf("the window of %q is %v from the memo, %v asked with the others, %v climbing", c.Name, got, all[i], want)
			}
		}
	}

	sameFocus("Alpha")
	walks := app.focusWalks()
	for range 5 {
		sameFocus("Alpha")
	}
	if n := app.focusWalks() - walks; n != 0 {
		t.Errorf("five reads of an unchanged focus walked the tree %d times, want none", n)
	}
	if err := x.PressKey(ctx, "Tab"); err != nil {
		t.Fatal(err)
	}
	// While the focus moves the events may leave it unknown for a moment
	// (Alpha's loss announced before Beta's gain), and a read then walks;
	// once it is on Beta, the events name it.
	sameFocus("Beta")
	walks = app.focusWalks()
	for range 5 {
		sameFocus("Beta")
	}
	if n := app.focusWalks() - walks; n != 0 {
		t.Errorf("five reads of the focus on Beta walked the tree %d times, want none", n)
	}

	controls := waitNames(t, app, []string{"Alpha", "Beta", "Change"}, nil)
	sameWindows(controls)
	if app.windowsKnown() == 0 {
		t.Fatal("the climbs to the controls' window left nothing in the memo")
	}
	change, err := FindControl(controls, "Change")
	if err != nil {
		t.Fatal(err)
	}
	if err := change.Click(ctx); err != nil {
		t.Fatal(err)
	}
	controls = waitNames(t, app, []string{"Gamma", "Change"}, []string{"Beta"})
	if n := app.windowsKnown(); n != 0 {
		t.Errorf("the memo still knows %d windows after the tree changed shape", n)
	}
	sameWindows(controls)
}

package atspi

import (
	"context"
	"slices"
	"testing"
	"time"
)

// cachedApp launches argv on a fresh desktop and returns its application
// with a control cache, once the controls in want are published.
func cachedApp(t *testing.T, want []string, argv ...string) App {
	t.Helper()
	d := newDesktop(t)
	p := d.launch(t, argv...)
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	waitControls(t, found.App, want...)
	app, err := found.App.Cached(ctx)
	if err != nil {
		t.Fatalf("Cached: %v", err)
	}
	// Reads keep nothing until the toolkit has surely begun sending.
	time.Sleep(registrationLag)
	return app
}

// waitNames reads the cached controls until they hold every name in want
// and none in gone, and returns them.
func waitNames(t *testing.T, app App, want, gone []string) []Control {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last []string
	for {
		controls, err := app.Controls(ctx)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("Controls: %v", err)
		}
		names := Names(controls)
		if err == nil && hasAll(controls, want) && !slices.ContainsFunc(gone, func(n string) bool { return slices.Contains(names, n) }) {
			return controls
		}
		if err == nil {
			last = names
		}
		select {
		case <-ctx.Done():
			t.Fatalf("controls %q (want %q, without %q)", last, want, gone)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (a App) cachedWalks() int {
	a.cache.mu.Lock()
	defer a.cache.mu.Unlock()
	return a.cache.walks
}

// TestCacheFollowsChanges reads a GTK window's controls from the cache,
// then changes them from inside the application: a control that appears,
// one that is renamed and one that is removed must all be seen, and reads
// in between must come from the cache.
func TestCacheFollowsChanges(t *testing.T) {
	t.Parallel()
	app := cachedApp(t, []string{"Alpha", "Beta", "Change"}, "/usr/bin/python3", "testdata/changing-controls.py")
	controls := waitNames(t, app, []string{"Alpha", "Beta", "Change"}, nil)
	walks := app.cachedWalks()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 5 {
		again, err := app.Controls(ctx)
		if err != nil {
			t.Fatalf("Controls: %v", err)
		}
		if !slices.Equal(Names(again), Names(controls)) {
			t.Fatalf("controls changed by themselves: %q, then %q", Names(controls), Names(again))
		}
	}
	if got := app.cachedWalks(); got != walks {
		t.Errorf("five reads of an unchanged window walked its tree %d times, want none", got-walks)
	}
	click := func(name string) {
		t.Helper()
		c, err := FindControl(controls, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Click(ctx); err != nil {
			t.Fatalf("click %s: %v", name, err)
		}
	}
	click("Rename")
	controls = waitNames(t, app, []string{"Alpha renamed", "Beta", "Change"}, []string{"Alpha"})
	click("Change")
	after := waitNames(t, app, []string{"Alpha renamed", "Gamma", "Change"}, []string{"Alpha", "Beta"})
	gamma, _ := FindControl(after, "Gamma")
	if gamma.Extents.Empty() || !gamma.Extents.In(screen) {
		t.Errorf("Gamma's extents %v are not on the screen", gamma.Extents)
	}
}

// TestCacheFollowsPageSwitch switches gtk3-widget-factory to its second
// page through the cache: the second page's controls must appear and the
// first page's go, including the cells of the first page's tree view,
// whose toolkit announces no changes of its children.
func TestCacheFollowsPageSwitch(t *testing.T) {
	t.Parallel()
	app := cachedApp(t, []string{"Page 2", "checkbutton"}, "gtk3-widget-factory")
	page1 := waitNames(t, app, []string{"Page 2", "checkbutton", "Andrea"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	page2, err := FindControl(page1, "Page 2")
	if err != nil {
		t.Fatal(err)
	}
	if err := page2.Click(ctx); err != nil {
		t.Fatalf("click Page 2: %v", err)
	}
	waitNames(t, app, []string{"Page 1", "Expander", "Add item"}, []string{"checkbutton", "togglebutton", "Andrea"})
}

// TestCacheFollowsQt shows speedcrunch's keypad (Qt 5) through its View
// menu once the cache is past its start: Qt sends only the events a
// client registered for, so the keypad's buttons are seen only if the
// registration took.
func TestCacheFollowsQt(t *testing.T) {
	t.Parallel()
	requireBinaries(t, "speedcrunch")
	d := newDesktop(t)
	// A fresh HOME: speedcrunch remembers whether its keypad was shown.
	d.env = append(d.env, "QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1", "HOME="+t.TempDir())
	p := d.launch(t, "speedcrunch")
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	app, err := found.App.Cached(ctx)
	if err != nil {
		t.Fatalf("Cached: %v", err)
	}
	controls := waitNames(t, app, []string{"View"}, []string{"7"})
	time.Sleep(registrationLag)
	// A read past the start is kept, so the reads below are answered by
	// what the events say.
	controls = waitNames(t, app, []string{"View"}, []string{"7"})
	walks := app.cachedWalks()
	for _, name := range []string{"View", "Keypad"} {
		c, err := FindControl(controls, name)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Click(ctx); err != nil {
			t.Fatalf("click %s: %v", name, err)
		}
		controls = waitNames(t, app, []string{name}, nil)
		if name == "View" {
			controls = waitNames(t, app, []string{"Keypad"}, nil)
		}
	}
	waitNames(t, app, []string{"7", "+", "="}, nil)
	if app.cachedWalks() == walks {
		t.Error("the keypad was seen without a walk")
	}
}

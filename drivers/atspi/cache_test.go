package atspi

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// cachedApp launches argv on a fresh desktop and returns its application
// with a control cache, once the controls in want are published.
func cachedApp(t *testing.T, want []string, argv ...string) App {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	app, err := launched(t, want, argv...).Cached(ctx)
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

func (a App) cachedTableWalks() int {
	a.cache.mu.Lock()
	defer a.cache.mu.Unlock()
	return a.cache.tableWalks
}

// namesOfRole lists the names of the controls of role, in order.
func namesOfRole(controls []Control, role string) []string {
	var names []string
	for _, c := range controls {
		if c.Role == role {
			names = append(names, c.Name)
		}
	}
	return names
}

// TestCacheFollowsTreeView changes the rows of a GTK 3 tree view, whose
// toolkit announces no children changes of it, through the cache: reads of
// an unchanged window walk nothing, a row added, renamed, removed or the
// rows sorted are seen, and only the tree view is walked again.
func TestCacheFollowsTreeView(t *testing.T) {
	t.Parallel()
	app := cachedApp(t, []string{"Add row", "Row 1"}, "/usr/bin/python3", "testdata/tree-view.py")
	controls := waitNames(t, app, []string{"Row 1", "Row 2", "Row 3"}, nil)
	walks, tableWalks := app.cachedWalks(), app.cachedTableWalks()
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
	if w, tw := app.cachedWalks()-walks, app.cachedTableWalks()-tableWalks; w != 0 || tw != 0 {
		t.Errorf("five reads of an unchanged window walked it %d times and its tree view %d times, want none", w, tw)
	}
	for _, step := range []struct {
		click string
		rows  []string
	}{
		{"Add row", []string{"Row 1", "Row 2", "Row 3", "Row 4"}},
		{"Rename row", []string{"Renamed row", "Row 2", "Row 3", "Row 4"}},
		{"Remove row", []string{"Row 2", "Row 3", "Row 4"}},
		{"Sort", []string{"Row 4", "Row 3", "Row 2"}},
	} {
		// Each change must be seen from its own events, not from a walk
		// that an earlier change left to do.
		waitSettled(t, app)
		c, err := FindControl(controls, step.click)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Click(ctx); err != nil {
			t.Fatalf("click %s: %v", step.click, err)
		}
		controls = waitRows(t, app, step.rows)
	}
	if w := app.cachedWalks() - walks; w != 0 {
		t.Errorf("changes of the tree view's rows walked the whole window %d times, want none", w)
	}
}

// waitSettled reads the cached controls until a read walks nothing: the
// events of the last change have been applied and its walks kept.
func waitSettled(t *testing.T, app App) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		walks, tableWalks := app.cachedWalks(), app.cachedTableWalks()
		if _, err := app.Controls(ctx); err != nil {
			t.Fatalf("Controls: %v", err)
		}
		if app.cachedWalks() == walks && app.cachedTableWalks() == tableWalks {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("every read walks: the cache never keeps what it walked")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitRows reads the cached controls until the tree view's cells are rows,
// in order, and returns them.
func waitRows(t *testing.T, app App, rows []string) []Control {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last []string
	for {
		controls, err := app.Controls(ctx)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("Controls: %v", err)
		}
		if err == nil {
			last = namesOfRole(controls, "table cell")
			if slices.Equal(last, rows) {
				return controls
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tree view rows %q, want %q", last, rows)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestCacheFollowsScroll scrolls a GTK 3 tree view to its last row
// through the cache, with a few rows and with thousands: the rows
// scrolled out of view must no longer be offered and the last row must be,
// on the screen. A scroll announces no change of the cells, only of the
// scroll bar's value.
func TestCacheFollowsScroll(t *testing.T) {
	t.Parallel()
	for _, rows := range []int{30, 5000} {
		t.Run(fmt.Sprint(rows), func(t *testing.T) {
			t.Parallel()
			app := cachedApp(t, []string{"Scroll", "Row 1"}, "/usr/bin/python3", "testdata/tree-view.py", "--rows", fmt.Sprint(rows))
			last := fmt.Sprintf("Row %d", rows)
			controls := waitNames(t, app, []string{"Row 1", "Row 2"}, []string{last})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			scroll, err := FindControl(controls, "Scroll")
			if err != nil {
				t.Fatal(err)
			}
			if err := scroll.Click(ctx); err != nil {
				t.Fatalf("click Scroll: %v", err)
			}
			controls = waitNames(t, app, []string{last}, []string{"Row 1", "Row 2"})
			for _, c := range controls {
				if !c.Extents.In(screen) {
					t.Errorf("%s %q is offered at %v, off the screen", c.Role, c.Name, c.Extents)
				}
			}
			if cells := namesOfRole(controls, "table cell"); len(cells) > 40 {
				t.Errorf("%d rows offered of a view that shows about a dozen: %q", len(cells), cells)
			}
			// A walk without the cache offers the same rows.
			walked, err := app.ControlsWithin(ctx, Limits{})
			if err != nil {
				t.Fatalf("ControlsWithin: %v", err)
			}
			if got, want := namesOfRole(walked, "table cell"), namesOfRole(controls, "table cell"); !slices.Equal(got, want) {
				t.Errorf("a walk offers the rows %q, the cache %q", got, want)
			}
		})
	}
}

// TestCacheFollowsDialog opens gtk3-widget-factory's font chooser through
// the cache and cancels it: the dialog's buttons and its list of fonts
// must appear, then go with the dialog.
func TestCacheFollowsDialog(t *testing.T) {
	t.Parallel()
	app := cachedApp(t, []string{"Sans Regular"}, "gtk3-widget-factory")
	controls := waitNames(t, app, []string{"Sans Regular", "Page 2"}, []string{"Select", "Cancel"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	font, err := FindControl(controls, "Sans Regular")
	if err != nil {
		t.Fatal(err)
	}
	if err := font.Click(ctx); err != nil {
		t.Fatalf("click Sans Regular: %v", err)
	}
	controls = waitNames(t, app, []string{"Select", "Cancel", "Sans Bold"}, nil)
	cancelButton, err := FindControl(controls, "Cancel")
	if err != nil {
		t.Fatal(err)
	}
	if err := cancelButton.Click(ctx); err != nil {
		t.Fatalf("click Cancel: %v", err)
	}
	waitNames(t, app, []string{"Sans Regular", "Page 2"}, []string{"Select", "Cancel", "Sans Bold"})
}

// TestCacheFollowsGTK4 switches gnome-calculator (GTK 4, its own AT-SPI
// implementation) to its advanced mode through the cache: the mode
// menu's items must appear, then the mode button's new name and the
// advanced keypad, and the menu's items must go.
func TestCacheFollowsGTK4(t *testing.T) {
	t.Parallel()
	app, err := calculator(t).Cached(context.Background())
	if err != nil {
		t.Fatalf("Cached: %v", err)
	}
	time.Sleep(registrationLag)
	controls := waitNames(t, app, []string{"Basic", "7"}, []string{"Advanced", "sin"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, step := range []struct {
		click      string
		want, gone []string
	}{
		{"Basic", []string{"Advanced", "Financial", "Programming"}, []string{"sin"}},
		{"Advanced", []string{"sin", "cos", "7"}, []string{"Basic", "Financial", "Programming"}},
	} {
		c, err := FindControl(controls, step.click)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Click(ctx); err != nil {
			t.Fatalf("click %s: %v", step.click, err)
		}
		controls = waitNames(t, app, step.want, step.gone)
	}
}

// TestCacheZenityList reads a zenity list of thousands of rows (a GTK 3
// tree view in a Debian program) through the cache: the rows in view are
// offered, reads of the unchanged dialog walk nothing, and once the dialog
// is cancelled and gone no read offers its controls.
func TestCacheZenityList(t *testing.T) {
	t.Parallel()
	argv := []string{"zenity", "--list", "--column=Name", "--width=400", "--height=500"}
	for i := 1; i <= 3000; i++ {
		argv = append(argv, fmt.Sprintf("Item %d", i))
	}
	app := cachedApp(t, []string{"Cancel", "Item 1"}, argv...)
	controls := waitNames(t, app, []string{"Cancel", "OK", "Item 1", "Item 2"}, []string{"Item 3000"})
	walks, tableWalks := app.cachedWalks(), app.cachedTableWalks()
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
	if w, tw := app.cachedWalks()-walks, app.cachedTableWalks()-tableWalks; w != 0 || tw != 0 {
		t.Errorf("five reads of an unchanged dialog walked it %d times and its list %d times, want none", w, tw)
	}
	c, err := FindControl(controls, "Cancel")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Click(ctx); err != nil {
		t.Fatalf("click Cancel: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		controls, err := app.Controls(ctx)
		if err != nil {
			break // the application is gone, and says so
		}
		if slices.ContainsFunc(controls, func(c Control) bool { return c.Name == "Cancel" || c.Name == "Item 1" }) {
			if time.Now().After(deadline) {
				t.Fatalf("the cancelled dialog's controls are still offered: %q", Names(controls))
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		break
	}
}

package atspi

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

// widgetFactory starts gtk3-widget-factory, the largest GTK demo at hand,
// and waits until its window's controls are published.
func widgetFactory(tb testing.TB) App {
	tb.Helper()
	d := newDesktop(tb)
	p := d.launch(tb, "gtk3-widget-factory")
	b := d.connect(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		tb.Fatalf("Discover: %v", err)
	}
	waitControls(tb, found.App, "Page 1", "checkbutton")
	return found.App
}

func TestWidgetFactoryControls(t *testing.T) {
	t.Parallel()
	app := widgetFactory(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	controls, err := app.Controls(ctx)
	if err != nil {
		t.Fatalf("Controls: %v", err)
	}
	roles := map[string]int{}
	for _, c := range controls {
		roles[c.Role]++
		if c.Name == "" || len(c.Actions) == 0 {
			t.Errorf("control %+v has no name or no action", c)
		}
	}
	// The first page of the factory shows push, toggle, check and radio
	// buttons and a small tree view whose cells are controls; a walk that
	// misses a kind has pruned too much.
	for _, role := range []string{"push button", "toggle button", "check box", "radio button", "table cell"} {
		if roles[role] == 0 {
			t.Errorf("no %s among %d controls (roles %v)", role, len(controls), roles)
		}
	}
	// The pipelined walk must find what a one-request-at-a-time walk finds.
	serial, _, err := app.walk(ctx, Limits{}.withDefaults(), 1, rulesFor(app.Toolkit).isCandidate)
	if err != nil {
		t.Fatalf("serial walk: %v", err)
	}
	piped, visited, err := app.walk(ctx, Limits{}.withDefaults(), 0, rulesFor(app.Toolkit).isCandidate)
	if err != nil {
		t.Fatalf("pipelined walk: %v", err)
	}
	if len(serial) != len(piped) {
		t.Errorf("serial walk found %d candidates, pipelined %d", len(serial), len(piped))
	}
	t.Logf("%d accessibles visited, %d candidates, %d controls, roles %v", visited, len(piped), len(controls), roles)

	// Limits bound the walk.
	few, visitedFew, err := app.walk(ctx, Limits{MaxNodes: 20, MaxDepth: 64}, 0, rulesFor(app.Toolkit).isCandidate)
	if err != nil {
		t.Fatalf("bounded walk: %v", err)
	}
	if visitedFew > 20 || len(few) > len(piped) {
		t.Errorf("bounded walk visited %d accessibles, found %d candidates; want at most 20", visitedFew, len(few))
	}
}

// BenchmarkControls measures a full Controls call (walk plus extents and
// actions of the candidates) on gtk3-widget-factory.
func BenchmarkControls(b *testing.B) { benchControls(b, widgetFactory(b)) }

// BenchmarkCachedControls measures Controls answered from the cache after
// the first walk, on gtk3-widget-factory (GTK 3, with a small tree view),
// gnome-calculator (GTK 4), a zenity list of 3,000 rows and a GTK 3 tree
// view of 5,000: one round trip to the application, which also asks each
// table for its child count.
func BenchmarkCachedControls(b *testing.B) {
	for _, start := range []struct {
		name string
		app  func(testing.TB) App
	}{
		{"gtk3-widget-factory", widgetFactory},
		{"gnome-calculator", calculator},
		{"zenity-list-3000", zenityList},
		{"tree-view-5000", func(tb testing.TB) App {
			return launched(tb, []string{"Row 1"}, "/usr/bin/python3", "testdata/tree-view.py", "--rows", "5000")
		}},
	} {
		b.Run(start.name, func(b *testing.B) {
			ctx := context.Background()
			app, err := start.app(b).Cached(ctx)
			if err != nil {
				b.Fatalf("Cached: %v", err)
			}
			time.Sleep(registrationLag)
			if _, err := app.Controls(ctx); err != nil {
				b.Fatal(err)
			}
			walks, tableWalks := app.cachedWalks(), app.cachedTableWalks()
			benchControls(b, app)
			b.ReportMetric(float64(app.cachedWalks()-walks)/float64(b.N), "walks/op")
			b.ReportMetric(float64(app.cachedTableWalks()-tableWalks)/float64(b.N), "table-walks/op")
			b.ReportMetric(float64(len(app.cache.tables)), "tables")
		})
	}
}

// BenchmarkDiscardedCachedRead measures a cached read of
// gtk3-widget-factory after a change that discards every list (a window
// opened): the full walk, with its table walked on its own.
func BenchmarkDiscardedCachedRead(b *testing.B) {
	ctx := context.Background()
	app, err := widgetFactory(b).Cached(ctx)
	if err != nil {
		b.Fatalf("Cached: %v", err)
	}
	time.Sleep(registrationLag)
	var n int
	for b.Loop() {
		app.cache.invalidate()
		controls, err := app.Controls(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n = len(controls)
	}
	b.ReportMetric(float64(n), "controls")
}

// zenityList starts a zenity list dialog of 3,000 rows and waits until its
// first rows are published.
func zenityList(tb testing.TB) App {
	argv := []string{"zenity", "--list", "--column=Name", "--width=400", "--height=500"}
	for i := 1; i <= 3000; i++ {
		argv = append(argv, fmt.Sprintf("Item %d", i))
	}
	return launched(tb, []string{"OK", "Item 1"}, argv...)
}

// launched starts argv on a fresh desktop and waits until the controls in
// want are published.
func launched(tb testing.TB, want []string, argv ...string) App {
	tb.Helper()
	d := newDesktop(tb)
	p := d.launch(tb, argv...)
	b := d.connect(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		tb.Fatalf("Discover: %v", err)
	}
	waitControls(tb, found.App, want...)
	return found.App
}

// BenchmarkWalk compares the pipelined walk with one that waits for each
// accessible's replies before asking about the next.
func BenchmarkWalk(b *testing.B) {
	app := widgetFactory(b)
	ctx := context.Background()
	for _, bm := range []struct {
		name  string
		batch int
	}{{"serial", 1}, {"pipelined", 0}} {
		b.Run(bm.name, func(b *testing.B) {
			var visited int
			for b.Loop() {
				var err error
				_, visited, err = app.walk(ctx, Limits{}.withDefaults(), bm.batch, rulesFor(app.Toolkit).isCandidate)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(visited), "nodes")
		})
	}
}

// BenchmarkFocused measures finding the focused accessible of the largest
// GTK demo, the check type_text makes before typing a secret bound to a
// role.
func BenchmarkFocused(b *testing.B) {
	app := widgetFactory(b)
	ctx := context.Background()
	for b.Loop() {
		if _, _, err := app.Focused(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// calculator starts gnome-calculator (GTK 4, its own AT-SPI backend) and
// waits until its keypad is published.
func calculator(tb testing.TB) App {
	tb.Helper()
	d := newDesktop(tb)
	p := d.launch(tb, "gnome-calculator")
	b := d.connect(tb)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		tb.Fatalf("Discover: %v", err)
	}
	waitControls(tb, found.App, "7", "+", "2", "=")
	return found.App
}

// BenchmarkCalculatorControls measures a full Controls call on
// gnome-calculator, whose GTK 4 tree gives every widget an action
// interface, so the walk describes far more candidates than on GTK 3.
func BenchmarkCalculatorControls(b *testing.B) { benchControls(b, calculator(b)) }

// benchControls times app's full Controls call and reports how many
// controls it found.
func benchControls(b *testing.B, app App) {
	ctx := context.Background()
	var n int
	for b.Loop() {
		controls, err := app.Controls(ctx)
		if err != nil {
			b.Fatal(err)
		}
		n = len(controls)
	}
	b.ReportMetric(float64(n), "controls")
}

// BenchmarkDiscover measures discovery as a run sees it: from launching the
// application to Discover returning its controls (the toolkit's start-up,
// its registration and the first walks). Run it with a small -benchtime
// such as 5x: every iteration starts the application afresh.
func BenchmarkDiscover(b *testing.B) {
	for _, app := range []string{"gtk3-widget-factory", "gnome-calculator", "zenity"} {
		b.Run(app, func(b *testing.B) {
			argv := []string{app}
			if app == "zenity" {
				argv = []string{"zenity", "--question", "--text=Proceed?"}
			}
			d := newDesktop(b)
			bus := d.connect(b)
			var n int
			for b.Loop() {
				p, err := proc.Start(context.Background(), proc.Spec{Argv: argv, Env: d.env, Output: &tail{}})
				if err != nil {
					b.Fatalf("launch %s: %v", app, err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				found, err := bus.Discover(ctx, p.PID(), DiscoverOptions{})
				cancel()
				p.Stop(time.Second)
				if err != nil {
					b.Fatalf("Discover: %v", err)
				}
				n = len(found.Controls)
			}
			b.ReportMetric(float64(n), "controls")
		})
	}
}

// BenchmarkCalculatorWindows measures finding the window of each of
// gnome-calculator's controls (GTK 4 reports extents in window
// coordinates, so the run places every control by its window): climbing
// from each control in turn with nothing remembered (as every read did
// before the memo), one control after the other from the cache's memo,
// and all at once (WindowsOf: the memo, one question per window).
func BenchmarkCalculatorWindows(b *testing.B) {
	app, err := calculator(b).Cached(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(registrationLag)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	controls, err := app.Controls(ctx)
	if err != nil {
		b.Fatal(err)
	}
	bare := slices.Clone(controls)
	for i := range bare {
		bare[i].windows = nil
	}
	each := func(cs []Control) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				for _, c := range cs {
					if _, err := c.WindowExtents(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	}
	b.Run("climbing", each(bare))
	b.Run("memo", each(controls))
	b.Run("at-once", func(b *testing.B) {
		for b.Loop() {
			if _, errs := WindowsOf(ctx, controls); errs[0] != nil {
				b.Fatal(errs[0])
			}
		}
	})
}

// BenchmarkCalculatorFocused measures finding gnome-calculator's focused
// accessible (the action cache's fit check reads it before every replayed
// call): by a walk of the tree, and from the focus events a cache follows.
func BenchmarkCalculatorFocused(b *testing.B) {
	plain := calculator(b)
	cached, err := plain.Cached(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(registrationLag)
	ctx := context.Background()
	for _, bench := range []struct {
		name string
		app  App
	}{{"walk", plain}, {"events", cached}} {
		b.Run(bench.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok, err := bench.app.Focused(ctx); err != nil || !ok {
					b.Fatalf("Focused: %v, %v", ok, err)
				}
			}
		})
	}
}

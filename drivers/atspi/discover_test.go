package atspi

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCalculatorByAccessibleNames asks the registry for gnome-calculator,
// whose GTK 4 publishes its tree through its own AT-SPI backend, presses
// 7 + 2 = through the buttons' actions, and reads the answer back from the
// display's accessible text.
func TestCalculatorByAccessibleNames(t *testing.T) {
	t.Parallel()
	app := calculator(t)
	if !strings.HasPrefix(app.Toolkit, "GTK 4") {
		t.Errorf("toolkit = %q, want GTK 4", app.Toolkit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	controls, err := app.Controls(ctx)
	if err != nil {
		t.Fatalf("Controls: %v", err)
	}
	for _, c := range controls {
		// GTK 4.8 names a button by its label twice ("7 7") or by its
		// widget class ("GtkButton"); labels carry only their context
		// menu's actions. None of these may reach the model.
		if f := strings.Fields(c.Name); toolkitTypeName(c.Name) || len(f) == 2 && f[0] == f[1] {
			t.Errorf("control named %q (%s): a toolkit artefact", c.Name, c.Role)
		}
		if c.Role == "label" || c.Role == "window" {
			t.Errorf("%s %q offered as a control (actions %q)", c.Role, c.Name, c.Actions)
		}
		if c.Extents.Empty() || !c.Enabled {
			t.Errorf("control %q: extents %v, enabled %v", c.Name, c.Extents, c.Enabled)
		}
	}
	for _, name := range []string{"7", "+", "2", "="} {
		c, err := FindControl(controls, name)
		if err != nil {
			t.Fatalf("FindControl(%q): %v (names %q)", name, err, Names(controls))
		}
		if err := c.Click(ctx); err != nil {
			t.Fatalf("click %q: %v", name, err)
		}
	}
	// The calculator solves in a worker thread: the answer shows a moment
	// after "=".
	var shown []string
	for ctx.Err() == nil {
		if shown = displayTexts(t, ctx, app); slices.Contains(shown, "9") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("the display shows %q, want 9", shown)
}

// displayTexts reads the text of every showing text box of the application.
func displayTexts(t *testing.T, ctx context.Context, app App) []string {
	t.Helper()
	isText := func(n node) bool { return n.role == "text box" && slices.Contains(n.interfaces, "org.a11y.atspi.Text") }
	nodes, _, err := app.walk(ctx, Limits{}.withDefaults(), 0, isText)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	var texts []string
	for _, n := range nodes {
		var s string
		if err := app.bus.object(n.ref).CallWithContext(ctx, "org.a11y.atspi.Text.GetText", 0, int32(0), int32(-1)).Store(&s); err == nil {
			texts = append(texts, strings.TrimSpace(s))
		}
	}
	return texts
}

// TestDiscoverSaysWhy: Discover tells an application without an
// accessibility bridge from one that exited, and gives up on the first
// after the connect grace rather than the whole wait.
func TestDiscoverSaysWhy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		argv   []string
		want   error
		opts   DiscoverOptions
		within time.Duration
	}{
		// xclock is an Athena program: it never opens a connection to the
		// accessibility bus.
		{"no bridge", []string{"xclock"}, ErrNotConnected, DiscoverOptions{ConnectGrace: time.Second}, 15 * time.Second},
		// Nor to the session bus, so the short grace applies.
		{"no D-Bus at all", []string{"xclock"}, ErrNotConnected, DiscoverOptions{ConnectGrace: 15 * time.Second, NoBusGrace: 300 * time.Millisecond}, 10 * time.Second},
		{"exited", []string{"true"}, ErrProcessGone, DiscoverOptions{}, 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newDesktop(t)
			p := d.launch(t, tt.argv...)
			b := d.connect(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := b.Discover(ctx, p.PID(), tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Discover error = %v, want %v", err, tt.want)
			}
			if took := time.Since(start); ctx.Err() != nil || took > tt.within {
				t.Errorf("Discover took %s (bound %s): %v", took, tt.within, err)
			}
		})
	}
}

func TestControlName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, label, want string
	}{
		{"Yes", "", "Yes"},
		{"7 7", "7", "7"},
		{"GtkButton", "π", "π"},
		{"GtkMenuButton", "", ""},
		{"AdwGizmo", "", ""},
		{"", "Undo", "Undo"},
		{"Save", "Save as", "Save"},
		{"Gtkfoo", "", "Gtkfoo"},
		{"Adw Settings", "", "Adw Settings"},
		{"Bora Bora", "Bora", "Bora"},
	}
	for _, tt := range tests {
		if got := controlName(node{name: tt.name, label: tt.label}); got != tt.want {
			t.Errorf("controlName(%q, label %q) = %q, want %q", tt.name, tt.label, got, tt.want)
		}
	}
}

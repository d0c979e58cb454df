package atspi

import (
	"context"
	"errors"
	"image"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/proc"
)

var screen = image.Rect(0, 0, 1280, 800)

// zenityProcess starts a question dialog on a fresh desktop and returns
// the connected bus, its registered application and its process.
func zenityProcess(t *testing.T) (*Bus, App, *proc.Process) {
	t.Helper()
	d := newDesktop(t)
	p := d.launch(t, "zenity", "--question", "--text=Proceed?")
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return b, found.App, p
}

// zenity starts a question dialog on a fresh desktop and returns it with the
// connected bus and its registered application.
func zenity(t *testing.T) (*Bus, App, func() int) {
	t.Helper()
	b, app, p := zenityProcess(t)
	exitCode := func() int {
		select {
		case <-p.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("zenity still runs after the click")
		}
		return p.ExitStatus().Code
	}
	return b, app, exitCode
}

func TestZenityControls(t *testing.T) {
	t.Parallel()
	_, app, _ := zenity(t)
	if app.Name != "zenity" {
		t.Errorf("app name = %q, want zenity", app.Name)
	}
	controls := waitControls(t, app, "Yes", "No")
	for _, name := range []string{"Yes", "No"} {
		c, err := FindControl(controls, name)
		if err != nil {
			t.Fatalf("FindControl(%q): %v", name, err)
		}
		if c.Role != "push button" {
			t.Errorf("%s role = %q, want push button", name, c.Role)
		}
		if !slices.ContainsFunc(c.Actions, func(a string) bool { return strings.EqualFold(a, "click") }) {
			t.Errorf("%s actions = %q, want click among them", name, c.Actions)
		}
		if !c.Enabled {
			t.Errorf("%s is not enabled", name)
		}
		e := c.Extents
		if e.Dx() < 10 || e.Dy() < 10 || e.Dx() > 400 || e.Dy() > 200 || !e.In(screen) {
			t.Errorf("%s extents %v are not a button on a 1280x800 screen", name, e)
		}
	}
	yes, _ := FindControl(controls, "Yes")
	no, _ := FindControl(controls, "No")
	if yes.Extents.Overlaps(no.Extents) {
		t.Errorf("Yes %v and No %v overlap", yes.Extents, no.Extents)
	}
	if yes.Extents.Min.Y != no.Extents.Min.Y {
		t.Errorf("Yes %v and No %v are not side by side", yes.Extents, no.Extents)
	}
}

func TestClickEndsDialog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		want int
	}{
		{"Yes", 0},
		{"No", 1},
		// A case-insensitive match is accepted when no exact one exists.
		{"yes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, app, exitCode := zenity(t)
			waitControls(t, app, "Yes", "No")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := app.Find(ctx, tt.name)
			if err != nil {
				t.Fatalf("Find(%q): %v", tt.name, err)
			}
			if err := c.Click(ctx); err != nil {
				t.Fatalf("Click: %v", err)
			}
			if got := exitCode(); got != tt.want {
				t.Errorf("zenity exit code = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestFindNotFoundListsNames(t *testing.T) {
	t.Parallel()
	_, app, _ := zenity(t)
	waitControls(t, app, "Yes", "No")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := app.Find(ctx, "Maybe")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Find(Maybe) error = %v, want *NotFoundError", err)
	}
	if nf.Name != "Maybe" || !slices.Contains(nf.Available, "Yes") || !slices.Contains(nf.Available, "No") {
		t.Errorf("NotFoundError = %+v, want Maybe with Yes and No available", nf)
	}
	for _, s := range []string{`"Maybe"`, `"Yes"`, `"No"`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %s", err, s)
		}
	}
}

func TestDiscoverFindsDescendant(t *testing.T) {
	t.Parallel()
	d := newDesktop(t)
	// The shell stays the parent because a command follows zenity.
	p := d.launch(t, "sh", "-c", "zenity --question --text=Wrapped; exit $?")
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	found, err := b.Discover(ctx, p.PID(), DiscoverOptions{})
	if err != nil {
		t.Fatalf("Discover(shell): %v", err)
	}
	if app := found.App; app.Name != "zenity" || app.PID == p.PID() {
		t.Errorf("app = %s pid %d, want zenity below shell pid %d", app.Name, app.PID, p.PID())
	}
}

func TestDiscoverTimesOut(t *testing.T) {
	t.Parallel()
	d := newDesktop(t)
	d.launch(t, "zenity", "--question", "--text=Other")
	b := d.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// pid 1 is nobody's descendant here but its own; no application is
	// registered by it.
	_, err := b.Discover(ctx, 1, DiscoverOptions{})
	if !errors.Is(err, ErrNotConnected) || ctx.Err() == nil {
		t.Fatalf("Discover(1) error = %v, want no connection when the bound ends", err)
	}
}

func TestConnectErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := ConnectSession(ctx, ""); !errors.Is(err, ErrNoSessionBus) {
		t.Errorf("ConnectSession(\"\") error = %v, want ErrNoSessionBus", err)
	}
	if _, err := ConnectSession(ctx, "unix:path="+t.TempDir()+"/none"); err == nil ||
		!strings.Contains(err.Error(), "session bus") {
		t.Errorf("ConnectSession(missing socket) error = %v, want a session bus error", err)
	}
}

func TestFindControlRules(t *testing.T) {
	t.Parallel()
	controls := []Control{
		{Name: "Save", Role: "push button"},
		{Name: "save", Role: "menu item"},
		{Name: "Open", Role: "push button"},
		{Name: "Open", Role: "menu item"},
		{Name: "Close", Role: "push button"},
	}
	tests := []struct {
		find      string
		wantRole  string
		ambiguous int
		notFound  bool
	}{
		{find: "Save", wantRole: "push button"},
		{find: "save", wantRole: "menu item"},
		{find: "close", wantRole: "push button"},
		{find: " Close ", wantRole: "push button"},
		{find: "SAVE", ambiguous: 2},
		{find: "Open", ambiguous: 2},
		{find: "Quit", notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.find, func(t *testing.T) {
			t.Parallel()
			c, err := FindControl(controls, tt.find)
			var amb *AmbiguousError
			var nf *NotFoundError
			switch {
			case tt.ambiguous > 0:
				if !errors.As(err, &amb) || len(amb.Candidates) != tt.ambiguous {
					t.Fatalf("error = %v, want %d ambiguous candidates", err, tt.ambiguous)
				}
			case tt.notFound:
				if !errors.As(err, &nf) || len(nf.Available) != 4 {
					t.Fatalf("error = %v, want not found with 4 distinct names", err)
				}
			default:
				if err != nil || c.Role != tt.wantRole {
					t.Fatalf("got %+v, %v; want role %q", c, err, tt.wantRole)
				}
			}
		})
	}
}

func TestActionIndexPrefersClick(t *testing.T) {
	t.Parallel()
	tests := []struct {
		actions []string
		want    int
	}{
		{[]string{"click"}, 0},
		{[]string{"activate", "click"}, 1},
		{[]string{"expand or contract", "Press"}, 1},
		{[]string{"customaction"}, 0},
	}
	for _, tt := range tests {
		if got := (Control{Actions: tt.actions}).ActionIndex(); got != tt.want {
			t.Errorf("ActionIndex(%q) = %d, want %d", tt.actions, got, tt.want)
		}
	}
}

// TestFindControlForgiving checks names match where a person sees no
// difference (the calculator's minus is U+2212, menus end in an ellipsis,
// multiplication is ×, labels hold non-breaking spaces) and that a name
// nothing matches is answered with the closest names.
func TestFindControlForgiving(t *testing.T) {
	t.Parallel()
	controls := []Control{
		{Name: "\u2212", Role: "push button"},
		{Name: "Save As\u2026", Role: "menu item"},
		{Name: "\u00d7", Role: "push button"},
		{Name: "Log\u00a0in", Role: "push button"},
		{Name: "Preferences", Role: "menu item"},
		{Name: "Print", Role: "menu item"},
	}
	for find, want := range map[string]string{
		"-":          "\u2212",
		"save as...": "Save As\u2026",
		"x":          "\u00d7",
		"X":          "\u00d7",
		"log in":     "Log\u00a0in",
		"Log  In":    "Log\u00a0in",
	} {
		c, err := FindControl(controls, find)
		if err != nil || c.Name != want {
			t.Errorf("FindControl(%q) = %q, %v; want %q", find, c.Name, err, want)
		}
	}
	_, err := FindControl(controls, "Prefrences")
	var nf *NotFoundError
	if !errors.As(err, &nf) || len(nf.Closest) == 0 || nf.Closest[0] != "Preferences" {
		t.Fatalf("error = %v, want Preferences closest", err)
	}
	if !strings.Contains(err.Error(), `the closest names are "Preferences"`) {
		t.Errorf("error %q does not suggest the closest name", err)
	}
	if _, err := FindControl(controls, "Quit the whole thing"); !errors.As(err, &nf) || len(nf.Closest) != 0 {
		t.Errorf("a far name got suggestions: %v", err)
	}
}

package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/scenarios"
)

// desktopBins are the programs a run on each desktop needs besides the
// application's.
var desktopBins = map[string][]string{
	scenarios.DesktopX11:     {"Xvfb", "openbox"},
	scenarios.DesktopWayland: {"sway"},
}

// TestExamplesOnBothDesktops runs the scripted examples that depend on
// nothing of X11 (no clipboard tool, no X program) on both desktops, the
// same files with only session.desktop changed, and checks that every step
// held: a GTK dialog by the text OCR reads and by a control's name, a GTK
// 4 application by click_element and a sum checked by OCR. The engine
// does not know which desktop it drives; the stage does.
func TestExamplesOnBothDesktops(t *testing.T) {
	cases := []struct {
		example string
		bins    []string
		// pointer says click_element must reach the control with the
		// pointer, not through its accessibility action.
		pointer map[string]bool
	}{
		{"zenity-read.yaml", []string{"zenity", "tesseract", "dbus-daemon"}, nil},
		{"zenity-question.yaml", []string{"zenity", "dbus-daemon"}, map[string]bool{scenarios.DesktopX11: true, scenarios.DesktopWayland: true}},
		// GTK 4.8 reports its controls' extents relative to the window on
		// X11 too, so there click_element falls back to the action; on
		// Wayland the stage places them.
		{"gtk4-calculator-read.yaml", []string{"gnome-calculator", "tesseract", "dbus-daemon"}, map[string]bool{scenarios.DesktopWayland: true}},
		// A Qt 5 application (its Wayland platform plugin, qtwayland5, on
		// Wayland): keys, a dialog switched to, a file saved.
		{"qt-featherpad-save-as.yaml", []string{"featherpad"}, nil},
		// GTK 3's file chooser: Return right after the typed name saves.
		{"mousepad-save-as.yaml", []string{"mousepad", "dbus-daemon"}, nil},
		// GTK 3's menus: File, then "Save As..." in the menu's popup (an
		// xdg_popup on Wayland), each by the pointer.
		{"mousepad-menu-save-as.yaml", []string{"mousepad", "dbus-daemon"}, map[string]bool{scenarios.DesktopX11: true, scenarios.DesktopWayland: true}},
	}
	for _, c := range cases {
		for _, desk := range []string{scenarios.DesktopX11, scenarios.DesktopWayland} {
			t.Run(desk+"/"+c.example, func(t *testing.T) {
				scriptNeed(t, append(c.bins, desktopBins[desk]...)...)
				files, res, dir := desktopRun(t, c.example, desk)
				if res.Verdict != events.VerdictPass || res.Outcome != OutcomeCompleted {
					t.Errorf("verdict %s (%s), want pass (completed); reasons %q", res.Verdict, res.Outcome, res.Reasons)
				}
				rep, _ := scriptReadReport(t, dir)
				if len(rep.Steps) != len(files.Scenario.Steps) {
					t.Errorf("%d steps in the report, the example has %d", len(rep.Steps), len(files.Scenario.Steps))
				}
				for i, s := range rep.Steps {
					if s.Status != events.StatusOK {
						t.Errorf("step %d %s: %s %q", i+1, s.Tool, s.Status, s.Message)
					}
					if s.Tool == "click_element" && c.pointer[desk] && !strings.Contains(s.Message, "with the pointer") {
						t.Errorf("step %d click_element did not click with the pointer: %q", i+1, s.Message)
					}
				}
				evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
				if err != nil {
					t.Fatalf("events.jsonl: %v", err)
				}
				wantWM := map[string]string{scenarios.DesktopX11: "openbox", scenarios.DesktopWayland: "sway"}[desk]
				for _, e := range evs {
					if s, ok := e.Data.(events.DisplayStarted); ok && s.WindowManager != wantWM {
						t.Errorf("session started with %q managing the windows, want %q", s.WindowManager, wantWM)
					}
				}
			})
		}
	}
}

// TestWaylandAppEnvironment launches, on the Wayland desktop, an
// application that writes its environment before it shows a dialog: it
// is a native Wayland client of the run's own compositor, and it reaches
// no X display, not even the runtime's.
func TestWaylandAppEnvironment(t *testing.T) {
	scriptNeed(t, "sway", "zenity", "dbus-daemon")
	t.Setenv("DISPLAY", ":77")
	t.Setenv("SWAYSOCK", "/nonexistent/operator-sway.sock")
	demo := t.TempDir()
	envFile := filepath.Join(demo, "env.txt")
	sc := filepath.Join(demo, "env.yaml")
	body := `name: environment
app:
  command: [sh, -c, 'env > "$0"; exec zenity --question --title=Env --text=env', ` + envFile + `]
  window: {title: Env}
  startup_timeout_s: 20
  success_exit_codes: [0]
steps:
  - click_element: {name: "Yes"}
`
	if err := os.WriteFile(sc, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := scenarios.Load(sc, "", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	files.Operator.Desktop.Desktop = scenarios.DesktopWayland
	res, dir := desktopRunFiles(t, files)
	if res.Verdict != events.VerdictPass {
		t.Errorf("verdict %s (%s), want pass; reasons %q", res.Verdict, res.Outcome, res.Reasons)
	}
	b, err := os.ReadFile(envFile)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	for _, k := range []string{"DISPLAY", "SWAYSOCK", "WAYLAND_SOCKET"} {
		if v, ok := env[k]; ok {
			t.Errorf("the application inherited %s=%s", k, v)
		}
	}
	for k, want := range map[string]string{"GDK_BACKEND": "wayland", "QT_QPA_PLATFORM": "wayland"} {
		if env[k] != want {
			t.Errorf("%s=%q, want %q", k, env[k], want)
		}
	}
	sock := env["WAYLAND_DISPLAY"]
	if !filepath.IsAbs(sock) {
		t.Fatalf("WAYLAND_DISPLAY=%q, want the run's compositor's socket by its path", sock)
	}
	if _, err := os.Stat(filepath.Dir(sock)); !os.IsNotExist(err) {
		t.Errorf("the compositor's runtime directory %s is still there after the run (%v)", filepath.Dir(sock), err)
	}
	evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var said bool
	for _, e := range evs {
		if e.Kind == events.KindLog && strings.Contains(e.Message, "this session lacks hang detection") {
			said = true
		}
	}
	if !said {
		t.Error("the run did not say, when it started, that the Wayland session lacks hang detection")
	}
}

// desktopRun runs an example of scenarios/examples/ on the desktop.
func desktopRun(t *testing.T, example, desk string) (*scenarios.Files, Result, string) {
	t.Helper()
	demo := t.TempDir()
	lookup := func(name string) (string, bool) {
		if name == "KASM_DEMO_DIR" {
			return demo, true
		}
		return "", false
	}
	files, err := scenarios.Load(filepath.Join("../scenarios/examples", example), "", lookup)
	if err != nil {
		t.Fatalf("load the example: %v", err)
	}
	files.Operator.Desktop.Desktop = desk
	res, dir := desktopRunFiles(t, files)
	return files, res, dir
}

func desktopRunFiles(t *testing.T, files *scenarios.Files) (Result, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "report")
	runner, err := New(files, Options{ReportDir: dir, Display: "-", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := runner.Run(ctx)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, dir
}

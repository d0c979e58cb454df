package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// baselineScenario shows text in a window of a fixed size, and compares
// the window with the baseline main; mask, when given, is the check's
// mask_regions.
func baselineScenario(text, mask string) string {
	s := `name: baseline
app:
  command: [xmessage, -geometry, 300x120+40+40, -center, '` + text + `']
  window: {class: Xmessage}
  startup_timeout_s: 30
steps:
  - expect:
      screenshot: {name: main`
	if mask != "" {
		s += ", mask_regions: [" + mask + "]"
	}
	return s + "}\n"
}

// A screenshot check as a team uses it: the first run has no baseline and
// says how to approve the window; --update-baselines writes it beside the
// scenario; an unchanged window then matches; a changed label fails the
// run with the baseline, the window and a diff kept in the report; and a
// mask over the changing part makes it match again.
func TestScreenshotBaselines(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xmessage")
	dir := t.TempDir()
	scenario := filepath.Join(dir, "greeting.yaml")
	stored := filepath.Join(dir, "greeting.baselines", "main.png")
	run := func(name string, extra ...string) (int, string, string) {
		t.Helper()
		report := filepath.Join(dir, name)
		code, _, stderr := kasmrt(t, append([]string{"run", scenario, "--headless", "--report", report}, extra...)...)
		return code, report, stderr
	}

	testkit.WriteFile(t, dir, "greeting.yaml", baselineScenario("Hello, baseline", ""))
	code, report, stderr := run("first")
	rep, _ := readReport(t, report)
	if code != 2 || rep.Verdict != "test-error" || len(rep.Baselines) != 1 || rep.Baselines[0].Result != events.BaselineMissing ||
		!strings.Contains(strings.Join(rep.Reasons, " "), "--update-baselines") {
		t.Fatalf("without a baseline: exit %d %s %v %+v\n%s", code, rep.Verdict, rep.Reasons, rep.Baselines, stderr)
	}
	if b := rep.Baselines[0]; b.Actual == "" || !isPNG(t, filepath.Join(report, b.Actual)) {
		t.Errorf("the window was not kept for approval: %+v", b)
	}
	if _, err := os.Stat(stored); !os.IsNotExist(err) {
		t.Fatalf("a run without --update-baselines wrote the baseline (%v)", err)
	}

	code, report, stderr = run("update", "--update-baselines")
	rep, _ = readReport(t, report)
	if code != 0 || len(rep.Baselines) != 1 || rep.Baselines[0].Result != events.BaselineWritten || !isPNG(t, stored) {
		t.Fatalf("--update-baselines: exit %d %s %v %+v\n%s", code, rep.Verdict, rep.Reasons, rep.Baselines, stderr)
	}
	if strings.Contains(stderr, "no screenshot check") {
		t.Errorf("--update-baselines with a screenshot check warns there is none:\n%s", stderr)
	}

	code, report, stderr = run("same")
	rep, _ = readReport(t, report)
	if code != 0 || rep.Baselines[0].Result != events.BaselineMatched || rep.Baselines[0].DiffPixels != 0 {
		t.Fatalf("the unchanged window: exit %d %s %v %+v\n%s", code, rep.Verdict, rep.Reasons, rep.Baselines, stderr)
	}

	testkit.WriteFile(t, dir, "greeting.yaml", baselineScenario("Hello, changed", ""))
	code, report, stderr = run("changed")
	rep, _ = readReport(t, report)
	if code != 1 || rep.Verdict != "app-failed" || rep.Baselines[0].Result != events.BaselineDiffers || rep.Baselines[0].DiffPixels == 0 {
		t.Fatalf("a changed label: exit %d %s %v %+v\n%s", code, rep.Verdict, rep.Reasons, rep.Baselines, stderr)
	}
	b := rep.Baselines[0]
	for _, f := range []string{b.Expected, b.Actual, b.Diff} {
		if f == "" || !isPNG(t, filepath.Join(report, f)) {
			t.Errorf("the failed comparison's images are not all kept: %+v", b)
		}
	}
	if !strings.Contains(strings.Join(rep.Reasons, " "), "pixels differ") {
		t.Errorf("the reasons do not say how much differs: %v", rep.Reasons)
	}

	// The label sits in the middle of the window: masking that band
	// leaves the same window.
	testkit.WriteFile(t, dir, "greeting.yaml", baselineScenario("Hello, changed", "{x: 0, y: 0, width: 300, height: 90}"))
	code, report, stderr = run("masked")
	rep, _ = readReport(t, report)
	if code != 0 || rep.Baselines[0].Result != events.BaselineMatched {
		t.Fatalf("the changed label masked: exit %d %s %v %+v\n%s", code, rep.Verdict, rep.Reasons, rep.Baselines, stderr)
	}

	// A suite approves the baselines of its scenarios the same way.
	testkit.WriteFile(t, dir, "other.yaml", baselineScenario("Another window", ""))
	code, _, stderr = kasmrt(t, "suite", filepath.Join(dir, "other.yaml"), "--out", filepath.Join(dir, "suite"), "--headless", "--update-baselines")
	if code != 0 || !isPNG(t, filepath.Join(dir, "other.baselines", "main.png")) {
		t.Errorf("suite --update-baselines: exit %d, no other.baselines/main.png\n%s", code, stderr)
	}
}

// isPNG reports whether path holds a PNG image with pixels.
func isPNG(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	img, err := png.Decode(f)
	return err == nil && img.Bounds() != image.Rectangle{}
}

// TestUpdateBaselinesWithoutScreenshotCheck: --update-baselines on a
// scenario without a screenshot check writes nothing, and says so on
// stderr and in the report's log rather than nothing; the run is
// otherwise as without the flag.
func TestUpdateBaselinesWithoutScreenshotCheck(t *testing.T) {
	t.Parallel()
	need(t, "Xvfb", "xmessage")
	dir := t.TempDir()
	scenario := testkit.WriteFile(t, dir, "plain.yaml", `name: no baseline
app:
  command: [xmessage, -geometry, 300x120+40+40, -center, 'Hello']
  window: {class: Xmessage}
  startup_timeout_s: 30
steps:
  - observe_screen: {}
`)
	report := filepath.Join(dir, "report")
	code, _, stderr := kasmrt(t, "run", scenario, "--headless", "--report", report, "--update-baselines")
	const want = "warning: --update-baselines: the scenario has no screenshot check"
	if code != 0 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 0 and %q", code, stderr, want)
	}
	evs, err := os.ReadFile(filepath.Join(report, "events.jsonl"))
	if err != nil || !strings.Contains(string(evs), "the scenario has no screenshot check") {
		t.Errorf("the report's log does not say there was no baseline to update (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "plain.baselines")); !os.IsNotExist(err) {
		t.Errorf("a baselines directory was made (%v)", err)
	}
}

package suite

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// testOnlyPackages are the packages scripts/setup.sh installs that no run
// in the image needs, only the repository's tests: the image may leave
// them out. Each says why. The applications the example scenarios under
// /src/scenarios drive (mousepad, aptitude-doc-en's pages, xclip, a GTK
// application in Python…) are not exempt: the image runs them.
var testOnlyPackages = map[string]string{
	"tmux":                "the record tests drive the console through a terminal; a Job has none",
	"libsixel-bin":        "img2sixel checks the console's sixel output in the tests",
	"python3-junitparser": "the tests validate the JUnit XML with it",
	"libxml2-utils":       "xmllint validates the reports' XML in the tests",
}

// TestImageInstallsTheRuntimePackages fails when the image's runtime stage
// leaves out a package scripts/setup.sh installs for runs — the takeover's
// x11vnc and noVNC, the Wayland desktop's sway, grim, wtype and
// qtwayland5, the session's Xvfb and openbox… — whether it runs setup.sh
// or lists its packages itself.
func TestImageInstallsTheRuntimePackages(t *testing.T) {
	setup, err := os.ReadFile(filepath.Join("..", "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	docker, err := os.ReadFile(filepath.Join("..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	packages := setupPackages(t, string(setup))
	for _, p := range []string{"x11vnc", "novnc", "sway", "grim", "wtype", "qtwayland5", "xvfb", "openbox"} {
		if !slices.Contains(packages, p) {
			t.Errorf("scripts/setup.sh no longer installs %s", p)
		}
	}
	for p := range testOnlyPackages {
		if !slices.Contains(packages, p) {
			t.Errorf("testOnlyPackages exempts %s, which scripts/setup.sh does not install", p)
		}
	}
	runsSetup, installed := runtimeStage(string(docker))
	for _, p := range packages {
		if _, exempt := testOnlyPackages[p]; exempt || runsSetup || installed[p] {
			continue
		}
		t.Errorf("the Dockerfile's runtime image does not install %s, which scripts/setup.sh installs for runs", p)
	}
}

// setupPackages reads the packages=( … ) array of scripts/setup.sh.
func setupPackages(t *testing.T, setup string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)\npackages=\(([^)]*)\)`).FindStringSubmatch(setup)
	if m == nil {
		t.Fatal("scripts/setup.sh has no packages=( … ) array")
	}
	return strings.Fields(m[1])
}

// runtimeStage reads the Dockerfile's last stage (the image that runs):
// whether it runs scripts/setup.sh, and the packages its apt-get install
// commands name.
func runtimeStage(dockerfile string) (runsSetup bool, installed map[string]bool) {
	// Continuation lines are one instruction.
	text := strings.ReplaceAll(dockerfile, "\\\n", " ")
	var stage []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(strings.ToUpper(l), "FROM "):
			stage = nil
		case l != "" && !strings.HasPrefix(l, "#"):
			stage = append(stage, l)
		}
	}
	copied := false
	installed = map[string]bool{}
	for _, l := range stage {
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "COPY", "ADD":
			copied = copied || slices.Contains(f, "scripts/setup.sh")
		case "RUN":
			if copied && regexp.MustCompile(`\bsetup\.sh\b`).MatchString(l) {
				runsSetup = true
			}
			for _, cmd := range regexp.MustCompile(`&&|;|\|\|`).Split(strings.Join(f[1:], " "), -1) {
				w := strings.Fields(cmd)
				i := slices.Index(w, "install")
				if i < 0 || !slices.ContainsFunc(w[:i], func(s string) bool { return s == "apt-get" || s == "apt" }) {
					continue
				}
				for _, p := range w[i+1:] {
					if !strings.HasPrefix(p, "-") && !strings.HasPrefix(p, ">") {
						installed[p] = true
					}
				}
			}
		}
	}
	return runsSetup, installed
}

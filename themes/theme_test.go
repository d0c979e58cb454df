package themes

import (
	"flag"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestBuiltinsSetEveryRole(t *testing.T) {
	t.Parallel()
	for _, name := range []string{Dark, Light, HighContrast} {
		p, ok := Builtin(name)
		if !ok {
			t.Fatalf("no built-in %q", name)
		}
		for _, role := range Roles() {
			if *p.role(role) == nil {
				t.Errorf("%s: role %s unset", name, role)
			}
		}
	}
	if _, ok := Builtin("solarized"); ok {
		t.Error("unknown built-in accepted")
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "mine.yaml", "name: mine\nbase: light\ncolors:\n  accent: \"#ff8800\"\n  ok: '#00AA00'\n")
	th, err := Load("", path, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	light, _ := Builtin(Light)
	if th.Name != "mine" || th.File != path {
		t.Errorf("name %q file %q", th.Name, th.File)
	}
	if !sameColour(th.Palette.Accent, lipgloss.Color("#ff8800")) || !sameColour(th.Palette.OK, lipgloss.Color("#00aa00")) {
		t.Errorf("overrides not applied: accent %v ok %v", th.Palette.Accent, th.Palette.OK)
	}
	if !sameColour(th.Palette.Error, light.Error) {
		t.Errorf("base light not used for unset roles: error %v", th.Palette.Error)
	}
	if !sameColour(th.Styles.Title.GetForeground(), lipgloss.Color("#ff8800")) {
		t.Errorf("title style does not derive from the accent")
	}
}

func sameColour(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

func TestLoadFileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"unknown key", "name: x\npalette: dark\n", "bad.yaml:2: unknown key \"palette\""},
		{"unknown role", "base: dark\ncolors:\n  accent: \"#112233\"\n  bakground: \"#000000\"\n", "bad.yaml:4: unknown colour role \"bakground\""},
		{"bad colour", "colors:\n  ok: green\n", "bad.yaml:2: colour for ok \"green\""},
		{"short hex", "colors:\n\n  warn: \"#fff\"\n", "bad.yaml:3: colour for warn \"#fff\""},
		{"unquoted hash", "colors:\n  error: #ff0000\n", "bad.yaml:2: colour for error is empty: quote it"},
		{"bad base", "name: x\nbase: sepia\n", "bad.yaml:2: base \"sepia\""},
		{"duplicate role", "colors:\n  ok: \"#000000\"\n  ok: \"#111111\"\n", "bad.yaml:3: colour role \"ok\" set twice"},
		{"not a mapping", "- dark\n", "bad.yaml:1: a theme file is a mapping"},
		{"colors not a mapping", "colors: [a]\n", "bad.yaml:1: colors must be a mapping"},
		{"yaml syntax", "colors:\n  ok: \"#000000\n", "bad.yaml: yaml:"},
	} {
		path := writeFile(t, t.TempDir(), "bad.yaml", tc.content)
		_, err := Load("", path, envOf(nil))
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), path) {
			t.Errorf("%s: error %q, want it to start with the path and contain %q", tc.name, err, tc.want)
		}
	}
}

func TestLoadResolution(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	writeFile(t, xdg, "kasmrt/theme.yaml", "name: from-xdg\nbase: high-contrast\n")
	home := t.TempDir()
	writeFile(t, home, ".config/kasmrt/theme.yaml", "name: from-home\n")
	empty := t.TempDir()
	for _, tc := range []struct {
		desc    string
		name    string
		file    string
		env     map[string]string
		want    string
		noColor bool
		err     bool
	}{
		{"default follows the terminal", "", "", map[string]string{"HOME": empty}, Auto, false, false},
		{"named auto", Auto, "", map[string]string{"HOME": empty}, Auto, false, false},
		{"named built-in", Light, "", map[string]string{"HOME": empty}, Light, false, false},
		{"unknown built-in", "sepia", "", nil, "", false, true},
		{"XDG_CONFIG_HOME file", "", "", map[string]string{"XDG_CONFIG_HOME": xdg}, "from-xdg", false, false},
		{"HOME/.config file", "", "", map[string]string{"HOME": home}, "from-home", false, false},
		{"explicit missing file", "", filepath.Join(empty, "nope.yaml"), nil, "", false, true},
		{"NO_COLOR", "", "", map[string]string{"HOME": empty, "NO_COLOR": "1"}, Auto, true, false},
	} {
		th, err := Load(tc.name, tc.file, envOf(tc.env))
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.desc, err, tc.err)
			continue
		}
		if err == nil && (th.Name != tc.want || th.NoColor != tc.noColor) {
			t.Errorf("%s: got %q noColor=%v, want %q noColor=%v", tc.desc, th.Name, th.NoColor, tc.want, tc.noColor)
		}
	}
}

func TestNoColorStylesHaveNoColours(t *testing.T) {
	t.Parallel()
	th, err := Load("", "", envOf(map[string]string{"NO_COLOR": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	out := swatch(th.Styles)
	if strings.Contains(out, "38;") || strings.Contains(out, "48;") {
		t.Errorf("NO_COLOR swatch contains colour escapes: %q", out)
	}
	if !strings.Contains(out, "\x1b[1") && !strings.Contains(out, ";1m") {
		t.Errorf("NO_COLOR swatch has no bold emphasis: %q", out)
	}
}

// swatch renders one sample of every style so a golden file shows what a
// theme looks like.
func swatch(s Styles) string {
	var b strings.Builder
	b.WriteString(s.Title.Render("kasmrt") + " " + s.Muted.Render("12:01:07") + " " + s.Subtle.Render("·") + "\n")
	for _, st := range []string{StatusOK, StatusRefused, StatusMalformed, StatusError, "other"} {
		b.WriteString(s.Status(st).Render(st) + " ")
	}
	b.WriteString("\n" + s.Budget(0.5).Render("█████") + s.BudgetEmpty.Render("░░░░░") + " " + s.Budget(0.9).Render("█████████") + s.BudgetEmpty.Render("░") + "\n")
	b.WriteString(s.HelpKey.Render("p") + " " + s.HelpDesc.Render("pause") + s.HelpSep.Render(" • ") + s.HelpKey.Render("q") + " " + s.HelpDesc.Render("quit") + "\n")
	b.WriteString(s.Selected.Render("> selected row") + " " + s.Grounding.Render("grounded") + " " + s.Question.Render("question?") + "\n")
	b.WriteString(s.VerdictPass.Render("pass") + " " + s.VerdictFail.Render("app-failed") + "\n")
	b.WriteString(s.PaneFocused.Render("focused") + "\n" + s.PaneBlurred.Render("blurred"))
	return b.String()
}

func TestStylesGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{Auto, nil}, {Dark, nil}, {Light, nil}, {HighContrast, nil}, {"no-color", map[string]string{"NO_COLOR": "1"}},
	} {
		base := tc.name
		if tc.env != nil {
			base = Dark
		}
		th, err := Load(base, "", envOf(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		got := swatch(th.Styles)
		path := filepath.Join("testdata", tc.name+".golden")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("read golden (run with -update to create): %v", err)
		}
		if got != string(want) {
			t.Errorf("%s: swatch differs from %s:\n got %q\nwant %q", tc.name, path, got, want)
		}
	}
}

// textRoles are the palette roles text is drawn in, with the contrast each
// must reach against the terminal's background.
func textRoles(p Palette) map[string]struct {
	c   color.Color
	min float64
} {
	type role = struct {
		c   color.Color
		min float64
	}
	return map[string]role{
		"muted": {p.Muted, 4.5}, "subtle": {p.Subtle, 3}, "accent": {p.Accent, 4.5},
		"primary": {p.Primary, 4.5}, "secondary": {p.Secondary, 4.5}, "ok": {p.OK, 4.5},
		"warn": {p.Warn, 4.5}, "error": {p.Error, 4.5}, "refusal": {p.Refusal, 4.5},
		"grounding": {p.Grounding, 4.5}, "question": {p.Question, 4.5},
	}
}

// TestBuiltinPalettesLegible checks every text role of the dark palette on
// black and of the light one on white.
func TestBuiltinPalettesLegible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bg   color.Color
	}{{Dark, color.Black}, {Light, color.White}} {
		p, _ := Builtin(tc.name)
		for role, r := range textRoles(p) {
			if got := Contrast(r.c, tc.bg); got < r.min {
				t.Errorf("%s %s on %v: contrast %.2f, want ≥ %.1f", tc.name, role, tc.bg, got, r.min)
			}
		}
	}
}

// TestAutoPaletteLegibleOnBoth checks the palette drawn with before the
// terminal says its background: each text role reads on black and on
// white, and body text keeps the terminal's own colour.
func TestAutoPaletteLegibleOnBoth(t *testing.T) {
	t.Parallel()
	p, _ := Builtin(Auto)
	if _, ok := p.Foreground.(lipgloss.NoColor); !ok {
		t.Errorf("auto body text is %v, want the terminal's own foreground", p.Foreground)
	}
	for role, r := range textRoles(p) {
		for _, bg := range []color.Color{color.Black, color.White} {
			if got := Contrast(r.c, bg); got < 3.9 {
				t.Errorf("auto %s on %v: contrast %.2f, want ≥ 3.9", role, bg, got)
			}
		}
	}
}

func TestForBackground(t *testing.T) {
	t.Parallel()
	auto, err := Load("", "", envOf(map[string]string{"HOME": t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	if got := auto.ForBackground(false).Name; got != Light {
		t.Errorf("auto on a light terminal: %s, want %s", got, Light)
	}
	if got := auto.ForBackground(true).Name; got != Dark {
		t.Errorf("auto on a dark terminal: %s, want %s", got, Dark)
	}
	chosen, err := Load(HighContrast, "", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := chosen.ForBackground(false).Name; got != HighContrast {
		t.Errorf("a chosen theme on a light terminal became %s", got)
	}
}

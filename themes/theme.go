package themes

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"charm.land/lipgloss/v2"
	"gopkg.in/yaml.v3"
)

// Theme is what the console draws with: a name, its palette and the styles
// derived from it.
type Theme struct {
	Name    string
	Palette Palette
	// NoColor is set when NO_COLOR asked for no colours; Styles then
	// emphasise with bold, underline, faint and reverse only.
	NoColor bool
	Styles  Styles
	// File is the theme file that was applied, or "" for a built-in.
	File string
	// Auto is set when no theme was chosen: the palette then follows the
	// terminal's background (ForBackground).
	Auto bool
}

// ForBackground returns the theme to draw with on a terminal whose
// background is dark or light: for an Auto theme the matching built-in
// palette (NO_COLOR still honoured), for any other theme t itself, since
// the operator chose it.
func (t Theme) ForBackground(dark bool) Theme {
	if !t.Auto {
		return t
	}
	name := Light
	if dark {
		name = Dark
	}
	pal, _ := Builtin(name)
	out := Theme{Name: name, Palette: pal, NoColor: t.NoColor, Auto: true}
	if t.NoColor {
		out.Styles = NoColorStyles()
	} else {
		out.Styles = NewStyles(pal)
	}
	return out
}

// Load resolves the console's theme. name picks a built-in palette (auto,
// dark, light or high-contrast; "" means auto, which follows the terminal's
// background). file is a theme file from
// --theme; when it is "", $XDG_CONFIG_HOME/kasmrt/theme.yaml (or
// ~/.config/kasmrt/theme.yaml) is used if it exists. A file's base
// replaces name and its colours override the base's roles. NO_COLOR in env
// keeps the palette but yields the no-colour styles. env is os.Getenv in
// production and a map lookup in tests.
func Load(name, file string, env func(string) string) (Theme, error) {
	if name == "" {
		name = Auto
	}
	pal, ok := Builtin(name)
	if !ok {
		return Theme{}, fmt.Errorf("theme %q: want %s, %s, %s or %s", name, Auto, Dark, Light, HighContrast)
	}
	t := Theme{Name: name, Palette: pal, Auto: name == Auto}

	explicit := file != ""
	if !explicit {
		file = defaultFile(env)
	}
	if file != "" {
		data, err := os.ReadFile(file)
		switch {
		case err == nil:
			ft, err := parseFile(file, data, name)
			if err != nil {
				return Theme{}, err
			}
			t = ft
		case !explicit && errors.Is(err, fs.ErrNotExist):
			// No user theme: the built-in stands.
		default:
			return Theme{}, fmt.Errorf("read theme file: %w", err)
		}
	}

	if env("NO_COLOR") != "" {
		t.NoColor = true
		t.Styles = NoColorStyles()
	} else {
		t.Styles = NewStyles(t.Palette)
	}
	return t, nil
}

// defaultFile is the user's theme path from the XDG base directory rules,
// or "" when neither XDG_CONFIG_HOME nor HOME is set.
func defaultFile(env func(string) string) string {
	dir := env("XDG_CONFIG_HOME")
	if dir == "" {
		home := env("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "kasmrt", "theme.yaml")
}

var hexColour = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// parseFile reads a theme file:
//
//	name: my-theme
//	base: dark            # dark | light | high-contrast
//	colors:
//	  accent: "#ff8800"
//
// Errors name the file and line: unknown keys, unknown roles, colours that
// are not #rrggbb.
func parseFile(path string, data []byte, defaultBase string) (Theme, error) {
	errAt := func(n *yaml.Node, format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Theme{}, fmt.Errorf("%s: %w", path, err)
	}
	t := Theme{Name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), File: path}
	if len(doc.Content) == 0 {
		pal, _ := Builtin(defaultBase)
		t.Palette = pal
		return t, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return Theme{}, errAt(root, "a theme file is a mapping with name, base and colors")
	}
	base := defaultBase
	var colours *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i], root.Content[i+1]
		switch key.Value {
		case "name":
			if val.Kind != yaml.ScalarNode || val.Value == "" {
				return Theme{}, errAt(val, "name must be a non-empty string")
			}
			t.Name = val.Value
		case "base":
			if _, ok := Builtin(val.Value); val.Kind != yaml.ScalarNode || !ok {
				return Theme{}, errAt(val, "base %q: want %s, %s, %s or %s", val.Value, Auto, Dark, Light, HighContrast)
			}
			base = val.Value
		case "colors":
			if val.Kind != yaml.MappingNode {
				return Theme{}, errAt(val, "colors must be a mapping of role to \"#rrggbb\"")
			}
			colours = val
		default:
			return Theme{}, errAt(key, "unknown key %q (want name, base, colors)", key.Value)
		}
	}
	t.Palette, _ = Builtin(base)
	if colours != nil {
		seen := map[string]bool{}
		for i := 0; i+1 < len(colours.Content); i += 2 {
			key, val := colours.Content[i], colours.Content[i+1]
			field := t.Palette.role(key.Value)
			if field == nil {
				return Theme{}, errAt(key, "unknown colour role %q (want one of %s)", key.Value, strings.Join(roleNames, ", "))
			}
			if seen[key.Value] {
				return Theme{}, errAt(key, "colour role %q set twice", key.Value)
			}
			seen[key.Value] = true
			if val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
				return Theme{}, errAt(key, "colour for %s is empty: quote it, \"#rrggbb\" (a bare # starts a YAML comment)", key.Value)
			}
			if val.Kind != yaml.ScalarNode || !hexColour.MatchString(val.Value) {
				return Theme{}, errAt(val, "colour for %s %q: want \"#rrggbb\"", key.Value, val.Value)
			}
			*field = lipgloss.Color(val.Value)
		}
	}
	return t, nil
}

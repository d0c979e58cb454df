package scenarios

import "strings"

// Region is a rectangle in pixels from the application window's top-left
// corner.
type Region struct {
	X      int `yaml:"x"`
	Y      int `yaml:"y"`
	Width  int `yaml:"width"`
	Height int `yaml:"height"`
}

// Kind says how a click target is found: "point", "text" or "name".
func (t ClickTarget) Kind() string {
	switch {
	case t.Text != "":
		return "text"
	case t.Name != "":
		return "name"
	}
	return "point"
}

// clickTargets checks that each target is exactly one of a point, a text
// or an accessible name, with only the keys that kind takes.
func (v *validator) clickTargets(s *Scenario) {
	for _, name := range sortedKeys(s.ClickTargets) {
		t := s.ClickTargets[name]
		path := "click_targets." + name
		_, hasX := v.keys[path+".x"]
		_, hasY := v.keys[path+".y"]
		kinds := 0
		for _, set := range []bool{hasX || hasY, strings.TrimSpace(t.Text) != "", strings.TrimSpace(t.Name) != ""} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			v.fail(t.Pos, "click target %s: give exactly one of a point (x and y), a text or a name", name)
			continue
		}
		switch t.Kind() {
		case "point":
			if !hasX || !hasY {
				v.fail(t.Pos, "click target %s: a point needs both x and y", name)
			}
			if t.X < 0 || t.Y < 0 {
				v.fail(t.Pos, "click target %s: x and y are pixels from the window's top-left corner and cannot be negative", name)
			}
		case "text":
			if t.Within != nil && (t.Within.X < 0 || t.Within.Y < 0 || t.Within.Width <= 0 || t.Within.Height <= 0) {
				v.failAt(path+".within", "a region needs x and y of at least 0 and a width and height above 0")
			}
			if t.Near != "" {
				other, ok := s.ClickTargets[t.Near]
				switch {
				case !ok:
					v.failAt(path+".near", "%q is not a click target", t.Near)
				case t.Near == name:
					v.failAt(path+".near", "a target cannot be near itself")
				case other.Kind() == "text" && other.Near != "":
					v.failAt(path+".near", "%q is itself placed near another target; name a point, a name or a plain text", t.Near)
				}
			}
		}
		if t.Kind() != "text" {
			for key, set := range map[string]bool{"within": t.Within != nil, "near": t.Near != ""} {
				if set {
					v.failAt(path+"."+key, "%s narrows a text target; this target has no text", key)
				}
			}
		}
		if t.Role != "" && t.Kind() != "name" {
			v.failAt(path+".role", "role narrows a name target; this target has no name")
		}
	}
}

// NamesControls reports whether a click target names an accessible
// control, so the run must reach the accessibility bus.
func (s *Scenario) NamesControls() bool {
	for _, t := range s.ClickTargets {
		if t.Kind() == "name" {
			return true
		}
	}
	return false
}

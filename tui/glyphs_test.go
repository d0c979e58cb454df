package tui

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// dejaVuSansMono is the terminal font checked against: Debian's and many
// distributions' default monospace font.
const dejaVuSansMono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"

// fontCharset reads the code points font has glyphs for, as fc-query
// reports them ("20-7e a0-1c3 …").
func fontCharset(t *testing.T, font string) func(rune) bool {
	t.Helper()
	testkit.Need(t, "fc-query")
	out, err := exec.Command("fc-query", "--format", "%{charset}", font).Output()
	if err != nil {
		t.Skipf("fc-query %s: %v", font, err)
	}
	type span struct{ lo, hi rune }
	var spans []span
	for _, f := range strings.Fields(string(out)) {
		lo, hi, ok := strings.Cut(f, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 16, 32)
		b, err2 := strconv.ParseInt(hi, 16, 32)
		if err1 != nil || err2 != nil {
			t.Fatalf("fc-query charset %q", f)
		}
		spans = append(spans, span{rune(a), rune(b)})
	}
	return func(r rune) bool {
		for _, s := range spans {
			if r >= s.lo && r <= s.hi {
				return true
			}
		}
		return false
	}
}

// TestConsoleGlyphsInDejaVuSansMono renders the live and replay consoles,
// their help and the timeline's steering rows, and checks that the font
// has a glyph for every character the console draws itself.
func TestConsoleGlyphsInDejaVuSansMono(t *testing.T) {
	t.Parallel()
	has := fontCharset(t, dejaVuSansMono)
	live := liveAt(t, sampleEvents())
	replay := NewReplay(&Report{Events: sampleEvents()}, Options{Theme: testTheme(t, true), Graphics: graphics.None, Env: func(string) string { return "" }})
	var screens []string
	for _, m := range []*Model{live, replay} {
		m.width, m.height = 160, 50
		screens = append(screens, m.render())
		m.showHelp = true
		screens = append(screens, m.render())
		m.showHelp = false
	}
	missing := map[rune]bool{}
	for _, s := range screens {
		for _, r := range ansi.Strip(s) {
			if r != '\n' && !has(r) {
				missing[r] = true
			}
		}
	}
	for r := range missing {
		t.Errorf("DejaVu Sans Mono has no glyph for %q (U+%04X)", r, r)
	}
}

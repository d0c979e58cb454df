package tui

import (
	"context"
	"image"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/internal/testkit"
	"github.com/kasmrt/kasmrt/tui/graphics"
	"github.com/kasmrt/kasmrt/tui/internal/cellimage"
)

// zenityRun is a report recorded from a real run of
// scenarios/examples/zenity-question.yaml (Debian's zenity in the embedded
// Xvfb with openbox): a 404×120 question dialog on a 1280×800 screen, its
// window on every screen event.
const zenityRun = "testdata/zenity-run"

// zenityConsole is the replay of the zenity run at its first capture, in
// blocks mode at w×h cells, with the frame the pane asks for drawn.
func zenityConsole(t *testing.T, w, h int, profile colorprofile.Profile, keys ...string) *Model {
	t.Helper()
	r, err := LoadReport(zenityRun)
	if err != nil {
		t.Fatal(err)
	}
	m := NewReplay(r, Options{Theme: testTheme(t, false), Graphics: graphics.Blocks, Profile: profile, Env: func(string) string { return "" }})
	m.width, m.height = w, h
	m.seek(slices.IndexFunc(r.Events, func(e events.Event) bool { return e.Kind == events.KindScreen }))
	pump(m, m.refreshScreen())
	for _, k := range keys {
		pump(m, m.handleKey(keyPress(k)))
	}
	if want, _ := m.wantScreen(); m.frameKey != want.key() || m.frame.Cells == "" {
		t.Fatalf("the frame shown is %q, want %q", m.frameKey, want.key())
	}
	return m
}

// pump runs the commands that draw and install frames, as the program
// would, and drops the rest.
func pump(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case frameMsg:
		pump(m, m.installFrame(msg))
	case tea.BatchMsg:
		for _, c := range msg {
			pump(m, c)
		}
	}
}

// TestScreenViewCrops checks which part of the capture each view shows.
func TestScreenViewCrops(t *testing.T) {
	t.Parallel()
	screen := image.Rect(0, 0, 1280, 800)
	win := &events.Rect{X: 438, Y: 340, W: 404, H: 120}
	click := &events.Point{X: 792, Y: 436}
	pane := graphics.Pane{Cols: 100, Rows: 30}
	for _, tc := range []struct {
		name     string
		keys     func(p *screenPane)
		win      *events.Rect
		focus    *events.Point
		want     image.Rectangle
		wantView screenView
	}{
		{"window by default", func(*screenPane) {}, win, nil, image.Rect(438, 340, 842, 460), viewWindow},
		{"no window: whole screen", func(*screenPane) {}, nil, nil, screen, viewScreen},
		{"window off the screen", func(*screenPane) {}, &events.Rect{X: 1300, Y: 0, W: 50, H: 50}, nil, screen, viewScreen},
		{"v: whole screen", func(p *screenPane) { p.cycleView() }, win, nil, screen, viewScreen},
		// 1280/2 across, shaped like the 1000×600 px pane, round the click.
		{"v v: zoom round the click", func(p *screenPane) { p.cycleView(); p.cycleView() }, win, click, image.Rect(472, 244, 1112, 628), viewZoom},
		{"zoom round the window without a click", func(p *screenPane) { p.zoomBy(1) }, win, nil, image.Rect(320, 208, 960, 592), viewZoom},
		{"+ +: zoom 3×", func(p *screenPane) { p.zoomBy(1); p.zoomBy(1) }, win, click, image.Rect(579, 309, 1005, 564), viewZoom},
		{"- at the widest stays 2×", func(p *screenPane) { p.zoomBy(1); p.zoomBy(-1) }, win, click, image.Rect(472, 244, 1112, 628), viewZoom},
		{"zoom is kept on the screen", func(p *screenPane) { p.zoomBy(1) }, win, &events.Point{X: 5, Y: 795}, image.Rect(0, 416, 640, 800), viewZoom},
		{"L pans right a quarter", func(p *screenPane) {
			p.panBy(1, 0, screen, win, click, pane)
		}, win, click, image.Rect(632, 244, 1272, 628), viewZoom},
		{"L L stops at the edge", func(p *screenPane) {
			p.panBy(1, 0, screen, win, click, pane)
			p.panBy(1, 0, screen, win, click, pane)
		}, win, click, image.Rect(640, 244, 1280, 628), viewZoom},
		{"H after the edge moves at once", func(p *screenPane) {
			for range 4 {
				p.panBy(1, 0, screen, win, click, pane)
			}
			p.panBy(-1, 0, screen, win, click, pane)
		}, win, click, image.Rect(480, 244, 1120, 628), viewZoom},
		{"K from the bottom edge", func(p *screenPane) {
			p.panBy(0, -1, screen, win, &events.Point{X: 640, Y: 799}, pane)
		}, win, &events.Point{X: 640, Y: 799}, image.Rect(320, 320, 960, 704), viewZoom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p screenPane
			tc.keys(&p)
			got, view := p.crop(screen, tc.win, tc.focus, pane)
			if got != tc.want || view != tc.wantView {
				t.Errorf("crop = %v (view %d), want %v (view %d)", got, view, tc.want, tc.wantView)
			}
		})
	}
}

// TestZenityWindowGolden pins the blocks rendering of the zenity dialog's
// window view with the screen given the whole 160×48 terminal.
func TestZenityWindowGolden(t *testing.T) {
	t.Parallel()
	m := zenityConsole(t, 160, 48, colorprofile.TrueColor, "z")
	out := m.render()
	checkRect(t, out)
	if got := len(strings.Split(out, "\n")); got != 48 {
		t.Fatalf("console has %d lines, want 48", got)
	}
	if !strings.Contains(out, "window 404×120") {
		t.Errorf("the title does not name the window view:\n%s", out)
	}
	golden.RequireEqual(t, pinned(t, out, colorprofile.TrueColor))
}

// TestZenityWindowLegible is the legibility judgement for blocks mode: the
// cells of the zenity dialog's window view, drawn back as the picture they
// show and read by tesseract, give the dialog's question word for word,
// above a button label read where the buttons are; the whole-screen view
// of the same capture, in the same cells, gives none of the question's
// words. It holds for 24-bit and 256-colour terminals.
func TestZenityWindowLegible(t *testing.T) {
	t.Parallel()
	testkit.Need(t, ocr.Command)
	for _, profile := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256} {
		t.Run(profile.String(), func(t *testing.T) {
			t.Parallel()
			window := readCells(t, zenityConsole(t, 160, 48, profile, "z").frame.Cells)
			judgeDialog(t, window)
			whole := readCells(t, zenityConsole(t, 160, 48, profile, "z", "v").frame.Cells)
			for _, w := range []string{"continue", "test"} {
				if _, ok := findPhrase(whole, w); ok {
					t.Errorf("the whole-screen view reads %q (%q): the judgement cannot tell the views apart", w, ocr.Text(whole))
				}
			}
		})
	}
}

// judgeDialog fails unless words hold the zenity question, "Continue the
// test?", on one line, and below it and to its right a button's label, "No"
// or "Yes". A word of four letters or more may be read with one letter
// wrong (tesseract reads "Cantinue" as often as "Continue" at this size, as
// a person still would); shorter words must be read exactly.
func judgeDialog(t *testing.T, words []ocr.Word) {
	t.Helper()
	question, ok := findPhrase(words, "continue", "the", "test")
	if !ok {
		t.Errorf("the question is not read; read: %q", ocr.Text(words))
		return
	}
	for _, label := range []string{"no", "yes"} {
		if box, ok := findPhrase(words, label); ok && box.Min.Y >= question.Max.Y && box.Min.X > question.Min.X {
			return
		}
	}
	t.Errorf("no button label is read below and right of the question %v; read: %q", question, ocr.Text(words))
}

// findPhrase finds want as consecutive words of one line, as judgeDialog
// reads them, and returns where they are.
func findPhrase(words []ocr.Word, want ...string) (image.Rectangle, bool) {
	for i := 0; i+len(want) <= len(words); i++ {
		box := words[i].Box
		ok := true
		for j, w := range want {
			got := words[i+j]
			if got.Line != words[i].Line || !readAs(cellimage.Fold(got.Text), w) {
				ok = false
				break
			}
			box = box.Union(got.Box)
		}
		if ok {
			return box, true
		}
	}
	return image.Rectangle{}, false
}

// readAs reports whether got reads as want: exactly, or for words of four
// letters or more with one letter replaced, added or dropped.
func readAs(got, want string) bool {
	if got == want {
		return true
	}
	a, b := []rune(got), []rune(want)
	if len(b) < 4 || len(a) < len(b)-1 || len(a) > len(b)+1 {
		return false
	}
	// One edit: skip the first difference in one or both and compare the rest.
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return string(a[min(i+1, len(a)):]) == string(b[min(i+1, len(b)):]) ||
		string(a[i:]) == string(b[min(i+1, len(b)):]) ||
		string(a[min(i+1, len(a)):]) == string(b[i:])
}

// readCells reads the picture block cells show, enlarged 4 times.
func readCells(t *testing.T, cells string) []ocr.Word {
	t.Helper()
	img, painted := cellimage.Decode(cells)
	if painted.Empty() {
		t.Fatal("the cells show no picture")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	words, err := cellimage.Read(ctx, img, painted, 4)
	if err != nil {
		t.Fatal(err)
	}
	return words
}

// TestScreenPanePlacement checks where the image goes for the rectangle
// the layout gives the pane: inside its border, 1-based, or empty.
func TestScreenPanePlacement(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rect     image.Rectangle
		bordered bool
		want     graphics.Pane
	}{
		{image.Rect(0, 1, 96, 25), true, graphics.Pane{Row: 3, Col: 2, Cols: 94, Rows: 22, CellW: 6, CellH: 13}},
		{image.Rect(50, 10, 80, 20), true, graphics.Pane{Row: 12, Col: 52, Cols: 28, Rows: 8, CellW: 6, CellH: 13}},
		{image.Rect(0, 1, 160, 46), false, graphics.Pane{Row: 2, Col: 1, Cols: 160, Rows: 45, CellW: 6, CellH: 13}},
		{image.Rect(0, 1, 1, 2), true, graphics.Pane{Row: 3, Col: 2, CellW: 6, CellH: 13}},
	} {
		var p screenPane
		p.SetRect(tc.rect, tc.bordered)
		if got := p.Pane(6, 13); got != tc.want {
			t.Errorf("%v (bordered %v): pane %+v, want %+v", tc.rect, tc.bordered, got, tc.want)
		}
	}
}

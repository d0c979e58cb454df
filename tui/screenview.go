package tui

import (
	"fmt"
	"image"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// screenView is the part of the screen the screen pane shows.
type screenView int

const (
	// viewWindow shows the application's window: the default, since a
	// dialog is a fraction of the screen and drawn whole it cannot be read
	// in half blocks.
	viewWindow screenView = iota
	// viewScreen shows the whole screen.
	viewScreen
	// viewZoom shows a part of the screen around the last action.
	viewZoom
)

// zoomFactors are the zoom view's magnifications over the whole screen.
var zoomFactors = [...]int{2, 3, 4, 6, 8}

// screenPane is the screen pane's place and what it shows of the screen:
// the view, the zoom and the pan, and whether it has the whole terminal.
// The layout gives it its rectangle; the image overlay (sixel, kitty) is
// placed from that rectangle, never from a constant.
type screenPane struct {
	// rect is in terminal cells, 0-based from the top left.
	rect image.Rectangle
	// bordered says the rectangle includes a one-cell border, so the image
	// goes inside it.
	bordered bool
	view     screenView
	zoom     int         // index into zoomFactors
	pan      image.Point // the zoom view's offset from its centre, in screen pixels
	full     bool
}

// SetRect places the pane: r is its outer rectangle, border included when
// bordered.
func (p *screenPane) SetRect(r image.Rectangle, bordered bool) {
	p.rect, p.bordered = r, bordered
}

// Pane is where the image goes, for the renderer: the inside of the
// rectangle as 1-based screen cells, and the cell size in pixels.
func (p *screenPane) Pane(cellW, cellH int) graphics.Pane {
	in := p.rect
	if p.bordered {
		// Not image.Rect: it would turn a pane too small for its border
		// inside out instead of leaving it empty.
		in = image.Rectangle{Min: in.Min.Add(image.Pt(1, 1)), Max: in.Max.Sub(image.Pt(1, 1))}
	}
	return graphics.Pane{Row: in.Min.Y + 1, Col: in.Min.X + 1, Cols: max(0, in.Dx()), Rows: max(0, in.Dy()), CellW: cellW, CellH: cellH}
}

// cycleView moves to the next view: window, whole screen, zoom.
func (p *screenPane) cycleView() {
	p.view = (p.view + 1) % 3
	p.pan = image.Point{}
}

// zoomBy changes the zoom by steps levels and shows the zoom view.
func (p *screenPane) zoomBy(steps int) {
	if p.view != viewZoom {
		p.view, p.pan = viewZoom, image.Point{}
	} else {
		p.zoom = min(max(0, p.zoom+steps), len(zoomFactors)-1)
	}
}

// panBy moves the zoom view by a quarter of what it shows, dx and dy in
// quarters; from another view it first switches to the zoom view.
func (p *screenPane) panBy(dx, dy int, screen image.Rectangle, win *events.Rect, focus *events.Point, pane graphics.Pane) {
	if p.view != viewZoom {
		p.view, p.pan = viewZoom, image.Point{}
	}
	c := p.zoomCrop(screen, win, focus, pane)
	// Move from where the view is, not from a centre past the screen's
	// edge, so every press moves it.
	shown := image.Pt(c.Min.X+c.Dx()/2, c.Min.Y+c.Dy()/2)
	step := image.Pt(dx*max(1, c.Dx()/4), dy*max(1, c.Dy()/4))
	p.pan = p.pan.Add(shown.Sub(p.zoomCentre(screen, win, focus))).Add(step)
}

// crop is the part of screen the pane shows, in screen pixels, and the
// view it amounts to: the window view without a window is the whole
// screen.
func (p *screenPane) crop(screen image.Rectangle, win *events.Rect, focus *events.Point, pane graphics.Pane) (image.Rectangle, screenView) {
	switch p.view {
	case viewWindow:
		if win != nil {
			if r := image.Rect(win.X, win.Y, win.X+win.W, win.Y+win.H).Intersect(screen); !r.Empty() {
				return r, viewWindow
			}
		}
		return screen, viewScreen
	case viewZoom:
		return p.zoomCrop(screen, win, focus, pane), viewZoom
	}
	return screen, viewScreen
}

// zoomCrop is the zoom view's rectangle: 1/factor of the screen's width,
// shaped like the pane so no cell is wasted, centred on the last action
// (the click point), else on the application's window, else on the screen,
// moved by the pan and kept on the screen.
func (p *screenPane) zoomCrop(screen image.Rectangle, win *events.Rect, focus *events.Point, pane graphics.Pane) image.Rectangle {
	cw, ch := pane.CellW, pane.CellH
	if cw <= 0 || ch <= 0 {
		cw, ch = graphics.DefaultCellWidth, graphics.DefaultCellHeight
	}
	paneW, paneH := max(1, pane.Cols*cw), max(1, pane.Rows*ch)
	w := max(1, screen.Dx()/zoomFactors[p.zoom])
	h := max(1, w*paneH/paneW)
	if h > screen.Dy() {
		h = screen.Dy()
		w = min(screen.Dx(), max(1, h*paneW/paneH))
	}
	centre := p.zoomCentre(screen, win, focus)
	x0 := min(max(screen.Min.X, centre.X-w/2), screen.Max.X-w)
	y0 := min(max(screen.Min.Y, centre.Y-h/2), screen.Max.Y-h)
	return image.Rect(x0, y0, x0+w, y0+h)
}

// zoomCentre is where the zoom view is centred before it is kept on the
// screen: the last action, else the window, else the screen, plus the pan.
func (p *screenPane) zoomCentre(screen image.Rectangle, win *events.Rect, focus *events.Point) image.Point {
	centre := image.Pt(screen.Min.X+screen.Dx()/2, screen.Min.Y+screen.Dy()/2)
	switch {
	case focus != nil:
		centre = image.Pt(focus.X, focus.Y)
	case win != nil:
		centre = image.Pt(win.X+win.W/2, win.Y+win.H/2)
	}
	return centre.Add(p.pan)
}

// describe names what the pane shows, for its title.
func (p *screenPane) describe(view screenView, crop image.Rectangle, focus *events.Point) string {
	switch view {
	case viewWindow:
		return fmt.Sprintf("window %d×%d", crop.Dx(), crop.Dy())
	case viewZoom:
		around := "the window"
		if focus != nil {
			around = "the click"
		}
		if p.pan != (image.Point{}) {
			around = "panned"
		}
		return fmt.Sprintf("zoom %d× (%s)", zoomFactors[p.zoom], around)
	}
	if p.view == viewWindow {
		return "whole screen (no window)"
	}
	return "whole screen"
}

// screenKeys are the screen pane's bindings, the same live and in replay.
type screenKeys struct {
	View, ZoomIn, ZoomOut, Full       key.Binding
	PanLeft, PanRight, PanUp, PanDown key.Binding
}

func newScreenKeys() screenKeys {
	b := func(keys []string, k, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, desc))
	}
	return screenKeys{
		View:     b([]string{"v"}, "v", "window/screen/zoom"),
		ZoomIn:   b([]string{"+", "="}, "+/-", "zoom in/out"),
		ZoomOut:  partner("-"),
		Full:     b([]string{"z"}, "z", "screen fills the terminal"),
		PanLeft:  b([]string{"shift+left", "alt+h"}, "shift+←↓↑→ alt+hjkl", "pan"),
		PanDown:  partner("shift+down", "alt+j"),
		PanUp:    partner("shift+up", "alt+k"),
		PanRight: partner("shift+right", "alt+l"),
	}
}

// ShortHelp lists one binding per action; the help line has little room.
func (k screenKeys) ShortHelp() []key.Binding {
	return []key.Binding{k.View, k.Full, k.ZoomIn, k.PanLeft}
}

func (k screenKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// withScreenKeys is the help line while the screen has the whole
// terminal: the screen pane's keys, then the view's last two (help and
// quit). The console's own line has no room left for them; its full help
// lists them.
type withScreenKeys struct {
	base   help.KeyMap
	screen screenKeys
}

func (k withScreenKeys) ShortHelp() []key.Binding {
	base := k.base.ShortHelp()
	return append(k.screen.ShortHelp(), base[max(0, len(base)-2):]...)
}

func (k withScreenKeys) FullHelp() [][]key.Binding {
	return append(k.base.FullHelp(), k.screen.FullHelp()...)
}

// screenKey handles the screen pane's keys; ok is false for any other key.
func (m *Model) screenKey(msg tea.KeyPressMsg) (cmd tea.Cmd, ok bool) {
	k := m.scKeys
	pan := func(dx, dy int) {
		m.screen.panBy(dx, dy, image.Rect(0, 0, m.st.ScreenW, m.st.ScreenH), m.st.WindowOn(m.st.Screen), m.st.Point, m.screenPane())
	}
	switch {
	case key.Matches(msg, k.View):
		m.screen.cycleView()
	case key.Matches(msg, k.ZoomIn):
		m.screen.zoomBy(1)
	case key.Matches(msg, k.ZoomOut):
		m.screen.zoomBy(-1)
	case key.Matches(msg, k.Full):
		m.screen.full = !m.screen.full
	case key.Matches(msg, k.PanLeft):
		pan(-1, 0)
	case key.Matches(msg, k.PanRight):
		pan(1, 0)
	case key.Matches(msg, k.PanUp):
		pan(0, -1)
	case key.Matches(msg, k.PanDown):
		pan(0, 1)
	default:
		return nil, false
	}
	return m.refreshScreen(), true
}

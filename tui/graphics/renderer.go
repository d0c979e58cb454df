package graphics

import (
	"context"
	"fmt"
	"image"
	"strings"
	"sync"

	"github.com/charmbracelet/colorprofile"
	"golang.org/x/image/draw"
)

// Pane is the rectangle the console reserves for the screen: its 1-based
// top-left screen cell, its size in cells, and the cell size in pixels
// (zero for the 10×20 default).
type Pane struct {
	Row, Col     int
	Cols, Rows   int
	CellW, CellH int
	// Enlarge scales an image smaller than the pane up to fill it in the
	// pixel modes (sixel, kitty), as a zoom should; otherwise images are
	// never enlarged, which would only cost bytes.
	Enlarge bool
}

// Frame is one screen prepared for a pane.
type Frame struct {
	// Cells is what the pane's View shows: Rows lines of Cols cells. For
	// Sixel it is blank, reserving the rectangle the image is drawn over.
	Cells string
	// Raw is written with tea.Raw once the frame is installed (kitty upload
	// and deletion of the previous image, or the positioned sixel). Sixel
	// Raw must be re-sent after every resize or full repaint, since the
	// renderer's blank cells overwrite it. Empty for Blocks and None.
	Raw string
}

// RendererOptions tune a Renderer.
type RendererOptions struct {
	// Profile is the colour profile for Blocks.
	Profile colorprofile.Profile
	// Tmux wraps raw image escapes in tmux passthrough.
	Tmux bool
	// Palette is the sixel palette policy.
	Palette SixelPalette
}

// kittyBaseID is the first of the two image ids a Renderer alternates
// between; distinctive so it does not collide with other programs' images.
const kittyBaseID = 0x6b6100

// Renderer turns screenshots into Frames for one pane in one mode. It keeps
// the sixel palette and the kitty image id between frames and is safe to
// call from the goroutine of a tea.Cmd.
type Renderer struct {
	mode  Mode
	opts  RendererOptions
	sixel *SixelEncoder

	mu     sync.Mutex
	kittyN uint32
}

// NewRenderer returns a Renderer for mode, which must not be Auto (call
// Detect first).
func NewRenderer(mode Mode, opts RendererOptions) *Renderer {
	return &Renderer{mode: mode, opts: opts, sixel: NewSixelEncoder(opts.Palette)}
}

// Mode returns the mode the renderer draws in.
func (r *Renderer) Mode() Mode { return r.mode }

// Render prepares img, screen number screen, for pane.
func (r *Renderer) Render(ctx context.Context, img image.Image, screen int, pane Pane) (Frame, error) {
	if pane.Cols <= 0 || pane.Rows <= 0 {
		return Frame{}, nil
	}
	if err := ctx.Err(); err != nil {
		return Frame{}, fmt.Errorf("render screen %d: %w", screen, err)
	}
	b := img.Bounds()
	switch r.mode {
	case Blocks:
		return Frame{Cells: RenderBlocks(img, pane.Cols, pane.Rows, r.opts.Profile)}, nil
	case Sixel:
		seq := r.sixel.Encode(fitPane(img, pane))
		if err := ctx.Err(); err != nil {
			return Frame{}, fmt.Errorf("render screen %d: %w", screen, err)
		}
		return Frame{Cells: blank(pane.Cols, pane.Rows), Raw: Positioned(pane.Row, pane.Col, r.wrap(seq))}, nil
	case Kitty:
		fitted := fitPane(img, pane)
		data, err := EncodePNG(fitted)
		if err != nil {
			return Frame{}, fmt.Errorf("render screen %d: %w", screen, err)
		}
		cols, rows := cellsFor(fitted.Rect.Dx(), fitted.Rect.Dy(), pane)
		id, old := r.nextKittyID()
		raw := r.wrap(KittyTransmit(id, data, cols, rows))
		if old != 0 {
			raw += r.wrap(KittyDelete(old))
		}
		return Frame{Cells: pad(KittyPlaceholders(id, cols, rows), cols, pane), Raw: raw}, nil
	default:
		return Frame{Cells: pad(Label(screen, b.Dx(), b.Dy()), 0, pane)}, nil
	}
}

// fitPane fits img to the pane's pixels, enlarging it when the pane asks.
func fitPane(img image.Image, pane Pane) *image.RGBA {
	fitted := Fit(img, pane.Cols, pane.Rows, pane.CellW, pane.CellH)
	if !pane.Enlarge {
		return fitted
	}
	cw, ch := pane.CellW, pane.CellH
	if cw <= 0 || ch <= 0 {
		cw, ch = DefaultCellWidth, DefaultCellHeight
	}
	b := img.Bounds()
	w, h := fitSize(b.Dx()*64, b.Dy()*64, pane.Cols*cw, pane.Rows*ch)
	if w <= fitted.Rect.Dx() || h <= fitted.Rect.Dy() {
		return fitted
	}
	big := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(big, big.Rect, img, b, draw.Src, nil)
	return big
}

// nextKittyID alternates between two ids so the new image can be uploaded
// before the old one is deleted; it returns the new id and the one to
// delete (0 for the first frame).
func (r *Renderer) nextKittyID() (id, old uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kittyN++
	id = kittyBaseID + r.kittyN%2
	if r.kittyN > 1 {
		old = kittyBaseID + (r.kittyN-1)%2
	}
	return id, old
}

func (r *Renderer) wrap(seq string) string {
	if r.opts.Tmux {
		return TmuxPassthrough(seq)
	}
	return seq
}

// cellsFor returns how many cells a w×h pixel image covers in pane.
func cellsFor(w, h int, pane Pane) (int, int) {
	cw, ch := pane.CellW, pane.CellH
	if cw <= 0 || ch <= 0 {
		cw, ch = DefaultCellWidth, DefaultCellHeight
	}
	return min(pane.Cols, max(1, (w+cw-1)/cw)), min(pane.Rows, max(1, (h+ch-1)/ch))
}

// blank returns rows lines of cols spaces.
func blank(cols, rows int) string {
	line := strings.Repeat(" ", cols)
	return strings.TrimSuffix(strings.Repeat(line+"\n", rows), "\n")
}

// pad extends the lines of s, which are w cells wide (0: as many cells as
// runes), to the pane's width and height with spaces.
func pad(s string, w int, pane Pane) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lw := w
		if lw == 0 {
			lw = len([]rune(l))
		}
		if lw < pane.Cols {
			lines[i] = l + strings.Repeat(" ", pane.Cols-lw)
		}
	}
	for len(lines) < pane.Rows {
		lines = append(lines, strings.Repeat(" ", pane.Cols))
	}
	return strings.Join(lines[:pane.Rows], "\n")
}

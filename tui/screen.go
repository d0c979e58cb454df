package tui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"io/fs"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
	"github.com/kasmrt/kasmrt/tui/graphics"
)

// screenRequest is what the screen pane should show: one capture with its
// marks, or a grounding's before and after side by side.
type screenRequest struct {
	Screen        string // relative to the report directory
	Point         *events.Point
	Box           *events.Rect
	Before, After string // compare mode when both are set
	// Crop is the part of the screen to show (the zero rectangle: all).
	Crop image.Rectangle
	Pane graphics.Pane
	// Pixels, when set, is Screen's image in memory (a live run's newest
	// capture), read instead of its file; it is Screen's, so the key
	// does not name it.
	Pixels events.ScreenPixels
}

// key identifies a request so a finished render can be matched to what the
// pane wants now.
func (r screenRequest) key() string {
	return fmt.Sprintf("%s|%v|%v|%s|%s|%v|%+v", r.Screen, ptrPoint(r.Point), ptrRect(r.Box), r.Before, r.After, r.Crop, r.Pane)
}

func ptrPoint(p *events.Point) any {
	if p == nil {
		return nil
	}
	return *p
}

func ptrRect(r *events.Rect) any {
	if r == nil {
		return nil
	}
	return *r
}

// frameMsg carries a rendered screen back to Update.
type frameMsg struct {
	key   string
	frame graphics.Frame
	err   error
}

// renderScreen returns the command that loads, marks and encodes a request
// off the UI goroutine.
func renderScreen(ctx context.Context, r *graphics.Renderer, dir string, req screenRequest) tea.Cmd {
	return func() tea.Msg {
		img, err := loadScreenWhenWritten(ctx, dir, req)
		if err != nil {
			return frameMsg{key: req.key(), err: err}
		}
		f, err := r.Render(ctx, img, screenNumber(req.Screen), req.Pane)
		return frameMsg{key: req.key(), frame: f, err: err}
	}
}

// screenWriteWait is how long a screen the stream announced may take to
// appear in the report directory: the report writes its PNG off the run's
// critical path, so the event can come first.
const screenWriteWait = 5 * time.Second

// loadScreenWhenWritten is loadScreen, trying again while the file is
// missing or still being written, so the first frame of a capture shows as
// soon as it exists rather than an error.
func loadScreenWhenWritten(ctx context.Context, dir string, req screenRequest) (image.Image, error) {
	deadline := time.Now().Add(screenWriteWait)
	for {
		img, err := loadScreen(dir, req)
		if err == nil || !(errors.Is(err, fs.ErrNotExist) || errors.Is(err, io.ErrUnexpectedEOF)) || time.Now().After(deadline) {
			return img, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("load screen: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// loadScreen reads the request's PNGs from the report directory and draws
// the marks or the side-by-side composition.
func loadScreen(dir string, req screenRequest) (image.Image, error) {
	read := func(rel string) (image.Image, error) {
		if req.Pixels != nil && rel == req.Screen {
			img, err := req.Pixels.Image()
			if err != nil {
				return nil, fmt.Errorf("load screen %s: %w", rel, err)
			}
			return img, nil
		}
		return readPNG(dir, rel)
	}
	if req.Before != "" && req.After != "" {
		before, err := read(req.Before)
		if err != nil {
			return nil, err
		}
		after, err := read(req.After)
		if err != nil {
			return nil, err
		}
		return sideBySide(before, after, req.Point, req.Crop), nil
	}
	img, err := read(req.Screen)
	if err != nil {
		return nil, err
	}
	if req.Point == nil && req.Box == nil {
		// Shared with the run when it came in memory: only read.
		return cropTo(img, req.Crop), nil
	}
	// The marks are drawn on a copy of the part shown, never on the
	// image itself, which the run may share.
	rgba := copyPart(img, req.Crop)
	markBox(rgba, req.Box, img.Bounds())
	markPoint(rgba, req.Point, img.Bounds())
	return rgba, nil
}

// copyPart copies the part r of img (all of it when r is empty or lies
// outside it, as cropTo), keeping img's coordinates.
func copyPart(img image.Image, r image.Rectangle) *image.RGBA {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		r = img.Bounds()
	}
	out := image.NewRGBA(r)
	draw.Draw(out, r, img, r.Min, draw.Src)
	return out
}

// cropTo returns the part r of img, or all of it when r is empty or lies
// outside it (a capture of another size than its event said).
func cropTo(img image.Image, r image.Rectangle) image.Image {
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	r = r.Intersect(img.Bounds())
	if r.Empty() || !ok {
		return img
	}
	return sub.SubImage(r)
}

func readPNG(dir, rel string) (image.Image, error) {
	// The run writes screens in the background after announcing them.
	f, err := report.OpenScreen(dir, rel)
	if err != nil {
		return nil, fmt.Errorf("load screen: %w", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode screen %s: %w", rel, err)
	}
	return img, nil
}

func toRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Bounds(), img, b.Min, draw.Src)
	return out
}

// markColour is bright magenta: rare in application UIs, so the mark reads
// against any screen.
var markColour = color.RGBA{R: 255, G: 0, B: 220, A: 255}

// thickness scales marks with the image so they survive downscaling to a
// terminal pane.
func thickness(b image.Rectangle) int { return max(2, b.Dx()/320) }

// markPoint draws a crosshair with a gap at the click point, as thick as
// on the whole screen, whatever part of it img holds.
func markPoint(img *image.RGBA, p *events.Point, screen image.Rectangle) {
	if p == nil {
		return
	}
	b := img.Bounds()
	t := thickness(screen)
	arm, gap := 8*t, 2*t
	fill := func(r image.Rectangle) {
		draw.Draw(img, r.Intersect(b), image.NewUniform(markColour), image.Point{}, draw.Src)
	}
	fill(image.Rect(p.X-arm, p.Y-t/2, p.X-gap, p.Y-t/2+t))
	fill(image.Rect(p.X+gap, p.Y-t/2, p.X+arm, p.Y-t/2+t))
	fill(image.Rect(p.X-t/2, p.Y-arm, p.X-t/2+t, p.Y-gap))
	fill(image.Rect(p.X-t/2, p.Y+gap, p.X-t/2+t, p.Y+arm))
}

// markBox outlines a grounding box, as thick as on the whole screen.
func markBox(img *image.RGBA, r *events.Rect, screen image.Rectangle) {
	if r == nil {
		return
	}
	b := img.Bounds()
	t := thickness(screen)
	fill := func(rr image.Rectangle) {
		draw.Draw(img, rr.Intersect(b), image.NewUniform(markColour), image.Point{}, draw.Src)
	}
	x0, y0, x1, y1 := r.X, r.Y, r.X+r.W, r.Y+r.H
	fill(image.Rect(x0, y0, x1, y0+t))
	fill(image.Rect(x0, y1-t, x1, y1))
	fill(image.Rect(x0, y0, x0+t, y1))
	fill(image.Rect(x1-t, y0, x1, y1))
}

// sideBySide puts before and after next to each other with a gap, the
// click point marked on both, each cut to crop when it is set.
func sideBySide(before, after image.Image, p *events.Point, crop image.Rectangle) image.Image {
	left := toRGBA(before)
	right := toRGBA(after)
	markPoint(left, p, left.Bounds())
	markPoint(right, p, right.Bounds())
	l, r := cropTo(left, crop), cropTo(right, crop)
	lb, rb := l.Bounds(), r.Bounds()
	gap := max(8, lb.Dx()/40)
	out := image.NewRGBA(image.Rect(0, 0, lb.Dx()+gap+rb.Dx(), max(lb.Dy(), rb.Dy())))
	draw.Draw(out, out.Bounds(), image.NewUniform(color.RGBA{A: 255}), image.Point{}, draw.Src)
	draw.Draw(out, image.Rect(0, 0, lb.Dx(), lb.Dy()), l, lb.Min, draw.Src)
	draw.Draw(out, image.Rect(lb.Dx()+gap, 0, lb.Dx()+gap+rb.Dx(), rb.Dy()), r, rb.Min, draw.Src)
	return out
}

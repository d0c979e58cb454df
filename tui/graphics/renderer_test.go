package graphics

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

func TestRenderer(t *testing.T) {
	t.Parallel()
	frame := loadFrame(t, "frame-640x400.png")
	pane := Pane{Row: 3, Col: 41, Cols: 40, Rows: 12}
	for _, tc := range []struct {
		mode      Mode
		rawPrefix string
		cells     string // a substring the cells must contain
	}{
		{None, "", "[screen 0007 · 640×400]"},
		{Blocks, "", "▀"},
		{Sixel, "\x1b7\x1b[3;41H\x1bPq\"1;1;384;240", ""},
		{Kitty, "\x1b_Ga=T,U=1,f=100,q=2,i=", "\U0010EEEE"},
	} {
		r := NewRenderer(tc.mode, RendererOptions{Profile: colorprofile.TrueColor})
		f, err := r.Render(context.Background(), frame, 7, pane)
		if err != nil {
			t.Fatalf("%v: %v", tc.mode, err)
		}
		if !strings.HasPrefix(f.Raw, tc.rawPrefix) || (tc.rawPrefix == "") != (f.Raw == "") {
			t.Errorf("%v: raw starts %q, want prefix %q", tc.mode, f.Raw[:min(40, len(f.Raw))], tc.rawPrefix)
		}
		if !strings.Contains(f.Cells, tc.cells) {
			t.Errorf("%v: cells lack %q", tc.mode, tc.cells)
		}
		lines := strings.Split(f.Cells, "\n")
		if len(lines) != pane.Rows {
			t.Errorf("%v: %d lines, want %d", tc.mode, len(lines), pane.Rows)
		}
		if tc.mode == Kitty {
			// The next frame uploads under the other id and deletes this one.
			g, err := r.Render(context.Background(), frame, 8, pane)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(g.Raw, KittyDelete(kittyBaseID+1)) || strings.Contains(g.Raw, "i="+strconv.Itoa(kittyBaseID+1)+",c=") {
				t.Errorf("second kitty frame does not replace the first image")
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRenderer(Sixel, RendererOptions{}).Render(ctx, frame, 1, pane); err == nil {
		t.Error("Render with a cancelled context succeeded")
	}
}

// TestRendererEnlarge checks that a pane asking for it (the zoom view)
// gets a small image scaled up to fill it, and that others never do.
func TestRendererEnlarge(t *testing.T) {
	t.Parallel()
	small := gradient(100, 60)
	for _, tc := range []struct {
		enlarge bool
		raster  string
	}{
		{false, "\"1;1;100;60"},
		{true, "\"1;1;400;240"},
	} {
		pane := Pane{Row: 1, Col: 1, Cols: 40, Rows: 12, Enlarge: tc.enlarge}
		f, err := NewRenderer(Sixel, RendererOptions{}).Render(context.Background(), small, 1, pane)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(f.Raw, tc.raster) {
			t.Errorf("enlarge %v: sixel raster is not %s: %q", tc.enlarge, tc.raster, f.Raw[:min(40, len(f.Raw))])
		}
	}
}

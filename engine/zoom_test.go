package engine

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/model"
	mt "github.com/kasmrt/kasmrt/engine/model/modeltest"
	"github.com/kasmrt/kasmrt/engine/vision"
)

// zoomRedBox finds the bounding box of xterm's red background cells in img.
func zoomRedBox(img image.Image) image.Rectangle {
	b := img.Bounds()
	box := image.Rectangle{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			if c.R > 150 && c.G < 80 && c.B < 80 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// zoomScript is a goal run that clicks the red bar by description (the
// locate passes and the check answered by zoomModel) and then ends.
func zoomScript(t *testing.T) []mt.Exchange {
	return []mt.Exchange{
		mt.Call("observe_screen", `{}`),
		mt.Call("click_grounded", `{"description": "the red bar", "expect": "nothing changes"}`),
		zoomModel(t), zoomModel(t), zoomModel(t),
		mt.Call("check_expectation", `{"expectation": "a red bar is shown"}`),
		zoomModel(t),
		mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "clicked"}`),
	}
}

// zoomModel answers locate requests the way a vision model errs: it sees
// the red target in the image it is sent and names its centre, off by a
// twenty-fifth of the image's width and height — the larger the area it
// looks at, the larger its error. Judge requests are answered met.
func zoomModel(t *testing.T) mt.Exchange {
	return mt.Func(func(req mt.Request) mt.Exchange {
		locate, _ := loopIsVision(req)
		if !locate {
			return mt.Text(`{"met": true, "reason": "as expected"}`)
		}
		imgs, err := req.Images()
		if err != nil || len(imgs) != 1 {
			t.Errorf("locate request %d: %d images, %v", req.N, len(imgs), err)
			return mt.Text(`{"found": false}`)
		}
		b := imgs[0].Bounds()
		red := zoomRedBox(imgs[0])
		if red.Empty() {
			return mt.Text(`{"found": false}`)
		}
		x := float64(red.Min.X+red.Max.X)/2 + float64(b.Dx())/25
		y := float64(red.Min.Y+red.Max.Y)/2 + float64(b.Dy())/25
		out, _ := json.Marshal(map[string]any{"point": []float64{x, y}})
		return mt.Text(string(out))
	})
}

// A profile that scales the screen down (gpt: 768 pixels on the short side)
// locates in two passes: the whole screen, then a full-resolution crop
// around the first answer. A target on a real xterm that the first pass
// misses by more than its size is hit by the second; both passes are in
// grounding[], the second with its crop; check_expectation is asked about
// the application window at full resolution.
func TestZoomedGrounding(t *testing.T) {
	t.Parallel()
	loopNeed(t, "xterm")
	r := loopRun(t, loopCase{
		scenario: `name: zoom
app:
  command: [xterm, -geometry, 90x24+80+60, -e, sh, -c, 'printf "\n\n\n\n\n\n\n\n                              \033[41m      \033[0m\n                              \033[41m      \033[0m\n"; sleep 3600']
goal: Click the red bar.
`,
		operator: `runner:
  settle_interval_ms: 30
  settle_cap_ms: 400
model:
  endpoint: ENDPOINT
  profile: gpt
  retry: 0
  timeout: 5
`,
		script: zoomScript(t),
	})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
	if len(r.rep.Grounding) != 2 {
		t.Fatalf("grounding %+v, want the two passes of one attempt", r.rep.Grounding)
	}
	first, second := r.rep.Grounding[0], r.rep.Grounding[1]
	if first.Outcome != events.GroundingLocated || first.Pass != 1 || first.Crop != nil || first.Point == nil {
		t.Errorf("first pass %+v, want located on the whole screen", first)
	}
	if second.Outcome != events.GroundingConfirmed || second.Pass != 2 || second.Crop == nil || second.Point == nil {
		t.Fatalf("second pass %+v, want confirmed on a crop", second)
	}
	// The target, as the before screen shows it at full resolution.
	var before string
	for _, e := range r.events {
		if e.Kind == events.KindGrounding && e.Grounding.Pass == 2 {
			before = e.Grounding.Before
		}
	}
	screens := maskScreens(t, r.dir)
	target := zoomRedBox(screens[filepath.Base(before)])
	if target.Empty() || target.Dx() > 60 || target.Dy() > 40 {
		t.Fatalf("the target on %s is %v, want xterm's small red bar", before, target)
	}
	p1, p2 := image.Pt(first.Point.X, first.Point.Y), image.Pt(second.Point.X, second.Point.Y)
	centre := vision.Centre(target)
	if p1.In(target) || loopAbs(p1.X-centre.X) <= target.Dx() && loopAbs(p1.Y-centre.Y) <= target.Dy() {
		t.Errorf("the first pass answered %v, within a target's size of the target %v: the test shows no zoom", p1, target)
	}
	if !p2.In(target) {
		t.Errorf("the second pass clicked %v, outside the target %v", p2, target)
	}
	crop := image.Rect(second.Crop.X, second.Crop.Y, second.Crop.X+second.Crop.W, second.Crop.Y+second.Crop.H)
	if !target.In(crop) || !p1.In(crop) {
		t.Errorf("crop %v does not hold the target %v and the first answer %v", crop, target, p1)
	}
	// What the model was sent: the whole screen scaled down, then the crop
	// as it is; the check, the window as it is.
	var sizes []image.Point
	for _, req := range r.reqs {
		locate, judge := loopIsVision(req)
		if !locate && !judge {
			continue
		}
		imgs, err := req.Images()
		if err != nil {
			t.Fatal(err)
		}
		for _, img := range imgs {
			sizes = append(sizes, img.Bounds().Size())
		}
	}
	win := loopWindowBox(r.events)
	want := []image.Point{{1229, 768}, crop.Size(), {1229, 768}, {1229, 768}, {win.W, win.H}}
	if len(sizes) != len(want) {
		t.Fatalf("vision images %v, want %v", sizes, want)
	}
	for i := range want {
		if sizes[i] != want[i] {
			t.Errorf("vision image %d is %v, want %v (all: %v)", i+1, sizes[i], want[i], sizes)
		}
	}
	if s := r.rep.Steps[2]; s.Tool != "check_expectation" || !strings.Contains(s.Message, "judged on the application window, at full resolution") {
		t.Errorf("check step %s %q, want it judged on the window", s.Tool, s.Message)
	}
}

// Zoom keeps the crop inside the screen, around the point, and small
// enough for the profile to send at full resolution.
func TestZoomCrop(t *testing.T) {
	t.Parallel()
	gpt, err := model.LookupProfile("gpt")
	if err != nil {
		t.Fatal(err)
	}
	screen := image.Rect(0, 0, 1280, 800)
	tests := []struct {
		name string
		at   image.Point
		want image.Rectangle
	}{
		{"centred", image.Pt(640, 400), image.Rect(507, 267, 773, 533)},
		{"at the top left", image.Pt(5, 5), image.Rect(0, 0, 266, 266)},
		{"at the bottom right", image.Pt(1279, 799), image.Rect(1014, 534, 1280, 800)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := vision.Zoom(screen, tt.at, gpt)
			if got != tt.want {
				t.Errorf("Zoom(%v) = %v, want %v", tt.at, got, tt.want)
			}
			if vision.Downscales(got.Size(), gpt) {
				t.Errorf("the crop %v would be scaled down", got)
			}
		})
	}
	if !vision.Downscales(screen.Size(), gpt) || vision.Downscales(image.Pt(640, 400), gpt) {
		t.Error("gpt scales 1280x800 down and 640x400 not")
	}
}

// TestRulesZoomedGrounding is TestZoomedGrounding on the double: a
// downscaling profile locates in two passes, the second on a
// full-resolution crop around the first answer, which it corrects; and
// check_expectation is asked about the application's window at full
// resolution, not the whole screen scaled down.
func TestRulesZoomedGrounding(t *testing.T) {
	t.Parallel()
	screen := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	draw.Draw(screen, fakeWindowBox(), image.White, image.Point{}, draw.Src)
	target := image.Rect(260, 150, 330, 190)
	draw.Draw(screen, target, image.NewUniform(color.RGBA{R: 0xcd, A: 0xff}), image.Point{}, draw.Src)
	r := loopRun(t, loopCase{
		machine:  &fakeMachine{frames: []*image.RGBA{screen}},
		scenario: rulesGoal,
		operator: "session:\n  width: 1280\n  height: 800\nmodel:\n  endpoint: ENDPOINT\n  profile: gpt\n  retry: 0\n  timeout: 5\n",
		script:   zoomScript(t),
	})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 4, 0)
	if len(r.rep.Grounding) != 2 {
		t.Fatalf("grounding %+v, want the two passes of one attempt", r.rep.Grounding)
	}
	first, second := r.rep.Grounding[0], r.rep.Grounding[1]
	if first.Outcome != events.GroundingLocated || first.Pass != 1 || first.Crop != nil || first.Point == nil {
		t.Fatalf("first pass %+v, want located on the whole screen", first)
	}
	if second.Outcome != events.GroundingConfirmed || second.Pass != 2 || second.Crop == nil || second.Point == nil {
		t.Fatalf("second pass %+v, want confirmed on a crop", second)
	}
	p1, p2 := image.Pt(first.Point.X, first.Point.Y), image.Pt(second.Point.X, second.Point.Y)
	if p1.In(target) || !p2.In(target) {
		t.Errorf("passes at %v and %v: want the first off the target %v and the second on it", p1, p2, target)
	}
	crop := image.Rect(second.Crop.X, second.Crop.Y, second.Crop.X+second.Crop.W, second.Crop.Y+second.Crop.H)
	if !target.In(crop) || !p1.In(crop) {
		t.Errorf("crop %v does not hold the target %v and the first answer %v", crop, target, p1)
	}
	var sizes []image.Point
	for _, req := range r.reqs {
		if locate, judge := loopIsVision(req); locate || judge {
			imgs, err := req.Images()
			if err != nil {
				t.Fatal(err)
			}
			for _, img := range imgs {
				sizes = append(sizes, img.Bounds().Size())
			}
		}
	}
	want := []image.Point{{1229, 768}, crop.Size(), {1229, 768}, {1229, 768}, fakeWindowBox().Size()}
	if !slices.Equal(sizes, want) {
		t.Errorf("vision images %v, want %v", sizes, want)
	}
	if s := r.rep.Steps[2]; s.Tool != "check_expectation" || !strings.Contains(s.Message, "(judged on the application window, at full resolution)") {
		t.Errorf("check step %s %q, want it judged on the window", s.Tool, s.Message)
	}
}

// TestRulesZoomedGroundingSecondPassFails: a second pass that finds
// nothing leaves the first answer standing, and the click goes there.
func TestRulesZoomedGroundingSecondPassFails(t *testing.T) {
	t.Parallel()
	screen := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	draw.Draw(screen, fakeWindowBox(), image.White, image.Point{}, draw.Src)
	draw.Draw(screen, image.Rect(260, 150, 330, 190), image.NewUniform(color.RGBA{R: 0xcd, A: 0xff}), image.Point{}, draw.Src)
	f := &fakeMachine{frames: []*image.RGBA{screen}}
	r := loopRun(t, loopCase{
		machine:  f,
		scenario: rulesGoal,
		operator: "session:\n  width: 1280\n  height: 800\nmodel:\n  endpoint: ENDPOINT\n  profile: gpt\n  retry: 0\n  timeout: 5\n",
		script: []mt.Exchange{
			mt.Call("observe_screen", `{}`),
			mt.Call("click_grounded", `{"description": "the red bar", "expect": "nothing changes"}`),
			zoomModel(t), mt.Text(`{"found": false}`), zoomModel(t),
			mt.Call("record_verdict", `{"verdict": "goal-met", "reason": "clicked"}`),
		},
	})
	loopWant(t, r, loopUnverified, OutcomeCompleted, 3, 0)
	if len(r.rep.Grounding) != 2 {
		t.Fatalf("grounding %+v, want the first pass and the click", r.rep.Grounding)
	}
	first, clicked := r.rep.Grounding[0], r.rep.Grounding[1]
	if clicked.Pass != 1 || clicked.Crop != nil || clicked.Point == nil || *clicked.Point != *first.Point {
		t.Errorf("clicked %+v, want the first pass's answer %+v", clicked, first.Point)
	}
	if ins := f.inputs(); len(ins) != 1 || ins[0] != fmt.Sprintf("click %d,%d", first.Point.X, first.Point.Y) {
		t.Errorf("inputs %q, want one click at the first answer", ins)
	}
}

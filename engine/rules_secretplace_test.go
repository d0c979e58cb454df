package engine

import (
	"errors"
	"image"
	"image/color"
	"image/draw"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/events"
)

// rulesBoundPage is a headless browser scenario whose password may only
// go into the page's password field on the application's origin.
const rulesBoundPage = `name: rules bound page
browser:
  mode: launch
  start_url: http://app.test/login
  headless: true
provides:
  password:
    secret:
      env: APP_PASSWORD
      into:
        - {cdp_target: password, origin: "http://app.test"}
cdp_targets:
  username: "input[name=username]"
  password: "input[name=password]"
`

// TestRulesSecretIntoPage checks secret.into on the double's page: a fill
// of the bound target and typing into the focused bound field go ahead;
// a fill of another target and typing where the focus is on another
// field, or on no target at all, are refused with where the value would
// have gone, and nothing is typed or filled.
func TestRulesSecretIntoPage(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-page-secret"
	cases := []struct {
		name, step, focus string
		status            events.Status
		message           string
		inputs            int
	}{
		{"a fill of the bound target", "cdp_fill: {target: password, ref: password}", "", events.StatusOK, `filled password with the secret value "password"`, 1},
		{"a fill of another target", "cdp_fill: {target: username, ref: password}", "input[name=password]", events.StatusRefused,
			`this cdp_fill would put it into cdp target "username" on http://app.test`, 0},
		{"typing into the focused bound field", "type_text: password", "input[name=password]", events.StatusOK, "", len(typedChunks(secret))},
		{"typing into another focused field", "type_text: password", "input[name=username]", events.StatusRefused,
			`this type_text would put it into the focused element (cdp target "username") on http://app.test`, 0},
		{"typing where no target has the focus", "type_text: password", "", events.StatusRefused,
			"this type_text would put it into the focused element of the page, which is no cdp target on http://app.test", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeMachine{focusSel: c.focus}
			r := loopRun(t, loopCase{scenario: rulesBoundPage + "steps:\n  - " + c.step + "\n", operator: "runner: {}\n", machine: f,
				env: map[string]string{"APP_PASSWORD": secret}})
			if len(r.rep.Steps) != 1 || r.rep.Steps[0].Status != c.status || !strings.Contains(r.rep.Steps[0].Message, c.message) {
				t.Fatalf("steps = %+v, want one %s containing %q", r.rep.Steps, c.status, c.message)
			}
			// A refusal ends with where the value would have gone.
			if c.status == events.StatusRefused && !strings.HasSuffix(r.rep.Steps[0].Message, c.message) {
				t.Errorf("refusal %q, want it to end with %q", r.rep.Steps[0].Message, c.message)
			}
			// The start page's navigation comes first.
			if got := f.inputs(); len(got) != 1+c.inputs {
				t.Errorf("input = %q, want %d besides the navigation", got, c.inputs)
			}
		})
	}
}

// TestRulesSecretFieldMasked: a secret filled into a page's field is
// masked where the field is on every kept screen, following the field
// when the page moves it; typed into the page's focused element, the
// element's place then is masked, since the focus moves on. A field whose
// place cannot be read stays masked where it was last seen.
func TestRulesSecretFieldMasked(t *testing.T) {
	t.Parallel()
	// The run also watches the screen for the secret with OCR, and a
	// screen it cannot read is masked whole: the case needs tesseract.
	scriptNeed(t, ocr.Command)
	white := image.NewRGBA(image.Rect(0, 0, 640, 400))
	draw.Draw(white, white.Bounds(), image.White, image.Point{}, draw.Src)
	field, moved := image.Rect(100, 100, 300, 124), image.Rect(100, 250, 300, 274)
	const sel = "input[name=password]"
	// A headed browser's page starts below its toolbars.
	viewport := image.Pt(20, 60)
	headed := strings.Replace(rulesBoundPage, "  headless: true\n", "  headless: false\n", 1)
	cases := []struct {
		name, scenario, step, focus string
		viewport                    image.Point
		masked, clear               image.Rectangle
		// unreadable makes the field's place unreadable after the fill.
		unreadable bool
	}{
		{"filled", rulesBoundPage, "cdp_fill: {target: password, ref: password}", "", image.Point{}, moved, field, false},
		{"typed into the focus", rulesBoundPage, "type_text: password", sel, image.Point{}, field, moved, false},
		{"filled in a headed browser's window", headed, "cdp_fill: {target: password, ref: password}", "", viewport, moved.Add(viewport), moved, false},
		{"filled, then its place unreadable", rulesBoundPage, "cdp_fill: {target: password, ref: password}", "", image.Point{}, field, moved, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The page's screens come encoded, as a browser's do: the
			// masked ones must not be kept as they came.
			f := &fakeMachine{frames: []*image.RGBA{white}, focusSel: c.focus, boxes: map[string]image.Rectangle{sel: field}, viewport: c.viewport,
				on: func(f *fakeMachine, in string) {
					if strings.HasPrefix(in, "navigate ") {
						return
					}
					// The page lays itself out again: the field moves down,
					// or its place can no longer be read.
					f.mu.Lock()
					f.boxes[sel] = moved
					if c.unreadable {
						f.boxErr = errors.New("the page is between documents")
					}
					f.mu.Unlock()
				}}
			r := loopRun(t, loopCase{scenario: c.scenario + "steps:\n  - " + c.step + "\n  - observe_screen: {}\n", operator: "runner: {}\n", machine: f,
				env: map[string]string{"APP_PASSWORD": "hunter2-page-secret"}})
			loopWant(t, r, events.VerdictPass, OutcomeCompleted, 0, 0)
			img := readScreen(t, filepath.Join(r.dir, r.rep.Steps[1].Screen))
			black := func(p image.Point) bool { return color.GrayModel.Convert(img.At(p.X, p.Y)).(color.Gray).Y == 0 }
			last := image.Pt(1, 1)
			if !black(c.masked.Min) || !black(c.masked.Max.Sub(last)) || black(c.clear.Min) || black(c.clear.Max.Sub(last)) || black(image.Pt(500, 50)) {
				t.Errorf("want %v blacked out alone on the observed screen", c.masked)
			}
		})
	}
}

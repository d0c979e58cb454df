package tui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/engine/events"
)

// kasmrtBinary builds cmd/kasmrt once for the real-terminal tests.
var kasmrtBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "kasmrt-tui-test")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "kasmrt")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/kasmrt/kasmrt/cmd/kasmrt").CombinedOutput()
	if err != nil {
		return "", errors.New("go build cmd/kasmrt: " + err.Error() + "\n" + string(out))
	}
	return bin, nil
})

func buildKasmrt(t *testing.T) string {
	t.Helper()
	bin, err := kasmrtBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func needBinary(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed (Debian package needed for this real-terminal test)", name)
	}
}

// TestReplayInTmux runs the built kasmrt replay in a real terminal (tmux),
// sends keys and reads the screen back with capture-pane.
func TestReplayInTmux(t *testing.T) {
	t.Parallel()
	needBinary(t, "tmux")
	bin := buildKasmrt(t)
	dir := t.TempDir()
	evs := sampleEvents()
	writeReport(t, dir, evs, true)
	socket := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) (string, error) {
		out, err := exec.Command("tmux", append([]string{"-S", socket}, args...)...).CombinedOutput()
		return string(out), err
	}
	if out, err := tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "replay",
		"env", "TERM=tmux-256color", bin, "replay", dir, "--graphics", "blocks"); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tmux("kill-server") })
	screen := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			out, err := tmux("capture-pane", "-p", "-t", "replay")
			if err == nil && strings.Contains(out, want) {
				return out
			}
			if time.Now().After(deadline) {
				t.Fatalf("the terminal never showed %q; last screen:\n%s", want, out)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	at := func(i int) string { return fmt.Sprintf("event %d/%d", i+1, len(evs)) }
	var refusals []int
	for i, e := range evs {
		if isRefusal(e) {
			refusals = append(refusals, i)
		}
	}
	last := at(len(evs) - 1)
	screen(last)
	screen("pass-with-concerns (completed)")
	steps := []struct{ keys, want string }{
		{"<", at(0)},
		{"r", at(refusals[0])},
		{"r", at(refusals[1])},
		{"g", "grounding step 4 attempt 1"},
		{"b", "before | after"},
		{"f", "timeline · refusals only"},
		{"?", "previous grounding"},
		{"Escape", "timeline · refusals only"},
		{"End", last},
	}
	for _, s := range steps {
		if out, err := tmux("send-keys", "-t", "replay", s.keys); err != nil {
			t.Fatalf("send-keys %s: %v\n%s", s.keys, err, out)
		}
		screen(s.want)
	}
	if out, err := tmux("send-keys", "-t", "replay", "q"); err != nil {
		t.Fatalf("send-keys q: %v\n%s", err, out)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := tmux("has-session", "-t", "replay"); err != nil {
			break // q ended the program and with it the session
		}
		if time.Now().After(deadline) {
			t.Fatal("q did not end kasmrt replay")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReplayCommand checks --print and the exit code for a bad report
// directory.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	bin := buildKasmrt(t)
	dir := t.TempDir()
	evs := sampleEvents()
	writeReport(t, dir, evs, false)
	// Tear the last line, as a killed run leaves it.
	path := filepath.Join(dir, "events.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data[:len(data)-20], 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "replay", dir, "--print").Output()
	if err != nil {
		t.Fatalf("replay --print: %v", err)
	}
	for _, want := range []string{
		`step 1 click {"target":"center"} → REFUSED`,
		"call observe_screen (or check_expectation) first",
		`step 2 clik {"target":"center"} → MALFORMED`,
		`grounding step 4 attempt 1: "the terminal window"`,
		"QUESTION q1: Which greeting should I type?",
		"answer q1 by console: the provided one",
		"operator pause",
		`CONCERN: the grounded click on "the terminal window" is unverified`,
		"model says: The greeting is printed.",
		"verdict pass-with-concerns (completed)",
		"iterations           11/25",
		// model.request's size, which the transcript once read under a
		// key no producer wrote.
		requestLine(t, evs, 4),
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "run ended") {
		t.Error("the torn last line (run.ended) was not dropped")
	}
	for _, args := range [][]string{
		{"replay", filepath.Join(dir, "missing"), "--print"},
		{"replay", t.TempDir(), "--print"}, // no events.jsonl
		{"replay", dir, "--graphics", "holograms"},
	} {
		err := exec.Command(bin, args...).Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("kasmrt %s: %v, want exit 3", strings.Join(args, " "), err)
		}
	}
}

// TestReplaySixelInXterm runs kasmrt replay --graphics sixel in an xterm
// with sixel graphics (VT340 emulation) on a real Xvfb and checks, with the
// runtime's own X11 capture, that the screen pane shows the image: many
// colours where a text pane would show two or three.
func TestReplaySixelInXterm(t *testing.T) {
	t.Parallel()
	needBinary(t, "Xvfb")
	needBinary(t, "xterm")
	bin := buildKasmrt(t)
	dir := t.TempDir()
	writeReport(t, dir, sampleEvents(), true)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := x11.StartSession(ctx, x11.SessionOptions{Width: 1024, Height: 768})
	if err != nil {
		t.Fatalf("start Xvfb: %v", err)
	}
	defer sess.Close()
	conn, err := x11.Dial(sess.Display())
	if err != nil {
		t.Fatalf("dial X: %v", err)
	}
	defer conn.Close()

	// Before xterm: the pane region is root-window black.
	xt := exec.CommandContext(ctx, "xterm", "-display", sess.Display(), "-ti", "vt340",
		"-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256",
		"-xrm", "XTerm*sixelScrolling: true",
		"-geometry", "120x40+0+0", "-fn", "fixed",
		"-e", bin, "replay", dir, "--graphics", "sixel")
	xt.Env = append(os.Environ(), "TERM=xterm", "NO_COLOR=")
	if err := xt.Start(); err != nil {
		t.Fatalf("start xterm: %v", err)
	}
	defer func() { _ = xt.Process.Kill(); _ = xt.Wait() }()

	// The screen pane starts at cell (3, 2); with the 6×13 "fixed" font a
	// region of 40×10 cells inside it is 240×130 pixels.
	region := image.Rect(2*6, 3*13, 2*6+240, 3*13+130)
	var colours int
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		img, err := conn.Capture(ctx)
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		colours = distinctColours(img, region)
		if colours >= 24 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the screen pane shows %d distinct colours, want an image (≥ 24)", colours)
}

func distinctColours(img *image.RGBA, r image.Rectangle) int {
	seen := map[[3]uint8]bool{}
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := img.PixOffset(x, y)
			seen[[3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}] = true
		}
	}
	return len(seen)
}

// requestLine is the transcript's line for the model request of turn n,
// with the size the recorded event carries (which must be there).
func requestLine(t *testing.T, evs []events.Event, turn int) string {
	t.Helper()
	for _, e := range evs {
		if d, ok := e.Data.(events.ModelRequest); ok && d.Iteration == turn {
			if d.ImageBytes == 0 || d.Messages == 0 {
				t.Fatalf("turn %d's request carries no size: %+v", turn, d)
			}
			return fmt.Sprintf("model request: turn %d, %d messages, %d images (%d bytes)", turn, d.Messages, d.Images, d.ImageBytes)
		}
	}
	t.Fatalf("no model.request for turn %d", turn)
	return ""
}

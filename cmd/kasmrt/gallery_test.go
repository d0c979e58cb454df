package main

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/tui/remote"
)

// galleryDir holds goal runs on third-party Debian apps whose model turns
// a person chose by looking at each screenshot and request (through
// scripts/handmodel) and recorded with --record-model. Replayed against
// the real apps, each must end with the verdict that matches what happened
// on screen; the false passes are recordings of a careless model that
// claims success, which the runtime must not believe.
const galleryDir = "../../scenarios/examples/gallery"

// galleryToken is operator-gallery.yaml's inbox token, which answers the
// ask_human entry's question over the run's API.
const galleryToken = "k7q-4f9a2c1e8b7d5a06"

func TestGallery(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(galleryDir, "site"))))
	t.Cleanup(site.Close)

	tests := []struct {
		name      string
		scenario  string
		recording string
		needs     []string
		// answer, when set, is the operator's answer to the model's one
		// question, given over the run's API.
		answer      string
		wantVerdict events.Verdict
		wantOutcome events.Outcome
		// wantFile is a file the app must have written into KASM_DEMO_DIR,
		// with its content, or "" when the entry writes none.
		wantFile, wantContent string
		// wantReason is text the verdict's reasons or concerns must hold.
		wantReason string
	}{
		{
			name: "gtk4 calculator", scenario: "gtk4-calculator.yaml", recording: "gtk4-calculator.model.jsonl",
			needs: []string{"gnome-calculator", "xclip"}, wantVerdict: "pass", wantOutcome: "completed",
		},
		{
			name: "gtk4 calculator, wrong sum claimed as met", scenario: "gtk4-calculator.yaml", recording: "gtk4-calculator.false-pass.model.jsonl",
			needs: []string{"gnome-calculator", "xclip"}, wantVerdict: "app-failed", wantOutcome: "success-failed", wantReason: "result_is",
		},
		{
			name: "qt featherpad save", scenario: "qt-featherpad-save.yaml", recording: "qt-featherpad-save.model.jsonl",
			needs: []string{"featherpad"}, wantVerdict: "pass", wantOutcome: "completed",
			wantFile: "notes.txt", wantContent: "Saved by the gallery\n",
		},
		{
			name: "qt featherpad, nothing typed claimed as met", scenario: "qt-featherpad-save.yaml", recording: "qt-featherpad-save.false-pass.model.jsonl",
			needs: []string{"featherpad"}, wantVerdict: "app-failed", wantOutcome: "success-failed", wantReason: "refused",
		},
		{
			name: "gtk3 mousepad save", scenario: "gtk3-mousepad-save.yaml", recording: "gtk3-mousepad-save.model.jsonl",
			needs: []string{"mousepad"}, wantVerdict: "pass", wantOutcome: "completed",
			wantFile: "greeting.txt", wantContent: "Saved through GTK 3",
		},
		{
			name: "browser sign-up", scenario: "browser-signup.yaml", recording: "browser-signup.model.jsonl",
			needs: []string{"chromium"}, wantVerdict: "pass", wantOutcome: "completed",
		},
		{
			name: "hung app, looks fine to the model", scenario: "hung-app.yaml", recording: "hung-app.model.jsonl",
			needs: []string{"/usr/bin/python3"}, wantVerdict: "app-failed", wantOutcome: "app-hung", wantReason: "_NET_WM_PING",
		},
		{
			name: "ask the operator", scenario: "ask-human-code.yaml", recording: "ask-human-code.model.jsonl",
			needs: []string{"zenity"}, answer: "4721", wantVerdict: "pass", wantOutcome: "completed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			need(t, append([]string{"Xvfb", "dbus-daemon"}, tt.needs...)...)
			demo := t.TempDir()
			out := filepath.Join(t.TempDir(), "report")
			args := []string{"run", filepath.Join(galleryDir, tt.scenario),
				"-o", filepath.Join(galleryDir, "operator-gallery.yaml"),
				"--replay-model", filepath.Join(galleryDir, tt.recording),
				"--headless", "--display", "-", "--report", out}
			env := []string{"KASM_RUNTIME_VISION_ENDPOINT=", "DBUS_SESSION_BUS_ADDRESS=", "KASM_DEMO_DIR=" + demo,
				"SIGNUP_URL=" + site.URL + "/signup.html"}
			var code int
			var stdout, stderr string
			if tt.answer == "" {
				code, stdout, stderr = kasmrtProcess(t, env, args...)
			} else {
				code, stdout, stderr = runAnswering(t, env, args, tt.answer)
			}
			rep, raw := readReport(t, out)
			if rep.Verdict != tt.wantVerdict || rep.Outcome != tt.wantOutcome {
				t.Errorf("verdict %s (%s), want %s (%s); exit %d\nreport: %s\nstderr:\n%s", rep.Verdict, rep.Outcome, tt.wantVerdict, tt.wantOutcome, code, raw, stderr)
			}
			if tt.wantReason != "" && !strings.Contains(raw, tt.wantReason) {
				t.Errorf("the report does not say why (%q):\n%s", tt.wantReason, raw)
			}
			if tt.wantFile != "" {
				got, err := os.ReadFile(filepath.Join(demo, tt.wantFile))
				if err != nil || string(got) != tt.wantContent {
					t.Errorf("%s = %q, %v; want %q", tt.wantFile, got, err, tt.wantContent)
				}
			}
			if t.Failed() {
				t.Logf("stdout:\n%s", stdout)
			}
		})
	}
}

// runAnswering runs kasmrt with --listen and answers the model's question
// over the run's API as soon as it is asked.
func runAnswering(t *testing.T, env, args []string, answer string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(kasmrtBinary(t), append(args, "--listen", "127.0.0.1:0")...)
	cmd.Env = append(os.Environ(), env...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start kasmrt: %v", err)
	}
	var stderr strings.Builder
	serving := make(chan string, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(stderrPipe)
		for sc.Scan() {
			stderr.WriteString(sc.Text() + "\n")
			if _, rest, ok := strings.Cut(sc.Text(), "kasmrt attach http://"); ok {
				select {
				case serving <- strings.TrimSuffix(rest, ")"):
				default:
				}
			}
		}
	}()
	ended := make(chan struct{})
	go func() {
		<-read
		_ = cmd.Wait()
		close(ended)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
	})

	var addr string
	select {
	case addr = <-serving:
	case <-ended:
		t.Fatalf("the run ended before it served:\n%s", stderr.String())
	}
	c, err := remote.Dial(t.Context(), "http://"+addr, galleryToken, t.TempDir())
	if err != nil {
		t.Fatalf("dial the run: %v", err)
	}
	asked := make(chan string, 1)
	go c.Follow(t.Context(), func(e events.Event) {
		if e.Kind == events.KindQuestion {
			select {
			case asked <- e.Question.ID:
			default:
			}
		}
	}, nil)
	select {
	case id := <-asked:
		// The code is one the model must enter, not read: the answer goes
		// unmarked, so private, and the model types it by its ref.
		if err := c.AnswerMarked(id, answer, ""); err != nil {
			t.Errorf("answer: %v", err)
		}
	case <-ended:
		t.Fatalf("the run ended before it asked:\n%s", stderr.String())
	}
	<-ended
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

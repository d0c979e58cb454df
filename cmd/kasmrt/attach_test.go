package main

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/internal/testkit"
)

// TestAttachInTmux serves a goal run against xterm with run --listen (its
// own process) and attaches two consoles to it in real terminals: the
// run's steps and question appear in both; an answer typed in one's inbox
// reaches the run and leaves the other's inbox with nothing waiting; an
// abort from the other reaches the engine, and both show the verdict.
func TestAttachInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xterm")
	model := listenModel(t)
	bin := kasmrtBinary(t)
	server, exited, report := startListeningRun(t, []string{"KASM_RUNTIME_VISION_ENDPOINT=" + model.URL(), envToken + "=" + listenToken})

	consoles := map[string]*testkit.Terminal{}
	for _, name := range []string{"one", "two"} {
		consoles[name] = testkit.StartTerminal(t, name, 140, 40,
			envToken+"="+listenToken, bin, "attach", "http://"+server, "--graphics", "blocks")
	}
	one, two := consoles["one"], consoles["two"]
	for _, console := range []*testkit.Terminal{one, two} {
		console.Screen("listen xterm")
		console.Screen("1 observe_screen")
		console.Screen("q1 (waiting)")
	}
	// Which greeting is a choice the model must read: the operator marks
	// the answer shareable before sending it.
	one.Keys("i")
	one.Screen("send answer")
	one.Screen("private: model can type it, not read it")
	one.Keys("C-s")
	one.Screen("shareable: model can read it")
	one.Type("the friendly one")
	one.Keys("Enter")
	two.Screen("q1 by attach: the friendly one")
	two.ScreenWithout("(waiting)")
	one.ScreenWithout("(waiting)")
	two.Screen("3 wait")
	two.Keys("x")
	two.Screen("abort the run?")
	two.Keys("y")
	for _, console := range []*testkit.Terminal{one, two} {
		console.Screen("test-error (aborted)")
	}
	select {
	case code := <-exited:
		if code != exitTestError {
			t.Errorf("the run ended with exit %d, want %d", code, exitTestError)
		}
	case <-time.After(testkit.ScreenWait):
		t.Fatal("the run did not end after the abort")
	}
	rep, _ := readReport(t, report)
	if rep.Verdict != "test-error" || rep.Outcome != "aborted" || len(rep.Questions) != 1 || rep.Questions[0].Answer != "the friendly one" {
		t.Errorf("report: verdict %s (%s), questions %+v", rep.Verdict, rep.Outcome, rep.Questions)
	}
	told := false
	for _, r := range model.Requests() {
		told = told || strings.Contains(r.Text(), "the operator answered: the friendly one")
	}
	if !told {
		t.Error("the shareable answer never reached the model")
	}
}

// TestAttachToAServerInTmux attaches a console to kasmrt serve with two
// open sessions: the table lists both, enter watches one and shows its
// agent's steps, esc goes back, and the other shows its own.
func TestAttachToAServerInTmux(t *testing.T) {
	t.Parallel()
	need(t, "tmux", "Xvfb", "xterm")
	dir := t.TempDir()
	scen := filepath.Join(dir, "scenarios")
	for _, name := range []string{"first.yaml", "second.yaml"} {
		testkit.WriteFile(t, scen, name, mcpScenario)
	}
	_, endpoint := startServe(t, scen, filepath.Join(dir, "reports"), listenToken)
	root := strings.TrimSuffix(endpoint, "/mcp")
	post := func(path, body string) string {
		t.Helper()
		code, b := apiPost(t, root, listenToken, path, body)
		if code/100 != 2 {
			t.Fatalf("POST %s: %d %s", path, code, b)
		}
		return b
	}
	ids := map[string]string{}
	for name, call := range map[string]string{"first.yaml": `{"tool":"observe_screen"}`, "second.yaml": `{"tool":"wait","args":{"seconds":0.2}}`} {
		var opened struct{ Session string }
		if err := json.Unmarshal([]byte(post("/v1/sessions", `{"scenario":"`+name+`"}`)), &opened); err != nil {
			t.Fatal(err)
		}
		ids[name] = opened.Session
		post("/v1/sessions/"+opened.Session+"/calls", call)
	}
	term := testkit.StartTerminal(t, "srv", 160, 40,
		envToken+"="+listenToken, kasmrtBinary(t), "attach", root, "--graphics", "blocks")
	term.Screen("first.yaml " + ids["first.yaml"][:8])
	term.Screen("second.yaml " + ids["second.yaml"][:8])
	// The table sorts by scenario: first.yaml is the first row, where g
	// moves the selection whichever run the console listed first.
	term.Keys("g", "Enter")
	term.Screen("· first.yaml " + ids["first.yaml"][:8])
	term.Screen("1 observe_screen")
	term.Keys("Escape")
	term.Screen("enter watch run")
	term.Keys("Down", "Enter")
	term.Screen("· second.yaml " + ids["second.yaml"][:8])
	term.Screen("1 wait")
	term.ScreenWithout("1 observe_screen")
	term.Keys("Escape")
	term.Screen("enter watch run")
	term.Keys("q")
	term.WaitExit("q")
	// Leaving the console left both sessions open.
	var list struct{ Sessions []struct{ Session string } }
	req, _ := http.NewRequest(http.MethodGet, root+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+listenToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Sessions) != 2 {
		t.Errorf("sessions after the console left: %+v %v", list, err)
	}
}

// TestAttachNeverEchoesCredentialsInTheURL: a URL with user:password@ is
// refused as bad input before anything is dialled, and neither the
// password nor the user name is in the output, whatever else is wrong with
// the URL.
func TestAttachNeverEchoesCredentialsInTheURL(t *testing.T) {
	t.Setenv(envToken, "")
	for _, target := range []string{
		"http://operator:pw-Secr3t-91@127.0.0.1:1/v1/runs/r1",
		"http://operator:pw-Secr3t-91@127.0.0.1:1",
		"http://operator:pw-Secr3t-91@127.0.0.1:1/v1/runs/r1?token=abc",
		"https://operator:pw-Secr3t-91@127.0.0.1:bad/",
		"ftp://operator:pw-Secr3t-91@127.0.0.1:1/",
	} {
		code, stdout, stderr := kasmrt(t, "attach", "--print", target)
		if code != exitBadInput {
			t.Errorf("attach %s: exit %d, want %d; stderr %q", target, code, exitBadInput, stderr)
		}
		if out := stdout + stderr; strings.Contains(out, "pw-Secr3t-91") || strings.Contains(out, "operator") {
			t.Errorf("attach echoes the URL's credentials: %q", out)
		}
	}
}

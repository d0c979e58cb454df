package scenarios

// Hostile input and misconfiguration: each case replays one way an
// adversarial or careless user got past the loader, and fails without the
// rule that now stops it.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeTestFiles writes a scenario (t.yaml) and, when given, an operator
// file (op.yaml) into dir, and returns their paths; the operator's is ""
// without one.
func writeTestFiles(t *testing.T, dir, scenario, operator string) (sc, op string) {
	t.Helper()
	sc = filepath.Join(dir, "t.yaml")
	if err := os.WriteFile(sc, []byte(scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	if operator != "" {
		op = filepath.Join(dir, "op.yaml")
		if err := os.WriteFile(op, []byte(operator), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sc, op
}

// loadHostile writes a scenario (and an operator file when given) into a
// fresh directory and loads them with env.
func loadHostile(t *testing.T, scenario, operator string, vars map[string]string) (*Files, error) {
	t.Helper()
	sc, op := writeTestFiles(t, t.TempDir(), scenario, operator)
	return Load(sc, op, env(vars))
}

const hostileApp = "name: x\napp: {command: [xterm]}\nsteps: [observe_screen: {}]\n"

// TestHostileRefusals checks that each hostile or mistaken input is refused
// with a positioned problem naming its key, and that no refusal repeats a
// value that may be a credential.
func TestHostileRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		scenario string
		operator string
		env      map[string]string
		want     []string // each must appear in one problem
		secret   string   // must appear in none
	}{
		{"placeholder in a shell command", hostileApp + "tools:\n  greet:\n    run: shell\n    command: echo hello ${WHO}\n", "",
			map[string]string{"WHO": "x; touch pwned"},
			[]string{"t.yaml:7:14: tools.greet.command: ${WHO} in a run: shell command would paste the value into shell code", `env: {WHO: "${WHO}"}`}, "touch pwned"},
		{"placeholder in a parameter's command", hostileApp + "tools:\n  greet:\n    run: shell\n    parameters:\n      who: {values: {a: 'echo ${WHO}'}}\n", "",
			map[string]string{"WHO": "x; touch pwned"},
			[]string{"t.yaml:8:25: tools.greet.parameters.who.values.a: ${WHO} in a run: shell command"}, "touch pwned"},
		{"placeholder in an app's shell script", "name: x\napp:\n  command: [xterm, -e, sh, -c, 'echo ${WHO}; sleep 9']\nsteps: [observe_screen: {}]\n", "",
			map[string]string{"WHO": "x; touch pwned"},
			[]string{"t.yaml:3:32: app.command[4]: ${WHO} in the script of a shell's -c would paste the value into code"}, "touch pwned"},
		{"endpoint query in the operator file", hostileApp, "model: {endpoint: 'https://host/v1?api_key=sk-live-123'}\n", nil,
			[]string{"op.yaml:1:9: model.endpoint: the URL has a query string, which may carry credentials"}, "sk-live-123"},
		{"endpoint query in the environment", hostileApp, "", map[string]string{EnvVisionEndpoint: "https://host/v1?key=sk-live-123"},
			[]string{"environment: " + EnvVisionEndpoint + ": the URL has a query string"}, "sk-live-123"},
		{"browser attach with a query", "name: x\nbrowser: {mode: attach, attach: 'http://127.0.0.1:9222/?token=sk-live-123'}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:25: browser.attach: the URL has a query string"}, "sk-live-123"},
		{"a secret in the scenario's name", "name: log in as ${PW}\napp: {command: [xterm]}\nprovides: {pw: {secret: {env: PW}}}\nsteps: [observe_screen: {}]\n", "",
			map[string]string{"PW": "Hunter2-pw"},
			[]string{"t.yaml:1:1: name: the name holds the value of a secret"}, "Hunter2-pw"},
		{"a credential in the scenario's name", "name: hook ${HOOK}\napp: {command: [xterm]}\nsteps: [observe_screen: {}]\n", "inbox: {session_token: t0ken-abc}\n",
			map[string]string{"HOOK": "t0ken-abc"},
			[]string{"t.yaml:1:1: name: the name holds the value of a secret"}, ""},
		{"listen address that is not one", hostileApp, "inbox: {session_token: t0ken-abc, listen: not an address}\n", nil,
			[]string{"op.yaml:1:35: inbox.listen: not a listen address; want host:port"}, ""},
		{"listen port out of range", hostileApp, "inbox: {session_token: t0ken-abc, listen: '127.0.0.1:99999'}\n", nil,
			[]string{`inbox.listen: port "99999" is not a number between 0 and 65535`}, ""},
		{"listen host that is a name", hostileApp, "inbox: {session_token: t0ken-abc, listen: 'example.com:8080'}\n", nil,
			[]string{`inbox.listen: host "example.com" is not an IP address or localhost`}, ""},
		{"listen without a token", hostileApp, "inbox: {listen: '127.0.0.1:8765'}\n", nil,
			[]string{"inbox.listen: an inbox needs inbox.session_token or inbox.messaging_token"}, ""},
		{"deadline NaN", hostileApp, "", map[string]string{EnvDeadline: "NaN"},
			[]string{"environment: " + EnvDeadline + `: want a finite number of seconds, got "NaN"`}, ""},
		{"deadline Inf", hostileApp, "", map[string]string{EnvDeadline: "Inf"},
			[]string{`want a finite number of seconds, got "Inf"`}, ""},
		{"deadline overflowing", hostileApp, "", map[string]string{EnvDeadline: "1e400"},
			[]string{`want a finite number of seconds, got "1e400"`}, ""},
		{"deadline of 1e12", hostileApp, "", map[string]string{EnvDeadline: "1e12"},
			[]string{`want between 1 and 86400 seconds, got "1e12"`}, ""},
		{"negative deadline", hostileApp, "", map[string]string{EnvDeadline: "-5"},
			[]string{`want between 1 and 86400 seconds, got "-5"`}, ""},
		{"zero deadline", hostileApp, "", map[string]string{EnvDeadline: "0"},
			[]string{`want between 1 and 86400 seconds, got "0"`}, ""},
		{"into an unknown cdp target", "name: x\nbrowser: {start_url: 'http://127.0.0.1:1/'}\nprovides:\n  pw:\n    secret:\n      env: PW\n      into:\n        - cdp_target: nope\ncdp_targets: {search: '#q'}\nsteps: [observe_screen: {}]\n", "",
			map[string]string{"PW": "hunter2"},
			[]string{`t.yaml:8:11: provides.pw.secret.into[0].cdp_target: "nope" is not a cdp_targets name`}, "hunter2"},
		{"into an origin with a path", hostileApp + "provides:\n  pw:\n    secret:\n      env: PW\n      into:\n        - origin: https://login.example.com/form\n", "",
			map[string]string{"PW": "hunter2"},
			[]string{"t.yaml:9:11: provides.pw.secret.into[0].origin: an origin is only scheme://host[:port]"}, ""},
		{"into nowhere", hostileApp + "provides:\n  pw:\n    secret:\n      env: PW\n      into: []\n", "",
			map[string]string{"PW": "hunter2"},
			[]string{"t.yaml:8:7: provides.pw.secret.into: an empty into: lets the secret go nowhere"}, ""},
		{"into a place of no kind", hostileApp + "provides:\n  pw:\n    secret:\n      env: PW\n      into:\n        - {}\n", "",
			map[string]string{"PW": "hunter2"},
			[]string{"provides.pw.secret.into[0]: a place names at least one of cdp_target, origin, role, name"}, ""},
		{"into with an unknown key", hostileApp + "provides:\n  pw:\n    secret:\n      env: PW\n      into:\n        - selector: '#pass'\n", "",
			map[string]string{"PW": "hunter2"},
			[]string{"t.yaml:9:11: provides.pw.secret.into[0].selector: unknown key"}, ""},
		{"a timeout that overflows a duration", "name: x\napp: {command: [xterm], startup_timeout_s: 1e12}\nsteps: [observe_screen: {}]\n", "", nil,
			[]string{"t.yaml:2:44: app.startup_timeout_s: 1e12 is out of range (at most 1000000000 either way)"}, ""},
		{"a count past any use", hostileApp, "runner: {settle_cap_ms: 9223372036854775807}\n", nil,
			[]string{"op.yaml:1:25: runner.settle_cap_ms: 9223372036854775807 is out of range"}, ""},
		{"display with shell syntax", hostileApp, "session: {display: ':98; touch pwned'}\n", nil,
			[]string{"op.yaml:1:11: session.display: not an X display name"}, "touch pwned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadHostile(t, tc.scenario, tc.operator, tc.env)
			if err == nil {
				t.Fatal("accepted")
			}
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("not problems: %v", err)
			}
			for _, w := range tc.want {
				found := false
				for _, p := range ps {
					found = found || strings.Contains(p.Error(), w)
				}
				if !found {
					t.Errorf("no problem says %q; got:\n%v", w, err)
				}
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("a problem repeats %q:\n%v", tc.secret, err)
			}
		})
	}
}

// TestHostileAccepted checks the safe forms the refusals point to: a
// placeholder in a tool's env:, a literal $${ in a command, a loopback or
// an exposed listen address (the latter with a warning), deadlines within
// the range and display names with a host or screen.
func TestHostileAccepted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		scenario string
		operator string
		env      map[string]string
		warning  string
	}{
		{"placeholder in a tool's env", hostileApp + "tools:\n  greet:\n    run: shell\n    env: {WHO: '${WHO}'}\n    command: echo hello \"$WHO\" $${HOME}\n", "",
			map[string]string{"WHO": "x; touch pwned"}, ""},
		{"placeholder as a shell script's argument", "name: x\napp:\n  command: [bash, -ec, 'echo \"$1\"', sh, '${WHO}']\nsteps: [observe_screen: {}]\n", "",
			map[string]string{"WHO": "x; touch pwned"}, ""},
		{"placeholder in an app's plain argv", "name: x\napp:\n  command: [xterm, -T, '${WHO}']\nsteps: [observe_screen: {}]\n", "",
			map[string]string{"WHO": "x; touch pwned"}, ""},
		{"loopback listen", hostileApp, "inbox: {session_token: t0ken-abc, listen: '127.0.0.1:0'}\n", nil, ""},
		{"localhost listen", hostileApp, "inbox: {session_token: t0ken-abc, listen: 'localhost:8765'}\n", nil, ""},
		{"every interface", hostileApp, "inbox: {session_token: t0ken-abc, listen: ':8765'}\n", nil,
			"op.yaml:1:35: inbox.listen: :8765 is reachable from other machines"},
		{"a LAN address", hostileApp, "inbox: {session_token: t0ken-abc, listen: '192.168.1.5:8765'}\n", nil,
			"inbox.listen: 192.168.1.5:8765 is reachable from other machines"},
		{"deadline within range", hostileApp, "", map[string]string{EnvDeadline: "86400"}, ""},
		{"display with a screen", hostileApp, "session: {display: ':1.0'}\n", nil, ""},
		{"display with a host", hostileApp, "session: {display: 'localhost:10'}\n", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f, err := loadHostile(t, tc.scenario, tc.operator, tc.env)
			if err != nil {
				t.Fatalf("refused:\n%v", err)
			}
			got := f.Operator.Warnings.Error()
			if tc.warning == "" && got != "" || !strings.Contains(got, tc.warning) {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
	f, err := loadHostile(t, hostileApp+"tools:\n  greet:\n    run: shell\n    env: {WHO: '${WHO}'}\n    command: echo \"$WHO\" $${HOME}\n", "", map[string]string{"WHO": "x; touch pwned"})
	if err != nil {
		t.Fatal(err)
	}
	if g := f.Scenario.Tools["greet"]; g.Env["WHO"] != "x; touch pwned" || g.Command != `echo "$WHO" ${HOME}` {
		t.Errorf("greet decoded as %+v", g)
	}
}

// TestInputsOnlyRegularFiles names a FIFO, /dev/zero and a directory as the
// scenario, the operator file and a secret file: each is refused at once,
// without blocking on the FIFO or reading the device without end.
func TestInputsOnlyRegularFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(hostileApp), 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("name: x\n# "+strings.Repeat("x", maxFileBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secretScenario := func(path string) string {
		s := filepath.Join(t.TempDir(), "s.yaml")
		body := "name: x\napp: {command: [xterm]}\nprovides: {pw: {secret: {file: '" + path + "'}}}\nsteps: [observe_screen: {}]\n"
		if err := os.WriteFile(s, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return s
	}
	imageScenario := func(path string) string {
		s := filepath.Join(t.TempDir(), "s.yaml")
		body := "name: x\napp: {command: [xterm]}\ngoal: g\nreference_images: ['" + path + "']\n"
		if err := os.WriteFile(s, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return s
	}
	bigImage := filepath.Join(dir, "big.png")
	if err := os.WriteFile(bigImage, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, maxImageBytes)...), 0o644); err != nil {
		t.Fatal(err)
	}
	bigSecret := filepath.Join(dir, "big-secret")
	if err := os.WriteFile(bigSecret, make([]byte, maxSecretBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name               string
		scenario, operator string
		want               string
	}{
		{"FIFO scenario", fifo, "", "fifo: cannot read: not a regular file (a FIFO)"},
		{"FIFO operator file", good, fifo, "fifo: cannot read: not a regular file (a FIFO)"},
		{"/dev/zero scenario", "/dev/zero", "", "/dev/zero: cannot read: not a regular file (a character device)"},
		{"/dev/zero operator file", good, "/dev/zero", "/dev/zero: cannot read: not a regular file (a character device)"},
		{"directory scenario", dir, "", "cannot read: not a regular file (a directory)"},
		{"oversized scenario", big, "", "the limit is 1048576"},
		{"FIFO secret file", secretScenario(fifo), "", "secret pw: read secret file: not a regular file (a FIFO)"},
		{"/dev/zero secret file", secretScenario("/dev/zero"), "", "secret pw: read secret file: not a regular file (a character device)"},
		{"oversized secret file", secretScenario(bigSecret), "", "the limit is 65536"},
		{"FIFO reference image", imageScenario(fifo), "", "reference_images[0]: " + fifo + " is not a regular file"},
		{"oversized reference image", imageScenario(bigImage), "", "a reference image is at most 8388608"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := make(chan error, 1)
			go func() {
				_, err := Load(tc.scenario, tc.operator, env(map[string]string{EnvVisionEndpoint: "http://127.0.0.1:9/v1"}))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Load err = %v, want %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Load blocked on its input")
			}
		})
	}
}

// TestSecretPlaceAllows checks the matching rule of secret.into: every
// field a place sets must be known for the destination and equal, and an
// origin is compared in its normal form.
func TestSecretPlaceAllows(t *testing.T) {
	t.Parallel()
	f, err := loadHostile(t, `name: x
browser: {start_url: 'http://127.0.0.1:1/'}
provides:
  pw:
    secret:
      env: PW
      into:
        - {cdp_target: password, origin: 'HTTPS://Login.Example.com/'}
        - {role: password text}
cdp_targets: {password: '#pass', search: '#q'}
steps: [observe_screen: {}]
`, "", map[string]string{"PW": "hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	web, native := f.Scenario.Bound("pw")[0], f.Scenario.Bound("pw")[1]
	if web.Origin != "https://login.example.com" {
		t.Errorf("origin kept as %q, want it normalised", web.Origin)
	}
	tests := []struct {
		name  string
		place SecretPlace
		dest  Destination
		want  bool
	}{
		{"target and origin", web, Destination{CDPTargets: []string{"password"}, Origin: "https://login.example.com"}, true},
		{"the wrong target", web, Destination{CDPTargets: []string{"search"}, Origin: "https://login.example.com"}, false},
		{"another origin", web, Destination{CDPTargets: []string{"password"}, Origin: "https://login.example.com.evil.test"}, false},
		{"an unknown origin", web, Destination{CDPTargets: []string{"password"}}, false},
		{"a password field", native, Destination{Role: "Password Text", Name: "Passphrase"}, true},
		{"a plain entry", native, Destination{Role: "text"}, false},
		{"nothing known", native, Destination{}, false},
	}
	for _, tt := range tests {
		if got := tt.place.Allows(tt.dest); got != tt.want {
			t.Errorf("%s: Allows = %v, want %v", tt.name, got, tt.want)
		}
	}
	if !f.Scenario.BindsAccessibles() {
		t.Error("a role place does not ask for accessibility")
	}
	if f.Scenario.Bound("nope") != nil {
		t.Error("an unknown ref is bound")
	}
}

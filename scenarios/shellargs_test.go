package scenarios

import (
	"strings"
	"testing"
)

// TestPlaceholderInShellParsedArgument checks the rule for app.command —
// no placeholder in any argument that a shell will parse — on a table of
// the forms that reach a shell (through option arguments, wrappers,
// terminals and interpreters) and of the forms that keep the value data.
func TestPlaceholderInShellParsedArgument(t *testing.T) {
	t.Parallel()
	cases := []struct {
		command string // a YAML flow list; ${WHO} is the hostile value
		refused string // the argument refused, "" when the command is accepted
	}{
		// A shell's -c script, however the options before it are spelled.
		{`[sh, -c, 'echo ${WHO}']`, "app.command[2]"},
		{`[xterm, -e, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[xterm, -e, sh, -o, errexit, -c, 'echo ${WHO}']`, "app.command[6]"},
		{`[xterm, -e, bash, -euo, pipefail, -c, 'echo ${WHO}']`, "app.command[6]"},
		{`[sh, +o, posix, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[bash, -O, extglob, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[bash, -lc, 'echo ${WHO}']`, "app.command[2]"},
		{`[bash, --login, -c, 'echo ${WHO}']`, "app.command[3]"},
		{`[bash, --rcfile, /dev/null, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[sh, -c, -e, 'echo ${WHO}']`, "app.command[3]"},
		{`[sh, -c, --, 'echo ${WHO}']`, "app.command[3]"},
		{`[/bin/dash, -ce, 'echo ${WHO}']`, "app.command[2]"},
		{`[zsh, -c, 'echo ${WHO}']`, "app.command[2]"},
		{`[fish, -c, 'echo ${WHO}']`, "app.command[2]"},
		{`[sh, -o, '${WHO}', -c, 'echo hi']`, "app.command[2]"},
		// Wrappers that run their operands as a command.
		{`[env, A=1, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[env, -u, HOME, bash, -lc, 'echo ${WHO}']`, "app.command[5]"},
		{`[exec, -a, name, sh, -c, 'echo ${WHO}']`, "app.command[5]"},
		{`[nice, -n, '10', sh, -c, 'echo ${WHO}']`, "app.command[5]"},
		{`[nohup, sh, -c, 'echo ${WHO}']`, "app.command[3]"},
		{`[setsid, -w, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[timeout, -k, '5', '60', sh, -c, 'echo ${WHO}']`, "app.command[6]"},
		{`[sudo, -u, alice, sh, -c, 'echo ${WHO}']`, "app.command[5]"},
		{`[dbus-run-session, --, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[xvfb-run, -a, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[busybox, sh, -c, 'echo ${WHO}']`, "app.command[3]"},
		{`[stdbuf, -oL, sh, -c, 'echo ${WHO}']`, "app.command[4]"},
		{`[/usr/bin/env, nice, setsid, xterm, -e, sh, -c, 'echo ${WHO}']`, "app.command[7]"},
		// Programs that hand a string to a shell themselves.
		{`[xterm, -e, 'echo ${WHO}; sleep 9']`, "app.command[2]"},
		{`[xterm, -T, demo, -e, '${WHO}']`, "app.command[4]"},
		{`[env, A=1, xterm, -e, 'less ${WHO}']`, "app.command[4]"},
		{`[xfce4-terminal, -e, 'less ${WHO}', --title, x]`, "app.command[2]"},
		{`[gnome-terminal, '--command=less ${WHO}']`, "app.command[1]"},
		{`[su, alice, -c, 'echo ${WHO}']`, "app.command[3]"},
		{`[runuser, -l, alice, '--command=echo ${WHO}']`, "app.command[3]"},
		{`[script, -qc, 'echo ${WHO}', /dev/null]`, "app.command[2]"},
		{`[flock, /tmp/lock, -c, 'echo ${WHO}']`, "app.command[3]"},
		{`[env, -S, 'sh -c "echo ${WHO}"']`, "app.command[2]"},
		{`[watch, -n, '1', 'echo ${WHO}']`, "app.command[3]"},
		{`[sudo, -s, 'echo ${WHO}']`, "app.command[2]"},
		{`[ssh, host, 'echo ${WHO}']`, "app.command[2]"},
		{`[ssh, '${WHO}', uptime]`, "app.command[1]"},
		{`[tmux, new-session, 'echo ${WHO}']`, "app.command[2]"},
		// Interpreters' code on the command line.
		{`[python3, -c, 'print("${WHO}")']`, "app.command[2]"},
		{`[python3, -W, error, -c, 'print("${WHO}")']`, "app.command[4]"},
		{`[perl, -ne, 'print "${WHO}"']`, "app.command[2]"},
		{`[node, '--eval=console.log("${WHO}")']`, "app.command[1]"},
		// Data: the words after a script, a program's own argv.
		{`[sh, -c, 'echo "$1"', sh, '${WHO}']`, ""},
		{`[xterm, -e, sh, -o, errexit, -c, 'echo "$1"', sh, '${WHO}']`, ""},
		{`[sh, ./script.sh, '${WHO}']`, ""},
		{`[xterm, -e, less, '${WHO}']`, ""},
		{`[xterm, -T, '${WHO}']`, ""},
		{`[mousepad, '${WHO}']`, ""},
		{`[env, 'NAME=${WHO}', mousepad]`, ""},
		{`[timeout, '60', gnome-calculator, '--mode=${WHO}']`, ""},
		{`[watch, -x, cat, '${WHO}']`, ""},
		{`[python3, script.py, '${WHO}']`, ""},
		{`[sudo, -u, alice, cat, '${WHO}']`, ""},
	}
	const hostile = "x; touch pwned"
	for _, tc := range cases {
		t.Run(tc.command, func(t *testing.T) {
			t.Parallel()
			scenario := "name: x\napp:\n  command: " + tc.command + "\nsteps: [observe_screen: {}]\n"
			_, err := loadHostile(t, scenario, "", map[string]string{"WHO": hostile})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused data: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted ${WHO} in %s", tc.refused)
			}
			ps, ok := AsProblems(err)
			if !ok {
				t.Fatalf("not problems: %v", err)
			}
			want := "/t.yaml:3:"
			found := false
			for _, p := range ps {
				msg := p.Error()
				found = found || (strings.Contains(msg, want) && strings.Contains(msg, tc.refused+": ${WHO} in ") &&
					strings.Contains(msg, "would paste the value into code"))
			}
			if !found {
				t.Errorf("no problem at %s… naming %s; got:\n%v", want, tc.refused, err)
			}
			if strings.Contains(err.Error(), hostile) {
				t.Errorf("the error repeats the value: %v", err)
			}
		})
	}
}

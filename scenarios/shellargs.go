package scenarios

import (
	"path/filepath"
	"regexp"
	"strings"
)

// The ${NAME} rule for app.command: no placeholder in any argument that a
// shell will parse. A value pasted into shell code becomes code (with
// WHO='x; touch pwned', `echo ${WHO}` runs touch), so the loader finds
// every argument of app.command that some program hands to a shell — or to
// an interpreter as code — and refuses a placeholder there. Arguments that
// stay data (the words after a -c script, a program's own argv) may carry
// one.
//
// The analysis starts afresh at every argument that names a known program,
// not only at argv[0]: a wrapper (env, nice, setsid, timeout, sudo,
// dbus-run-session, xvfb-run, a terminal's -x, busybox …) runs the rest of
// its argv as a command, and whatever grammar its own options have, the
// shell it runs is found where its name stands. Reading too much as shell
// code only refuses a scenario the author can rewrite; reading too little
// runs the value.

// shellParsedArgs returns the indices of the arguments of argv that a shell
// or an interpreter will parse as code, each with a phrase saying why, for
// the error ("the script of a shell's -c").
func shellParsedArgs(argv []string) map[int]string {
	out := map[int]string{}
	mark := func(i int, why string) {
		if i >= 0 && i < len(argv) {
			if _, ok := out[i]; !ok {
				out[i] = why
			}
		}
	}
	for i, a := range argv {
		prog := programName(a)
		switch {
		case shells[prog]:
			shellInvocation(argv, i, mark)
		case interpreterCodeFlags[prog] != nil || pythonRE.MatchString(prog):
			interpreterInvocation(argv, i, prog, mark)
		case terminals[prog] != 0:
			terminalInvocation(argv, i, prog, mark)
		default:
			wrapperInvocation(argv, i, prog, mark)
		}
	}
	return out
}

// programName is how a program is known whatever path names it.
func programName(arg string) string { return filepath.Base(arg) }

// shells are the programs whose -c makes their first operand a script.
var shells = map[string]bool{
	"sh": true, "bash": true, "rbash": true, "dash": true, "zsh": true, "ksh": true, "ksh93": true,
	"mksh": true, "pdksh": true, "ash": true, "posh": true, "yash": true, "fish": true, "csh": true, "tcsh": true,
}

// shellOptionsWithArgument are the shell options whose value is the next
// argument (set -o's names, bash's shopt names and start-up files).
var shellOptionsWithArgument = map[string]bool{"--rcfile": true, "--init-file": true}

// shellInvocation marks the script of argv[i]'s -c and, with it, the
// shell's options before the script: a value among them decides what the
// shell reads as code. -c is a flag (POSIX): with it anywhere among the
// options (-c, -lc, -ec, -o errexit -c, -c -e, bash --login -c), the first
// operand is the script; the operands after it are its $0, $1, … and stay
// data. Without -c the first operand is a script file, and all is data.
func shellInvocation(argv []string, i int, mark func(int, string)) {
	command := false
	j := i + 1
	for j < len(argv) {
		a := argv[j]
		if a == "--" || a == "-" {
			j++
			break
		}
		if strings.HasPrefix(a, "--") {
			name, _, hasValue := strings.Cut(a, "=")
			j++
			if shellOptionsWithArgument[name] && !hasValue {
				j++
			}
			continue
		}
		if len(a) < 2 || (a[0] != '-' && a[0] != '+') {
			break
		}
		j++
		for _, c := range a[1:] {
			switch c {
			case 'c':
				command = true
			case 'o', 'O':
				// -o errexit, +o posix and bash's -O extglob take the
				// next argument as their value.
				j++
			}
		}
	}
	if !command || j >= len(argv) {
		return
	}
	for k := i + 1; k < j; k++ {
		mark(k, "the options of a shell that runs a -c script")
	}
	mark(j, "the script of a shell's -c")
}

// pythonRE matches python, python3, python3.11 and the like.
var pythonRE = regexp.MustCompile(`^python[0-9.]*$`)

// interpreterCodeFlags are the options whose value an interpreter runs as
// code, by interpreter.
var interpreterCodeFlags = map[string][]string{
	"perl": {"-e", "-E"}, "ruby": {"-e"}, "node": {"-e", "-p", "--eval", "--print"}, "nodejs": {"-e", "-p", "--eval", "--print"},
	"php": {"-r"}, "lua": {"-e"}, "osascript": {"-e"},
}

// interpreterOptionsWithArgument are an interpreter's options whose value is
// the next argument, so the scan for its code goes on past them.
var interpreterOptionsWithArgument = map[string]bool{"-W": true, "-X": true, "-r": true, "--require": true, "--import": true, "--loader": true}

// interpreterInvocation marks the code an interpreter is given on its
// command line: python's -c, perl's and ruby's -e (also at the end of a
// cluster, as in perl -ne, or with the code attached, -e'print 1'),
// node's --eval. The scan ends at the first operand, the script file whose
// arguments are data.
func interpreterInvocation(argv []string, i int, prog string, mark func(int, string)) {
	flags := interpreterCodeFlags[prog]
	if pythonRE.MatchString(prog) {
		flags = []string{"-c"}
	}
	for j := i + 1; j < len(argv); j++ {
		a := argv[j]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return
		}
		if interpreterOptionsWithArgument[a] {
			j++
			continue
		}
		for _, f := range flags {
			why := "the code of " + prog + "'s " + f
			switch {
			case a == f:
				mark(j+1, why)
				return
			case strings.HasPrefix(f, "--"):
				if strings.HasPrefix(a, f+"=") {
					mark(j, why)
					return
				}
			case !strings.HasPrefix(a, "--"):
				if k := strings.IndexByte(a[1:], f[1]); k == len(a)-2 {
					mark(j+1, why) // at the end of a cluster: perl -ne CODE
					return
				} else if k >= 0 {
					mark(j, why) // the code attached: perl -le'print 1'
					return
				}
			}
		}
	}
}

// terminalKind says how a terminal emulator treats the command after -e.
type terminalKind int

const (
	// terminalArgv runs the words after -e as argv — except that a single
	// word is handed to a shell (xterm runs "$SHELL -c WORD" when the word
	// is not a program), so a lone argument after -e is shell code.
	terminalArgv terminalKind = iota + 1
	// terminalString takes one string after -e (or --command) and parses it
	// as a command line, some through a shell.
	terminalString
)

var terminals = map[string]terminalKind{
	"xterm": terminalArgv, "uxterm": terminalArgv, "lxterm": terminalArgv, "koi8rxterm": terminalArgv,
	"x-terminal-emulator": terminalArgv, "konsole": terminalArgv, "urxvt": terminalArgv, "rxvt": terminalArgv,
	"rxvt-unicode": terminalArgv, "st": terminalArgv, "alacritty": terminalArgv, "eterm": terminalArgv,
	"xfce4-terminal": terminalString, "gnome-terminal": terminalString, "mate-terminal": terminalString,
	"lxterminal": terminalString, "terminator": terminalString, "tilix": terminalString,
	"qterminal": terminalString, "sakura": terminalString, "guake": terminalString, "roxterm": terminalString,
	"terminology": terminalString,
}

// terminalInvocation marks what a terminal emulator hands to a shell: the
// string of -e or --command for those that take one string, the lone word
// after -e for those that take argv. Several words after -e are a
// program's argv, analysed where the program's name stands.
func terminalInvocation(argv []string, i int, prog string, mark func(int, string)) {
	kind := terminals[prog]
	for j := i + 1; j < len(argv); j++ {
		a := argv[j]
		switch {
		case a == "-e" || (kind == terminalString && a == "--command"):
			if kind == terminalString || j+2 == len(argv) {
				mark(j+1, prog+"'s single "+a+" string (run with $SHELL -c)")
			}
			if kind == terminalArgv {
				return // -e is the last option; the rest is argv
			}
		case kind == terminalString && strings.HasPrefix(a, "--command="):
			mark(j, prog+"'s --command string (parsed as a command line)")
		case a == "-x" || a == "--execute" || a == "--":
			return // the rest is argv
		}
	}
}

// wrapperInvocation marks what a program that is not itself a shell hands
// to one: su's and script's -c, env's -S, watch's and ssh's joined
// command lines, tmux's commands, sudo's with -s or -i. Other wrappers
// (nice, setsid, timeout, dbus-run-session …) run their operands as argv:
// the program they run is analysed where its name stands.
func wrapperInvocation(argv []string, i int, prog string, mark func(int, string)) {
	switch prog {
	case "su", "runuser", "script", "flock":
		getoptCode(argv, i, 'c', []string{"--command", "--session-command"}, false, prog+"'s -c command (run by a shell)", mark)
	case "env":
		getoptCode(argv, i, 'S', []string{"--split-string"}, true, "env's -S string (split and expanded by env)", mark)
	case "watch":
		watchInvocation(argv, i, mark)
	case "ssh", "tmux":
		// ssh joins its command words for the remote shell, and an option
		// value (-oProxyCommand=…) or a host starting with '-' runs code
		// too; tmux parses its arguments as tmux commands, whose commands
		// go to a shell. Every argument is parsed.
		for j := i + 1; j < len(argv); j++ {
			mark(j, "the arguments of "+prog+" (parsed as commands)")
		}
	case "sudo":
		sudoInvocation(argv, i, mark)
	}
}

// getoptCode marks the value of a getopt-style option: -c VALUE, -lc VALUE,
// -cVALUE, --command VALUE or --command=VALUE. su's user, flock's file and
// script's log file are operands that may precede the option, so the scan
// goes on past operands unless untilProgram: env's options end at the
// program it runs (its NAME=VALUE operands are skipped).
func getoptCode(argv []string, i int, short rune, long []string, untilProgram bool, why string, mark func(int, string)) {
	for j := i + 1; j < len(argv); j++ {
		a := argv[j]
		if a == "--" {
			return
		}
		if strings.HasPrefix(a, "--") {
			name, _, hasValue := strings.Cut(a, "=")
			for _, l := range long {
				if name == l {
					if hasValue {
						mark(j, why)
					} else {
						mark(j+1, why)
					}
				}
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if untilProgram && !strings.Contains(a, "=") {
				return
			}
			continue
		}
		if k := strings.IndexRune(a[1:], short); k >= 0 {
			if k == len(a)-2 {
				mark(j+1, why)
			} else {
				mark(j, why)
			}
		}
	}
}

// watchInvocation marks watch's command: without -x it joins its operands
// and runs them with sh -c.
func watchInvocation(argv []string, i int, mark func(int, string)) {
	j := i + 1
	for ; j < len(argv); j++ {
		a := argv[j]
		if a == "--" {
			j++
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		if a == "-x" || a == "--exec" || (!strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'x')) {
			return
		}
		if a == "--interval" || (!strings.HasPrefix(a, "--") && strings.HasSuffix(a, "n")) {
			j++
		}
	}
	for ; j < len(argv); j++ {
		mark(j, "watch's command (run with sh -c)")
	}
}

// sudoOptionsWithArgument are the sudo options whose value is the next
// argument.
const sudoOptionsWithArgument = "CDghpRrTtUu"

// sudoInvocation marks sudo's command when -s or -i make sudo run it
// through the shell's -c.
func sudoInvocation(argv []string, i int, mark func(int, string)) {
	viaShell := false
	j := i + 1
	for ; j < len(argv); j++ {
		a := argv[j]
		if a == "--" {
			j++
			break
		}
		if strings.HasPrefix(a, "--") {
			name, _, hasValue := strings.Cut(a, "=")
			viaShell = viaShell || name == "--shell" || name == "--login"
			if !hasValue && oneOf(name, "--user", "--group", "--chdir", "--host", "--prompt", "--role", "--type", "--command-timeout", "--other-user", "--chroot", "--close-from") {
				j++
			}
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			break
		}
		for k, c := range a[1:] {
			if c == 's' || c == 'i' {
				viaShell = true
			}
			if strings.ContainsRune(sudoOptionsWithArgument, c) {
				if k == len(a)-2 {
					j++
				}
				break
			}
		}
	}
	if !viaShell {
		return
	}
	for ; j < len(argv); j++ {
		mark(j, "sudo's command (run by the shell with -s or -i)")
	}
}

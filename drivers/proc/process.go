package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spec describes a long-lived child process such as the application under
// test.
type Spec struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Env is added to the runtime's own environment; an entry here wins
	// over an inherited entry with the same name.
	Env []string
	// Unset names inherited variables the child must not see (the ones
	// that hold secrets); Env can still set them explicitly.
	Unset []string
	// EnvOnly starts the child with Env alone, inheriting nothing of the
	// runtime's environment (a helper's, built with HelperEnv).
	EnvOnly bool
	// Dir is the working directory; empty means the runtime's.
	Dir string
	// Output receives the child's stdout and stderr interleaved, one whole
	// line per Write (a line longer than 64 KiB arrives in pieces, and a
	// last line without a newline arrives when the output closes). Writes
	// come from a single goroutine. Nil discards the output.
	Output io.Writer
}

// lineChunk bounds one Write to Spec.Output when a line has no newline.
const lineChunk = 64 << 10

// pumpDrainWait is how long Stop waits for the output pipe to reach EOF
// after the group is dead. A process that left the group (setsid) may hold
// the pipe forever; Stop closes it after this wait rather than hang.
const pumpDrainWait = 500 * time.Millisecond

// Process is a started child running as the leader of its own process
// group, below a reaper of its own (see reaper.go) that ends whatever the
// child leaves behind, even when the runtime is killed.
type Process struct {
	// reaper is the reaper's command; pid is the child's.
	reaper  *exec.Cmd
	link    *reaperLink
	pid     int
	name    string
	done    chan struct{}
	reaped  chan struct{}
	pumped  chan struct{}
	outRead *os.File
	// status is how the child ended; set before done is closed.
	status Status

	stopOnce sync.Once
	stopErr  error
	stopping chan struct{}
}

// Start launches spec.Argv in a new process group. The group is stopped
// (SIGTERM, then SIGKILL after a second) when ctx ends, so a run's context
// bounds the life of everything it launched. The child runs below a
// reaper: every process it starts, in its group or not (setsid), ends
// when Stop returns, and within moments when the runtime dies, SIGKILL
// included.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("launch: empty command")
	}
	name := spec.Argv[0]
	// The command is looked up here, in the runtime's PATH, as it always
	// was; the reaper executes the path found.
	lookup := exec.Command(name, spec.Argv[1:]...)
	if lookup.Err != nil {
		return nil, fmt.Errorf("launch %s: %w", name, lookup.Err)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = append([]string{reaperArg0, lookup.Path}, spec.Argv...)
	cmd.Dir = spec.Dir
	cmd.Env = environ(spec.Unset, spec.Env)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	if spec.EnvOnly {
		cmd.Env = append([]string{}, spec.Env...)
	}
	cmd.Env = append(cmd.Env, reaperEnv+"="+reaperVersion)
	cmd.SysProcAttr = reaperAttr()
	controlRead, controlWrite, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("launch %s: control pipe: %w", name, err)
	}
	statusRead, statusWrite, err := os.Pipe()
	if err != nil {
		controlRead.Close()
		controlWrite.Close()
		return nil, fmt.Errorf("launch %s: status pipe: %w", name, err)
	}
	cmd.ExtraFiles = []*os.File{controlRead, statusWrite}

	var outRead, outWrite *os.File
	if spec.Output != nil {
		var err error
		outRead, outWrite, err = os.Pipe()
		if err != nil {
			for _, f := range []*os.File{controlRead, controlWrite, statusRead, statusWrite} {
				f.Close()
			}
			return nil, fmt.Errorf("launch %s: output pipe: %w", name, err)
		}
		// One pipe for both streams keeps the child's own ordering of
		// stdout and stderr writes.
		cmd.Stdout, cmd.Stderr = outWrite, outWrite
	}
	err = cmd.Start()
	// The reaper holds its own copies; the runtime keeps only the control
	// pipe's write end, so the reaper sees it close however the runtime
	// ends.
	controlRead.Close()
	statusWrite.Close()
	if outWrite != nil {
		outWrite.Close()
	}
	if err != nil {
		controlWrite.Close()
		statusRead.Close()
		if outRead != nil {
			outRead.Close()
		}
		return nil, fmt.Errorf("launch %s: %w", name, err)
	}
	p := &Process{
		reaper:   cmd,
		link:     &reaperLink{control: controlWrite, status: bufio.NewReader(statusRead)},
		name:     name,
		done:     make(chan struct{}),
		reaped:   make(chan struct{}),
		pumped:   make(chan struct{}),
		outRead:  outRead,
		stopping: make(chan struct{}),
	}
	go func() {
		// With *os.File outputs exec starts no copying goroutines: Wait
		// returns as soon as the reaper exits.
		_ = cmd.Wait()
		close(p.reaped)
	}()
	p.pid, err = p.link.appPID()
	if err != nil {
		controlWrite.Close()
		<-p.reaped
		statusRead.Close()
		if outRead != nil {
			outRead.Close()
		}
		return nil, fmt.Errorf("launch %s: %w", name, err)
	}
	if outRead != nil {
		go p.pump(spec.Output)
	} else {
		close(p.pumped)
	}
	go func() {
		defer statusRead.Close()
		if ws, ok := p.link.exitStatus(); ok {
			p.status = waitStatusOf(ws)
		} else {
			// The reaper was killed; the child went with it (its
			// parent-death signal is SIGKILL).
			p.status = Status{Code: -1, Signal: syscall.SIGKILL}
		}
		close(p.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = p.Stop(time.Second)
		case <-p.stopping:
		}
	}()
	return p, nil
}

// pump forwards the output pipe to w line by line.
func (p *Process) pump(w io.Writer) {
	defer close(p.pumped)
	r := bufio.NewReaderSize(p.outRead, lineChunk)
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			// A failing writer must not block the child: keep draining.
			_, _ = w.Write(line)
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

// PID is the process ID of the child, which is also its process group ID.
func (p *Process) PID() int { return p.pid }

// Done is closed when the child (the group leader) has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the child is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Status is how a child ended, or that it has not.
type Status struct {
	// Running is true while the child has not exited.
	Running bool
	// Code is the exit code, or -1 when running or killed by a signal.
	Code int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
}

// String describes the status the way a shell user would: "running",
// "exited with status 1", "killed by signal SEGV".
func (s Status) String() string {
	switch {
	case s.Running:
		return "running"
	case s.Signal != 0:
		return "killed by signal " + signalName(s.Signal)
	default:
		return fmt.Sprintf("exited with status %d", s.Code)
	}
}

// signalName gives the short name of sig ("SEGV"), or its number.
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return strings.TrimPrefix(n, "SIG")
	}
	return fmt.Sprintf("%d", int(sig))
}

// ExitStatus reports how the child ended, or Running while it has not.
func (p *Process) ExitStatus() Status {
	if p.Alive() {
		return Status{Running: true, Code: -1}
	}
	return p.status
}

func statusOf(ps *os.ProcessState) Status {
	if ps == nil {
		return Status{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Status{Code: -1, Signal: ws.Signal()}
	}
	return Status{Code: ps.ExitCode()}
}

// waitStatusOf is the Status of a wait status the reaper reported.
func waitStatusOf(ws syscall.WaitStatus) Status {
	if ws.Signaled() {
		return Status{Code: -1, Signal: ws.Signal()}
	}
	return Status{Code: ws.ExitStatus()}
}

// Stop ends the child's whole process group: SIGTERM, then SIGKILL to
// whatever still runs after grace. It returns once the leader is reaped and
// no member of the group runs, nor any process that left it (setsid): the
// reaper kills those. Calling it again returns the first result. Stop also
// ends descendants that outlived an already exited leader.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		close(p.stopping)
		pgid := p.pid
		err := killGroup(context.Background(), pgid, grace)
		<-p.done
		// Whatever left the group is below the reaper, which kills it and
		// exits when its control pipe closes.
		p.link.control.Close()
		<-p.reaped
		if err != nil {
			p.stopErr = fmt.Errorf("stop %s (pid %d): %w", p.name, pgid, err)
		}
		select {
		case <-p.pumped:
		case <-time.After(pumpDrainWait):
		}
		if p.outRead != nil {
			// Unblocks the pump if an escaped process still holds the pipe.
			p.outRead.Close()
			<-p.pumped
		}
	})
	return p.stopErr
}

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
// group.
type Process struct {
	cmd     *exec.Cmd
	name    string
	done    chan struct{}
	pumped  chan struct{}
	outRead *os.File

	stopOnce sync.Once
	stopErr  error
	stopping chan struct{}
}

// Start launches spec.Argv in a new process group. The group is stopped
// (SIGTERM, then SIGKILL after a second) when ctx ends, so a run's context
// bounds the life of everything it launched.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if len(spec.Argv) == 0 {
		return nil, errors.New("launch: empty command")
	}
	name := spec.Argv[0]
	cmd := exec.Command(name, spec.Argv[1:]...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("launch %s: %w", name, cmd.Err)
	}
	cmd.Dir = spec.Dir
	cmd.Env = environ(spec.Unset, spec.Env)
	if spec.EnvOnly {
		// A nil Env would inherit everything.
		cmd.Env = append([]string{}, spec.Env...)
	}
	cmd.SysProcAttr = childAttr()

	var outRead, outWrite *os.File
	if spec.Output != nil {
		var err error
		outRead, outWrite, err = os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("launch %s: output pipe: %w", name, err)
		}
		// One pipe for both streams keeps the child's own ordering of
		// stdout and stderr writes.
		cmd.Stdout, cmd.Stderr = outWrite, outWrite
	}
	if err := cmd.Start(); err != nil {
		if outRead != nil {
			outRead.Close()
			outWrite.Close()
		}
		return nil, fmt.Errorf("launch %s: %w", name, err)
	}
	p := &Process{
		cmd:      cmd,
		name:     name,
		done:     make(chan struct{}),
		pumped:   make(chan struct{}),
		outRead:  outRead,
		stopping: make(chan struct{}),
	}
	if outRead != nil {
		// The child holds its own copy; ours must go so EOF can arrive.
		outWrite.Close()
		go p.pump(spec.Output)
	} else {
		close(p.pumped)
	}
	go func() {
		// Wait only reaps the leader: with *os.File outputs exec starts no
		// copying goroutines, so it returns as soon as the leader exits.
		_ = cmd.Wait()
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
func (p *Process) PID() int { return p.cmd.Process.Pid }

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
	return statusOf(p.cmd.ProcessState)
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

// Stop ends the child's whole process group: SIGTERM, then SIGKILL to
// whatever still runs after grace. It returns once the leader is reaped and
// no member of the group runs. Calling it again returns the first result.
// Stop also ends descendants that outlived an already exited leader.
func (p *Process) Stop(grace time.Duration) error {
	p.stopOnce.Do(func() {
		close(p.stopping)
		pgid := p.cmd.Process.Pid
		err := killGroup(context.Background(), pgid, grace)
		<-p.done
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

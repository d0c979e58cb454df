package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// DefaultOutputCap is how much of each output stream RunCommand keeps when
// CommandSpec.OutputCap is zero.
const DefaultOutputCap = 64 << 10

// CommandSpec describes a disposable command, such as a scenario's declared
// `run: shell` tool.
type CommandSpec struct {
	// Argv is the command and its arguments. Exactly one of Argv and Shell
	// is set.
	Argv []string
	// Shell is a command line run with /bin/sh -c.
	Shell string
	// Env is added to the runtime's own environment; later entries win.
	Env []string
	// Unset names inherited variables the command must not see (the ones
	// that hold secrets); Env can still set them explicitly.
	Unset []string
	// Dir is the working directory; empty means the runtime's.
	Dir string
	// Timeout covers start-up and execution; zero means only ctx bounds it.
	Timeout time.Duration
	// OutputCap is how many bytes of stdout and of stderr are kept, each;
	// zero means DefaultOutputCap. Output past the cap is read and dropped
	// so the command never blocks on a full pipe.
	OutputCap int
	// Filter, when set, rewrites each output stream before the cap applies
	// (the engine redacts secrets there, so a cut never leaves part of a
	// secret behind). It wraps the capped destination; Close flushes what
	// it held back.
	Filter func(dst io.Writer) io.WriteCloser
}

// Result is what a finished command produced.
type Result struct {
	// ExitCode is the command's exit status, or -1 when it was killed by a
	// signal (including on timeout).
	ExitCode int
	// Status describes the ending in words ("exited with status 1").
	Status          Status
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	// TimedOut is true when Timeout expired or ctx ended and the group was
	// killed.
	TimedOut bool
	Duration time.Duration
}

// drainWait bounds how long RunCommand waits for pipe EOF once the command
// has exited: a descendant that escaped the process group may hold the
// pipes open forever.
const drainWait = 200 * time.Millisecond

// RunCommand runs a disposable command in its own process group and
// captures its stdout and stderr separately. When the timeout expires or
// ctx ends, the whole group is killed with SIGKILL, grandchildren included,
// and the result has TimedOut set; that is not an error. The error is for
// commands that could not run at all (not found, bad directory).
func RunCommand(ctx context.Context, spec CommandSpec) (Result, error) {
	argv := spec.Argv
	switch {
	case spec.Shell != "" && len(argv) > 0:
		return Result{}, errors.New("run command: both Argv and Shell are set")
	case spec.Shell != "":
		argv = []string{"/bin/sh", "-c", spec.Shell}
	case len(argv) == 0:
		return Result{}, errors.New("run command: empty command")
	}
	limit := spec.OutputCap
	if limit <= 0 {
		limit = DefaultOutputCap
	}
	start := time.Now()
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.Timeout)
		defer cancel()
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return Result{}, fmt.Errorf("run %s: %w", argv[0], cmd.Err)
	}
	cmd.Dir = spec.Dir
	cmd.Env = environ(spec.Unset, spec.Env)
	cmd.SysProcAttr = childAttr()

	stdout, stderr := &capBuffer{limit: limit}, &capBuffer{limit: limit}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("run %s: stdout pipe: %w", argv[0], err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return Result{}, fmt.Errorf("run %s: stderr pipe: %w", argv[0], err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return Result{}, fmt.Errorf("run %s: %w", argv[0], err)
	}
	outW.Close()
	errW.Close()
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); stdout.readFrom(outR, spec.Filter) }()
	go func() { defer readers.Done(); stderr.readFrom(errR, spec.Filter) }()
	pgid := cmd.Process.Pid

	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()

	timedOut := false
	select {
	case <-exited:
	case <-ctx.Done():
		timedOut = true
		// Expiry is forcible: no grace, nothing in the group can refuse.
		_ = killGroup(context.Background(), pgid, 0)
		<-exited
	}
	// The leader is gone; a descendant still in the group would keep the
	// pipes open, and the command's contract ends with the command.
	_ = killGroup(context.Background(), pgid, 0)

	readersDone := make(chan struct{})
	go func() { readers.Wait(); close(readersDone) }()
	select {
	case <-readersDone:
	case <-time.After(drainWait):
		// An escaped process holds a pipe; closing our ends unblocks the
		// readers with whatever they already have.
		outR.Close()
		errR.Close()
		<-readersDone
	}
	outR.Close()
	errR.Close()

	status := statusOf(cmd.ProcessState)
	return Result{
		ExitCode:        status.Code,
		Status:          status,
		Stdout:          stdout.buf,
		Stderr:          stderr.buf,
		StdoutTruncated: stdout.dropped > 0,
		StderrTruncated: stderr.dropped > 0,
		TimedOut:        timedOut,
		Duration:        time.Since(start),
	}, nil
}

// capBuffer keeps the first limit bytes read and counts the rest.
type capBuffer struct {
	limit   int
	buf     []byte
	dropped int64
}

// readFrom reads r to EOF or error, through filter when there is one;
// memory stays bounded by limit plus one read chunk (and what the filter
// holds back).
func (b *capBuffer) readFrom(r io.Reader, filter func(io.Writer) io.WriteCloser) {
	var dst io.Writer = b
	if filter != nil {
		f := filter(b)
		defer f.Close()
		dst = f
	}
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			_, _ = dst.Write(chunk[:n])
		}
		if err != nil {
			return
		}
	}
}

// Write keeps what fits under the limit and counts the rest.
func (b *capBuffer) Write(p []byte) (int, error) {
	keep := max(0, min(len(p), b.limit-len(b.buf)))
	b.buf = append(b.buf, p[:keep]...)
	b.dropped += int64(len(p) - keep)
	return len(p), nil
}

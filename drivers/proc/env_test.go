package proc

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestUnsetKeepsVariablesFromChildren starts a long-lived child and a
// command with variables unset: they see neither the unset variables nor
// lose the rest, and Env can still set one explicitly.
func TestUnsetKeepsVariablesFromChildren(t *testing.T) {
	t.Setenv("KASM_PROC_SECRET", "s3cret")
	t.Setenv("KASM_PROC_PLAIN", "plain")
	const script = `echo "secret=${KASM_PROC_SECRET-unset} plain=$KASM_PROC_PLAIN again=${KASM_PROC_AGAIN-unset}"`
	want := "secret=unset plain=plain again=given\n"
	res, err := RunCommand(context.Background(), CommandSpec{Shell: script, Unset: []string{"KASM_PROC_SECRET", "KASM_PROC_AGAIN"}, Env: []string{"KASM_PROC_AGAIN=given"}})
	if err != nil || string(res.Stdout) != want {
		t.Errorf("RunCommand: %q, %v; want %q", res.Stdout, err, want)
	}
	var out syncBuffer
	p, err := Start(context.Background(), Spec{Argv: []string{"sh", "-c", script}, Unset: []string{"KASM_PROC_SECRET"}, Env: []string{"KASM_PROC_AGAIN=given"}, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	_ = p.Stop(0)
	if got := out.String(); got != want {
		t.Errorf("Start: %q, want %q", got, want)
	}
}

// TestFilterRunsBeforeTheCap has a command print a marker across the
// output cap: the filter sees it whole, so what is kept is the filtered
// text, never the first half of the marker.
func TestFilterRunsBeforeTheCap(t *testing.T) {
	t.Parallel()
	res, err := RunCommand(context.Background(), CommandSpec{
		Shell:     `printf '%090d' 0; printf MARKER-MARKER`,
		OutputCap: 95,
		Filter:    func(dst io.Writer) io.WriteCloser { return &replaceOnClose{dst: dst, old: "MARKER-MARKER", new: "[M]"} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("0", 90) + "[M]"; string(res.Stdout) != want || res.StdoutTruncated {
		t.Errorf("stdout %q (truncated %v), want %q", res.Stdout, res.StdoutTruncated, want)
	}
}

// replaceOnClose buffers everything and writes it with old replaced when
// closed.
type replaceOnClose struct {
	dst      io.Writer
	buf      bytes.Buffer
	old, new string
}

func (r *replaceOnClose) Write(p []byte) (int, error) { return r.buf.Write(p) }

func (r *replaceOnClose) Close() error {
	_, err := io.WriteString(r.dst, strings.ReplaceAll(r.buf.String(), r.old, r.new))
	return err
}

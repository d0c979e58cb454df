package ocr

import (
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	helperBuild     sync.Once
	helperBuilt     string
	helperBuildFail string
)

// helperBinary builds cmd/kasmrt-ocr once for the package's tests.
func helperBinary(t testing.TB) string {
	t.Helper()
	need(t, "go")
	helperBuild.Do(func() {
		dir, err := os.MkdirTemp("", "kasmrt-ocr-test-")
		if err != nil {
			helperBuildFail = err.Error()
			return
		}
		out := filepath.Join(dir, HelperCommand)
		cmd := exec.Command("go", "build", "-o", out, "../../cmd/kasmrt-ocr")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
		if b, err := cmd.CombinedOutput(); err != nil {
			helperBuildFail = string(b)
			return
		}
		helperBuilt = out
	})
	if helperBuildFail != "" {
		t.Fatalf("build kasmrt-ocr (needs libtesseract-dev, which scripts/setup.sh installs): %s", helperBuildFail)
	}
	return helperBuilt
}

// The long-lived helper reads what the command reads, and one process
// serves every read.
func TestHelperReadsAsTheCommand(t *testing.T) {
	t.Parallel()
	need(t)
	img := decode(t, "../../scenarios/examples/greeting-done.png")
	r := NewReaderWith(1, helperBinary(t))
	defer r.Close()
	var pid int
	for i := range 2 {
		words, err := r.Read(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		if text := Text(words); !strings.Contains(text, "Hello, Ada Lovelace!") {
			t.Errorf("read %d: %q, want the greeting on one line", i+1, text)
		}
		if r.helper == nil || r.helper.dead.Load() {
			t.Fatalf("read %d did not go through the helper", i+1)
		}
		if i == 0 {
			pid = r.helper.cmd.Process.Pid
		} else if r.helper.cmd.Process.Pid != pid {
			t.Error("the second read started another helper")
		}
	}
	blank, err := r.Read(context.Background(), image.NewRGBA(image.Rect(0, 0, 200, 100)))
	if err != nil || len(blank) != 0 {
		t.Errorf("blank image read as %v, %v", blank, err)
	}
	r.Close()
	if r.helper.cmd.ProcessState == nil {
		t.Error("Close left the helper running")
	}
}

// A helper that is broken, or a read cut short, leaves the Reader reading
// with the command.
func TestHelperFailsOver(t *testing.T) {
	t.Parallel()
	need(t)
	img := decode(t, "../../scenarios/examples/greeting-done.png")
	broken := filepath.Join(t.TempDir(), "broken-ocr")
	if err := os.WriteFile(broken, []byte("#!/bin/sh\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := NewReaderWith(1, broken)
	defer r.Close()
	words, err := r.Read(context.Background(), img)
	if err != nil || !strings.Contains(Text(words), "Hello, Ada Lovelace!") {
		t.Errorf("read through a broken helper: %q, %v; want the command's answer", Text(words), err)
	}

	r = NewReaderWith(1, helperBinary(t))
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if _, err := r.Read(ctx, img); err == nil {
		t.Error("a read whose context ended succeeded")
	}
	words, err = r.Read(context.Background(), img)
	if err != nil || !strings.Contains(Text(words), "Hello, Ada Lovelace!") {
		t.Errorf("read after a cut-short read: %q, %v", Text(words), err)
	}
}

package ocr

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestTesseractHoldsNoSecret reads a screen with tesseract as the command
// and through the helper while the runtime's environment holds a secret:
// neither process's environment holds it, and both still get their one
// thread.
func TestTesseractHoldsNoSecret(t *testing.T) {
	need(t)
	const secret = "ocr-Secr3t-value-77"
	t.Setenv("KASM_OCR_SECRET", secret)
	tesseract, err := exec.LookPath(Command)
	if err != nil {
		t.Fatal(err)
	}
	// A tesseract on PATH that keeps its environment and runs the real one.
	wrap := t.TempDir()
	envFile := filepath.Join(wrap, "environ")
	script := "#!/bin/sh\ncat /proc/$$/environ > " + envFile + "\nexec " + tesseract + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(wrap, Command), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", wrap+string(os.PathListSeparator)+os.Getenv("PATH"))
	img := decode(t, "../../scenarios/examples/greeting-done.png")
	r := NewReaderWith(1, filepath.Join(wrap, "no-helper"))
	if _, err := r.Read(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	r.Close()
	environs := map[string]string{}
	if b, err := os.ReadFile(envFile); err != nil {
		t.Errorf("the command did not run through PATH: %v", err)
	} else {
		environs["the command"] = string(b)
	}

	r = NewReaderWith(1, helperBinary(t))
	defer r.Close()
	if _, err := r.Read(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	if r.helper == nil || r.helper.dead.Load() {
		t.Fatal("the read did not go through the helper")
	}
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(r.helper.cmd.Process.Pid), "environ"))
	if err != nil {
		t.Fatal(err)
	}
	environs["the helper"] = string(b)
	for who, env := range environs {
		if strings.Contains(env, secret) {
			t.Errorf("%s holds the secret in its environment", who)
		}
		if !strings.Contains(env, "OMP_THREAD_LIMIT=1\x00") {
			t.Errorf("%s lost its one thread: %q", who, env)
		}
	}
}

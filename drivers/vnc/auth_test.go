package vnc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPasswordFileIsX11vncs writes the rfbauth file x11vnc -storepasswd
// writes for the same password, so x11vnc reads the password kasmrt means.
func TestPasswordFileIsX11vncs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("x11vnc"); err != nil {
		t.Skip("x11vnc is not installed (bash scripts/setup.sh)")
	}
	for _, pw := range []string{"abcdefgh", "Pw3xK9mQ", "short"} {
		file := filepath.Join(t.TempDir(), "pw")
		if out, err := exec.Command("x11vnc", "-storepasswd", pw, file).CombinedOutput(); err != nil {
			t.Fatalf("x11vnc -storepasswd: %v\n%s", err, out)
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := passwordFile(pw); !bytes.Equal(got, want) {
			t.Errorf("passwordFile(%q) = %x, x11vnc writes %x", pw, got, want)
		}
	}
}

func TestNewPassword(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 100 {
		pw, err := NewPassword()
		if err != nil {
			t.Fatal(err)
		}
		if len(pw) != MaxPasswordLen || strings.Trim(pw, passwordAlphabet) != "" {
			t.Fatalf("password %q: want %d characters of the alphabet", pw, MaxPasswordLen)
		}
		if seen[pw] {
			t.Fatalf("password %q drawn twice", pw)
		}
		seen[pw] = true
	}
}

func TestStartRefusesANonLoopbackAddress(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:5900", "192.0.2.1:0", "[::]:5900"} {
		if _, err := Start(t.Context(), Options{Display: ":0", Addr: addr, Password: "x", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("Start(%s) = %v, want a refusal", addr, err)
		}
	}
}

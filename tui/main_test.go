package tui

import (
	"os"
	"testing"

	"github.com/kasmrt/kasmrt/internal/testkit"
)

// kasmrt is the command line, built once for the tests that run it in a
// real terminal or against a real X server.
var kasmrt testkit.Binary

func TestMain(m *testing.M) {
	code := m.Run()
	kasmrt.Remove()
	os.Exit(code)
}

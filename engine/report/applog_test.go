package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAppLogKeepsHeadAndTail writes more than the cap: app.log keeps the
// first half of the budget, a line saying how much was cut, and the most
// recent half; within the cap nothing is cut or marked.
func TestAppLogKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int64
		lines  int
		cut    bool
		maxLen int
	}{
		{"within the cap", 1 << 10, 10, false, 1 << 10},
		{"far past the cap", 1 << 10, 5000, true, 1<<10 + 100},
		{"one past the cap", 100, 10, true, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "r")
			w, err := Create(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.LimitAppLog(tt.max)
			var all strings.Builder
			for i := range tt.lines {
				line := fmt.Sprintf("line %05d\n", i)
				all.WriteString(line)
				if _, err := w.AppLog().Write([]byte(line)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "app.log"))
			if err != nil {
				t.Fatal(err)
			}
			got, want := string(b), all.String()
			if !tt.cut {
				if got != want {
					t.Fatalf("app.log changed within the cap:\n%s", got)
				}
				return
			}
			head, tail, found := strings.Cut(got, "\n[kasmrt: app.log cut here: ")
			if !found {
				t.Fatalf("no cut marker in app.log:\n%s", got)
			}
			_, tail, _ = strings.Cut(tail, "follow]\n")
			if !strings.HasPrefix(want, head) || !strings.HasSuffix(want, tail) {
				t.Errorf("app.log does not keep the head and the tail:\nhead %q\ntail %q", head, tail)
			}
			if int64(len(head)+len(tail)) != tt.max || len(got) > tt.maxLen {
				t.Errorf("kept %d+%d bytes (%d in all), want %d", len(head), len(tail), len(got), tt.max)
			}
			lost := len(want) - len(head) - len(tail)
			if !strings.Contains(got, fmt.Sprintf("%d bytes left out", lost)) {
				t.Errorf("the marker does not say %d bytes were left out:\n%s", lost, got)
			}
		})
	}
}

// TestAppLogOneLongWrite: one write longer than the whole cap keeps its
// first and last parts around the cut, and the writer says it took every
// byte, as the application's output pump needs.
func TestAppLogOneLongWrite(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	w, err := Create(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.LimitAppLog(100)
	out := strings.Repeat("a", 60) + strings.Repeat("b", 100) + strings.Repeat("c", 50)
	if n, err := w.AppLog().Write([]byte(out)); n != len(out) || err != nil {
		t.Fatalf("write = %d, %v; want %d", n, err, len(out))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	head, tail, found := strings.Cut(string(b), "\n[kasmrt: app.log cut here: ")
	if !found || head != strings.Repeat("a", 50) || tail != "110 bytes left out; the last 50 bytes follow]\n"+strings.Repeat("c", 50) {
		t.Errorf("app.log = %q, want 50 a, the cut, and the 50 c", b)
	}
}

package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestInterleave: the two tools' samples alternate, each pair's first
// alternating too, so neither always runs right after the other, and
// each tool's durations are its own.
func TestInterleave(t *testing.T) {
	t.Parallel()
	var order []string
	a := func(i int) error { order = append(order, "A"); return nil }
	b := func(i int) error { order = append(order, "B"); return nil }
	da, db, err := interleave(4, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A", "B", "B", "A", "A", "B", "B", "A"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
	if len(da) != 4 || len(db) != 4 {
		t.Errorf("%d and %d samples, want 4 each", len(da), len(db))
	}
	if _, _, err := interleave(3, a, func(int) error { return errors.New("broke") }); err == nil {
		t.Error("a failing sample was not an error")
	}
}

// TestRunPartsGoOn: each part prints its table as it finishes, with the
// load average; a part that fails says why in its place, and the next
// part is still measured.
func TestRunPartsGoOn(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	failing := part{"browser", "a page", func(context.Context) ([]row, error) {
		return nil, errors.New("start Playwright MCP: node: not found\nmore detail")
	}}
	working := part{"x11", "a step", func(context.Context) ([]row, error) {
		d := []time.Duration{10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110}
		return []row{{what: "a step", other: "xdotool", kasmrt: median(d) * time.Millisecond, p95: p95(d) * time.Millisecond,
			them: 120 * time.Millisecond, reproduce: "go test -bench 'A|B'"}}, nil
	}}
	if runPart(context.Background(), &out, failing, 20) {
		t.Error("the failing part reported success")
	}
	if !runPart(context.Background(), &out, working, 20) {
		t.Error("the working part reported failure")
	}
	text := out.String()
	for _, want := range []string{
		"### browser: a page", "Not measured: start Playwright MCP: node: not found\n",
		"### x11: a step", "Load average ", "| a step | 60.0 ms, p95 100 ms | xdotool | 120 ms | 2.0× | `go test -bench 'A\\|B'` |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "more detail") {
		t.Error("a failing part's reason is more than its first line")
	}
}

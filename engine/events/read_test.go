package events

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	line := func(e Event) string {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	a := line(Event{Seq: 1, Kind: KindRunStarted})
	b := line(Event{Seq: 2, Kind: KindStepEnded, Step: 1, Tool: "click", Status: StatusRefused, Message: "observe first"})
	c := line(Event{Seq: 3, Kind: KindVerdict, Verdict: &Decision{Verdict: VerdictPass}})
	tests := []struct {
		name    string
		content string
		seqs    []int64
		skipped string // the *SkippedLines error's text, "" for none
	}{
		{"complete", a + b + c, []int64{1, 2, 3}, ""},
		{"no trailing newline", a + b + strings.TrimSuffix(c, "\n"), []int64{1, 2, 3}, ""},
		{"torn last line", a + b + c[:len(c)/2], []int64{1, 2}, "skipped line 3 is torn"},
		{"damaged last line with newline", a + b + c[:len(c)/2] + "\n", []int64{1, 2}, "skipped line 3 is not an event"},
		{"blank lines", a + "\n\n" + b + "  \n", []int64{1, 2}, ""},
		{"empty", "", nil, ""},
		{"damaged middle line", a + "{nope\n" + c, []int64{1, 3}, "skipped line 2 is not an event"},
		{"two damaged lines", "\x00\x1b[2J\n" + a + "[1,2]\n" + b, []int64{1, 2}, "skipped line 1 is not an event (invalid character '\\x00' looking for beginning of value); line 3 is not an event"},
		{"a payload of the wrong type", a + `{"seq":2,"kind":"app.launched","data":{"pid":"x"}}` + "\n" + c, []int64{1, 3}, "skipped line 2 is not an event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "events.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			evs, err := ReadFile(path)
			var sk *SkippedLines
			switch {
			case tt.skipped == "" && err != nil:
				t.Fatalf("ReadFile: %v", err)
			case tt.skipped != "" && (!errors.As(err, &sk) || !strings.Contains(err.Error(), tt.skipped)):
				t.Fatalf("ReadFile error = %v, want skipped lines %q", err, tt.skipped)
			}
			var seqs []int64
			for _, e := range evs {
				seqs = append(seqs, e.Seq)
			}
			if len(seqs) != len(tt.seqs) {
				t.Fatalf("seqs = %v, want %v", seqs, tt.seqs)
			}
			for i := range seqs {
				if seqs[i] != tt.seqs[i] {
					t.Fatalf("seqs = %v, want %v", seqs, tt.seqs)
				}
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	t.Parallel()
	if _, err := ReadFile(filepath.Join(t.TempDir(), "nope.jsonl")); err == nil {
		t.Fatal("ReadFile of a missing file: want an error")
	}
}

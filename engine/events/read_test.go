package events

import (
	"encoding/json"
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
	c := line(Event{Seq: 3, Kind: KindVerdict, Verdict: &Verdict{Verdict: VerdictPass}})
	tests := []struct {
		name    string
		content string
		seqs    []int64
		wantErr string
	}{
		{"complete", a + b + c, []int64{1, 2, 3}, ""},
		{"no trailing newline", a + b + strings.TrimSuffix(c, "\n"), []int64{1, 2, 3}, ""},
		{"torn last line", a + b + c[:len(c)/2], []int64{1, 2}, ""},
		{"torn last line with newline", a + b + c[:len(c)/2] + "\n", []int64{1, 2}, ""},
		{"blank lines", a + "\n\n" + b + "  \n", []int64{1, 2}, ""},
		{"empty", "", nil, ""},
		{"damaged middle line", a + "{nope\n" + c, []int64{1}, "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "events.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			evs, err := ReadFile(path)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("ReadFile error = %v, want one containing %q", err, tt.wantErr)
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

package engine

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/redact"
	"github.com/kasmrt/kasmrt/engine/report"
)

// TestFatalEvidenceNeverHoldsPartOfASecret feeds fatalEvidence the pieces
// a long line arrives in, with a secret split by the cut: neither piece's
// evidence keeps any part of the secret, a whole secret is masked, and the
// evidence stays short around the match.
func TestFatalEvidenceNeverHoldsPartOfASecret(t *testing.T) {
	t.Parallel()
	const secret = "Zq7x-Secret-Value-9"
	s := &runState{r: &Runner{redact: redact.New(secret)}}
	fatal := regexp.MustCompile(`FATAL`)
	line := "FATAL " + strings.Repeat("x", 50) + secret + strings.Repeat("y", 50) + " FATAL again"
	cut := strings.Index(line, secret) + 7
	tests := []struct {
		name               string
		text               string
		startsMid, endsMid bool
	}{
		{"first piece", line[:cut], false, true},
		{"second piece", line[cut:], true, false},
		{"whole line", line, false, false},
		{"secret near the match", "FATAL " + secret + " there", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := s.fatalEvidence(tt.text, fatal, tt.startsMid, tt.endsMid)
			for n := 4; n <= len(secret); n++ {
				for i := 0; i+n <= len(secret); i++ {
					if strings.Contains(got, secret[i:i+n]) {
						t.Fatalf("evidence holds %q of the secret: %q", secret[i:i+n], got)
					}
				}
			}
			if !strings.Contains(got, "FATAL") || len(got) > 2*fatalContext+50 {
				t.Errorf("evidence is %d bytes, want the match and its context: %.80q", len(got), got)
			}
		})
	}
}

// TestOutputScannerKnowsWhereLinesWereCut writes a line the way the pump
// delivers one longer than its read: in pieces, the secret across the cut.
// The fatal check's evidence names the match without any part of the
// secret.
func TestOutputScannerKnowsWhereLinesWereCut(t *testing.T) {
	t.Parallel()
	const secret = "Zq7x-Secret-Value-9"
	rep, err := report.Create(filepath.Join(t.TempDir(), "report"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	s := &runState{r: &Runner{redact: redact.New(secret), fatal: []*regexp.Regexp{regexp.MustCompile(`Segfault`)}}, rep: rep}
	out := s.outputScanner()
	line := "ok\n" + strings.Repeat("x", 40) + " Segfault " + strings.Repeat("y", 40) + secret + " more\n"
	cut := strings.Index(line, secret) + 5
	for _, piece := range []string{line[:cut], line[cut:]} {
		if _, err := out.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.env.fatalLine; !strings.Contains(got, "Segfault") || strings.Contains(got, secret[:5]) || strings.Contains(got, secret[5:]) {
		t.Errorf("fatal evidence %q", got)
	}
}

// TestOutputScannerBlankLines: a blank line is a line of its own, so the
// line after it is matched alone, as an anchored pattern needs, and its
// evidence is that one line.
func TestOutputScannerBlankLines(t *testing.T) {
	t.Parallel()
	rep, err := report.Create(filepath.Join(t.TempDir(), "report"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	s := &runState{r: &Runner{redact: redact.New(), fatal: []*regexp.Regexp{regexp.MustCompile(`^Fatal error`)}}, rep: rep}
	if _, err := s.outputScanner().Write([]byte("starting\n\nFatal error: out of memory\n")); err != nil {
		t.Fatal(err)
	}
	if got := s.env.fatalLine; !strings.Contains(got, "Fatal error: out of memory") || strings.Contains(got, "\n") {
		t.Errorf("fatal evidence %q, want the one line", got)
	}
}

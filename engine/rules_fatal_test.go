package engine

import (
	"regexp"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/engine/redact"
)

// TestRulesFatalEvidence pins what a fatal pattern's evidence keeps: at a
// piece's cut exactly the bytes that could hold part of a secret (one
// fewer than its longest form) are dropped, the context is taken around
// the match wherever it is in the line, and a line whose match the
// redaction removed is quoted from its start.
func TestRulesFatalEvidence(t *testing.T) {
	t.Parallel()
	const secret = "Zq7x-Secret-Value-9"
	s := &runState{r: &Runner{redact: redact.New(secret)}}
	// A cut drops one byte fewer than the secret's longest form (an
	// escaped one is longer than the secret).
	guard := s.r.redact.Longest() - 1
	cutEnd := "FATAL " + strings.Repeat("x", 50) + secret[:7]
	cutStart := secret[7:] + strings.Repeat("y", 30) + " FATAL"
	fatal := regexp.MustCompile(`FATAL`)
	deep := strings.Repeat("y", 300) + " FATAL " + strings.Repeat("z", 300)
	masked := secret + " " + strings.Repeat("w", 500)
	// 300 bytes of three-byte runes: the context's start falls inside one,
	// and the evidence starts at that rune, not in it.
	runes := strings.Repeat("€", 100) + "FATAL"
	tests := []struct {
		name               string
		re                 *regexp.Regexp
		line               string
		startsMid, endsMid bool
		want               string
	}{
		{"a piece cut at its end", fatal, cutEnd, false, true, cutEnd[:len(cutEnd)-guard] + "…"},
		{"a piece cut at its start", fatal, cutStart, true, false, "…" + cutStart[guard:]},
		{"a match deep in the line", fatal, deep, false, false,
			"…" + strings.Repeat("y", fatalContext-1) + " FATAL " + strings.Repeat("z", fatalContext-1) + "…"},
		{"a context that starts inside a rune", fatal, runes, false, false, "…" + strings.Repeat("€", 67) + "FATAL"},
		{"a match the redaction removed", regexp.MustCompile(`Zq7x`), masked, false, false,
			s.r.Redact(masked)[:2*fatalContext] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := s.fatalEvidence(tt.line, tt.re, tt.startsMid, tt.endsMid); got != tt.want {
				t.Errorf("evidence\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

package engine

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// fatalContext is how much of the line around a fatal pattern's match the
// check's evidence keeps on each side.
const fatalContext = 200

// fatalEvidence is what the fatal_pattern check shows of a matching line:
// the match and up to fatalContext bytes either side, redacted before it
// is cut. A line longer than the output pump's read arrives in pieces;
// at a piece's cut (startsMid, endsMid) a secret may be split and not
// recognisable, so the bytes there that could hold part of one are left
// out.
func (s *runState) fatalEvidence(line string, re *regexp.Regexp, startsMid, endsMid bool) string {
	guard := max(0, s.r.redact.Longest()-1)
	lead, trail := "", ""
	if startsMid {
		line, lead = line[min(guard, len(line)):], "…"
	}
	if endsMid {
		line, trail = line[:max(0, len(line)-guard)], "…"
	}
	line = s.r.Redact(strings.ToValidUTF8(line, ""))
	from, to := 0, min(len(line), 2*fatalContext)
	if loc := re.FindStringIndex(line); loc != nil {
		from, to = max(0, loc[0]-fatalContext), min(len(line), loc[1]+fatalContext)
	}
	for from > 0 && !utf8.RuneStart(line[from]) {
		from--
	}
	for to < len(line) && !utf8.RuneStart(line[to]) {
		to++
	}
	if from > 0 {
		lead = "…"
	}
	if to < len(line) {
		trail = "…"
	}
	return lead + line[from:to] + trail
}

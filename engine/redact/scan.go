package redact

import "strings"

// redactUpTo masks the forms in text from its start up to a cut at or
// before limit, and returns the masked text and the cut. Matches are found
// leftmost first, the longest form at a position winning (forms are sorted
// longest first), never overlapping. A match that starts before limit but
// runs past it moves the cut to its start, so a stream can redact it whole
// once the rest has arrived. A nil result means text[:cut] has no match
// and is returned as it is, without a copy.
func redactUpTo(forms []string, text string, limit int) ([]byte, int) {
	// next caches each form's next occurrence (-1: none left, -2: not
	// searched yet), so a text with many matches is not searched again
	// from every one of them.
	next := make([]int, len(forms))
	for k := range next {
		next[k] = -2
	}
	var out []byte
	i := 0
	for i < limit {
		at, length := nextMatch(forms, text, i, next)
		if at < 0 || at >= limit {
			break
		}
		if out == nil && at+length > limit {
			return nil, at
		}
		if out == nil {
			out = make([]byte, 0, limit)
		}
		out = append(out, text[i:at]...)
		if at+length > limit {
			return out, at
		}
		out = append(out, Mask...)
		i = at + length
	}
	if out == nil {
		return nil, limit
	}
	out = append(out, text[i:limit]...)
	return out, limit
}

// nextMatch finds the leftmost match at or after i, preferring the longest
// form at that position, and returns its start and length (-1 when none).
func nextMatch(forms []string, text string, i int, next []int) (at, length int) {
	at = -1
	for k, f := range forms {
		if next[k] == -2 || (next[k] >= 0 && next[k] < i) {
			next[k] = -1
			if j := strings.Index(text[i:], f); j >= 0 {
				next[k] = i + j
			}
		}
		// Forms are longest first, so an equal start keeps the longer one.
		if next[k] >= 0 && (at < 0 || next[k] < at) {
			at, length = next[k], len(f)
		}
	}
	return at, length
}

package redact

import "strings"

// redactUpTo masks the forms and pieces in text from its start up to a cut
// at or before limit, and returns the masked text and the cut. Matches are
// found leftmost first, the longest at a position winning (a whole form or
// a piece of a secret, whichever is longer), never overlapping. A match
// that starts before limit but runs past it moves the cut to its start, so
// a stream can redact it whole once the rest has arrived. A nil result
// means text[:cut] has no match and is returned as it is, without a copy.
func (r *Redactor) redactUpTo(text string, limit int) ([]byte, int) {
	// next caches each form's next occurrence (-1: none left, -2: not
	// searched yet), so a text with many matches is not searched again
	// from every one of them.
	next := make([]int, len(r.forms))
	for k := range next {
		next[k] = -2
	}
	// The next piece of a secret found, where and how long, is kept until
	// a match moves past its start (searched is false before any search;
	// none found is -1, for the rest of the text).
	searched, pieceAt, pieceLen := false, -1, 0
	var out []byte
	i := 0
	for i < limit {
		at, length := nextMatch(r.forms, text, i, next)
		if r.grams != nil {
			if !searched || pieceAt >= 0 && pieceAt < i {
				searched = true
				pieceAt, pieceLen = r.nextPiece(text, i, limit)
			}
			if pieceAt >= 0 && (at < 0 || pieceAt < at || pieceAt == at && pieceLen > length) {
				at, length = pieceAt, pieceLen
			}
		}
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

// nextPiece finds the first piece of a secret that starts at or after i
// and before limit, and returns its start and length (-1 when none). A
// piece never runs into a mask already in the text.
func (r *Redactor) nextPiece(text string, i, limit int) (at, length int) {
	// stop is the next mask after p, where a piece must end.
	stop := -1
	for p := i; p < limit && p+MinFragment <= len(text); p++ {
		if stop <= p {
			stop = len(text)
			if m := strings.Index(text[p+1:], Mask); m >= 0 {
				stop = p + 1 + m
			}
		}
		if n := r.pieceAt(text, p, stop); n > 0 {
			return p, n
		}
	}
	return -1, 0
}

// nextMatch finds the leftmost match at or after i, preferring the longest
// form at that position, and returns its start and length (-1 when none).
func nextMatch(forms []string, text string, i int, next []int) (at, length int) {
	at = -1
	for k, f := range forms {
		// Forms are longest first, so an equal start keeps the longer one.
		if n := nextOf(forms, k, text, i, next); n >= 0 && (at < 0 || n < at) {
			at, length = n, len(f)
		}
	}
	return at, length
}

// nextOf returns form k's next occurrence at or after i (-1: none),
// through the cache next.
func nextOf(forms []string, k int, text string, i int, next []int) int {
	if next[k] == -2 || (next[k] >= 0 && next[k] < i) {
		next[k] = -1
		if j := strings.Index(text[i:], forms[k]); j >= 0 {
			next[k] = i + j
		}
	}
	return next[k]
}

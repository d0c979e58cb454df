package redact

import "strings"

// redactUpTo masks the forms and the prefixes of secrets in text from its
// start up to a cut at or before limit, and returns the masked text and
// the cut. Matches are found leftmost first, the longest at a position
// winning (a whole form or a prefix, whichever is longer), never
// overlapping. A match that starts before limit but runs past it moves the
// cut to its start, so a stream can redact it whole once the rest has
// arrived. A nil result means text[:cut] has no match and is returned as
// it is, without a copy.
func (r *Redactor) redactUpTo(text string, limit int) ([]byte, int) {
	// next caches each form's next occurrence (-1: none left, -2: not
	// searched yet), so a text with many matches is not searched again
	// from every one of them.
	next := make([]int, len(r.forms))
	for k := range next {
		next[k] = -2
	}
	// The next prefix of a secret found, where and how long, is kept
	// until a match moves past its start (searched is false before any
	// search; none found is -1, for the rest of the text).
	searched, prefixAt, prefixLen := false, -1, 0
	// nextHead caches each head's next occurrence as next does the forms',
	// and its last entry the mask's, where a prefix must end.
	nextHead := make([]int, len(r.heads)+1)
	for k := range nextHead {
		nextHead[k] = -2
	}
	var out []byte
	i := 0
	for i < limit {
		at, length := nextMatch(r.forms, text, i, next)
		if len(r.heads) > 0 {
			if !searched || prefixAt >= 0 && prefixAt < i {
				searched = true
				prefixAt, prefixLen = r.nextPrefix(text, i, limit, nextHead)
			}
			if prefixAt >= 0 && (at < 0 || prefixAt < at || prefixAt == at && prefixLen > length) {
				at, length = prefixAt, prefixLen
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

// nextPrefix finds the first prefix of a secret that starts at or after i
// and before limit, and returns its start and length (-1 when none):
// where one of the heads is next found, the longest prefix of a secret
// with that head. A prefix never runs into a mask already in the text.
// next caches each head's next occurrence and, last, the mask's (see
// redactUpTo).
func (r *Redactor) nextPrefix(text string, i, limit int, next []int) (at, length int) {
	withMask := append(r.heads[:len(r.heads):len(r.heads)], Mask)
	for p := i; p < limit; {
		head, found := -1, -1
		for k := range r.heads {
			if n := nextOf(r.heads, k, text, p, next); n >= 0 && (found < 0 || n < found) {
				head, found = k, n
			}
		}
		if found < 0 || found >= limit {
			return -1, 0
		}
		stop := len(text)
		if m := nextOf(withMask, len(r.heads), text, found+1, next); m >= 0 {
			stop = m
		}
		if n := r.prefixAt(text, found, stop, head); n > 0 {
			return found, n
		}
		p = found + 1
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

package redact

import (
	"slices"
	"unicode"
	"unicode/utf8"
)

// A secret typed a few characters at a time into an application that
// echoes or logs its input shows every prefix of it, one after the other;
// a value cut by a field's width or a preview shows one too. Each prefix
// of MinFragment characters or more of a long enough secret is masked
// wherever it shows, as the whole value is. Pieces that begin inside a
// secret are not: a passphrase's or a password's inner words ("secret" in
// "hunter2-page-secret") are ordinary text, and masking them would hide
// what the runtime writes itself ("the secret value").

// indexHeads returns the distinct heads (first MinFragment bytes) of the
// secrets masked by prefix, and for each the secrets it starts: every
// prefix that is masked starts with its secret's head, and a text is
// searched for the few heads as for the whole forms.
func indexHeads(prefixed []string) ([]string, [][]int) {
	var heads []string
	var of [][]int
	for k, p := range prefixed {
		h := p[:MinFragment]
		if i := slices.Index(heads, h); i >= 0 {
			of[i] = append(of[i], k)
			continue
		}
		heads, of = append(heads, h), append(of, []int{k})
	}
	return heads, of
}

// prefixAt returns the length of the longest prefix of a secret, at least
// MinFragment characters long past its public head (longEnough), that text
// holds at i, and 0 when none does. The prefix ends before stop, where the mask of an
// earlier redaction begins, so redacting a redacted text again changes
// nothing.
func (r *Redactor) prefixAt(text string, i, stop int, head int) int {
	if i+MinFragment > stop {
		return 0
	}
	best := 0
	for _, k := range r.headOf[head] {
		p := r.prefixed[k]
		n := 0
		for i+n < stop && n < len(p) && text[i+n] == p[n] {
			n++
		}
		// End on a whole character of the secret, never inside one.
		for n < len(p) && n > 0 && !utf8.RuneStart(p[n]) {
			n--
		}
		if n > best && n > r.public[k] && longEnough(p[r.public[k]:n]) {
			best = n
		}
	}
	return best
}

// longEnough reports whether s holds at least MinFragment characters other
// than white space: the spaces between the words of a passphrase tell
// nothing of it.
func longEnough(s string) bool {
	n := 0
	for _, c := range s {
		if !unicode.IsSpace(c) {
			n++
		}
	}
	return n >= MinFragment
}

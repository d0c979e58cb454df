package redact

import (
	"unicode"
	"unicode/utf8"
)

// gramAt is where a gram (MinFragment bytes) starts in one of the pieces.
type gramAt struct {
	piece, at int
}

// gramKey packs the MinFragment bytes at the start of s into a map key.
func gramKey(s string) uint64 {
	_ = s[MinFragment-1]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 | uint64(s[4])<<32 | uint64(s[5])<<40
}

// gramFilter is a bit set of the grams' hashes: most positions of a text
// start no gram, and one bit test tells so without a map lookup.
type gramFilter [1024]uint64

func gramBit(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> 48 }

func (f *gramFilter) add(key uint64) { b := gramBit(key); f[b>>6] |= 1 << (b & 63) }

func (f *gramFilter) has(key uint64) bool { b := gramBit(key); return f[b>>6]&(1<<(b&63)) != 0 }

// indexGrams indexes every run of MinFragment bytes that starts a
// character in the pieces: any piece of a secret at least MinFragment
// characters long begins with one of them, so a text is searched for
// pieces with one map lookup per byte.
func indexGrams(pieces []string) (map[uint64][]gramAt, *gramFilter) {
	if len(pieces) == 0 {
		return nil, nil
	}
	grams := map[uint64][]gramAt{}
	filter := new(gramFilter)
	for k, p := range pieces {
		for at := 0; at+MinFragment <= len(p); at++ {
			if utf8.RuneStart(p[at]) {
				key := gramKey(p[at:])
				grams[key] = append(grams[key], gramAt{k, at})
				filter.add(key)
			}
		}
	}
	return grams, filter
}

// pieceAt returns the length of the longest piece of a secret, at least
// MinFragment characters long, that text holds at i, and 0 when none does.
// The piece ends before stop, where the mask of an earlier redaction
// begins, so redacting a redacted text again changes nothing.
func (r *Redactor) pieceAt(text string, i, stop int) int {
	if i+MinFragment > stop {
		return 0
	}
	key := gramKey(text[i:])
	if !r.filter.has(key) {
		return 0
	}
	best := 0
	for _, g := range r.grams[key] {
		p := r.pieces[g.piece]
		n := 0
		for i+n < stop && g.at+n < len(p) && text[i+n] == p[g.at+n] {
			n++
		}
		// End on a whole character of the secret, never inside one.
		for g.at+n < len(p) && n > 0 && !utf8.RuneStart(p[g.at+n]) {
			n--
		}
		if n > best && longEnough(text[i:i+n]) {
			best = n
		}
	}
	return best
}

// longEnough reports whether s holds at least MinFragment characters other
// than white space: the spaces between the words of a passphrase carry
// none of it, and " horse " is five characters of one, not seven.
func longEnough(s string) bool {
	n := 0
	for _, c := range s {
		if !unicode.IsSpace(c) {
			n++
		}
	}
	return n >= MinFragment
}

// Package redact removes secret values from everything the runtime writes:
// reports, events, logs, console frames and model requests.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
)

// Mask is what a secret value becomes.
const Mask = "[REDACTED]"

// Redactor replaces every secret value, and its common encodings, with
// Mask. The zero value and nil redact nothing.
type Redactor struct {
	// forms are the strings matched whole, longest first.
	forms []string
	// pieces are the forms whose every run of at least MinFragment
	// characters is masked too, and grams indexes them (see fragment.go).
	pieces []string
	grams  map[uint64][]gramAt
	filter *gramFilter
}

// MinFragment is the length, in characters other than white space, from
// which a piece of a secret is masked on its own: typing goes a few
// characters at a time, and an application that echoes or logs its input
// shows every prefix of what is being typed; an application may also show
// a secret cut, wrapped or scrolled. Shorter pieces (a letter, a common
// short word) are ordinary text, and masking them everywhere would hide
// much of what a run writes.
const MinFragment = 6

// New returns a redactor for the given secret values. Empty values are
// ignored. Each value is also matched URL-encoded (query and path forms),
// JSON- and Go-quoted and base64-encoded, since those are the forms it
// takes in URLs, request bodies, error messages and headers. A value of
// MinFragment characters or more is masked in pieces too: every run of at
// least MinFragment characters of it, or of its URL, JSON or Go-quoted
// form, is masked wherever it shows, so neither a prefix that typing
// leaves behind nor any other part that long of a secret is written.
func New(secrets ...string) *Redactor { return NewWith(secrets, nil) }

// NewWith returns a redactor for secrets (as New) and for wholes, values
// masked only whole (with their encodings): texts that carry a credential
// among public words, such as a webhook's URL or an Authorization header's
// value, whose pieces ("https://", "Bearer") are no secret. The credential
// inside such a text is given among secrets.
func NewWith(secrets, wholes []string) *Redactor {
	seen := map[string]bool{}
	var forms, pieces []string
	add := func(s string, piece bool) {
		if s == "" {
			return
		}
		if !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
		if piece && longEnough(s) && !slices.Contains(pieces, s) {
			pieces = append(pieces, s)
		}
	}
	addAll := func(s string, piece bool) {
		if s == "" {
			return
		}
		// Only a long enough secret is masked in pieces: the escaped forms
		// of a short one are longer than it, not more secret.
		piece = piece && longEnough(s)
		add(s, piece)
		add(url.QueryEscape(s), piece)
		add(url.PathEscape(s), piece)
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1:len(b)-1]), piece)
		}
		q := strconv.Quote(s) // Go's %q, as in error messages
		add(q[1:len(q)-1], piece)
		// Pieces of the base64 forms are not masked: a piece of a base64
		// text is not a piece of what it encodes, and base64 runs (images
		// in model requests) would match them by chance.
		add(base64.StdEncoding.EncodeToString([]byte(s)), false)
		add(base64.RawURLEncoding.EncodeToString([]byte(s)), false)
	}
	for _, s := range secrets {
		addAll(s, true)
	}
	for _, s := range wholes {
		addAll(s, false)
	}
	if len(forms) == 0 {
		return &Redactor{}
	}
	// The mask itself maps to itself, so redacting twice (the bus, then
	// the report writer) changes nothing even when a secret is a piece of
	// the mask, such as one letter.
	if !seen[Mask] {
		forms = append(forms, Mask)
	}
	// Longest first: at a position the first form that matches wins, so a
	// secret that contains another is masked whole, in one pass.
	slices.SortStableFunc(forms, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	grams, filter := indexGrams(pieces)
	return &Redactor{forms: forms, pieces: pieces, grams: grams, filter: filter}
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.forms) == 0 {
		return s
	}
	out, _ := r.redactUpTo(s, len(s))
	if out == nil {
		return s
	}
	return string(out)
}

// Bytes redacts b.
func (r *Redactor) Bytes(b []byte) []byte {
	if r == nil || len(r.forms) == 0 {
		return b
	}
	out, _ := r.redactUpTo(string(b), len(b))
	if out == nil {
		return b
	}
	return out
}

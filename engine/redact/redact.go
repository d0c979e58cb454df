// Package redact removes secret values from everything the runtime writes:
// reports, events, logs, console frames and model requests.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Mask is what a secret value becomes.
const Mask = "[REDACTED]"

// Redactor replaces every secret value, and its common encodings, with
// Mask. The zero value and nil redact nothing.
type Redactor struct {
	// forms are the strings matched whole, longest first.
	forms []string
	// prefixed are the forms whose every prefix of at least MinFragment
	// characters is masked too; heads are their first MinFragment bytes,
	// and headOf the prefixed forms each starts (see prefix.go).
	prefixed []string
	// public is the length of each prefixed form's public head, which no
	// prefix counts (see publicHead).
	public []int
	heads  []string
	headOf [][]int
	// secrets and wholes are what the redactor was made for, so that With
	// can make one that masks more.
	secrets, wholes []string
}

// MinFragment is the length, in characters other than white space, from
// which a prefix of a secret is masked on its own: typing goes a few
// characters at a time, and an application that echoes or logs its input
// shows every prefix of what is being typed. Shorter prefixes (a letter, a
// short word) are ordinary text, and masking them everywhere would hide
// much of what a run writes.
const MinFragment = 6

// New returns a redactor for the given secret values. Empty values are
// ignored. Each value is also matched URL-encoded (query and path forms),
// JSON- and Go-quoted and base64-encoded, since those are the forms it
// takes in URLs, request bodies, error messages and headers. A value of
// MinFragment characters or more is masked by its prefixes too: every
// prefix of at least MinFragment characters of it, or of its URL, JSON or
// Go-quoted form, is masked wherever it shows, so what typing leaves
// behind in a log (every prefix up to the whole) is never written.
func New(secrets ...string) *Redactor { return NewWith(secrets, nil) }

// NewWith returns a redactor for secrets (as New) and for wholes, values
// masked only whole (with their encodings): texts that carry a credential
// among public words, such as a webhook's URL or an Authorization header's
// value, whose prefixes ("https://", "Bearer") are no secret. The credential
// inside such a text is given among secrets.
func NewWith(secrets, wholes []string) *Redactor {
	seen := map[string]bool{}
	var forms, prefixed []string
	var public []int
	add := func(s string, byPrefix bool, head int) {
		if s == "" {
			return
		}
		if !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
		if byPrefix && longEnough(s[head:]) && !slices.Contains(prefixed, s) {
			prefixed, public = append(prefixed, s), append(public, head)
		}
	}
	addAll := func(s string, byPrefix bool) {
		if s == "" {
			return
		}
		// A prefix counts from the end of the secret's public head (a
		// URL's scheme, a PEM key's armor line), in each form the head
		// takes; a secret with too little past it (or too short) is
		// masked only whole: the escaped forms of a short one are longer
		// than it, not more secret.
		head := s[:publicHead(s)]
		byPrefix = byPrefix && longEnough(s[len(head):])
		for _, enc := range prefixEncodings {
			add(enc(s), byPrefix, len(enc(head)))
		}
		// Prefixes of the base64 forms are not masked: base64 runs (images
		// in model requests) would match them by chance, and a prefix of
		// a base64 text is rarely what an application shows of a secret.
		add(base64.StdEncoding.EncodeToString([]byte(s)), false, 0)
		add(base64.RawURLEncoding.EncodeToString([]byte(s)), false, 0)
	}
	for _, s := range secrets {
		addAll(s, true)
	}
	for _, s := range wholes {
		addAll(s, false)
	}
	if len(forms) == 0 {
		return &Redactor{secrets: secrets, wholes: wholes}
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
	heads, headOf := indexHeads(prefixed)
	return &Redactor{forms: forms, prefixed: prefixed, public: public, heads: heads, headOf: headOf,
		secrets: secrets, wholes: wholes}
}

// With returns a redactor that masks what r masks and the secrets given,
// as New masks them: for values learned during a run (an answer the
// operator marked secret). r is unchanged; a nil r masks only the secrets.
func (r *Redactor) With(secrets ...string) *Redactor {
	if r == nil {
		return New(secrets...)
	}
	return NewWith(append(slices.Clone(r.secrets), secrets...), r.wholes)
}

// prefixEncodings are the forms a secret is matched in by its prefixes
// too: itself, URL-encoded (query and path), JSON- and Go-quoted. Each
// encodes character by character, so the encoding of a prefix is a prefix
// of the encoding.
var prefixEncodings = []func(string) string{
	func(s string) string { return s },
	url.QueryEscape,
	url.PathEscape,
	func(s string) string {
		b, err := json.Marshal(s)
		if err != nil {
			return ""
		}
		return string(b[1 : len(b)-1])
	},
	func(s string) string {
		q := strconv.Quote(s) // Go's %q, as in error messages
		return q[1 : len(q)-1]
	},
}

// publicHeadRE is the start of a secret that tells nothing of it: a URL's
// scheme (https://user:password@…) or a PEM block's armor line.
var publicHeadRE = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9+.-]*://|-----BEGIN [A-Z0-9 ]+-----(?:\r?\n)?)`)

// publicHead is the length of s's public head (0 when none): its prefixes
// are counted from there, so "https://" or "-----BEGIN PRIVATE KEY-----",
// in every URL and key a run shows, is not taken for a secret's start.
func publicHead(s string) int { return len(publicHeadRE.FindString(s)) }

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

// Holds reports whether s holds a secret in any form the redactor knows:
// it is one of the values or their encodings, or it holds one, or a prefix
// of one, of MinFragment characters or more. Shorter values count only
// when s is exactly one: a letter or a short number is in many texts. The
// mask is no secret.
func (r *Redactor) Holds(s string) bool {
	if r == nil || s == "" {
		return false
	}
	for _, f := range r.forms {
		if f != Mask && (s == f || longEnough(f) && strings.Contains(s, f)) {
			return true
		}
	}
	next := make([]int, len(r.heads)+1)
	for k := range next {
		next[k] = -2
	}
	at, _ := r.nextPrefix(s, 0, len(s), next)
	return at >= 0
}

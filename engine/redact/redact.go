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
	// forms are the matched strings, longest first.
	forms []string
}

// New returns a redactor for the given secret values. Empty values are
// ignored. Each value is also matched URL-encoded (query and path forms),
// JSON- and Go-quoted and base64-encoded, since those are the forms it
// takes in URLs, request bodies, error messages and headers.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var forms []string
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		if b, err := json.Marshal(s); err == nil {
			add(string(b[1 : len(b)-1]))
		}
		q := strconv.Quote(s) // Go's %q, as in error messages
		add(q[1 : len(q)-1])
		add(base64.StdEncoding.EncodeToString([]byte(s)))
		add(base64.RawURLEncoding.EncodeToString([]byte(s)))
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
	return &Redactor{forms: forms}
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil || len(r.forms) == 0 {
		return s
	}
	out, _ := redactUpTo(r.forms, s, len(s))
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
	out, _ := redactUpTo(r.forms, string(b), len(b))
	if out == nil {
		return b
	}
	return out
}

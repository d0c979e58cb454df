package redact

import (
	"cmp"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRedactTypedPrefixes: a page that logs its input while a secret is
// typed a few characters at a time shows every prefix of it. Each prefix
// of MinFragment characters or more (not counting spaces) is masked,
// wherever it shows and in its escaped forms; shorter ones, and pieces
// from inside the secret (one word of a passphrase), are ordinary text and
// stay.
func TestRedactTypedPrefixes(t *testing.T) {
	t.Parallel()
	const secret = "correct horse battery staple"
	r := New(secret)
	for n := 1; n < len(secret); n++ {
		in := fmt.Sprintf("input value: %q (%d)", secret[:n], n)
		got := r.String(in)
		if n < MinFragment {
			if got != in {
				t.Errorf("prefix of %d: %q became %q; a piece shorter than %d is left alone", n, in, got, MinFragment)
			}
			continue
		}
		if want := fmt.Sprintf("input value: %q (%d)", Mask, n); got != want {
			t.Errorf("prefix of %d: %q became %q, want %q", n, in, got, want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"typed: correct h", "typed: " + Mask},
		{"typed:correct horse battery stapler", "typed:" + Mask + "r"},
		// Spaces count for nothing: five letters are not enough.
		{"typed: corr ec", "typed: corr ec"},
		{"typed: correct", "typed: " + Mask},
		{"word battery here", "word battery here"},
		{"end: y staple.", "end: y staple."},
		// "correct horse " is a prefix too, its space included.
		{"correct horse correct horse", Mask + Mask},
		{"correct horse, correct horse", Mask + ", " + Mask},
		{`{"v":"correct horse battery staple\u0026"}`, `{"v":"` + Mask + `\u0026"}`},
		{"q=correct+horse+batt&x=1", "q=" + Mask + "&x=1"},
		{"q=correct%20horse", "q=" + Mask},
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := New("abcde").String("abcde abcd abcdef"); got != Mask+" abcd "+Mask+"f" {
		t.Errorf("a five-character secret: %q; it is masked whole only", got)
	}
}

// TestRedactWholesOnlyWhole: a text that carries a credential among public
// words (a webhook's URL, "Bearer …") is masked whole, never by its
// prefixes, while the credential given as a secret is masked by them.
func TestRedactWholesOnlyWhole(t *testing.T) {
	t.Parallel()
	r := NewWith([]string{"tok-9f8e7d6c5b"}, []string{"https://hooks.example/services/x", "Bearer tok-9f8e7d6c5b"})
	for _, c := range []struct{ in, want string }{
		{"see https://hooks.example/services/x now", "see " + Mask + " now"},
		{"see https://docs.example/services/y", "see https://docs.example/services/y"},
		{"Authorization: Bearer tok-9f8e7d6c5b", "Authorization: " + Mask},
		{"Bearer other", "Bearer other"},
		{"typed tok-9f8e7", "typed " + Mask},
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactPrefixesTwice: a second pass leaves a redacted text alone when
// a long secret holds a piece of the mask, and none of the secret's
// prefixes of MinFragment characters is left after the first.
func TestRedactPrefixesTwice(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"[REDACTED]-plus", "REDACTED", "xx[REDACTED]yy", "ACTED]]]]", "[[[[[RED", "aaaaaaab"} {
		r := New(secret)
		for _, in := range []string{"pin " + secret + " at", secret[:len(secret)-1] + secret, "x" + secret[1:] + Mask + secret[:7]} {
			once := r.String(in)
			if twice := r.String(once); twice != once {
				t.Errorf("secret %q, text %q: redacted again %q, want %q", secret, in, twice, once)
			}
			if run := leftPrefix(once, []string{secret}); run != "" {
				t.Errorf("secret %q, text %q: %q left in %q", secret, in, run, once)
			}
		}
	}
}

// leftPrefix returns a prefix, long enough to be masked, of one of the
// secrets that text holds outside its masks ("" when none).
func leftPrefix(text string, secrets []string) string {
	for _, part := range strings.Split(text, Mask) {
		rs := []rune(part)
		for i := range rs {
			for j := i + 1; j <= len(rs); j++ {
				run := string(rs[i:j])
				if !longEnough(run) {
					continue
				}
				for _, s := range secrets {
					if strings.HasPrefix(s, run) {
						return run
					}
				}
			}
		}
	}
	return ""
}

// TestRedactPrefixesMatchReplacerSemantics compares String with
// strings.Replacer over every form and every prefix of MinFragment
// characters or more of the secrets (and of their URL, JSON and Go-quoted
// forms), longest first, on random texts built from pieces of the
// secrets: both mask the same matches (leftmost, the longest at a
// position, never overlapping), and no such prefix of a secret is left.
func TestRedactPrefixesMatchReplacerSemantics(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 11))
	alphabet := "abc/ %=\"é\n"
	runes := []rune(alphabet)
	for round := range 400 {
		var secrets []string
		for range 1 + rng.IntN(3) {
			b := make([]rune, 1+rng.IntN(12))
			for i := range b {
				b[i] = runes[rng.IntN(len(runes))]
			}
			secrets = append(secrets, string(b))
		}
		r := New(secrets...)
		all := slices.Clone(r.forms)
		for k, p := range r.prefixed {
			rs := []rune(p)
			for j := 1; j <= len(rs); j++ {
				if s := string(rs[:j]); len(s) > r.public[k] && longEnough(s[r.public[k]:]) && !slices.Contains(all, s) {
					all = append(all, s)
				}
			}
		}
		slices.SortStableFunc(all, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
		pairs := make([]string, 0, 2*len(all))
		for _, f := range all {
			pairs = append(pairs, f, Mask)
		}
		want := strings.NewReplacer(pairs...)
		var text strings.Builder
		for range rng.IntN(30) {
			switch rng.IntN(4) {
			case 0:
				f := []rune(r.forms[rng.IntN(len(r.forms))])
				i := rng.IntN(len(f))
				text.WriteString(string(f[i : i+rng.IntN(len(f)-i)+1]))
			case 1:
				text.WriteString(secrets[rng.IntN(len(secrets))])
			default:
				text.WriteRune(runes[rng.IntN(len(runes))])
			}
		}
		in := text.String()
		got := r.String(in)
		if exp := want.Replace(in); got != exp {
			t.Fatalf("round %d, secrets %q, text %q:\ngot  %q\nwant %q", round, secrets, in, got, exp)
		}
		var long []string
		for _, s := range secrets {
			if longEnough(s) {
				long = append(long, s)
			}
		}
		if run := leftPrefix(got, long); run != "" && !strings.Contains(in, Mask) {
			t.Fatalf("round %d, secrets %q, text %q: %q left in %q", round, secrets, in, run, got)
		}
	}
}

// TestHolds: a text holds a secret when it is one, or holds one (or a
// prefix of one) long enough to be no accident, in any encoding.
func TestHolds(t *testing.T) {
	t.Parallel()
	r := NewWith([]string{"tok-9f8e7d6c5b", "pw"}, []string{"https://hooks.example/x"})
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"tok-9f8e7d6c5b", true},
		{"Bearer tok-9f8e7d6c5b", true},
		{"tok-9f8e7", true},
		{"x=" + url.QueryEscape("tok-9f8e7d6c5b"), true},
		{base64.StdEncoding.EncodeToString([]byte("tok-9f8e7d6c5b")), true},
		{"pw", true},
		{"https://hooks.example/x", true},
		{"curl https://hooks.example/x -d @-", true},
		{"/usr/bin:/bin", false},
		{"pwd", false},
		{"tok-9", false},
		{"9f8e7d6c5b", false},
		{Mask, false},
		{"", false},
	} {
		if got := r.Holds(c.in); got != c.want {
			t.Errorf("Holds(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	var none *Redactor
	if none.Holds("x") || New().Holds("x") {
		t.Error("a redactor without secrets holds one")
	}
}

// TestRedactPublicHeads: the start of a secret that tells nothing of it
// (a URL's scheme, a PEM key's armor line) is not counted in a prefix, so
// every URL and key a run shows is not taken for the secret's start.
func TestRedactPublicHeads(t *testing.T) {
	t.Parallel()
	const dsn = "postgres://app:Secr3t-pw@db.example/prod"
	const key = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
	r := New(dsn, key, "https://ab")
	for _, c := range []struct{ in, want string }{
		{"see postgres://other@db", "see postgres://other@db"},
		{"typed postgres://app:Se", "typed " + Mask},
		{"typed postgres://app:S", "typed postgres://app:S"},
		{"q=" + url.QueryEscape("postgres://app:Secr3t"), "q=" + Mask},
		{"q=" + url.QueryEscape("postgres://other"), "q=" + url.QueryEscape("postgres://other")},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA"},
		{"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz", Mask},
		// Too little past its head, a secret is masked only whole.
		{"open https://xy", "open https://xy"},
		{"open https://ab", "open " + Mask},
	} {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestRedactManyHeadsWithoutAPrefix: a text full of a secret's first
// bytes that never go on to a long enough prefix (its head holds spaces)
// is searched once, not once from every head found: it is redacted at the
// speed of any text, and left as it is.
func TestRedactManyHeadsWithoutAPrefix(t *testing.T) {
	t.Parallel()
	r := New("a b c d e f g h")
	text := strings.Repeat("a b c x ", 64<<10) + Mask
	if got := r.String(text); got != text {
		t.Errorf("a text without a long enough prefix was changed")
	}
	if r.Holds(text[:len(text)-len(Mask)]) {
		t.Error("Holds found a prefix in a text without a long enough one")
	}
}

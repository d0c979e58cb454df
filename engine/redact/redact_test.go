package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	t.Parallel()
	r := New("hunter2", "hunter2-extended", "p@ss word/&", "tab\there", "")
	cases := []struct{ in, want string }{
		{"pw=hunter2.", "pw=" + Mask + "."},
		{"long hunter2-extended here", "long " + Mask + " here"},
		{"q=" + url.QueryEscape("p@ss word/&"), "q=" + Mask},
		{"path/" + url.PathEscape("p@ss word/&"), "path/" + Mask},
		{"auth " + base64.StdEncoding.EncodeToString([]byte("hunter2")), "auth " + Mask},
		{`{"v":"p@ss word/&"}`, `{"v":"` + Mask + `"}`},
		// encoding/json escapes & (and < and >), which %q does not.
		{`{"v":"p@ss word/\u0026"}`, `{"v":"` + Mask + `"}`},
		{"nothing secret", "nothing secret"},
		{fmt.Sprintf("quoted %q", "tab\there"), "quoted \"" + Mask + "\""},
	}
	for _, c := range cases {
		if got := r.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := string(r.Bytes([]byte("x hunter2 y"))); strings.Contains(got, "hunter2") {
		t.Errorf("Bytes left the secret: %q", got)
	}
	var none *Redactor
	if none.String("hunter2") != "hunter2" || New().String("a") != "a" {
		t.Error("an empty redactor changed its input")
	}
}

// TestRedactTwice: a second pass leaves a redacted text alone, even for a
// secret that is part of the mask.
func TestRedactTwice(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"E", "RED", "[", "]", "ACT", "1280"} {
		r := New(secret)
		once := r.String("pin " + secret + " at 1280x800")
		if twice := r.String(once); twice != once {
			t.Errorf("secret %q: redacted again %q, want %q", secret, twice, once)
		}
		if strings.Contains(strings.ReplaceAll(once, Mask, ""), secret) {
			t.Errorf("secret %q: left in %q", secret, once)
		}
	}
}

// TestRedactMatchesReplacerSemantics compares String with the standard
// library's strings.Replacer over the same forms, longest first, on random
// texts built from pieces of the secrets: both must mask the same matches
// (leftmost, the longest at a position, never overlapping).
func TestRedactMatchesReplacerSemantics(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 9))
	alphabet := "ab/ %=\"\n"
	for round := range 300 {
		var secrets []string
		for range 1 + rng.IntN(3) {
			n := 1 + rng.IntN(5)
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			secrets = append(secrets, string(b))
		}
		r := New(secrets...)
		pairs := make([]string, 0, 2*len(r.forms))
		for _, f := range r.forms {
			pairs = append(pairs, f, Mask)
		}
		want := strings.NewReplacer(pairs...)
		var text strings.Builder
		for range rng.IntN(40) {
			if rng.IntN(3) == 0 {
				text.WriteString(r.forms[rng.IntN(len(r.forms))])
			} else {
				text.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		if got, exp := r.String(text.String()), want.Replace(text.String()); got != exp {
			t.Fatalf("round %d, secrets %q, text %q:\ngot  %q\nwant %q", round, secrets, text.String(), got, exp)
		}
	}
}

// TestLongest: the longest form a secret is matched in, which a stream
// holds back at a cut; none without secrets.
func TestLongest(t *testing.T) {
	t.Parallel()
	const s = "hunter2-extended"
	if got, want := New(s).Longest(), max(len(base64.StdEncoding.EncodeToString([]byte(s))), len(Mask)); got != want {
		t.Errorf("Longest = %d, want %d (the base64 form)", got, want)
	}
	var none *Redactor
	if none.Longest() != 0 || New().Longest() != 0 || New("").Longest() != 0 {
		t.Error("a redactor without secrets has a longest form")
	}
}

// TestRedactUpToCutsBeforeAMatchPastTheLimit: a match that runs past the
// limit moves the cut to its start, and text before it with no match is
// handed back as it is (nil), not copied.
func TestRedactUpToCutsBeforeAMatchPastTheLimit(t *testing.T) {
	t.Parallel()
	red := New("hunter2")
	out, cut := red.redactUpTo("pw: hunter2", 7)
	if out != nil || cut != 4 {
		t.Errorf("redactUpTo = %q, %d; want nil and the cut at the match, 4", out, cut)
	}
	out, cut = red.redactUpTo("hunter2 and hunter2", 15)
	if string(out) != Mask+" and " || cut != 12 {
		t.Errorf("redactUpTo = %q, %d; want the first masked and the cut at the second, 12", out, cut)
	}
}

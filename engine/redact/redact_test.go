package redact

import (
	"encoding/base64"
	"fmt"
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

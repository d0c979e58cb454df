package redact

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestStreamMasksSecretsAcrossWrites writes texts in every split and in
// random pieces: the stream's output must equal redacting the whole text
// at once, so a secret cut by a write boundary is still masked whole.
func TestStreamMasksSecretsAcrossWrites(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		text    string
	}{
		{"split secret", []string{"hunter2-Secret!"}, "user=ada password=hunter2-Secret! done\nnext line\n"},
		{"line without newline", []string{"hunter2-Secret!"}, strings.Repeat("x", 200) + "hunter2-Secret!" + strings.Repeat("y", 50)},
		{"secret inside a longer one", []string{"abc", "xxabcxx"}, "1 xxabcxx 2 abc 3 xxab 4"},
		{"self-overlapping secret", []string{"aaa"}, strings.Repeat("a", 40) + "b" + strings.Repeat("a", 7)},
		{"newline in the secret", []string{"line1\nline2"}, "before line1\nline2 after\nline1\nother\n"},
		{"one-byte secret", []string{"7"}, "1728 and 77\n"},
		{"typed prefixes", []string{"correct horse battery"}, "v=c\nv=correc\nv=correct hor\nv=correct horse batter! correct horse battery stapl" + strings.Repeat("e", 30)},
		{"no secrets", nil, "plain text\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			red := New(tt.secrets...)
			want := red.String(tt.text)
			for cut := 0; cut <= len(tt.text); cut++ {
				if got := streamed(t, red, tt.text[:cut], tt.text[cut:]); got != want {
					t.Fatalf("split at %d: got %q, want %q", cut, got, want)
				}
			}
			rng := rand.New(rand.NewPCG(1, uint64(len(tt.text))))
			for range 200 {
				var pieces []string
				for rest := tt.text; rest != ""; {
					n := min(len(rest), 1+rng.IntN(9))
					pieces, rest = append(pieces, rest[:n]), rest[n:]
				}
				if got := streamed(t, red, pieces...); got != want {
					t.Fatalf("pieces %q: got %q, want %q", pieces, got, want)
				}
			}
		})
	}
}

func streamed(t *testing.T, red *Redactor, pieces ...string) string {
	t.Helper()
	var out bytes.Buffer
	s := red.Stream(&out)
	for _, p := range pieces {
		if n, err := s.Write([]byte(p)); err != nil || n != len(p) {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestStreamHoldsBackOnlyAPossibleSecretStart checks that a written line
// reaches the destination at once and that an unfinished line waits for at
// most the longest secret's length.
func TestStreamHoldsBackOnlyAPossibleSecretStart(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	s := New("hunter2").Stream(&out)
	s.Write([]byte("a whole line\n"))
	if out.String() != "a whole line\n" {
		t.Fatalf("a whole line was held back: %q", out.String())
	}
	// The longest form of "hunter2" is its base64 encoding, 12 bytes: 11
	// may start it.
	s.Write([]byte("0123456789abcdefhunt"))
	if got := out.String(); got != "a whole line\n012345678" {
		t.Fatalf("after an unfinished line: %q", got)
	}
	s.Write([]byte("er2!\n"))
	if got := out.String(); got != "a whole line\n0123456789abcdef"+Mask+"!\n" {
		t.Fatalf("after the line ended: %q", got)
	}
}

// FuzzStream checks, for any secret, text and split points, that the
// stream's output is the whole text redacted at once: no write boundary
// ever lets a secret through or changes what is masked.
func FuzzStream(f *testing.F) {
	f.Add("hunter2", "user hunter2 in", uint8(9), uint8(3))
	f.Add("aa", "aaaaab", uint8(1), uint8(1))
	f.Add("l1\nl2", "x l1\nl2 y\n", uint8(4), uint8(2))
	f.Add("correct horse", "v=correct hor v=correct horsecorrect h", uint8(5), uint8(3))
	f.Fuzz(func(t *testing.T, secret, text string, first, step uint8) {
		red := New(secret)
		want := red.String(text)
		var out bytes.Buffer
		s := red.Stream(&out)
		size := int(first)
		for rest := text; rest != ""; {
			n := min(len(rest), 1+size%17)
			s.Write([]byte(rest[:n]))
			rest = rest[n:]
			size += int(step)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("secret %q text %q: streamed %q, want %q", secret, text, out.String(), want)
		}
	})
}

// TestStreamUseMasksASecretLearnedMidStream: a secret learned while the
// stream is open (an answer marked secret) is masked in everything written
// after, a piece of it held back before included, at every split, and the
// stream's first secrets stay masked.
func TestStreamUseMasksASecretLearnedMidStream(t *testing.T) {
	t.Parallel()
	const later = "4721-open-sesame"
	red := New("hunter2-Secret!")
	before := "login hunter2-Secret! ok\nthe code: 4721-"
	after := "open-sesame typed\necho 4721-open-sesame and hunter2-Secret!\n"
	want := red.With(later).String(before + after)
	if strings.Contains(want, later) || strings.Contains(want, "hunter2") {
		t.Fatalf("With does not mask both: %q", want)
	}
	for cut := 0; cut <= len(after); cut++ {
		var b bytes.Buffer
		s := red.Stream(&b)
		if _, err := s.Write([]byte(before)); err != nil {
			t.Fatal(err)
		}
		s.Use(red.With(later))
		for _, p := range []string{after[:cut], after[cut:]} {
			if _, err := s.Write([]byte(p)); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); strings.Contains(got, "open-sesame") || strings.Contains(got, "hunter2") {
			t.Fatalf("split at %d: %q", cut, got)
		}
	}
}

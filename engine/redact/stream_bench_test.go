package redact

import (
	"io"
	"strings"
	"testing"
)

// BenchmarkStream measures redacting a chatty application's output: 64 KiB
// pieces of log lines with a secret now and then, written whole (String)
// and through a Stream that carries the overlap between pieces, against
// strings.Replacer over the same forms.
func BenchmarkStream(b *testing.B) {
	red := New("hunter2-Secret!", "sk-live-0123456789abcdef")
	line := "2026-12-01T19:00:00Z INFO request served in 3ms path=/api/items user=ada\n"
	piece := strings.Repeat(line, (64<<10)/len(line)) + "login hunter2-Secret! ok\n"
	b.Run("Replacer", func(b *testing.B) {
		// The standard library's replacer over the same forms: what
		// String used before, kept as the baseline.
		pairs := make([]string, 0, 2*len(red.forms))
		for _, f := range red.forms {
			pairs = append(pairs, f, Mask)
		}
		r := strings.NewReplacer(pairs...)
		b.SetBytes(int64(len(piece)))
		for b.Loop() {
			_ = r.Replace(piece)
		}
	})
	b.Run("String", func(b *testing.B) {
		b.SetBytes(int64(len(piece)))
		for b.Loop() {
			_ = red.String(piece)
		}
	})
	b.Run("Stream", func(b *testing.B) {
		s := red.Stream(io.Discard)
		p := []byte(piece[:len(piece)-1]) // no final newline: the overlap is carried
		b.SetBytes(int64(len(p)))
		for b.Loop() {
			_, _ = s.Write(p)
		}
	})
}

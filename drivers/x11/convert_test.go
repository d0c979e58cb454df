package x11

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBGRXToRGBA converts pixels of every kind of length (an odd pixel
// after the pairs, a screen split between two goroutines) and compares
// with the conversion done a byte at a time.
func TestBGRXToRGBA(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, pixels := range []int{1, 2, 3, 1280 * 800, 1280*800 + 1, 333 * 517} {
		src := make([]byte, pixels*4)
		for i := range src {
			src[i] = byte(r.IntN(256))
		}
		want := make([]byte, len(src))
		for i := 0; i < len(src); i += 4 {
			want[i], want[i+1], want[i+2], want[i+3] = src[i+2], src[i+1], src[i], 0xff
		}
		got := make([]byte, len(src))
		bgrxToRGBA(got, src)
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Errorf("%d pixels: byte %d is %#x, want %#x", pixels, i, got[i], want[i])
		}
	}
}

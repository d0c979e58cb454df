package vnc

import (
	"crypto/des"
	"crypto/rand"
	"fmt"
	"math"
	"math/bits"
)

// MaxPasswordLen is the most of a password VNC authentication uses: the
// DES key it becomes is eight bytes, and the rest is ignored.
const MaxPasswordLen = 8

// passwordAlphabet is what a one-time password is drawn from: letters and
// digits, which every VNC client lets its user type.
const passwordAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"

// NewPassword returns a random password of MaxPasswordLen characters for
// one takeover.
func NewPassword() (string, error) {
	// Bytes past the last whole multiple of the alphabet's size are drawn
	// again, so every character is equally likely.
	limit := 256 - 256%len(passwordAlphabet)
	out := make([]byte, 0, MaxPasswordLen)
	buf := make([]byte, 2*MaxPasswordLen)
	for len(out) < MaxPasswordLen {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("draw a VNC password: %w", err)
		}
		for _, b := range buf {
			if int(b) < limit && len(out) < MaxPasswordLen {
				out = append(out, passwordAlphabet[int(b)%len(passwordAlphabet)])
			}
		}
	}
	return string(out), nil
}

// fileKey is the fixed key every VNC implementation obfuscates a stored
// password with (the rfbauth file x11vnc -storepasswd writes).
var fileKey = []byte{23, 82, 107, 6, 35, 78, 88, 7}

// desKey turns up to eight bytes into a DES key as VNC does: padded with
// zeros, each byte's bits reversed (the reference implementation's DES
// takes key bits in the other order).
func desKey(k []byte) []byte {
	key := make([]byte, 8)
	copy(key, k)
	for i, b := range key {
		key[i] = bits.Reverse8(b)
	}
	return key
}

// encrypt DES-encrypts each 8-byte block of data with key, VNC's way.
func encrypt(key, data []byte) []byte {
	c, err := des.NewCipher(desKey(key))
	if err != nil {
		panic(err) // a DES key is always eight bytes here
	}
	out := make([]byte, len(data))
	for i := 0; i+8 <= len(data); i += 8 {
		c.Encrypt(out[i:i+8], data[i:i+8])
	}
	return out
}

// passwordFile is the content of an rfbauth file holding password.
func passwordFile(password string) []byte {
	p := make([]byte, 8)
	copy(p, password)
	return encrypt(fileKey, p)
}

// Response is the answer to a VNC authentication challenge (16 bytes)
// for password: the challenge DES-encrypted with the password as the key.
func Response(password string, challenge []byte) []byte {
	p := []byte(password)
	if len(p) > MaxPasswordLen {
		p = p[:MaxPasswordLen]
	}
	return encrypt(p, challenge)
}

// PasswordBits is how much guessing a one-time password withstands: its
// characters, each drawn from passwordAlphabet.
func PasswordBits() float64 {
	return MaxPasswordLen * math.Log2(float64(len(passwordAlphabet)))
}

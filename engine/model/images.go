package model

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"unsafe"
)

// imageURLs keeps the data URL of every image the last request sent, so
// a screen the model keeps in context for several turns is base64-encoded
// once and not once per request. An image is the same one when it is the
// same bytes in memory: the PNG of a message is never changed after it is
// made, and holding the slice keeps its memory from being reused for
// another image while the entry lives.
type imageURLs struct {
	mu sync.Mutex
	// marker starts the placeholders a body is marshalled with; it is
	// random, so no text of the conversation holds it.
	marker  string
	entries []imageURL
	// encodes counts the base64 encodings, which the tests read.
	encodes int
}

type imageURL struct {
	png []byte
	// quoted is the data URL as a JSON string, quotes included.
	quoted []byte
}

func newImageURLs() *imageURLs {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:]) // crypto/rand.Read never fails
	return &imageURLs{marker: "kasmrt-image-" + hex.EncodeToString(nonce[:]) + "-"}
}

// bodyImages is the images of one request body being built: each image
// stands in the marshalled body as a placeholder that splice replaces with
// its data URL. A nil *bodyImages puts the data URLs in directly.
type bodyImages struct {
	urls *imageURLs
	used []imageURL
}

// begin starts a body.
func (u *imageURLs) begin() *bodyImages { return &bodyImages{urls: u} }

// url is what the body holds for png: a placeholder, or the data URL
// itself without a cache.
func (b *bodyImages) url(png []byte) string {
	if b == nil {
		return dataURL(png)
	}
	b.used = append(b.used, b.urls.lookup(png))
	return b.urls.marker + strconv.Itoa(len(b.used)-1)
}

// lookup returns the entry for png, encoding it when it is new.
func (u *imageURLs) lookup(png []byte) imageURL {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, e := range u.entries {
		if sameBytes(e.png, png) {
			return e
		}
	}
	u.encodes++
	quoted := make([]byte, 0, len(dataURLPrefix)+base64.StdEncoding.EncodedLen(len(png))+2)
	quoted = append(quoted, '"')
	quoted = append(quoted, dataURLPrefix...)
	quoted = base64.StdEncoding.AppendEncode(quoted, png)
	quoted = append(quoted, '"')
	e := imageURL{png: png, quoted: quoted}
	u.entries = append(u.entries, e)
	return e
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// splice replaces the placeholders of body with the data URLs and keeps
// only this body's images for the next request. ok is
// false when the placeholders are not exactly where url put them; the
// caller then marshals the body again with the data URLs themselves.
func (b *bodyImages) splice(body []byte) (out []byte, ok bool) {
	if b == nil {
		return body, true
	}
	u := b.urls
	u.mu.Lock()
	u.entries = append(u.entries[:0], b.used...)
	u.mu.Unlock()
	if len(b.used) == 0 {
		return body, true
	}
	size := len(body)
	for _, e := range b.used {
		size += len(e.quoted)
	}
	out = make([]byte, 0, size)
	marker := []byte(`"` + u.marker)
	rest := body
	for i, e := range b.used {
		at := bytes.Index(rest, marker)
		if at < 0 {
			return nil, false
		}
		end := at + len(marker)
		n := strconv.Itoa(i)
		if !bytes.HasPrefix(rest[end:], []byte(n+`"`)) {
			return nil, false
		}
		out = append(out, rest[:at]...)
		out = append(out, e.quoted...)
		rest = rest[end+len(n)+1:]
	}
	if bytes.Contains(rest, marker) {
		return nil, false
	}
	return append(out, rest...), true
}

// errPlaceholder is a body whose text held an image placeholder.
var errPlaceholder = errors.New("the request's text holds an image placeholder")

// marshalBody marshals a request body and puts its images' data URLs in.
func marshalBody(body any, urls *bodyImages) ([]byte, error) {
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	out, ok := urls.splice(raw)
	if !ok {
		return nil, errPlaceholder
	}
	return out, nil
}

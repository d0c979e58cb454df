package modeltest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	_ "image/jpeg" // Decode JPEG data URLs too.
	"image/png"
	"net/http"
	"strings"
	"time"
)

// Request is one request the server received.
type Request struct {
	// N counts requests from 1.
	N        int
	Path     string
	Protocol Protocol
	Header   http.Header
	// Body is the decoded JSON body.
	Body map[string]any
	Raw  []byte
	// Received is when the whole body had arrived, which benchmarks take
	// as the moment the client finished sending.
	Received time.Time
}

// String shows the request as indented JSON, for failure messages.
func (r Request) String() string {
	return fmt.Sprintf("request %d %s\n%s", r.N, r.Path, indent(r.Raw))
}

// Model is the body's model field.
func (r Request) Model() string {
	s, _ := r.Body["model"].(string)
	return s
}

// Messages returns the conversation: Chat Completions messages or
// Responses input items.
func (r Request) Messages() []map[string]any {
	key := "messages"
	if r.Protocol == Responses {
		key = "input"
	}
	return objects(r.Body[key])
}

// ToolNames returns the names of the offered tools, in the order sent.
func (r Request) ToolNames() []string {
	var names []string
	for _, t := range objects(r.Body["tools"]) {
		if fn, ok := t["function"].(map[string]any); ok {
			t = fn
		}
		if name, ok := t["name"].(string); ok {
			names = append(names, name)
		}
	}
	return names
}

// ImageURLs returns every image URL in the request, in order.
func (r Request) ImageURLs() []string {
	var urls []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			switch u := v["image_url"].(type) {
			case string:
				urls = append(urls, u)
			case map[string]any:
				if s, ok := u["url"].(string); ok {
					urls = append(urls, s)
				}
			}
			for k, child := range v {
				if k != "image_url" {
					walk(child)
				}
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	// Walk messages in order; map iteration order would shuffle images
	// only within one object, which holds at most one image.
	for _, m := range r.Messages() {
		walk(m)
	}
	return urls
}

// Images decodes every data-URL image of the request, in order.
func (r Request) Images() ([]image.Image, error) {
	var imgs []image.Image
	for i, u := range r.ImageURLs() {
		_, data, ok := strings.Cut(u, ";base64,")
		if !ok || !strings.HasPrefix(u, "data:") {
			return nil, fmt.Errorf("image %d is not a base64 data URL", i+1)
		}
		raw, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", i+1, err)
		}
		img, _, err := image.Decode(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", i+1, err)
		}
		imgs = append(imgs, img)
	}
	return imgs, nil
}

// Text returns every text in the request (instructions, system prompt and
// message text parts) joined by newlines, for substring assertions.
func (r Request) Text() string {
	var parts []string
	if s, ok := r.Body["instructions"].(string); ok {
		parts = append(parts, s)
	}
	for _, m := range r.Messages() {
		// Messages hold text in content; Responses tool results in output.
		for _, key := range []string{"content", "output"} {
			switch c := m[key].(type) {
			case string:
				parts = append(parts, c)
			case []any:
				for _, p := range objects(c) {
					if s, ok := p["text"].(string); ok {
						parts = append(parts, s)
					}
				}
			}
		}
	}
	return strings.Join(parts, "\n")
}

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// PNG is a convenience for tests that build images: it encodes img or
// panics, since an in-memory PNG encode cannot fail for valid images.
func PNG(img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(fmt.Sprintf("modeltest: encode PNG: %v", err))
	}
	return b.Bytes()
}

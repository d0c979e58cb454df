package model_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// screenPNG is a small distinct screen for turn n.
func screenPNG(n int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 64, 40))
	for y := range 40 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * n), uint8(y + n), uint8(n), 255})
		}
	}
	return modeltest.PNG(img)
}

// TestImagesEncodedOnce runs turns the way the loop does: each turn adds a
// tool result with a new screen, and the request keeps the newest three.
// Every screen is base64-encoded once however many requests carry it, and
// the server receives, byte for byte, the body a client that encodes every
// image anew would have sent.
func TestImagesEncodedOnce(t *testing.T) {
	t.Parallel()
	const turns, keep = 6, 3
	for _, name := range []string{"openai-compatible", "gpt"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			script := make([]modeltest.Exchange, turns)
			for i := range script {
				script[i] = modeltest.Call("observe_screen", `{}`)
			}
			srv := modeltest.New(t, script...)
			c, _ := newClient(t, srv, name, func(cfg *model.Config) {
				if cfg.Profile.ServedModel == "" {
					cfg.Profile.ServedModel = "m"
				}
			})
			var history []model.Message
			var want [][]byte
			for n := 1; n <= turns; n++ {
				id := fmt.Sprintf("call_%d", n)
				history = append(history,
					model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: id, Name: "observe_screen", Arguments: "{}"}}},
					model.Message{Role: model.RoleTool, CallID: id, Text: "observed", Images: []model.Image{{Handle: fmt.Sprintf("tool_generated_image_%d", n), PNG: screenPNG(n)}}})
				// The oldest screens leave the context, as memory.Context
				// drops them.
				sent := make([]model.Message, len(history))
				copy(sent, history)
				for i := range sent {
					if i < len(sent)-2*keep {
						sent[i].Images = nil
					}
				}
				req := model.Request{System: "system", Messages: append([]model.Message{{Role: model.RoleUser, Text: "goal"}}, sent...), Tools: []model.Tool{{Name: "observe_screen"}}}
				plain, err := c.PlainBody(req)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, plain)
				if _, err := c.Turn(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			reqs := srv.Requests()
			for i, r := range reqs {
				if !bytes.Equal(r.Raw, want[i]) {
					t.Errorf("request %d differs from the body with every image encoded anew:\ngot  %.300s\nwant %.300s", i+1, r.Raw, want[i])
				}
				if got := len(r.ImageURLs()); got != min(i+1, keep) {
					t.Errorf("request %d carries %d images, want %d", i+1, got, min(i+1, keep))
				}
			}
			if got := c.ImageEncodes(); got != turns {
				t.Errorf("%d base64 encodings for %d screens over %d requests; want one a screen", got, turns, turns)
			}
		})
	}
}

// TestImagePlaceholderInText sends text that holds what an image's
// placeholder looks like: the body is still the plain one, with the text
// as written and the image's data URL in its place.
func TestImagePlaceholderInText(t *testing.T) {
	t.Parallel()
	srv := modeltest.New(t, modeltest.Call("observe_screen", `{}`))
	c, _ := newClient(t, srv, "qwen3-vl-8b-instruct", nil)
	png := screenPNG(1)
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Text: c.ImageMarker() + "0", Images: []model.Image{{Handle: "input_image_1", PNG: png}}}}}
	plain, err := c.PlainBody(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Turn(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if !bytes.Equal(r.Raw, plain) {
		t.Errorf("body differs from the plain one:\ngot  %.400s\nwant %.400s", r.Raw, plain)
	}
	if urls := r.ImageURLs(); len(urls) != 1 || urls[0] == c.ImageMarker()+"0" {
		t.Errorf("image URLs = %.80q", urls)
	}
}

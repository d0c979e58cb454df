package model_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"testing"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// BenchmarkTurn measures one turn carrying a 1280x800 screen over real HTTP
// to the in-process server: encoding, the data URL, the round trip and
// decoding, for each protocol.
func BenchmarkTurn(b *testing.B) {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	for y := range 800 {
		for x := range 1280 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x * y), 255})
		}
	}
	screen := modeltest.PNG(img)
	for _, name := range []string{"qwen3-vl-8b-instruct", "gpt"} {
		b.Run(name, func(b *testing.B) {
			script := make([]modeltest.Exchange, 0, b.N+1)
			for range b.N + 1 {
				script = append(script, modeltest.Call("observe_screen", `{}`))
			}
			srv := modeltest.New(b, script...)
			p, _ := model.LookupProfile(name)
			c, err := model.New(model.Config{Endpoint: srv.URL(), Profile: p})
			if err != nil {
				b.Fatal(err)
			}
			req := model.Request{
				System:   p.Prompt.Text,
				Messages: []model.Message{{Role: model.RoleUser, Text: "screen", Images: []model.Image{{Handle: "tool_generated_image_1", PNG: screen}}}},
				Tools:    []model.Tool{{Name: "observe_screen"}, {Name: "click"}},
			}
			b.SetBytes(int64(len(screen)))
			b.ResetTimer()
			for range b.N {
				if _, err := c.Turn(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRequestBody measures marshalling a request that keeps three
// 1280x800 screens of text in context, as every turn of a goal run does:
// with the data URLs of the screens earlier requests sent reused, and with
// every screen encoded anew.
func BenchmarkRequestBody(b *testing.B) {
	screen, err := os.ReadFile("../vision/testdata/screen-1280x800.png")
	if err != nil {
		b.Fatal(err)
	}
	p, _ := model.LookupProfile("qwen3-vl-8b-instruct")
	c, err := model.New(model.Config{Endpoint: "http://127.0.0.1:1", Profile: p})
	if err != nil {
		b.Fatal(err)
	}
	var msgs []model.Message
	for i := range 3 {
		png := bytes.Clone(screen)
		png[len(png)-20] ^= byte(i + 1) // distinct bytes, as distinct screens have
		msgs = append(msgs, model.Message{Role: model.RoleTool, CallID: fmt.Sprint(i), Text: "observed the screen",
			Images: []model.Image{{Handle: fmt.Sprintf("tool_generated_image_%d", i+1), PNG: png}}})
	}
	req := model.Request{System: p.Prompt.Text, Messages: msgs, Tools: []model.Tool{{Name: "observe_screen"}, {Name: "click"}}}
	for _, c := range []struct {
		name string
		body func(model.Request) ([]byte, error)
	}{{"reused", c.Body}, {"encoded-anew", c.PlainBody}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := c.body(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

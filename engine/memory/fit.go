package memory

import (
	"bytes"
	"image"
	_ "image/png" // the images a request carries are PNGs
	"slices"
	"strings"

	"github.com/kasmrt/kasmrt/engine/model"
)

// The token estimate (docs/language.md, model.max_context_length). It is
// deliberately simple and errs high, since the runtime cannot load every
// server's tokenizer: a token per 4 bytes of text (English runs about 4
// characters a token, and other scripts take more bytes per character),
// msgOverhead tokens per message for its role and framing, and for an
// image one token per patchSide×patchSide pixels (the vision encoders'
// patch, as Qwen2.5-VL's) plus imageOverhead for its markers.
const (
	bytesPerToken = 4
	msgOverhead   = 4
	patchSide     = 28
	imageOverhead = 2
)

// TextTokens estimates the tokens of a text.
func TextTokens(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// ImageTokens estimates the tokens of a PNG; one whose header cannot be
// read counts as a 1280×800 screen.
func ImageTokens(png []byte) int {
	w, h := 1280, 800
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(png)); err == nil {
		w, h = cfg.Width, cfg.Height
	}
	return (w*h+patchSide*patchSide-1)/(patchSide*patchSide) + imageOverhead
}

// EstimateTokens estimates the tokens messages take in a request.
func EstimateTokens(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		n += msgOverhead + TextTokens(m.Text)
		for _, c := range m.ToolCalls {
			n += TextTokens(c.Name) + TextTokens(c.Arguments) + msgOverhead
		}
		for _, img := range m.Images {
			if img.PNG != nil {
				n += ImageTokens(img.PNG)
			}
		}
	}
	return n
}

// Fit trims messages (as Context returns them) until their estimate is
// within budget tokens, oldest first and images before text: the images of
// every message but the one with the newest image (each replaced by a line
// naming its handle), then whole turns (an assistant message with the tool
// results and notes after it), then the newest image, the model's only
// view of the screen. The first message (the goal) and the newest turn's
// text are always kept, so a request may still exceed the budget; the
// server then refuses it and says so. msgs is not modified.
func Fit(msgs []model.Message, budget int) []model.Message {
	if EstimateTokens(msgs) <= budget {
		return msgs
	}
	out := slices.Clone(msgs)
	total := EstimateTokens(out)
	newest := -1
	for i, m := range out {
		if len(m.Images) > 0 {
			newest = i
		}
	}
	for i := range out {
		if i != newest {
			total = dropImages(&out[i], total, budget)
		}
	}
	for total > budget {
		start := slices.IndexFunc(out[1:], func(m model.Message) bool { return m.Role == model.RoleAssistant }) + 1
		if start == 0 {
			break
		}
		end := slices.IndexFunc(out[start+1:], func(m model.Message) bool { return m.Role == model.RoleAssistant })
		if end < 0 {
			break // the newest turn
		}
		end += start + 1
		switch {
		case newest >= end:
			newest -= end - start
		case newest >= start:
			newest = -1 // its turn is gone, image and all
		}
		out = slices.Delete(out, start, end)
		total = EstimateTokens(out)
	}
	if newest >= 0 {
		dropImages(&out[newest], total, budget)
	}
	return out
}

// dropImages takes a message's images out, oldest first, while total is
// over budget, and returns the new total.
func dropImages(m *model.Message, total, budget int) int {
	for total > budget && len(m.Images) > 0 {
		img := m.Images[0]
		m.Images = m.Images[1:]
		note := "[" + img.Handle + " left out to fit the model's context]"
		m.Text = strings.TrimSpace(m.Text + "\n" + note)
		total += TextTokens(note) + 1
		if img.PNG != nil {
			total -= ImageTokens(img.PNG)
		}
	}
	return total
}

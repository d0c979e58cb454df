package engine

import (
	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/memory"
	"github.com/kasmrt/kasmrt/engine/model"
)

// sentTextMax caps each message text a model.request event repeats: enough
// for a tool's result or an Environment Update, bounded for a long run.
const sentTextMax = 2000

// requestEvent describes the iteration-th request: its size, and the
// tools, the Environment Update and the other messages the model decided
// on, so the console can show why it acted. The messages are the redacted
// ones the request sends.
func requestEvent(iteration int, req model.Request) events.ModelRequest {
	d := events.ModelRequest{
		Iteration: iteration, Messages: len(req.Messages), Images: countImages(req.Messages), ImageBytes: imageBytes(req.Messages),
		Update: truncate(memory.LatestUpdate(req.Messages), sentTextMax),
	}
	for _, t := range req.Tools {
		d.Tools = append(d.Tools, t.Name)
	}
	for _, m := range memory.SinceReply(req.Messages) {
		d.Sent = append(d.Sent, events.SentMessage{Role: string(m.Role), Text: truncate(m.Text, sentTextMax), Images: len(m.Images)})
	}
	return d
}

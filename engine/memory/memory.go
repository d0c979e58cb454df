// Package memory is the model's view of a run (seed 002): it registers
// screens and input images under handles, keeps the request bounded by
// dropping old images from the context, and writes the Environment Update.
package memory

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/kasmrt/kasmrt/engine/model"
)

// Emit policies for the Environment Update.
const (
	EmitAlways   = "always"
	EmitOnChange = "on_change"
)

// Image is a registered image.
type Image struct {
	Handle      string
	PNG         []byte
	Description string
	Input       bool // an input image: always kept in context
}

// Memory holds one run's registered images. It is used from the loop's
// goroutine only.
type Memory struct {
	policy    string
	keep      int
	images    []Image
	byHandle  map[string]int // lower-case handle → index
	byHash    map[[32]byte]int
	inputs    int
	generated int
	lastCount int // image count at the last emitted update
	emitted   bool
}

// New returns a memory with the given emit policy (always | on_change) that
// keeps the newest keep images in the model's context (0: 3).
func New(policy string, keep int) *Memory {
	if keep <= 0 {
		keep = 3
	}
	if policy == "" {
		policy = EmitAlways
	}
	return &Memory{policy: policy, keep: keep, byHandle: map[string]int{}, byHash: map[[32]byte]int{}}
}

// AddInput registers an input image (one the scenario provides) as
// input_image_N. Identical data resolves to its existing handle.
func (m *Memory) AddInput(png []byte, description string) string {
	return m.add(png, description, true)
}

// AddScreen registers a capture a tool made as tool_generated_image_N.
func (m *Memory) AddScreen(png []byte, description string) string {
	return m.add(png, description, false)
}

func (m *Memory) add(png []byte, description string, input bool) string {
	sum := sha256.Sum256(png)
	if i, ok := m.byHash[sum]; ok {
		return m.images[i].Handle
	}
	var handle string
	if input {
		m.inputs++
		handle = fmt.Sprintf("input_image_%d", m.inputs)
	} else {
		m.generated++
		handle = fmt.Sprintf("tool_generated_image_%d", m.generated)
	}
	m.images = append(m.images, Image{Handle: handle, PNG: png, Description: description, Input: input})
	m.byHandle[strings.ToLower(handle)] = len(m.images) - 1
	m.byHash[sum] = len(m.images) - 1
	return handle
}

// Lookup finds an image by handle, ignoring case.
func (m *Memory) Lookup(handle string) (Image, bool) {
	i, ok := m.byHandle[strings.ToLower(strings.TrimSpace(handle))]
	if !ok {
		return Image{}, false
	}
	return m.images[i], true
}

// Len is the number of registered images.
func (m *Memory) Len() int { return len(m.images) }

// EnvironmentUpdate returns the inventory text to append after a
// successful tool turn, or "" when the policy says to stay quiet (on_change
// with nothing new).
func (m *Memory) EnvironmentUpdate() string {
	if m.policy == EmitOnChange && m.emitted && m.lastCount == len(m.images) {
		return ""
	}
	m.emitted, m.lastCount = true, len(m.images)
	var b strings.Builder
	b.WriteString("Environment Update\nImages you can refer to by handle (newest last; only the newest are shown to you):\n")
	if len(m.images) == 0 {
		b.WriteString("- (none yet)\n")
	}
	visible := m.visible()
	for _, img := range m.images {
		state := "in context"
		if !visible[img.Handle] {
			state = "dropped from context"
		}
		fmt.Fprintf(&b, "- %s: %s (%s)\n", img.Handle, img.Description, state)
	}
	b.WriteString("Data bindings: none.\nWebpages: none.")
	return b.String()
}

// visible returns the handles still sent to the model: every input image
// and the newest keep screens.
func (m *Memory) visible() map[string]bool {
	out := map[string]bool{}
	screens := 0
	for i := len(m.images) - 1; i >= 0; i-- {
		img := m.images[i]
		if img.Input || screens < m.keep {
			out[img.Handle] = true
		}
		if !img.Input {
			screens++
		}
	}
	return out
}

// Context returns history as it is sent: images registered before the
// newest keep are replaced by a line naming their handle, so the request
// stays bounded however long the run is.
func (m *Memory) Context(history []model.Message) []model.Message {
	visible := m.visible()
	out := make([]model.Message, len(history))
	for i, msg := range history {
		out[i] = msg
		if len(msg.Images) == 0 {
			continue
		}
		var keep []model.Image
		var dropped []string
		for _, img := range msg.Images {
			if visible[img.Handle] {
				keep = append(keep, img)
			} else {
				dropped = append(dropped, img.Handle)
			}
		}
		if len(dropped) > 0 {
			out[i].Images = keep
			out[i].Text = strings.TrimSpace(msg.Text + "\n[" + strings.Join(dropped, ", ") + " dropped from context; see the Environment Update]")
		}
	}
	return out
}

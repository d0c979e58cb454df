// Package model is the room where kasmrt talks to a vision-language model: it
// holds the model profiles, resolves endpoints, speaks Chat Completions and
// Responses over HTTP with retries, and records or replays the exchanges.
package model

import "encoding/json"

// Role is the author of one message in the conversation history.
type Role string

// The roles a history message can have.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Image is one PNG image in the conversation, named by its memory handle
// (for example tool_generated_image_3), which is shown to the model next to
// the image so it can refer to it.
type Image struct {
	Handle string
	PNG    []byte
}

// ToolCall is one function call the model asked for. Arguments is the raw
// JSON text the model wrote; the engine validates it, so it is kept verbatim.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
	// Rescued is true when the call was not a native tool call but was
	// recovered from the assistant text (a fenced JSON object or a
	// <tool_call> tag).
	Rescued bool
}

// Message is one entry of the history sent to the model.
//
// User messages carry text and images. Assistant messages carry text and the
// tool calls with their native IDs. Tool messages carry the CallID they
// answer, a text result and optionally images that belong to the result.
type Message struct {
	Role      Role
	Text      string
	Images    []Image
	ToolCalls []ToolCall
	CallID    string
}

// Tool is the schema of one tool offered to the model.
type Tool struct {
	Name        string
	Description string
	// Parameters is a JSON Schema object. Nil means a tool without
	// parameters.
	Parameters json.RawMessage
}

// Request is one model turn: instructions, history and tools.
type Request struct {
	// System is the system prompt (Chat Completions) or the instructions
	// (Responses). Callers usually pass the profile's prompt bundle text,
	// possibly extended; it is sent as given.
	System   string
	Messages []Message
	// Tools are sent sorted by name whatever their order here.
	Tools []Tool
	// Seed is sent with Chat Completions requests only; Responses has none.
	Seed *int64
}

// Response is the model's reply to one turn.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	// Usage holds every numeric field of the reply's usage object, nested
	// objects flattened to dotted keys (prompt_tokens_details.cached_tokens).
	Usage map[string]float64
	// Raw is the response body as received.
	Raw []byte
	// Attempts is how many HTTP attempts the turn took.
	Attempts int
}

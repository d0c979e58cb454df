package model

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// dataURLPrefix starts the data URL of a PNG.
const dataURLPrefix = "data:image/png;base64,"

// dataURL encodes a PNG as the data URL both protocols accept.
func dataURL(png []byte) string {
	return dataURLPrefix + base64.StdEncoding.EncodeToString(png)
}

// sortedTools returns the tools sorted by name, as the model side's contracts require
// (docs/architecture.md, "The model side").
func sortedTools(tools []Tool) []Tool {
	out := slices.Clone(tools)
	slices.SortStableFunc(out, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func toolParameters(t Tool) json.RawMessage {
	if len(t.Parameters) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Parameters
}

type chatPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// chatParts renders text and labelled images as content parts. Each image
// is preceded by its handle so the model can name it.
func chatParts(text string, images []Image, urls *bodyImages) []chatPart {
	var parts []chatPart
	if text != "" {
		parts = append(parts, chatPart{Type: "text", Text: text})
	}
	for _, img := range images {
		if img.Handle != "" {
			parts = append(parts, chatPart{Type: "text", Text: img.Handle + ":"})
		}
		parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: urls.url(img.PNG)}})
	}
	return parts
}

// chatBody marshals a Chat Completions request; urls, when not nil, holds
// the data URLs of earlier requests' images.
func chatBody(model string, opts GenerationOptions, req Request, urls *bodyImages) ([]byte, error) {
	var msgs []chatMessage
	if req.System != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: req.System})
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			msgs = append(msgs, chatMessage{Role: "system", Content: m.Text})
		case RoleUser:
			if len(m.Images) == 0 {
				msgs = append(msgs, chatMessage{Role: "user", Content: m.Text})
			} else {
				msgs = append(msgs, chatMessage{Role: "user", Content: chatParts(m.Text, m.Images, urls)})
			}
		case RoleAssistant:
			cm := chatMessage{Role: "assistant", Content: m.Text}
			if m.Text == "" && len(m.ToolCalls) > 0 {
				cm.Content = nil
			}
			for _, c := range m.ToolCalls {
				cm.ToolCalls = append(cm.ToolCalls, chatToolCall{ID: c.ID, Type: "function", Function: chatFunctionCall{Name: c.Name, Arguments: c.Arguments}})
			}
			msgs = append(msgs, cm)
		case RoleTool:
			if m.CallID == "" {
				return nil, fmt.Errorf("message %d: tool message without a call ID", i)
			}
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: m.CallID, Content: m.Text})
			// Chat Completions tool messages carry text only, so the
			// result's images follow as user-role evidence (docs/architecture.md).
			if len(m.Images) > 0 {
				msgs = append(msgs, chatMessage{Role: "user", Content: chatParts("Images returned by tool call "+m.CallID+":", m.Images, urls)})
			}
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	body := map[string]any{"model": model, "messages": msgs}
	if len(req.Tools) > 0 {
		var tools []map[string]any
		for _, t := range sortedTools(req.Tools) {
			tools = append(tools, map[string]any{
				"type": "function",
				"function": map[string]any{
					"name":        t.Name,
					"description": t.Description,
					"parameters":  toolParameters(t),
				},
			})
		}
		body["tools"] = tools
		body["tool_choice"] = cmp.Or(opts.ToolChoice, ToolChoiceAuto)
	}
	if req.Seed != nil {
		body["seed"] = *req.Seed
	}
	if opts.MaxTokens != nil {
		body["max_tokens"] = *opts.MaxTokens
	}
	if opts.Temperature != nil {
		body["temperature"] = *opts.Temperature
	}
	if opts.TopP != nil {
		body["top_p"] = *opts.TopP
	}
	if opts.TopK != nil {
		body["top_k"] = *opts.TopK
	}
	if opts.RepetitionPenalty != nil {
		body["repetition_penalty"] = *opts.RepetitionPenalty
	}
	if opts.PresencePenalty != nil {
		body["presence_penalty"] = *opts.PresencePenalty
	}
	if opts.ReasoningEffort != "" {
		body["reasoning_effort"] = opts.ReasoningEffort
	}
	return marshalBody(body, urls)
}

func parseChat(raw []byte) (Response, error) {
	var v struct {
		Choices []struct {
			Message struct {
				Content   json.RawMessage `json:"content"`
				ToolCalls []chatToolCall  `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if len(v.Choices) == 0 {
		return Response{}, fmt.Errorf("%w: no choices", ErrMalformedResponse)
	}
	msg := v.Choices[0].Message
	resp := Response{Text: contentText(msg.Content), Usage: flattenUsage(v.Usage), Raw: raw}
	for _, c := range msg.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	return resp, nil
}

// contentText reads message content that is a string, null or a list of
// text parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

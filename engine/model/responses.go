package model

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

type respContent struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	// Detail is required on input_image parts by CreateResponse.
	Detail string `json:"detail,omitempty"`
}

// imageDetail is the detail every image is sent with: the profile already
// sized it for high-detail processing (2048² then a 768-pixel short
// side), so the model sees the pixels the runtime grounds on.
const imageDetail = "high"

func respParts(text string, images []Image, urls *bodyImages) []respContent {
	var parts []respContent
	if text != "" {
		parts = append(parts, respContent{Type: "input_text", Text: text})
	}
	for _, img := range images {
		if img.Handle != "" {
			parts = append(parts, respContent{Type: "input_text", Text: img.Handle + ":"})
		}
		parts = append(parts, respContent{Type: "input_image", ImageURL: urls.url(img.PNG), Detail: imageDetail})
	}
	return parts
}

// responsesBody marshals a Responses request; urls, when not nil, holds
// the data URLs of earlier requests' images.
func responsesBody(model string, opts GenerationOptions, req Request, urls *bodyImages) ([]byte, error) {
	var input []map[string]any
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			input = append(input, map[string]any{"role": "developer", "content": m.Text})
		case RoleUser:
			if len(m.Images) == 0 {
				input = append(input, map[string]any{"role": "user", "content": m.Text})
			} else {
				input = append(input, map[string]any{"role": "user", "content": respParts(m.Text, m.Images, urls)})
			}
		case RoleAssistant:
			if m.Text != "" {
				input = append(input, map[string]any{"role": "assistant", "content": m.Text})
			}
			for _, c := range m.ToolCalls {
				input = append(input, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments})
			}
		case RoleTool:
			if m.CallID == "" {
				return nil, fmt.Errorf("message %d: tool message without a call ID", i)
			}
			var output any = m.Text
			if len(m.Images) > 0 {
				output = respParts(m.Text, m.Images, urls)
			}
			input = append(input, map[string]any{"type": "function_call_output", "call_id": m.CallID, "output": output})
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	body := map[string]any{"model": model, "input": input, "store": false}
	if req.System != "" {
		body["instructions"] = req.System
	}
	if len(req.Tools) > 0 {
		var tools []map[string]any
		for _, t := range sortedTools(req.Tools) {
			tools = append(tools, map[string]any{
				"type":        "function",
				"name":        t.Name,
				"description": t.Description,
				"parameters":  toolParameters(t),
				// Required by CreateResponse. Not strict: the runtime checks
				// every call's arguments itself, and strict mode would demand
				// that every parameter be required.
				"strict": false,
			})
		}
		body["tools"] = tools
		body["tool_choice"] = cmp.Or(opts.ToolChoice, ToolChoiceAuto)
	}
	if opts.MaxTokens != nil {
		body["max_output_tokens"] = *opts.MaxTokens
	}
	if opts.ReasoningEffort != "" {
		body["reasoning"] = map[string]any{"effort": opts.ReasoningEffort}
	}
	if opts.Temperature != nil {
		body["temperature"] = *opts.Temperature
	}
	if opts.TopP != nil {
		body["top_p"] = *opts.TopP
	}
	return marshalBody(body, urls)
}

func parseResponses(raw []byte) (Response, error) {
	var v struct {
		Output []struct {
			Type      string `json:"type"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
			Content   []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return Response{}, fmt.Errorf("%w: %v", ErrMalformedResponse, err)
	}
	if len(v.Output) == 0 {
		return Response{}, fmt.Errorf("%w: no output", ErrMalformedResponse)
	}
	resp := Response{Usage: flattenUsage(v.Usage), Raw: raw}
	var text strings.Builder
	for _, item := range v.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				if c.Type == "output_text" {
					text.WriteString(c.Text)
				}
			}
		case "function_call":
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: item.CallID, Name: item.Name, Arguments: item.Arguments})
		}
	}
	resp.Text = text.String()
	return resp, nil
}

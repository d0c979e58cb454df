package model_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kasmrt/kasmrt/engine/model"
	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// openAPISchemas compiles testdata/openai-requests.schema.json, the request
// shapes of OpenAI's published API description (testdata/README.md).
func openAPISchemas(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	path := filepath.Join("testdata", "openai-requests.schema.json")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("openai-requests.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRequestsValidateAgainstOpenAPI sends a turn that uses every message
// role, images in a user message and in a tool result, tools, and every
// generation option a profile accepts, through each built-in profile, and
// validates the request the server received against the published schema
// of its protocol: CreateChatCompletionRequest or CreateResponse.
func TestRequestsValidateAgainstOpenAPI(t *testing.T) {
	t.Parallel()
	c := openAPISchemas(t)
	schemas := map[modeltest.Protocol]*jsonschema.Schema{}
	for proto, def := range map[modeltest.Protocol]string{
		modeltest.ChatCompletions: "CreateChatCompletionRequest",
		modeltest.Responses:       "CreateResponse",
	} {
		s, err := c.Compile("openai-requests.schema.json#/$defs/" + def)
		if err != nil {
			t.Fatal(err)
		}
		schemas[proto] = s
	}
	for _, name := range model.ProfileNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := modeltest.New(t, modeltest.Text("ok"))
			c, _ := newClient(t, srv, name, func(cfg *model.Config) {
				cfg.Options = everyOption(cfg.Profile)
			})
			req := history()
			seed := int64(11)
			req.Seed = &seed
			req.Messages = append(req.Messages,
				model.Message{Role: model.RoleAssistant, Text: "Looking again.", ToolCalls: []model.ToolCall{{ID: "native-id-8", Name: "wait", Arguments: `{"seconds":1}`}}},
				model.Message{Role: model.RoleTool, CallID: "native-id-8", Text: "Waited."},
				model.Message{Role: model.RoleAssistant, Text: "Done, no call."},
				model.Message{Role: model.RoleUser, Text: "Environment Update"},
			)
			if _, err := c.Turn(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			got := srv.Requests()[0]
			body, err := jsonschema.UnmarshalJSON(bytes.NewReader(got.Raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := schemas[got.Protocol].Validate(body); err != nil {
				t.Errorf("the %s request does not validate:\n%v", got.Protocol, err)
			}
			if n := len(got.ImageURLs()); n != 2 || !strings.Contains(string(got.Raw), `"tools"`) {
				t.Errorf("the request carries %d images and tools=%v; the check needs both", n, strings.Contains(string(got.Raw), `"tools"`))
			}
		})
	}
}

// everyOption sets every generation option p accepts to a valid value.
func everyOption(p model.Profile) model.GenerationOptions {
	var o model.GenerationOptions
	maxTokens, topK := 256, 20
	temperature, topP, penalty := 0.7, 0.8, 1.05
	for _, name := range p.Options {
		switch name {
		case model.OptMaxTokens:
			o.MaxTokens = &maxTokens
		case model.OptTemperature:
			o.Temperature = &temperature
		case model.OptTopP:
			o.TopP = &topP
		case model.OptTopK:
			o.TopK = &topK
		case model.OptRepetitionPenalty:
			o.RepetitionPenalty = &penalty
		case model.OptPresencePenalty:
			o.PresencePenalty = &penalty
		case model.OptReasoningEffort:
			o.ReasoningEffort = "low"
		}
	}
	return o
}

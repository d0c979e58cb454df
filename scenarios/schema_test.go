package scenarios

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

func compileSchema(t *testing.T, id string, schema map[string]any) *jsonschema.Schema {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(id)
	if err != nil {
		t.Fatalf("schema does not compile: %v", err)
	}
	return s
}

// yamlAsJSON decodes a YAML file into the generic JSON data model the
// schema validator expects.
func yamlAsJSON(t *testing.T, path string) any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSchemasValidateExamples(t *testing.T) {
	t.Parallel()
	scenario := compileSchema(t, ScenarioSchemaID, ScenarioSchema())
	operator := compileSchema(t, OperatorSchemaID, OperatorSchema())
	files, _ := filepath.Glob("examples/*.yaml")
	for _, f := range files {
		s := scenario
		if filepath.Base(f)[:8] == "operator" {
			s = operator
		}
		if err := s.Validate(yamlAsJSON(t, f)); err != nil {
			t.Errorf("%s does not match the schema: %v", f, err)
		}
	}
	// The schema must also be able to say no.
	bad := map[string]any{"name": "x", "colour": "red", "steps": []any{map[string]any{"observe_screen": map[string]any{}, "wait": 1.0}}}
	if err := scenario.Validate(bad); err == nil {
		t.Error("scenario schema accepted an unknown key and a two-tool step")
	}
}

func TestOperatorCIExample(t *testing.T) {
	t.Parallel()
	o, ps := LoadOperator("examples/operator-ci.yaml", env(map[string]string{"DISPLAY": ":7", "KASM_MESSAGING_TOKEN": "tok",
		"KASM_WEBHOOK_URL": "https://hooks.example/kasmrt", "KASM_WEBHOOK_TOKEN": "hook"}))
	if ps != nil {
		t.Fatal(ps)
	}
	if o.Desktop.Display != ":7" || !o.HasInbox() || o.Inbox.Listen != "127.0.0.1:8765" ||
		o.Inbox.Notify.Webhook == nil || o.Inbox.Notify.Webhook.Headers["Authorization"] != "Bearer hook" {
		t.Fatalf("operator-ci.yaml loaded as %+v", o)
	}
}

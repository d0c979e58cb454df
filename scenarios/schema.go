package scenarios

import (
	"reflect"
	"strings"
)

// SchemaID names the JSON Schemas kasmrt publishes.
const (
	ScenarioSchemaID = "https://kasmrt.dev/schema/scenario.json"
	OperatorSchemaID = "https://kasmrt.dev/schema/operator.json"
)

// ScenarioSchema returns a JSON Schema (draft 2020-12) for scenario files,
// for editors' YAML language servers. It describes the shape; the loader
// applies the rules that need more than a shape (refs, targets, counts
// across files).
func ScenarioSchema() map[string]any {
	s := schemaFor(reflect.TypeOf(Scenario{}))
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = ScenarioSchemaID
	s["title"] = "kasmrt scenario"
	s["required"] = []string{"name"}
	props := s["properties"].(map[string]any)
	props["steps"] = map[string]any{"type": "array", "maxItems": MaxSteps, "items": stepSchema()}
	props["plan"] = map[string]any{"type": "array", "maxItems": MaxPlanSteps, "items": map[string]any{"type": "string"}}
	props["provides"] = map[string]any{"type": "object", "additionalProperties": providedSchema()}
	props["app"].(map[string]any)["required"] = []string{"command"}
	props["tools"] = map[string]any{"type": "object", "additionalProperties": declaredToolSchema()}
	success := props["success"].(map[string]any)
	success["description"] = "what a goal run must have achieved, checked by the runtime once the loop ends: the checks of a step's expect:, and declared tools (without parameters) that must exit 0"
	success["minProperties"] = 1
	success["properties"].(map[string]any)["tools"] = map[string]any{"type": "array", "uniqueItems": true, "items": map[string]any{"type": "string"}}
	return s
}

// OperatorSchema returns a JSON Schema (draft 2020-12) for operator files.
func OperatorSchema() map[string]any {
	s := schemaFor(reflect.TypeOf(Operator{}))
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = OperatorSchemaID
	s["title"] = "kasmrt operator file"
	model := s["properties"].(map[string]any)["model"].(map[string]any)["properties"].(map[string]any)
	model["reasoning_effort"] = map[string]any{"enum": []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}}
	model["tool_choice"] = map[string]any{"enum": []string{"auto", "required", "none"}}
	model["max_context_length"] = map[string]any{"type": "integer", "minimum": 1, "description": "the model's context in tokens, max_tokens included; must exceed max_tokens plus 512"}
	model["endpoint"] = map[string]any{"type": "string", "description": "http(s) URL of the model service, its /v1 base or its full endpoint; no embedded credentials"}
	s["properties"].(map[string]any)["cache"] = map[string]any{"enum": []string{"read-write", "read-only", "off"},
		"description": "how goal runs use the action cache beside the scenario (NAME.kasmrt-cache/)"}
	mem := s["properties"].(map[string]any)["memory"].(map[string]any)["properties"].(map[string]any)
	mem["emit_policy"] = map[string]any{"enum": []string{"always", "on_change"}}
	disabled := s["properties"].(map[string]any)["tools"].(map[string]any)["properties"].(map[string]any)
	model["service"] = serviceNameSchema()
	s["properties"].(map[string]any)["services"] = map[string]any{
		"type": "object", "propertyNames": serviceNameSchema(),
		"additionalProperties": map[string]any{
			"type": "object", "additionalProperties": false, "required": []string{"max_concurrent"},
			"properties": map[string]any{"max_concurrent": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxConcurrentLimit}},
		},
	}
	disabled["disabled"] = map[string]any{"type": "array", "uniqueItems": true, "items": map[string]any{"enum": BuiltinNames()}}
	return s
}

// schemaFor derives a schema from a config struct's yaml tags.
func schemaFor(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" && opts == "inline" {
				// An inline struct's keys are the outer mapping's own.
				for k, p := range schemaFor(f.Type)["properties"].(map[string]any) {
					props[k] = p
				}
				continue
			}
			if name == "" || name == "-" {
				continue
			}
			props[name] = schemaFor(f.Type)
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem())}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem())}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{}
}

func providedSchema() map[string]any {
	place := map[string]any{
		"type": "object", "additionalProperties": false, "minProperties": 1,
		"properties": map[string]any{
			"cdp_target": map[string]any{"type": "string", "description": "a cdp_targets name"},
			"origin":     map[string]any{"type": "string", "description": "a browser origin, scheme://host[:port]"},
			"role":       map[string]any{"type": "string", "description": "the focused accessible's role, e.g. password text"},
			"name":       map[string]any{"type": "string", "description": "the focused accessible's name"},
		},
	}
	source := map[string]any{
		"type": "object", "additionalProperties": false,
		"oneOf": []any{map[string]any{"required": []string{"env"}}, map[string]any{"required": []string{"file"}}},
		"properties": map[string]any{
			"env":  map[string]any{"type": "string"},
			"file": map[string]any{"type": "string"},
			"into": map[string]any{"type": "array", "minItems": 1, "items": place,
				"description": "the only places the secret may be typed or filled"},
		},
	}
	return map[string]any{"oneOf": []any{
		map[string]any{"type": []string{"string", "number", "boolean"}},
		map[string]any{"type": "object", "additionalProperties": false, "required": []string{"secret"},
			"properties": map[string]any{"secret": source}},
	}}
}

// stepSchema allows one tool call per step: a mapping with one key, a tool
// name, whose value is the arguments or the one required argument.
func stepSchema() map[string]any {
	props := map[string]any{}
	for _, t := range sortedSpecs(Catalog(&Scenario{}, &Operator{Runner: RunnerConfig{WaitToolMaxS: DefaultWaitToolMaxS}})) {
		args := t.JSONSchema()
		delete(args, "required")
		for _, p := range args["properties"].(map[string]any) {
			delete(p.(map[string]any), "enum") // enums depend on the scenario
		}
		alts := []any{args, map[string]any{"type": "null"}}
		if len(t.Required()) == 1 {
			alts = append(alts, map[string]any{"type": []string{"string", "number"}})
		}
		props[t.Name] = map[string]any{"description": t.Description, "anyOf": alts}
	}
	expect := schemaFor(reflect.TypeOf(Expect{}))
	expect["description"] = "checks that must hold within within_s once the step's tool has run"
	props[ExpectTool] = expect
	return map[string]any{
		"type": "object", "minProperties": 1, "maxProperties": 2,
		// One tool call, or one with expect: beside it.
		"oneOf": []any{
			map[string]any{"maxProperties": 1},
			map[string]any{"required": []string{ExpectTool}, "minProperties": 2},
		},
		"properties": props,
		// Declared tools are named by the scenario.
		"additionalProperties": map[string]any{"type": []string{"object", "null"}},
	}
}

func declaredToolSchema() map[string]any {
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"run"},
		"properties": map[string]any{
			"description": map[string]any{"type": "string"},
			"run":         map[string]any{"const": "shell"},
			"command":     map[string]any{"type": "string"},
			"budget":      map[string]any{"type": "integer", "minimum": 0},
			"timeout_s":   map[string]any{"type": "number", "minimum": 0},
			"service":     serviceNameSchema(),
			"check":       map[string]any{"type": "boolean", "description": "a check of the application: its last call failing in a goal run or a session fails the run"},
			"env":         map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			"parameters": map[string]any{"type": "object", "additionalProperties": map[string]any{
				"type": "object", "additionalProperties": false, "required": []string{"values"},
				"properties": map[string]any{
					"description": map[string]any{"type": "string"},
					"values":      map[string]any{"type": "object", "minProperties": 1, "additionalProperties": map[string]any{"type": "string"}},
				},
			}},
		},
	}
}

func serviceNameSchema() map[string]any {
	return map[string]any{"type": "string", "pattern": serviceNameRE.String()}
}

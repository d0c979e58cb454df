package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// readmeExamples returns the README's YAML blocks that the paragraph
// before them attributes to a file under scenarios/examples, by that file.
func readmeExamples(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile("`(scenarios/examples/[^`]+\\.yaml)`")
	blocks := map[string]string{}
	// before is the last paragraph before a block, the blank line after it
	// included.
	var paragraph, before, block []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !in && line == "```yaml":
			in, block = true, nil
			if len(paragraph) > 0 {
				before = paragraph
			}
		case in && strings.HasPrefix(line, "```"):
			in = false
			if m := named.FindStringSubmatch(strings.Join(before, " ")); m != nil {
				blocks[m[1]] = strings.Join(block, "\n")
			}
			paragraph, before = nil, nil
		case in:
			block = append(block, line)
		case strings.TrimSpace(line) == "":
			if len(paragraph) > 0 {
				before = paragraph
			}
			paragraph = nil
		default:
			paragraph = append(paragraph, line)
		}
	}
	return blocks
}

// The README's examples agree with the files they say they show: a
// shortened example may leave things out, but what it shows (the name,
// the provided values, the declared tools' names, the steps in order) is
// in the file as shown.
func TestReadmeExamplesAgreeWithTheirFiles(t *testing.T) {
	t.Parallel()
	examples := readmeExamples(t)
	if examples["scenarios/examples/xterm-greeting.yaml"] == "" {
		t.Fatalf("the README shows no block attributed to scenarios/examples/xterm-greeting.yaml; found %d", len(examples))
	}
	for file, shown := range examples {
		var readme, real map[string]any
		if err := yaml.Unmarshal([]byte(shown), &readme); err != nil {
			t.Errorf("the README's %s: %v", file, err)
			continue
		}
		body, err := os.ReadFile(filepath.Join("..", "..", file))
		if err != nil {
			t.Errorf("the README shows %s: %v", file, err)
			continue
		}
		if err := yaml.Unmarshal(body, &real); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for key := range readme {
			if _, ok := real[key]; !ok {
				t.Errorf("the README's %s has %s:, the file has none", file, key)
			}
		}
		if name, ok := readme["name"]; ok && name != real["name"] {
			t.Errorf("the README's %s is named %v, the file %v", file, name, real["name"])
		}
		provided, _ := real["provides"].(map[string]any)
		shownProvides, _ := readme["provides"].(map[string]any)
		for name, v := range shownProvides {
			if w, ok := provided[name]; !ok || !reflect.DeepEqual(v, w) {
				t.Errorf("the README's %s provides %s: %v; the file: %v", file, name, v, w)
			}
		}
		tools, _ := real["tools"].(map[string]any)
		shownTools, _ := readme["tools"].(map[string]any)
		for name := range shownTools {
			if _, ok := tools[name]; !ok {
				t.Errorf("the README's %s declares the tool %s; the file does not", file, name)
			}
		}
		// The shown steps are the file's, in order, some perhaps left out.
		steps, _ := real["steps"].([]any)
		shownSteps, _ := readme["steps"].([]any)
		i := 0
		for _, s := range shownSteps {
			for i < len(steps) && !sameStep(s, steps[i]) {
				i++
			}
			if i == len(steps) {
				t.Errorf("the README's %s has the step %v, which the file lacks or has elsewhere", file, s)
				break
			}
			i++
		}
	}
}

// sameStep reports whether two steps call the same tool with the same
// arguments; an expect: on one and not the other does not count.
func sameStep(a, b any) bool {
	strip := func(s any) any {
		m, ok := s.(map[string]any)
		if !ok {
			return s
		}
		out := map[string]any{}
		for k, v := range m {
			if k != "expect" {
				out[k] = v
			}
		}
		return out
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// ecosystemTool returns the path under the repository of a validator the
// Makefile's tools step installs into bin/, running that step (the target
// named) when it is not there yet. The step leaves a tool out only when
// its registry is unreachable, and says so: the test skips with its words.
// Any other failure to install fails the test.
func ecosystemTool(t *testing.T, target, rel string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, rel)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	need(t, "make")
	cmd := exec.Command("make", "-s", "-C", root, target)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make %s: %v\n%s", target, err, stderr.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("make %s did not install %s: %s", target, rel, strings.TrimSpace(stderr.String()))
	}
	return path
}

// workflowBlocks returns the GitHub Actions workflows docs/*.md show: the
// fenced YAML blocks with a top-level jobs key, by "FILE:LINE".
func workflowBlocks(t *testing.T) map[string]string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	jobs := regexp.MustCompile(`(?m)^jobs:`)
	blocks := map[string]string{}
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var block []string
		start, in := 0, false
		for i, line := range strings.Split(string(b), "\n") {
			switch {
			case !in && (line == "```yaml" || line == "```yml"):
				in, start, block = true, i+1, nil
			case in && strings.HasPrefix(line, "```"):
				in = false
				if text := strings.Join(block, "\n") + "\n"; jobs.MatchString(text) {
					blocks[filepath.Base(doc)+":"+strconv.Itoa(start)] = text
				}
			case in:
				block = append(block, line)
			}
		}
	}
	return blocks
}

// Every GitHub Actions workflow in docs/ is one GitHub would accept, as
// actionlint judges it.
func TestDocsWorkflowsPassActionlint(t *testing.T) {
	t.Parallel()
	actionlint := ecosystemTool(t, "tool-actionlint", filepath.Join("bin", "actionlint"))
	blocks := workflowBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("no workflow in docs/*.md; docs/ci.md has one")
	}
	for where, text := range blocks {
		dir := filepath.Join(t.TempDir(), ".github", "workflows")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "docs.yml")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(actionlint, "-no-color", file)
		cmd.Dir = filepath.Dir(filepath.Dir(dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("the workflow at %s: actionlint: %v\n%s", where, err, out)
		}
	}
}

// The OpenAPI document of `kasmrt schema api` passes @redocly/cli's
// recommended rules with no error.
func TestOpenAPIPassesRedocly(t *testing.T) {
	t.Parallel()
	redocly := ecosystemTool(t, "tool-redocly", filepath.Join("bin", "npm", "node_modules", ".bin", "redocly"))
	code, doc, stderr := kasmrtProcess(t, nil, "schema", "api")
	if code != 0 {
		t.Fatalf("schema api: exit %d\n%s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(redocly, "lint", "--extends=recommended", "--format=json", file)
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	// redocly exits non-zero when it finds an error; its report says which.
	out, _ := cmd.Output()
	var lint struct {
		Totals struct {
			Errors, Warnings int
		}
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Location []struct{ Pointer string }
		}
	}
	if err := json.Unmarshal(out, &lint); err != nil {
		t.Fatalf("redocly's report: %v\n%s", err, out)
	}
	for _, p := range lint.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		if p.Severity == "error" {
			t.Errorf("redocly: %s %s: %s", p.RuleID, where, p.Message)
		} else {
			t.Logf("redocly %s: %s %s: %s", p.Severity, p.RuleID, where, p.Message)
		}
	}
	if lint.Totals.Errors != 0 {
		t.Errorf("redocly: %d errors", lint.Totals.Errors)
	}
}

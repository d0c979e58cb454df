package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kasmrt/kasmrt/scenarios"
)

// writeRunFiles writes a scenario (scenario.yaml) and, when operator is
// not empty, an operator file (operator.yaml) into dir, and returns their
// paths; the operator's is "" without one.
func writeRunFiles(t testing.TB, dir, scenario, operator string) (scenarioPath, operatorPath string) {
	t.Helper()
	scenarioPath = filepath.Join(dir, "scenario.yaml")
	if err := os.WriteFile(scenarioPath, []byte(scenario), 0o600); err != nil {
		t.Fatal(err)
	}
	if operator != "" {
		operatorPath = filepath.Join(dir, "operator.yaml")
		if err := os.WriteFile(operatorPath, []byte(operator), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return scenarioPath, operatorPath
}

// lookupIn is a loader's environment made of env alone.
func lookupIn(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}
}

// loadRunFiles writes the files into dir and loads them with env as the
// environment, failing the test on a problem.
func loadRunFiles(t testing.TB, dir, scenario, operator string, env map[string]string) *scenarios.Files {
	t.Helper()
	sc, op := writeRunFiles(t, dir, scenario, operator)
	files, err := scenarios.Load(sc, op, lookupIn(env))
	if err != nil {
		t.Fatalf("load the scenario: %v", err)
	}
	return files
}

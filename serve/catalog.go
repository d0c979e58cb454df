package serve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// ScenarioInfo describes a scenario a session can be opened on.
type ScenarioInfo struct {
	// Scenario is the name open_session takes: the file, relative to the
	// scenarios folder.
	Scenario string `json:"scenario"`
	Name     string `json:"name"`
	Goal     string `json:"goal"`
}

// Scenarios lists the goal scenarios of the scenarios folder, by file name.
// Files are read, not loaded: a goal is shown as written, so a ${NAME} in it
// stays a name and never becomes the value. Files without a goal (scripts,
// operator files) cannot be opened as sessions and are left out.
func (m *Manager) Scenarios() ([]ScenarioInfo, error) {
	if m.opts.ScenariosDir == "" {
		return nil, errors.New("this server opens no sessions: it publishes one run")
	}
	out := []ScenarioInfo{}
	err := filepath.WalkDir(m.opts.ScenariosDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return nil
		}
		rel, err := filepath.Rel(m.opts.ScenariosDir, path)
		if err != nil {
			return err
		}
		// Resolve refuses what open_session would: a symlink leading out
		// of the folder is not listed.
		real, err := m.resolve(rel)
		if err != nil {
			return nil
		}
		data, err := os.ReadFile(real)
		if err != nil {
			return nil
		}
		var head struct {
			Name string `yaml:"name"`
			Goal string `yaml:"goal"`
		}
		if yaml.Unmarshal(data, &head) != nil || strings.TrimSpace(head.Goal) == "" {
			return nil
		}
		out = append(out, ScenarioInfo{Scenario: filepath.ToSlash(rel), Name: head.Name, Goal: strings.TrimSpace(head.Goal)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list the scenarios folder: %w", err)
	}
	return out, nil
}

// available names the scenarios a wrong name could have meant, for the
// error that refuses it.
func (m *Manager) available() string {
	list, err := m.Scenarios()
	if err != nil || len(list) == 0 {
		return "the scenarios folder has no goal scenarios"
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Scenario
	}
	return "available: " + strings.Join(names, ", ") + " (list_scenarios gives their goals)"
}

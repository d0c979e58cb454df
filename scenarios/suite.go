package scenarios

import (
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Suite limits keep a typo (repeat: 10000) from planning a week of runs.
const (
	MaxSuiteRepeat  = 1000
	MaxSuiteWorkers = 256
)

// Suite is a suite file: the scenarios to run together, the operator file
// they share, how many samples of each, and tags and environment per entry.
type Suite struct {
	Pos Pos `yaml:"-"`
	// Name names the suite in suite.json and the JUnit file (default: the
	// file's name without its extension).
	Name string `yaml:"name"`
	// Operator is the operator file every run uses, relative to the suite
	// file.
	Operator string `yaml:"operator"`
	// Repeat is the number of samples of each scenario (default 1).
	Repeat int `yaml:"repeat"`
	// Workers bounds the runs at once (default: from the machine).
	Workers   int          `yaml:"workers"`
	Scenarios []SuiteEntry `yaml:"scenarios"`

	// File is where the suite was loaded from.
	File string `yaml:"-"`
}

// SuiteEntry is one line of a suite: a scenario file or a glob of them.
type SuiteEntry struct {
	Pos Pos `yaml:"-"`
	// Path is a scenario file or a glob, relative to the suite file.
	Path string `yaml:"path"`
	// Tags label the entry's runs for --filter and the results.
	Tags []string `yaml:"tags"`
	// Repeat overrides the suite's repeat for this entry.
	Repeat int `yaml:"repeat"`
	// Env is what the scenario's ${NAME} placeholders and secret env
	// sources resolve against, ahead of the process environment.
	Env map[string]string `yaml:"env"`
}

// SuiteScenario is one scenario file a suite runs, with what its entry
// gave it.
type SuiteScenario struct {
	// Pos is where the entry that named the file was written.
	Pos    Pos
	Path   string
	Tags   []string
	Repeat int
	Env    map[string]string
}

var tagRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// IsSuite reports whether YAML data is a suite file rather than a
// scenario: its top level has a scenarios key, which no scenario may have.
func IsSuite(data []byte) bool {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "scenarios" {
			return true
		}
	}
	return false
}

// LoadSuite reads and validates a suite file and expands its entries into
// scenario files, reporting every problem together; the suite is usable
// only when there are none. The scenarios themselves are loaded by the
// caller, with each entry's environment.
func LoadSuite(path string, lookup Lookup) (*Suite, []SuiteScenario, Problems) {
	if lookup == nil {
		lookup = osLookup
	}
	data, ps := readInput(path)
	if ps != nil {
		return nil, nil, ps
	}
	root, ps := parseFile(path, data)
	if ps != nil {
		return nil, nil, ps
	}
	d := &decoder{file: path, getenv: lookup, keys: map[string]Pos{}}
	var s Suite
	d.decode(root, valueOf(&s), "", 0)
	if d.aborted {
		return nil, nil, d.problems
	}
	s.File = path
	if s.Name == "" {
		s.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	v := &validator{file: path, keys: d.keys}
	list := v.suite(&s)
	all := append(d.problems, v.problems...)
	all.Sort()
	// The scenarios the suite could expand come back with its problems, so
	// the caller can list theirs too.
	return &s, list, all
}

// OperatorPath is the suite's operator file resolved against the suite
// file's directory ("" when it names none).
func (s *Suite) OperatorPath() string {
	if s.Operator == "" || filepath.IsAbs(s.Operator) {
		return s.Operator
	}
	return filepath.Join(filepath.Dir(s.File), s.Operator)
}

// suite validates a suite and expands its entries.
func (v *validator) suite(s *Suite) []SuiteScenario {
	if s.Repeat < 0 || s.Repeat > MaxSuiteRepeat {
		v.failAt("repeat", "must be between 1 and %d, got %d", MaxSuiteRepeat, s.Repeat)
	}
	if s.Workers < 0 || s.Workers > MaxSuiteWorkers {
		v.failAt("workers", "must be between 1 and %d, got %d", MaxSuiteWorkers, s.Workers)
	}
	if s.Operator != "" {
		if _, ps := readInput(s.OperatorPath()); ps != nil {
			v.failAt("operator", "cannot read the operator file %s: %s", s.OperatorPath(), ps[0].Msg)
		}
	}
	if len(s.Scenarios) == 0 {
		v.failAt("scenarios", "a suite needs at least one scenario")
	}
	dir := filepath.Dir(s.File)
	var out []SuiteScenario
	seen := map[string]string{}
	for i, e := range s.Scenarios {
		path := index("scenarios", i)
		if e.Repeat < 0 || e.Repeat > MaxSuiteRepeat {
			v.failAt(path+".repeat", "must be between 1 and %d, got %d", MaxSuiteRepeat, e.Repeat)
		}
		for j, tag := range e.Tags {
			if !tagRE.MatchString(tag) {
				v.failAt(index(path+".tags", j), "tag %q: want letters, digits, '_', '.' or '-' (at most 64)", tag)
			}
		}
		v.envNames(path+".env", e.Env)
		if e.Path == "" {
			v.failAt(path, "an entry needs a path (a scenario file or a glob)")
			continue
		}
		pattern := e.Path
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(dir, pattern)
		}
		matches, err := filepath.Glob(pattern)
		if err != nil {
			v.failAt(path+".path", "bad glob %q: %v", e.Path, err)
			continue
		}
		if len(matches) == 0 {
			v.failAt(path+".path", "%q matches no file", e.Path)
			continue
		}
		sort.Strings(matches)
		repeat := e.Repeat
		if repeat == 0 {
			repeat = max(s.Repeat, 1)
		}
		for _, m := range matches {
			if first, dup := seen[m]; dup {
				v.failAt(path+".path", "%s is already listed by %s; list each scenario once and use repeat for more samples", m, first)
				continue
			}
			seen[m] = path
			out = append(out, SuiteScenario{Pos: v.at(path + ".path"), Path: m, Tags: e.Tags, Repeat: repeat, Env: e.Env})
		}
	}
	return out
}

// SuiteEntryLookup is lookup with the entry's environment in front of it.
func SuiteEntryLookup(env map[string]string, lookup Lookup) Lookup {
	if lookup == nil {
		lookup = osLookup
	}
	return func(name string) (string, bool) {
		if v, ok := env[name]; ok {
			return v, true
		}
		return lookup(name)
	}
}

// SuiteSchemaID names the suite file's JSON Schema.
const SuiteSchemaID = "https://kasmrt.dev/schema/suite.json"

// SuiteSchema returns a JSON Schema (draft 2020-12) for suite files.
func SuiteSchema() map[string]any {
	s := schemaFor(reflect.TypeOf(Suite{}))
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = SuiteSchemaID
	s["title"] = "kasmrt suite"
	s["required"] = []string{"scenarios"}
	props := s["properties"].(map[string]any)
	props["repeat"] = map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSuiteRepeat}
	props["workers"] = map[string]any{"type": "integer", "minimum": 1, "maximum": MaxSuiteWorkers}
	entry := props["scenarios"].(map[string]any)["items"].(map[string]any)
	entry["required"] = []string{"path"}
	eprops := entry["properties"].(map[string]any)
	eprops["repeat"] = props["repeat"]
	eprops["tags"] = map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": tagRE.String()}}
	props["scenarios"].(map[string]any)["minItems"] = 1
	return s
}

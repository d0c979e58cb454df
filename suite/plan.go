// Package suite is the room where many runs become one result: it plans a
// suite (scenario files, globs and suite files, repeats, filters, shards),
// validates every run before the first starts, runs them on workers, and
// writes suite.json and a JUnit file. It imports the engine; the command
// line imports it.
package suite

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kasmrt/kasmrt/engine"
	"github.com/kasmrt/kasmrt/scenarios"
)

// Input is what a suite is planned from: the command line's arguments and
// flags.
type Input struct {
	// Args are scenario files, globs of them, or suite files.
	Args []string
	// Operator is -o; it overrides a suite file's operator.
	Operator string
	// Repeat is --repeat (0: the suite file's, or 1).
	Repeat int
	// Filter is --filter (see ParseFilter).
	Filter string
	// Shard is --shard (zero: every run).
	Shard Shard
	// Lookup resolves ${NAME} placeholders and secrets (nil: the process
	// environment).
	Lookup scenarios.Lookup
	// Version is kasmrt's version, part of every run's identity.
	Version string
}

// Planned is one run of the plan: one sample of one scenario, loaded and
// validated.
type Planned struct {
	// Key names the run stably across machines and resumes: the scenario
	// file as given and the sample index.
	Key      string
	Scenario string
	Path     string
	Sample   int
	Tags     []string
	// Dir is the run's report directory, relative to the suite's output.
	Dir      string
	Files    *scenarios.Files
	Identity engine.Identity
}

// Plan is the validated list of runs, after filtering and sharding.
type Plan struct {
	Name    string
	Workers int // from the suite file (0: not given)
	Shard   Shard
	// Runs are this shard's runs, in plan order.
	Runs []Planned
	// Keys are every run of the unsharded plan, in order, so a merge can
	// tell which runs no shard ran.
	Keys []string
	// SHA256 identifies the unsharded plan: every run's key and identity.
	SHA256 string
}

// Shard is --shard i/N: the i-th (1-based) of N parts.
type Shard struct{ Index, Count int }

// ParseShard reads "i/N".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("--shard %q: want i/N with 1 ≤ i ≤ N, e.g. 1/3", s)
	}
	return Shard{Index: i, Count: n}, nil
}

func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// holds reports whether the run with key belongs to the shard: a stable
// hash of the key, so every machine partitions the same way.
func (s Shard) holds(key string) bool {
	if s.Count <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32()%uint32(s.Count)) == s.Index-1
}

// Build plans a suite: it expands the arguments, loads and validates every
// scenario with the operator file, and returns every problem together
// (scenarios.Problems) when any input is bad. Nothing is launched.
func Build(in Input) (*Plan, error) {
	if len(in.Args) == 0 {
		return nil, errors.New("no scenarios: name scenario files, globs or a suite file")
	}
	filter, err := ParseFilter(in.Filter)
	if err != nil {
		return nil, err
	}
	if in.Repeat < 0 || in.Repeat > scenarios.MaxSuiteRepeat {
		return nil, fmt.Errorf("--repeat %d: want 1 to %d", in.Repeat, scenarios.MaxSuiteRepeat)
	}
	var (
		entries  []scenarios.SuiteScenario
		problems scenarios.Problems
		operator = in.Operator
		plan     = &Plan{Shard: in.Shard}
		planHash = sha256.New()
	)
	for _, arg := range in.Args {
		list, suite, ps := expandArg(arg, in.Lookup)
		problems = append(problems, ps...)
		entries = append(entries, list...)
		if suite != nil {
			if plan.Name == "" {
				plan.Name = suite.Name
			}
			if plan.Workers == 0 {
				plan.Workers = suite.Workers
			}
			if operator == "" {
				operator = suite.OperatorPath()
			}
		}
	}
	if plan.Name == "" {
		plan.Name = "kasmrt"
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			problems = append(problems, scenarios.Problem{Pos: e.Pos, Msg: fmt.Sprintf("%s is listed twice; use repeat for more samples", e.Path)})
			continue
		}
		seen[e.Path] = true
		repeat := e.Repeat
		if in.Repeat > 0 {
			repeat = in.Repeat
		}
		lookup := scenarios.SuiteEntryLookup(e.Env, in.Lookup)
		files, err := loadRun(e.Path, operator, lookup)
		if err != nil {
			if ps, ok := scenarios.AsProblems(err); ok {
				problems = append(problems, ps...)
			} else {
				problems = append(problems, scenarios.Problem{Pos: scenarios.Pos{File: e.Path, Line: 1, Column: 1}, Msg: err.Error()})
			}
			continue
		}
		if !filter.match(files.Scenario.Name, e.Path, e.Tags) {
			continue
		}
		for k := range repeat {
			if k > 0 {
				// Each sample has files of its own: a run may settle
				// things in them (the model's name) as it starts.
				if files, err = loadRun(e.Path, operator, lookup); err != nil {
					return nil, err
				}
			}
			id, err := engine.IdentityOf(files, engine.Options{Version: in.Version, SampleIndex: k})
			if err != nil {
				return nil, fmt.Errorf("plan %s: %w", e.Path, err)
			}
			key := filepath.Clean(e.Path) + "#" + strconv.Itoa(k)
			plan.Keys = append(plan.Keys, key)
			fmt.Fprintf(planHash, "%s %s\n", key, id.SHA256())
			p := Planned{Key: key, Scenario: files.Scenario.Name, Path: e.Path, Sample: k, Tags: e.Tags,
				Dir: runDir(files.Scenario.Name, e.Path, k), Files: files, Identity: id}
			if in.Shard.holds(key) {
				plan.Runs = append(plan.Runs, p)
			}
		}
	}
	problems = dedupe(problems)
	problems.Sort()
	if len(problems) > 0 {
		return nil, problems
	}
	if len(plan.Keys) == 0 {
		return nil, fmt.Errorf("no scenario matches --filter %q", in.Filter)
	}
	plan.SHA256 = hex.EncodeToString(planHash.Sum(nil))
	return plan, nil
}

func loadRun(path, operator string, lookup scenarios.Lookup) (*scenarios.Files, error) {
	return engine.Load(path, operator, lookup)
}

// expandArg turns one argument into scenario files: a suite file's
// entries, a glob's matches or the file itself.
func expandArg(arg string, lookup scenarios.Lookup) ([]scenarios.SuiteScenario, *scenarios.Suite, scenarios.Problems) {
	argPos := scenarios.Pos{File: arg, Line: 1, Column: 1}
	if strings.ContainsAny(arg, "*?[") {
		matches, err := filepath.Glob(arg)
		if err != nil || len(matches) == 0 {
			msg := "the glob matches no file"
			if err != nil {
				msg = fmt.Sprintf("bad glob: %v", err)
			}
			return nil, nil, scenarios.Problems{{Pos: argPos, Msg: msg}}
		}
		sort.Strings(matches)
		var out []scenarios.SuiteScenario
		var ps scenarios.Problems
		for _, m := range matches {
			list, _, p := expandArg(m, lookup)
			out, ps = append(out, list...), append(ps, p...)
		}
		return out, nil, ps
	}
	data, err := readHead(arg, 1<<20)
	if err != nil {
		return nil, nil, scenarios.Problems{{Pos: argPos, Msg: err.Error()}}
	}
	if scenarios.IsSuite(data) {
		s, list, ps := scenarios.LoadSuite(arg, lookup)
		return list, s, ps
	}
	return []scenarios.SuiteScenario{{Pos: argPos, Path: arg, Repeat: 1}}, nil, nil
}

// readHead reads a regular file of at most the loader's limit, so a FIFO
// or /dev/zero named on the command line is refused, not read forever.
func readHead(path string, limit int64) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read %s: not a regular file", path)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("read %s: %d bytes; the limit is %d", path, st.Size(), limit)
	}
	return os.ReadFile(path)
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// runDir names a run's report directory: readable, and unique per file
// and sample even when two scenarios share a name.
func runDir(name, path string, sample int) string {
	slug := strings.Trim(slugRE.ReplaceAllString(strings.ToLower(name), "-"), "-")
	if len(slug) > 40 {
		slug = slug[:40]
	}
	sum := sha256.Sum256([]byte(filepath.Clean(path)))
	return filepath.Join("runs", fmt.Sprintf("%s-%s-%d", slug, hex.EncodeToString(sum[:4]), sample))
}

// dedupe drops repeated problems: a bad operator file is reported once,
// not once per scenario that uses it.
func dedupe(ps scenarios.Problems) scenarios.Problems {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		if !seen[p.Error()] {
			seen[p.Error()] = true
			out = append(out, p)
		}
	}
	return out
}

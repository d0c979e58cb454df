package suite

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Merge combines shard outputs of one suite into out/suite.json and
// out/junit.xml. It refuses outputs of different plans (another
// configuration, another kasmrt, another filter), two outputs of one shard,
// and a run reported twice; runs no shard reported are not run. Report
// paths are rewritten relative to out.
func Merge(shardDirs []string, out string, strict bool) (*Summary, error) {
	if len(shardDirs) == 0 {
		return nil, badInput("merge: name the shard outputs to merge")
	}
	var sums []*Summary
	for _, dir := range shardDirs {
		s, err := ReadSummary(dir)
		if err != nil {
			return nil, badInput("merge: %v", err)
		}
		sums = append(sums, s)
	}
	first := sums[0]
	var problems []string
	shards := map[string]string{}
	for i, s := range sums {
		if s.PlanSHA256 != first.PlanSHA256 || s.KasmrtVersion != first.KasmrtVersion {
			var fields []string
			if s.PlanSHA256 != first.PlanSHA256 {
				fields = append(fields, "plan_sha256")
			}
			if s.KasmrtVersion != first.KasmrtVersion {
				fields = append(fields, "kasmrt_version")
			}
			problems = append(problems, fmt.Sprintf("%s is not a shard of the suite in %s (%s differ)", shardDirs[i], shardDirs[0], strings.Join(fields, ", ")))
		}
		if prev, dup := shards[s.Shard]; dup && s.Shard != "" {
			problems = append(problems, fmt.Sprintf("%s and %s are both shard %s", prev, shardDirs[i], s.Shard))
		}
		shards[s.Shard] = shardDirs[i]
	}
	if len(problems) > 0 {
		return nil, badInput("merge: %s", strings.Join(problems, "; "))
	}
	if err := emptyOrNew(out); err != nil {
		return nil, err
	}
	merged := &Summary{Schema: Schema, KasmrtVersion: first.KasmrtVersion, Name: first.Name,
		PlanSHA256: first.PlanSHA256, Planned: first.Planned, Started: first.Started, Ended: first.Ended}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	from := map[string]string{}
	for i, s := range sums {
		if s.Started.Before(merged.Started) {
			merged.Started = s.Started
		}
		if s.Ended.After(merged.Ended) {
			merged.Ended = s.Ended
		}
		for _, r := range s.Runs {
			if prev, dup := from[r.Key]; dup {
				return nil, badInput("merge: run %s is in both %s and %s", r.Key, prev, shardDirs[i])
			}
			from[r.Key] = shardDirs[i]
			if r.Report != "" {
				abs, err := filepath.Abs(filepath.Join(shardDirs[i], r.Report))
				if err == nil {
					if rel, err := filepath.Rel(absOut, abs); err == nil {
						r.Report = rel
					}
				}
			}
			merged.Runs = append(merged.Runs, r)
		}
	}
	for _, key := range first.Planned {
		if _, ok := from[key]; !ok {
			file, sample := splitKey(key)
			merged.Runs = append(merged.Runs, RunResult{Key: key, File: file, Scenario: file, Sample: sample,
				Verdict: VerdictNotRun, Reasons: []string{"no merged shard ran this run"}})
		}
	}
	summarize(merged, strict)
	if err := writeJSON(out, SummaryFile, merged); err != nil {
		return merged, err
	}
	return merged, WriteJUnit(filepath.Join(out, JUnitFile), merged)
}

func splitKey(key string) (string, int) {
	i := strings.LastIndex(key, "#")
	var n int
	fmt.Sscanf(key[i+1:], "%d", &n)
	return key[:i], n
}

// emptyOrNew prepares an output directory that must hold nothing yet.
func emptyOrNew(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badInput("create --out %s: %v", dir, err)
		}
		return nil
	case err != nil:
		return badInput("--out %s: %v", dir, err)
	case len(entries) > 0:
		return badInput("--out %s is not empty; name a new directory", dir)
	}
	return nil
}

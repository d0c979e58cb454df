package page

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/kasmrt/kasmrt/engine/events"
	"github.com/kasmrt/kasmrt/engine/report"
)

type indexView struct {
	Runs   []runView
	Counts []countView
}

type runView struct {
	Href, Dir, Scenario, Verdict, Outcome, Duration, Started, Final string
	Steps                                                           int
}

type countView struct {
	Verdict string
	N       int
}

// WriteIndex writes an index page at out over the report directories
// dirs, linking each run's report.html (written first when a directory
// has none) relative to out's directory.
func WriteIndex(out string, dirs []string) error {
	base, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	b := &builder{redact: func(s string) string { return s }}
	var v indexView
	counts := map[string]int{}
	for _, dir := range dirs {
		evs, err := events.ReadFile(filepath.Join(dir, "events.jsonl"))
		var skipped *events.SkippedLines
		if err != nil && !errors.As(err, &skipped) {
			return fmt.Errorf("index %s: %w", dir, err)
		}
		if _, err := os.Stat(filepath.Join(dir, FileName)); errors.Is(err, os.ErrNotExist) {
			if err := Write(dir, Options{}); err != nil {
				return fmt.Errorf("index %s: %w", dir, err)
			}
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("index %s: %w", dir, err)
		}
		rel, err := filepath.Rel(base, abs)
		if err != nil {
			rel = abs
		}
		rel = filepath.ToSlash(rel)
		rep := report.Fold(evs)
		run := runView{Href: rel + "/" + FileName, Dir: b.clean(rel), Scenario: b.clean(rep.Scenario.Name),
			Verdict: b.clean(string(rep.Verdict)), Outcome: b.clean(string(rep.Outcome)), Steps: len(rep.Steps)}
		if run.Verdict == "" {
			run.Verdict = "unfinished"
		}
		if !rep.Timing.Started.IsZero() {
			run.Started = rep.Timing.Started.Format(time.RFC3339)
			if rep.Timing.Ended != nil {
				run.Duration = formatDuration(rep.Timing.Ended.Sub(rep.Timing.Started))
			}
		}
		if f := rep.Final; f != nil && screenPath.MatchString(f.Screen) {
			run.Final = rel + "/" + f.Screen
		}
		counts[run.Verdict]++
		v.Runs = append(v.Runs, run)
	}
	for _, verdict := range slices.Sorted(maps.Keys(counts)) {
		v.Counts = append(v.Counts, countView{Verdict: verdict, N: counts[verdict]})
	}
	var buf bytes.Buffer
	if err := render(&buf, indexTemplate, v); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return writeAtomically(out, buf.Bytes())
}

package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// maxSlugBytes keeps a default report directory's name (slug, time and a
// collision suffix) far below the 255 bytes a file name may have.
const maxSlugBytes = 64

// defaultReportsDir is where runs without --report put their reports.
const defaultReportsDir = "reports"

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

// slug turns a scenario name into a short file-name stem.
func slug(s string) string {
	s = strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > maxSlugBytes {
		s = strings.TrimRight(s[:maxSlugBytes], "-")
	}
	if s == "" {
		return "run"
	}
	return s
}

// reportDir is a report directory made ready for a run, and whether this
// command created it (so a run that never starts can take it back).
type reportDir struct {
	path    string
	created bool
}

// discard removes the directory again if this command created it and
// nothing was written into it (removing a non-empty directory fails, which
// is what keeps a report).
func (d reportDir) discard() {
	if d.created {
		_ = os.Remove(d.path)
	}
}

// newDefaultReportDir creates a fresh directory under base named after the
// scenario and the time. Creation is exclusive (mkdir fails on an existing
// name), and a taken name gets a suffix, so two runs started in the same
// second never share a directory.
func newDefaultReportDir(base, scenarioName string, now time.Time) (reportDir, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return reportDir{}, fmt.Errorf("create %s: %w", base, unwrapPath(err))
	}
	stem := slug(scenarioName) + "-" + now.Format("20060102-150405")
	for i := 1; i <= 1000; i++ {
		name := stem
		if i > 1 {
			name = fmt.Sprintf("%s-%d", stem, i)
		}
		path := filepath.Join(base, name)
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return reportDir{path: path, created: true}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return reportDir{}, fmt.Errorf("create %s: %w", path, unwrapPath(err))
		}
	}
	return reportDir{}, fmt.Errorf("create a report directory in %s: every name for %s is taken", base, stem)
}

// prepareReportDir makes --report ready: created when missing, refused
// when it is not a writable directory, and refused when it holds anything
// unless overwrite is set, which empties it first. Overwrite only empties
// a directory that holds a kasmrt report, so a mistyped --report ~ cannot
// delete someone's home.
func prepareReportDir(path string, overwrite bool, inputs ...string) (reportDir, error) {
	if err := checkReportDir(path, overwrite, inputs...); err != nil {
		return reportDir{}, err
	}
	d := reportDir{path: path}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return reportDir{}, fmt.Errorf("--report %s: cannot create it: %w", path, unwrapPath(err))
		}
		d.created = true
	} else if overwrite {
		entries, err := os.ReadDir(path)
		if err != nil {
			return reportDir{}, fmt.Errorf("--report %s: %w", path, unwrapPath(err))
		}
		for _, e := range entries {
			if err := os.RemoveAll(filepath.Join(path, e.Name())); err != nil {
				return reportDir{}, fmt.Errorf("--report %s: empty it: %w", path, unwrapPath(err))
			}
		}
	}
	if err := probeWritable(path); err != nil {
		d.discard()
		return reportDir{}, err
	}
	return d, nil
}

// checkReportDir refuses a --report that is not a writable directory (or
// cannot be created as one), or that holds anything but a report to
// overwrite, or that holds one of the run's inputs (the scenario, the
// operator file), which --overwrite would delete. It leaves nothing behind
// (its probes are removed), so validate can use it.
func checkReportDir(path string, overwrite bool, inputs ...string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(path))
		for {
			pst, err := os.Stat(parent)
			if err == nil {
				if !pst.IsDir() {
					return fmt.Errorf("--report %s: %s is not a directory", path, parent)
				}
				// Permission bits do not tell the whole story (root, /proc,
				// read-only mounts): try, and take the probe back.
				probe, err := os.MkdirTemp(parent, ".kasmrt-probe-")
				if err != nil {
					return fmt.Errorf("--report %s: cannot create it: %w", path, unwrapPath(err))
				}
				return os.Remove(probe)
			}
			if !errors.Is(err, fs.ErrNotExist) || parent == filepath.Dir(parent) {
				return fmt.Errorf("--report %s: %w", path, unwrapPath(err))
			}
			parent = filepath.Dir(parent)
		}
	case err != nil:
		return fmt.Errorf("--report %s: %w", path, unwrapPath(err))
	case !st.IsDir():
		return fmt.Errorf("--report %s: it exists and is not a directory", path)
	}
	if err := probeWritable(path); err != nil {
		return err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return fmt.Errorf("--report %s: %w", path, unwrapPath(err))
	}
	switch {
	case len(entries) == 0:
	case !overwrite:
		return fmt.Errorf("--report %s: the directory is not empty; give --overwrite to replace the report in it, or name a new directory", path)
	case !holdsReport(path):
		return fmt.Errorf("--report %s: the directory is not empty and holds no kasmrt report (no events.jsonl); --overwrite only replaces a report", path)
	default:
		for _, in := range inputs {
			if in != "" && within(in, path) {
				return fmt.Errorf("--report %s: the directory holds %s, which --overwrite would delete", path, in)
			}
		}
	}
	return nil
}

// within reports whether file lies inside dir (after resolving both to
// absolute, symlink-free paths where they exist).
func within(file, dir string) bool {
	abs := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		a, _ := filepath.Abs(p)
		return a
	}
	rel, err := filepath.Rel(abs(dir), abs(file))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// holdsReport tells a kasmrt report directory by its event stream.
func holdsReport(dir string) bool {
	st, err := os.Lstat(filepath.Join(dir, "events.jsonl"))
	return err == nil && st.Mode().IsRegular()
}

// probeWritable creates and removes a file in dir: permission bits do not
// tell the whole story (read-only mounts, root on NFS).
func probeWritable(dir string) error {
	f, err := os.CreateTemp(dir, ".kasmrt-probe-*")
	if err != nil {
		return fmt.Errorf("--report %s: the directory is not writable: %w", dir, unwrapPath(err))
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// unwrapPath drops the path an *os.PathError repeats, since the message
// already names it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

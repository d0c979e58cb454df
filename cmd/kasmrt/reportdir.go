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

	"github.com/kasmrt/kasmrt/engine"
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
// unless overwrite is set, which removes the earlier report first.
// Overwrite only replaces a directory kasmrt wrote — its manifest and
// nothing but its own files (reportEntries) — and removes only those, so a
// mistyped --report ~ or a directory that merely holds an events.jsonl
// loses nothing.
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
		if err := removeReport(path); err != nil {
			return reportDir{}, err
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
	if len(entries) == 0 {
		return nil
	}
	if !overwrite {
		return fmt.Errorf("--report %s: the directory is not empty; give --overwrite to replace the report in it, or name a new directory", path)
	}
	for _, in := range inputs {
		if in != "" && within(in, path) {
			return fmt.Errorf("--report %s: the directory holds %s, which --overwrite would delete", path, in)
		}
	}
	return checkReportLayout(path, entries)
}

// Decision: --overwrite replaces a report, never a directory that merely
// looks like one. The directory must hold kasmrt's manifest and nothing
// but what a run writes; anything else (thesis.tex, photos/, a symlink)
// refuses the run before a file is touched, naming what is unknown, and
// the operator moves it or names a new directory. A directory kasmrt did
// write but without a manifest (a report of a version before manifests)
// is refused the same way.

// reportFiles are the regular files a run writes at the top of its report
// directory.
var reportFiles = map[string]bool{
	"events.jsonl": true, "report.json": true, "report.html": true, "app.log": true, engine.ManifestFile: true,
}

// reportTempRE matches the temporary files a run writes and renames into
// place (report.json, report.html, manifest.json) or probes with, which a
// killed run may leave behind.
var reportTempRE = regexp.MustCompile(`^\.(report-[0-9]+\.json|page-[0-9]+\.html|manifest-[0-9]+\.json|kasmrt-probe-[0-9]+)$`)

// screenFileRE matches a saved screen, or one a killed run left half
// written.
var screenFileRE = regexp.MustCompile(`^[0-9]{4,}\.png(\.tmp)?$`)

// reportHome is the application's isolated home of the run (HOME under
// the report directory): kasmrt made it for the run, and what the
// application wrote there is part of the report.
const reportHome = "home"

// checkReportLayout refuses a report directory to overwrite that kasmrt did
// not write: one without kasmrt's manifest, or holding anything but a
// run's files.
func checkReportLayout(path string, entries []fs.DirEntry) error {
	if _, err := engine.ReadManifest(path); err != nil {
		return fmt.Errorf("--report %s: the directory is not empty and holds no kasmrt report (no readable %s); --overwrite only replaces a report kasmrt wrote", path, engine.ManifestFile)
	}
	var unknown []string
	for _, e := range entries {
		if !isReportEntry(path, e) {
			name := e.Name()
			if e.IsDir() {
				name += "/"
			}
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	more := ""
	if len(unknown) > 5 {
		more = fmt.Sprintf(" and %d more", len(unknown)-5)
		unknown = unknown[:5]
	}
	return fmt.Errorf("--report %s: the directory holds files kasmrt did not write (%s%s); --overwrite only replaces a kasmrt report and deletes nothing else: move them, or name a new directory", path, strings.Join(unknown, ", "), more)
}

// isReportEntry reports whether e, in the report directory dir, is one of
// the files or directories a run writes. Symbolic links never are: a run
// writes none, and removing one's target is not the report's to do.
func isReportEntry(dir string, e fs.DirEntry) bool {
	name, typ := e.Name(), e.Type()
	switch {
	case typ.IsRegular():
		return reportFiles[name] || reportTempRE.MatchString(name)
	case !e.IsDir():
		return false
	case name == reportHome:
		return true
	case name == "screens":
		screens, err := os.ReadDir(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		for _, s := range screens {
			if !s.Type().IsRegular() || !screenFileRE.MatchString(s.Name()) {
				return false
			}
		}
		return true
	}
	return false
}

// removeReport removes the earlier report from dir: only the entries a
// run writes, looked at again here, so a file that appeared since the
// check is left where it is.
func removeReport(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--report %s: %w", dir, unwrapPath(err))
	}
	for _, e := range entries {
		if !isReportEntry(dir, e) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		switch e.Name() {
		case "screens":
			err = removeScreens(p)
		case reportHome:
			err = os.RemoveAll(p)
		default:
			err = os.Remove(p)
		}
		if err != nil {
			return fmt.Errorf("--report %s: remove the earlier report: %w", dir, unwrapPath(err))
		}
	}
	return nil
}

// removeScreens removes the saved screens and then their directory, which
// fails (keeping it) if anything else is in it.
func removeScreens(dir string) error {
	screens, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, s := range screens {
		if s.Type().IsRegular() && screenFileRE.MatchString(s.Name()) {
			if err := os.Remove(filepath.Join(dir, s.Name())); err != nil {
				return err
			}
		}
	}
	return os.Remove(dir)
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

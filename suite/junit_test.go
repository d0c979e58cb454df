package suite

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// hostileSummary has every verdict, a flaky scenario, and text a JUnit
// writer must escape or drop (markup, quotes, a C0 control, a bidi
// override).
func hostileSummary() *Summary {
	s := &Summary{Schema: Schema, Name: `suite <&> "q"`, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	s.Runs = []RunResult{
		{Key: "a.yaml#0", Scenario: "alpha", File: "a.yaml", Sample: 0, Verdict: "pass", DurationMS: 1500, Report: "runs/a-0"},
		{Key: "a.yaml#1", Scenario: "alpha", File: "a.yaml", Sample: 1, Verdict: "app-failed", Outcome: "app-exited",
			Reasons: []string{"the app exited with status 3 <b>&amp;</b>"}, DurationMS: 900, Report: "runs/a-1"},
		{Key: "b.yaml#0", Scenario: "beta \x1b[31m\u202e", File: "b.yaml", Verdict: "pass-with-concerns",
			Concerns: []string{"judge unavailable ]]> \x00"}, DurationMS: 10, Report: "runs/b-0"},
		{Key: "c.yaml#0", Scenario: "gamma", File: "c.yaml", Verdict: "test-error", Outcome: "deadline",
			Reasons: []string{"deadline"}, Error: "write report: disk full", DurationMS: 30000, Report: "runs/c-0"},
		{Key: "d.yaml#0", Scenario: "delta", File: "d.yaml", Verdict: VerdictNotRun, Reasons: []string{"the suite was stopped"}},
	}
	summarize(s, false)
	return s
}

// The JUnit file validates against the schema CI servers read, and
// counts app-failed as a failure, test-error as an error and a run that
// never ran as skipped.
func TestJUnitValidates(t *testing.T) {
	t.Parallel()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skipf("xmllint (libxml2-utils) is not installed: %v", err)
	}
	s := hostileSummary()
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(path, s); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", path).CombinedOutput()
	if err != nil {
		b, _ := os.ReadFile(path)
		t.Fatalf("xmllint: %v\n%s\n%s", err, out, b)
	}
	data, _ := os.ReadFile(path)
	var doc junitSuites
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Tests != 5 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 1 || len(doc.Suites) != 4 {
		t.Errorf("testsuites tests=%d failures=%d errors=%d skipped=%d suites=%d, want 5 1 1 1 4",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, len(doc.Suites))
	}
	alpha := doc.Suites[0]
	if alpha.Name != "alpha" || alpha.Tests != 2 || alpha.Failures != 1 || alpha.Time != "2.400" {
		t.Errorf("alpha suite = %+v", alpha)
	}
	failed := alpha.Cases[1]
	if failed.Failure == nil || failed.Failure.Type != "app-failed" || !strings.Contains(failed.Failure.Message, "status 3 <b>&amp;</b>") {
		t.Errorf("app-failed case = %+v", failed.Failure)
	}
	beta := doc.Suites[1].Cases[0]
	if beta.Failure != nil || beta.Error != nil || !strings.Contains(beta.SystemOut, "concern: judge unavailable") || !strings.Contains(beta.SystemOut, "report: runs/b-0") {
		t.Errorf("concerns case = %+v", beta)
	}
	if c := doc.Suites[2].Cases[0]; c.Error == nil || !strings.Contains(c.Error.Text, "disk full") {
		t.Errorf("test-error case = %+v", c)
	}
	if c := doc.Suites[3].Cases[0]; c.Skipped == nil {
		t.Errorf("not-run case = %+v", c)
	}
}

// The schema in testdata must be able to say no, or the test above proves
// nothing.
func TestJUnitSchemaRefuses(t *testing.T) {
	t.Parallel()
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skipf("xmllint (libxml2-utils) is not installed: %v", err)
	}
	bad := map[string]string{
		"no case name":            `<testsuites><testsuite name="s" tests="1"><testcase/></testsuite></testsuites>`,
		"output before a failure": `<testsuites><testsuite name="s" tests="1"><testcase name="c"><system-out>x</system-out><failure/></testcase></testsuite></testsuites>`,
		"negative time":           `<testsuites><testsuite name="s" tests="1" time="-1"/></testsuites>`,
		"two skipped":             `<testsuites><testsuite name="s" tests="1"><testcase name="c"><skipped/><skipped/></testcase></testsuite></testsuites>`,
	}
	for name, doc := range bad {
		path := filepath.Join(t.TempDir(), "bad.xml")
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := exec.Command(xmllint, "--noout", "--schema", "testdata/junit.xsd", path).Run(); err == nil {
			t.Errorf("%s: the schema accepted %s", name, doc)
		}
	}
}

// junitparserProbe is a file Debian's python3-junitparser installs.
const junitparserProbe = "/usr/lib/python3/dist-packages/junitparser/__init__.py"

// The JUnit file as a widely used consumer reads it: junitparser (what
// the JUnit annotation actions build on) sees a case per sample named
// after its scenario, the suite as its classname, the scenario's file,
// and the verdict, outcome and report directory as properties.
func TestJUnitParsedByJunitparser(t *testing.T) {
	t.Parallel()
	// Debian's package is for the system's python3, not for one a version
	// manager put first on PATH.
	if _, err := os.Stat(junitparserProbe); err != nil {
		t.Skipf("python3-junitparser is not installed (bash scripts/setup.sh installs it): %v", err)
	}
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := WriteJUnit(path, hostileSummary()); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/usr/bin/python3", "testdata/read_junit.py", path).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("junitparser: %v\n%s", err, stderr)
	}
	type parsedCase struct {
		Suite, Name, Classname, File string
		Results                      []string
		Properties                   map[string]string
	}
	var got struct {
		Tests, Failures, Errors, Skipped int
		Cases                            []parsedCase
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("junitparser's reading: %v\n%s", err, out)
	}
	if got.Tests != 5 || got.Failures != 1 || got.Errors != 1 || got.Skipped != 1 {
		t.Errorf("junitparser counts tests=%d failures=%d errors=%d skipped=%d, want 5 1 1 1", got.Tests, got.Failures, got.Errors, got.Skipped)
	}
	suiteName := `suite <&> "q"`
	want := []parsedCase{
		{Suite: "alpha", Name: "alpha #0", Classname: suiteName, File: "a.yaml", Results: []string{},
			Properties: map[string]string{"verdict": "pass", "report": "runs/a-0"}},
		{Suite: "alpha", Name: "alpha #1", Classname: suiteName, File: "a.yaml", Results: []string{"Failure"},
			Properties: map[string]string{"verdict": "app-failed", "outcome": "app-exited", "report": "runs/a-1"}},
		{Suite: "beta [31m\u202e", Name: "beta [31m\u202e", Classname: suiteName, File: "b.yaml", Results: []string{},
			Properties: map[string]string{"verdict": "pass-with-concerns", "report": "runs/b-0"}},
		{Suite: "gamma", Name: "gamma", Classname: suiteName, File: "c.yaml", Results: []string{"Error"},
			Properties: map[string]string{"verdict": "test-error", "outcome": "deadline", "report": "runs/c-0"}},
		{Suite: "delta", Name: "delta", Classname: suiteName, File: "d.yaml", Results: []string{"Skipped"},
			Properties: map[string]string{"verdict": string(VerdictNotRun)}},
	}
	if !reflect.DeepEqual(got.Cases, want) {
		t.Errorf("junitparser read\n%+v\nwant\n%+v", got.Cases, want)
	}
}

package suite

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kasmrt/kasmrt/engine/events"
)

// JUnitFile is the JUnit report's name in a suite's output directory.
const JUnitFile = "junit.xml"

// The JUnit XML format as Jenkins, GitLab and GitHub's test reporters read
// it: a testsuite per scenario, a testcase per sample. app-failed is a
// failure, test-error an error, a run that never ran or that the suite's
// stopping interrupted is skipped. A case is named after its scenario (with
// the sample when the scenario runs more than once), its classname is the
// suite and its file the scenario's path, so an annotation action can point
// at the file; the verdict, the outcome and the report directory are its
// properties, and the concerns are in its system-out.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string           `xml:"name,attr"`
	Classname  string           `xml:"classname,attr"`
	File       string           `xml:"file,attr,omitempty"`
	Time       string           `xml:"time,attr"`
	Properties *junitProperties `xml:"properties"`
	Skipped    *junitMessage    `xml:"skipped"`
	Error      *junitMessage    `xml:"error"`
	Failure    *junitMessage    `xml:"failure"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitMessage struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

// JUnit builds the JUnit XML of a suite's results.
func JUnit(s *Summary) ([]byte, error) {
	top := junitSuites{Name: s.Name}
	index := map[string]int{}
	var totalMS int64
	var suiteMS []int64
	// A scenario that runs more than once has a case per sample; the
	// sample index tells them apart.
	samples := map[string]int{}
	for _, r := range s.Runs {
		samples[r.File]++
	}
	for _, r := range s.Runs {
		i, ok := index[r.File]
		if !ok {
			i = len(top.Suites)
			index[r.File] = i
			top.Suites = append(top.Suites, junitSuite{Name: clean(r.Scenario), Timestamp: s.Started.Format("2006-01-02T15:04:05")})
			suiteMS = append(suiteMS, 0)
		}
		ts := &top.Suites[i]
		name := r.Scenario
		if samples[r.File] > 1 {
			name = fmt.Sprintf("%s #%d", r.Scenario, r.Sample)
		}
		c := junitCase{Name: clean(name), Classname: clean(s.Name), File: clean(r.File), Time: seconds(r.DurationMS)}
		c.Properties = &junitProperties{}
		for _, p := range [][2]string{{"verdict", string(r.Verdict)}, {"outcome", string(r.Outcome)}, {"report", r.Report}} {
			if p[1] != "" {
				c.Properties.Property = append(c.Properties.Property, junitProperty{Name: p[0], Value: clean(p[1])})
			}
		}
		message := strings.Join(r.Reasons, "; ")
		if message == "" {
			message = string(r.Outcome)
		}
		detail := &junitMessage{Message: clean(message), Type: string(r.Verdict), Text: clean(strings.Join(append(append([]string{}, r.Reasons...), r.Error), "\n"))}
		switch r.Verdict {
		case events.VerdictPass, events.VerdictPassConcerns:
		case events.VerdictAppFailed:
			c.Failure = detail
			ts.Failures++
		case VerdictNotRun, VerdictInterrupted:
			// Neither judged the application: a CI reporter shows them
			// as skipped, with why, rather than as errors.
			c.Skipped = &junitMessage{Message: clean(string(r.Verdict) + ": " + message)}
			ts.Skipped++
		default:
			c.Error = detail
			ts.Errors++
		}
		var out []string
		out = append(out, "verdict: "+string(r.Verdict))
		if r.Outcome != "" {
			out = append(out, "outcome: "+string(r.Outcome))
		}
		for _, concern := range r.Concerns {
			out = append(out, "concern: "+concern)
		}
		if r.Report != "" {
			out = append(out, "report: "+r.Report)
		}
		c.SystemOut = clean(strings.Join(out, "\n"))
		ts.Cases = append(ts.Cases, c)
		ts.Tests++
		totalMS += r.DurationMS
		suiteMS[i] += r.DurationMS
	}
	for i := range top.Suites {
		top.Suites[i].Time = seconds(suiteMS[i])
		top.Tests += top.Suites[i].Tests
		top.Failures += top.Suites[i].Failures
		top.Errors += top.Suites[i].Errors
		top.Skipped += top.Suites[i].Skipped
	}
	top.Time = seconds(totalMS)
	b, err := xml.MarshalIndent(top, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode JUnit: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// WriteJUnit writes the suite's JUnit XML to path.
func WriteJUnit(path string, s *Summary) error {
	b, err := JUnit(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write JUnit %s: %w", path, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write JUnit %s: %w", path, err)
	}
	return nil
}

// clean drops the characters XML 1.0 cannot carry (most C0 controls),
// which encoding/xml would otherwise write as an invalid document.
func clean(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r != 0xFFFE && r != 0xFFFF) {
			return r
		}
		return -1
	}, s)
}

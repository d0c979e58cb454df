package suite

import (
	"testing"

	"github.com/kasmrt/kasmrt/engine/model/modeltest"
)

// A goal suite with the default profile and no model.name takes the model's
// name from the endpoint as it starts. Resumed unchanged, it keeps every
// run: the identity it compares is the one the runs recorded, with the
// name in it, so the resume neither refuses nor runs anything again.
func TestGoalSuiteResumesUnchanged(t *testing.T) {
	t.Parallel()
	suiteNeed(t)
	srv := modeltest.New(t, goalRun(), goalRun())
	srv.ServeModels("org/one-vlm")
	dir := suiteDir(t, map[string]string{
		"operator.yaml": suiteOperator + "model:\n  endpoint: " + srv.URL() + "\n  retry: 0\n",
		"goal.yaml": `name: goal
goal: Read the message on the screen.
app:
  command: [xmessage, -geometry, +40+40, hello]
  window: {class: Xmessage}
`,
	})
	sum, _ := runSuite(t, dir, []string{"goal.yaml"}, Options{Workers: 1})
	if r := sum.Runs[0]; r.Verdict != "pass" && r.Verdict != "pass-with-concerns" {
		t.Fatalf("%s: %s %v %s", r.Key, r.Verdict, r.Reasons, r.Error)
	}
	turns := len(srv.Requests())
	resumed, _ := runSuite(t, dir, []string{"goal.yaml"}, Options{Workers: 1, Resume: true})
	if r := resumed.Runs[0]; !r.Resumed || r.Verdict != sum.Runs[0].Verdict || r.IdentitySHA256 != sum.Runs[0].IdentitySHA256 {
		t.Errorf("resumed run %+v, want the first run kept", r)
	}
	if n := len(srv.Requests()); n != turns {
		t.Errorf("the resume sent %d model turns", n-turns)
	}
}

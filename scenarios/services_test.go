package scenarios

import (
	"strings"
	"testing"
)

// Capacity groups are checked like every other key: each problem names
// its line, column and key, and a good file gives the limits and the
// model's group.
func TestServices(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml   string
		problems     []string
		limits       map[string]int
		modelService string
	}{
		{name: "defaults", yaml: "runner: {max_iterations: 3}\n", limits: map[string]int{}, modelService: "model"},
		{name: "bounded groups", yaml: "model: {service: vision}\nservices:\n  vision: {max_concurrent: 2}\n  ocr: {max_concurrent: 10}\n",
			limits: map[string]int{"vision": 2, "ocr": 10}, modelService: "vision"},
		{name: "no bound", yaml: "services:\n  model: {}\n",
			problems: []string{"x.yaml:2:3: services.model: services.model needs max_concurrent"}},
		{name: "zero bound", yaml: "services:\n  model: {max_concurrent: 0}\n",
			problems: []string{"x.yaml:2:11: services.model.max_concurrent: want 1 to 1000, got 0"}},
		{name: "out of range", yaml: "services:\n  model: {max_concurrent: 1001}\n  ocr: {max_concurrent: -1}\n",
			problems: []string{"x.yaml:2:11: services.model.max_concurrent: want 1 to 1000, got 1001", "x.yaml:3:9: services.ocr.max_concurrent: want 1 to 1000, got -1"}},
		{name: "bad group name", yaml: "services:\n  Vision Model: {max_concurrent: 1}\n",
			problems: []string{"x.yaml:2:3: services.Vision Model: a service group is lower-case"}},
		{name: "unknown key", yaml: "services:\n  model: {max_concurrent: 1, burst: 4}\n",
			problems: []string{"x.yaml:2:30: services.model.burst: unknown key (known keys: max_concurrent)"}},
		{name: "not a number", yaml: "services:\n  model: {max_concurrent: many}\n",
			problems: []string{"x.yaml:2:27: services.model.max_concurrent: want a whole number"}},
		{name: "bad model group", yaml: "model: {service: \"a b\"}\n",
			problems: []string{"x.yaml:1:9: model.service: a service group is lower-case"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o, ps := ParseOperator("x.yaml", []byte(tc.yaml), env(nil))
			if len(tc.problems) == 0 {
				if len(ps) > 0 {
					t.Fatalf("problems: %v", ps)
				}
				if got := o.ServiceLimits(); fmtV(got) != fmtV(tc.limits) {
					t.Errorf("limits = %v, want %v", got, tc.limits)
				}
				if got := o.ModelService(); got != tc.modelService {
					t.Errorf("model service = %q, want %q", got, tc.modelService)
				}
				return
			}
			if len(ps) != len(tc.problems) {
				t.Fatalf("problems = %v, want %d: %q", ps, len(tc.problems), tc.problems)
			}
			for i, want := range tc.problems {
				if !strings.HasPrefix(ps[i].Error(), want) {
					t.Errorf("problem %d = %q, want it to start %q", i, ps[i].Error(), want)
				}
			}
		})
	}
}

// A declared tool's group is a group name too.
func TestDeclaredToolService(t *testing.T) {
	t.Parallel()
	const sc = "name: s\napp: {command: [true]}\nsteps: [{check: {}}]\ntools:\n  check:\n    run: shell\n    command: 'true'\n    service: \"Not A Group\"\n"
	_, ps := ParseScenario("s.yaml", []byte(sc), env(nil))
	var found bool
	for _, p := range ps {
		if strings.HasPrefix(p.Error(), "s.yaml:8:5: tools.check.service: a service group") {
			found = true
		}
	}
	if !found {
		t.Fatalf("problems = %v, want one at tools.check.service", ps)
	}
}

package suite

import (
	"slices"
	"strings"
	"testing"
)

// expandK8s applies Kubernetes' expansion of a container's args, as its
// kubelet does (third_party/forked/golang/expansion): $(NAME) is replaced
// by the variable's value when it is defined and left as written when it
// is not, $$ becomes $, and any other $ stays.
func expandK8s(s string, env map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch next := s[i+1]; next {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := env[name]; ok {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// TestJobArgsReachKasmrtAsWritten emits suite arguments holding $(VAR),
// $$ and a lone $, expands the container's args as Kubernetes does with
// the variables a pod has, and wants every suite argument back unchanged,
// while the Job's own $(JOB_COMPLETION_INDEX) in --out still expands.
func TestJobArgsReachKasmrtAsWritten(t *testing.T) {
	t.Parallel()
	suiteArgs := []string{
		"scenarios/$(HOME)/a.yaml",
		"scenarios/$(" + EnvJobIndex + ").yaml",
		"--filter", "cost$$(MODEL_KEY)",
		"price$5", "end$", "$(unclosed",
	}
	job, err := Job(JobOptions{Name: "s", Image: "img", Shards: 2, SuiteArgs: suiteArgs})
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": "/home/kasmrt", EnvJobIndex: "1", "MODEL_KEY": "sk-secret"}
	var got []string
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		got = append(got, expandK8s(a, env))
	}
	if len(got) < 1+len(suiteArgs) {
		t.Fatalf("args %q", got)
	}
	for i, want := range suiteArgs {
		if got[1+i] != want {
			t.Errorf("argument %d reaches kasmrt as %q, want %q as written", i, got[1+i], want)
		}
	}
	if i := slices.Index(got, "--out"); i < 0 || i+1 >= len(got) || got[i+1] != ReportsMount+"/s/shard-1" {
		t.Errorf("args %q: want --out with the index expanded", got)
	}
}

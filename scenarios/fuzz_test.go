package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func seedExamples(f *testing.F, operator bool) {
	files, _ := filepath.Glob("examples/*.yaml")
	for _, file := range files {
		if strings.HasPrefix(filepath.Base(file), "operator") != operator {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("a: &a [x,x]\nb: &b [*a,*a,*a]\nc: &c [*b,*b,*b]\nd: [*c,*c,*c]\n"))
	f.Add([]byte("\xff\xfe"))
	f.Add([]byte(strings.Repeat("[", 100)))
}

// checkRejection asserts the loader's contract: either a value or
// positioned problems, never both, never neither.
func checkRejection(t *testing.T, ok bool, ps Problems) {
	if ok == (len(ps) > 0) {
		t.Fatalf("ok=%v with %d problems", ok, len(ps))
	}
	for _, p := range ps {
		if p.File == "" || p.Msg == "" || (p.Line == 0 && p.File != "environment") {
			t.Fatalf("problem without a position or message: %#v", p)
		}
	}
}

func FuzzLoadScenario(f *testing.F) {
	seedExamples(f, false)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ps := ParseScenario("f.yaml", data, exampleEnv)
		checkRejection(t, s != nil, ps)
	})
}

func FuzzLoadOperator(f *testing.F) {
	seedExamples(f, true)
	f.Fuzz(func(t *testing.T, data []byte) {
		o, ps := ParseOperator("f.yaml", data, exampleEnv)
		checkRejection(t, o != nil, ps)
	})
}

func TestHostileInputs(t *testing.T) {
	t.Parallel()
	bomb := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for i := 0; i < 9; i++ {
		name := string(rune('b' + i))
		bomb += name + ": &" + name + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = name
	}
	cases := map[string]struct {
		data string
		want string
	}{
		"alias bomb": {bomb, "alias bomb"},
		"deep":       {"name: " + strings.Repeat("[", 60) + strings.Repeat("]", 60) + "\n", "nesting deeper"},
		"non-utf8":   {"name: \xff\xfe\n", "not valid UTF-8"},
		"huge":       {"name: x\n" + strings.Repeat("#", maxFileBytes), "the limit is"},
		"empty":      {"", "file is empty"},
		"merge key":  {"base: &b {command: [xterm]}\napp:\n  <<: *b\n", "merge keys"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, ps := ParseScenario("h.yaml", []byte(c.data), exampleEnv)
			checkRejection(t, s != nil, ps)
			if s != nil || !strings.Contains(ps.Error(), c.want) {
				t.Fatalf("want a problem containing %q, got %v", c.want, ps)
			}
		})
	}
}

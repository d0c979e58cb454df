package events

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestArchitectureEventTable keeps the event table of docs/architecture.md
// ("The event stream") and the Kind constants of this package together: a
// kind added without its row, or a row left for a kind that is gone,
// fails. The constants are read from the package's source, so a new one
// needs no list to be kept by hand.
func TestArchitectureEventTable(t *testing.T) {
	t.Parallel()
	consts := kindConstants(t)
	rows := documentedKinds(t, filepath.Join("..", "..", "docs", "architecture.md"))
	for _, k := range consts {
		if !slices.Contains(rows, k) {
			t.Errorf("kind %q has no row in docs/architecture.md's event table", k)
		}
	}
	for _, k := range rows {
		if !slices.Contains(consts, k) {
			t.Errorf("docs/architecture.md's event table lists %q, which is no Kind constant of engine/events", k)
		}
	}
}

// kindConstants returns the values of the package's constants of type
// Kind, read from its non-test files.
func kindConstants(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", name, err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Kind" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: a Kind constant that is not a string literal: %s", fset.Position(v.Pos()), vs.Names[0])
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					kinds = append(kinds, s)
				}
			}
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found only %d Kind constants (%v): the source reading is broken", len(kinds), kinds)
	}
	return kinds
}

// documentedKinds returns the kinds named in the first column of the
// table under path's "## The event stream" heading.
func documentedKinds(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The event stream\n")
	if !ok {
		t.Fatalf("%s has no \"## The event stream\" section", path)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([^`]+)`")
	var kinds []string
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			kinds = append(kinds, m[1])
		}
	}
	if len(kinds) == 0 {
		t.Fatalf("%s: no table rows under \"## The event stream\"", path)
	}
	return kinds
}

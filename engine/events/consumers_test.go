package events

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The checks here read the consumers of the event stream, across the
// tree, to keep them in step with the Kind constants: a new kind, or a
// payload read the wrong way, fails a test that says what to do.

// folds are the four places that turn each event into what they show or
// record, and the function in each whose switch on the event's kind must
// name every Kind constant. A kind a fold has nothing to do with still
// gets its case (empty, with a comment saying why), so adding a kind
// makes its author decide, in each of them, what it means there.
var folds = []struct {
	what, file, fn string
}{
	{"the report builder", "engine/report/report.go", "Event"},
	{"the report page's timeline", "engine/report/page/model.go", "timeline"},
	{"the console's state", "tui/state.go", "apply"},
	{"the transcript (--headless, replay --print)", "tui/transcript.go", "transcriptLine"},
}

// TestEveryFoldHandlesEveryKind fails when a Kind constant has no case in
// one of the folds' switches, or a case names a kind that is gone.
func TestEveryFoldHandlesEveryKind(t *testing.T) {
	t.Parallel()
	kinds := kindNames(t)
	root := filepath.Join("..", "..")
	for _, f := range folds {
		t.Run(f.fn, func(t *testing.T) {
			t.Parallel()
			cased := kindCases(t, filepath.Join(root, filepath.FromSlash(f.file)), f.fn)
			for _, name := range slices.Sorted(maps.Keys(kinds)) {
				if !cased[name] {
					t.Errorf("%s (%s, func %s) has no case for events.%s (%q): add one there saying what the kind means "+
						"in %s — an empty case with a comment when it has nothing to show — and see docs/architecture.md, \"Where new things go\"",
						f.what, f.file, f.fn, name, kinds[name], f.what)
				}
			}
			for name := range cased {
				if _, ok := kinds[name]; !ok {
					t.Errorf("%s (%s, func %s) has a case for events.%s, which is no Kind constant", f.what, f.file, f.fn, name)
				}
			}
		})
	}
}

// kindCases returns the Kind constants named in the case clauses of the
// first switch on an event's kind (x.Kind) in the function fn of file.
func kindCases(t *testing.T, file, fn string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var body *ast.BlockStmt
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == fn {
			body = fd.Body
		}
	}
	if body == nil {
		t.Fatalf("%s has no func %s: the fold moved; update folds in engine/events/consumers_test.go", file, fn)
	}
	var sw *ast.SwitchStmt
	ast.Inspect(body, func(n ast.Node) bool {
		if s, ok := n.(*ast.SwitchStmt); ok && sw == nil {
			if sel, ok := s.Tag.(*ast.SelectorExpr); ok && sel.Sel.Name == "Kind" {
				sw = s
			}
		}
		return sw == nil
	})
	if sw == nil {
		t.Fatalf("func %s in %s has no switch on an event's Kind", fn, file)
	}
	cased := map[string]bool{}
	for _, stmt := range sw.Body.List {
		for _, e := range stmt.(*ast.CaseClause).List {
			if sel, ok := e.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Kind") {
				cased[sel.Sel.Name] = true
			}
		}
	}
	return cased
}

// TestEveryKindHasOnePayloadType: a kind carries at most one payload type
// and a payload type belongs to one kind, and every payload type has its
// sample in payloadSamples (so the round-trip and redaction tests cover
// it).
func TestEveryKindHasOnePayloadType(t *testing.T) {
	t.Parallel()
	samples := map[Kind]reflect.Type{}
	owner := map[reflect.Type]Kind{}
	for _, p := range payloadSamples() {
		typ := reflect.TypeOf(p)
		if k, ok := owner[typ]; ok {
			t.Errorf("payload type %s belongs to both %q and %q", typ.Name(), k, p.Kind())
		}
		if other, ok := samples[p.Kind()]; ok {
			t.Errorf("kind %q has two payload types: %s and %s", p.Kind(), other.Name(), typ.Name())
		}
		samples[p.Kind()], owner[typ] = typ, p.Kind()
	}
	for _, v := range kindNames(t) {
		k := Kind(v)
		p, err := decodePayload(k, json.RawMessage(`{}`))
		if err != nil {
			t.Fatalf("decode %q: %v", k, err)
		}
		if _, raw := p.(RawData); raw {
			if typ, ok := samples[k]; ok {
				t.Errorf("kind %q has the sample payload %s but decodePayload has no case for it: add one", k, typ.Name())
			}
			continue
		}
		if got := reflect.TypeOf(p); samples[k] != got {
			t.Errorf("kind %q decodes into %s but has no sample in payloadSamples: add a filled-in %s there", k, got.Name(), got.Name())
		}
		if p.Kind() != k {
			t.Errorf("decodePayload(%q) returned a %T, whose Kind is %q", k, p, p.Kind())
		}
	}
}

// TestDataOf: the accessor hands out a payload only for its own kind.
func TestDataOf(t *testing.T) {
	t.Parallel()
	e := Event{Kind: KindFinal, Data: FinalCapture{Ending: "deadline"}}
	if d, ok := DataOf[FinalCapture](e); !ok || d.Ending != "deadline" {
		t.Errorf("DataOf[FinalCapture] = %+v, %v", d, ok)
	}
	if _, ok := DataOf[AppWindow](e); ok {
		t.Error("DataOf[AppWindow] of a final event: ok")
	}
	if _, ok := DataOf[FinalCapture](Event{Kind: KindFinal}); ok {
		t.Error("DataOf of an event without a payload: ok")
	}
	if _, ok := DataOf[FinalCapture](Event{Kind: KindScreen, Data: FinalCapture{}}); ok {
		t.Error("DataOf of a payload under another kind: ok")
	}
}

// TestPayloadReadsAreChecked keeps every payload read, outside this
// package and the tests, going through DataOf with its ok looked at: a
// type assertion on an event's Data, or DataOf's ok given to the blank
// identifier, reads a missing or mismatched payload as zeros without a
// word.
func TestPayloadReadsAreChecked(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			if filepath.ToSlash(path) == "../../engine/events" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		for _, problem := range uncheckedReads(t, path) {
			t.Error(problem)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// uncheckedReads lists, in file, the payload reads that can yield zeros
// unseen.
func uncheckedReads(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeAssertExpr:
			sel, ok := n.X.(*ast.SelectorExpr)
			// A type switch (Type nil) cannot hand a case the wrong type.
			if ok && sel.Sel.Name == "Data" && n.Type != nil && isEventsType(n.Type) {
				problems = append(problems, fmt.Sprintf("%s: a type assertion on an event's Data: read it with events.DataOf and handle !ok", fset.Position(n.Pos())))
			}
		case *ast.AssignStmt:
			if len(n.Lhs) == 2 && len(n.Rhs) == 1 && isDataOf(n.Rhs[0]) {
				if id, ok := n.Lhs[1].(*ast.Ident); ok && id.Name == "_" {
					problems = append(problems, fmt.Sprintf("%s: events.DataOf's ok is dropped: handle the event without its payload", fset.Position(n.Pos())))
				}
			}
		}
		return true
	})
	return problems
}

func isEventsType(e ast.Expr) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "events"
}

func isDataOf(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	idx, ok := call.Fun.(*ast.IndexExpr)
	if !ok {
		return false
	}
	sel, ok := idx.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "DataOf"
}

// kindNames returns the package's Kind constants, name to value, read
// from its non-test files.
func kindNames(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
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
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: Kind constant %s is not a string literal", name, vs.Names[i])
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					kinds[vs.Names[i].Name] = s
				}
			}
		}
	}
	if len(kinds) < 10 {
		t.Fatalf("found only %d Kind constants: the source reading is broken", len(kinds))
	}
	return kinds
}

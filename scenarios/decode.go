package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Limits that keep a hostile or accidental input from exhausting the
// process. They are generous for hand-written files.
const (
	maxFileBytes = 1 << 20 // 1 MiB
	maxDepth     = 32
	maxNodes     = 200_000 // counted after alias expansion
	// maxMagnitude bounds every number a file may hold. Seconds, pixels
	// and counts beyond it are typos, and seconds beyond it would overflow
	// a duration into a negative timeout.
	maxMagnitude = 1e9
)

// Pos is a place in an input file. Config structs embed it (as a field named
// Pos with the tag `yaml:"-"`) so later validation can point at the key.
type Pos struct {
	File   string
	Line   int
	Column int
	Path   string // dotted key path, e.g. "app.command[0]"
}

func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += fmt.Sprintf(":%d:%d", p.Line, p.Column)
	}
	return s
}

// Problem is one thing wrong with an input file.
type Problem struct {
	Pos
	Msg string
}

func (p Problem) Error() string {
	if p.Path != "" {
		return fmt.Sprintf("%s: %s: %s", p.Pos, p.Path, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Pos, p.Msg)
}

// Problems is every problem found in one or more input files; loading
// reports all of them together rather than stopping at the first.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Err returns ps as an error, or nil when there are none.
// Sort orders the problems by file, line and column, the order every
// command lists them in.
func (ps Problems) Sort() {
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].File != ps[j].File {
			return ps[i].File < ps[j].File
		}
		if ps[i].Line != ps[j].Line {
			return ps[i].Line < ps[j].Line
		}
		return ps[i].Column < ps[j].Column
	})
}

func (ps Problems) Err() error {
	if len(ps) == 0 {
		return nil
	}
	return ps
}

// AsProblems extracts the problems carried by err, if any.
func AsProblems(err error) (Problems, bool) {
	var ps Problems
	if errors.As(err, &ps) {
		return ps, true
	}
	return nil, false
}

// unmarshaler is implemented by config types whose YAML form is not a plain
// struct, list or map (steps, provided values, tool arguments).
type unmarshaler interface {
	decodeYAML(d *decoder, n *yaml.Node, path string)
}

// decoder walks a parsed YAML tree into Go values, substituting ${NAME}
// placeholders and collecting positioned problems as it goes.
type decoder struct {
	file     string
	getenv   func(string) (string, bool)
	problems Problems
	nodes    int
	aborted  bool
	// keys records where every mapping key was written, by key path.
	keys map[string]Pos
	// substituted records the ${NAME} placeholders replaced in each value,
	// by key path, so validation can refuse those that became shell code.
	substituted map[string][]string
}

var posType = reflect.TypeOf(Pos{})

func (d *decoder) pos(n *yaml.Node, path string) Pos {
	return Pos{File: d.file, Line: n.Line, Column: n.Column, Path: path}
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.problems = append(d.problems, Problem{Pos: d.pos(n, path), Msg: fmt.Sprintf(format, args...)})
}

// parseFile reads and parses one YAML document, refusing inputs that are too
// large, not UTF-8, or empty.
func parseFile(file string, data []byte) (*yaml.Node, Problems) {
	top := Pos{File: file, Line: 1, Column: 1}
	switch {
	case len(data) > maxFileBytes:
		return nil, Problems{{Pos: top, Msg: fmt.Sprintf("file is %d bytes; the limit is %d", len(data), maxFileBytes)}}
	case !utf8.Valid(data):
		line := 1 + strings.Count(string(data[:firstInvalidUTF8(data)]), "\n")
		return nil, Problems{{Pos: Pos{File: file, Line: line, Column: 1}, Msg: "file is not valid UTF-8"}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, Problems{yamlSyntaxProblem(file, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, Problems{{Pos: top, Msg: "file is empty"}}
	}
	// A second document would be silently ignored: the reader would take
	// its keys for settings the runtime never sees.
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, Problems{yamlSyntaxProblem(file, err)}
	default:
		return nil, Problems{{Pos: Pos{File: file, Line: next.Line, Column: next.Column}, Msg: "a second YAML document (after ---); a file holds one document"}}
	}
	root := doc.Content[0]
	size, depth := measure(root, map[*yaml.Node]int{}, 0)
	switch {
	case size > maxNodes:
		return nil, Problems{{Pos: top, Msg: fmt.Sprintf("document expands to more than %d nodes through its aliases (alias bomb?)", maxNodes)}}
	case depth > maxDepth:
		return nil, Problems{{Pos: top, Msg: fmt.Sprintf("nesting deeper than %d levels", maxDepth)}}
	}
	if root.Kind != yaml.MappingNode {
		return nil, Problems{{Pos: Pos{File: file, Line: root.Line, Column: root.Column}, Msg: "the top level must be a mapping of keys"}}
	}
	if ps := tagProblems(file, root); ps != nil {
		return nil, ps
	}
	return root, nil
}

// plainTags are the tags a value may carry, written or resolved; any other
// (!!binary, a local !tag) would be dropped by the decoder, which reads
// the text as written.
var plainTags = map[string]bool{
	"": true, "!": true, "!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!map": true, "!!seq": true, "!!timestamp": true, "!!merge": true,
}

// tagProblems refuses values whose tag says they are not plain text:
// !!binary's base64 would be taken for the text itself. The tag is named
// only when it is !!binary, since a local tag is the file's content.
func tagProblems(file string, n *yaml.Node) Problems {
	var ps Problems
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind != yaml.AliasNode && !plainTags[n.ShortTag()] {
			msg := "a YAML tag other than the standard ones (!!str, !!int, …) is not supported; write the value as plain text"
			if n.ShortTag() == "!!binary" {
				msg = "!!binary is not supported: a value is read as the text written, so the base64 would be taken for the value; write the text itself"
			}
			ps = append(ps, Problem{Pos: Pos{File: file, Line: n.Line, Column: n.Column}, Msg: msg})
		}
		if n.Kind == yaml.AliasNode {
			return // its target is walked where it is written
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return ps
}

// measure returns how many nodes n expands to with aliases followed, and
// its nesting depth, memoizing shared subtrees so a bomb is measured
// without being expanded. Sizes saturate at maxNodes+1.
func measure(n *yaml.Node, memo map[*yaml.Node]int, depth int) (size, maxDepthSeen int) {
	if depth > maxDepth {
		return 1, depth
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, depth
		}
		if s, ok := memo[n.Alias]; ok {
			return s, depth
		}
		memo[n.Alias] = maxNodes + 1 // a cycle counts as infinite
		s, d := measure(n.Alias, memo, depth)
		memo[n.Alias] = s
		return s, d
	}
	size, maxDepthSeen = 1, depth
	for _, c := range n.Content {
		s, d := measure(c, memo, depth+1)
		size += s
		if size > maxNodes {
			size = maxNodes + 1
		}
		if d > maxDepthSeen {
			maxDepthSeen = d
		}
	}
	return size, maxDepthSeen
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlQuotedRE matches what a YAML parser's message quotes from the input,
// an anchor's name, which is the file's content (the tokens it quotes, as
// in "could not find expected ':'", are its own).
var yamlQuotedRE = regexp.MustCompile(`anchor '[^']*'`)

// yamlSyntaxProblem turns a parser error into a problem that gives the
// position and the kind of problem only: a file that is not YAML (a
// symlink to /etc/shadow) must not have its content quoted in an error.
func yamlSyntaxProblem(file string, err error) Problem {
	msg := yamlQuotedRE.ReplaceAllString(err.Error(), "anchor")
	line := 1
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return Problem{Pos: Pos{File: file, Line: line, Column: 1}, Msg: "YAML syntax: " + msg}
}

// resolve follows aliases and counts nodes so an alias bomb or a deep tree
// is refused instead of expanded.
func (d *decoder) resolve(n *yaml.Node, path string, depth int) *yaml.Node {
	if d.aborted {
		return nil
	}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.nodes++
	if d.nodes > maxNodes {
		d.fail(n, path, "document expands to more than %d nodes (alias bomb?)", maxNodes)
		d.aborted = true
		return nil
	}
	if depth > maxDepth {
		d.fail(n, path, "nesting deeper than %d levels", maxDepth)
		d.aborted = true
		return nil
	}
	return n
}

// shellCodePathRE matches the key paths whose values are shell code: a
// declared tool's command and the commands of its parameters' values.
var shellCodePathRE = regexp.MustCompile(`^tools\.[^.]+\.(command$|parameters\.[^.]+\.values\.)`)

var placeholderRE = regexp.MustCompile(`\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// scalar returns the node's value with ${NAME} placeholders replaced from
// the environment. "$${" stands for a literal "${"; any other "$" (a
// shell's $HOME or $$) is left alone.
func (d *decoder) scalar(n *yaml.Node, path string) (string, bool) {
	ok := true
	shell := shellCodePathRE.MatchString(path)
	out := placeholderRE.ReplaceAllStringFunc(n.Value, func(m string) string {
		if m == "$${" {
			return "${"
		}
		name := m[2 : len(m)-1]
		if shell {
			// Pasting a value into shell code makes it code: WHO='x; touch
			// pwned' would run touch. The value travels as data instead,
			// through the tool's environment.
			// The text is kept as written so no second, misleading
			// problem ("has no command") follows this one.
			d.fail(n, path, "${%s} in a run: shell command would paste the value into shell code, where ';' or '$(…)' in it would run; pass it through the tool's env: (env: {%s: \"${%s}\"}) and write \"$%s\" in the command", name, name, name, name)
			return m
		}
		if d.substituted == nil {
			d.substituted = map[string][]string{}
		}
		d.substituted[path] = append(d.substituted[path], name)
		v, found := d.getenv(name)
		if !found {
			d.fail(n, path, "environment variable %s is not set (placeholder ${%s})", name, name)
			ok = false
		}
		return v
	})
	return out, ok
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unknown node"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// decode stores n into v (addressable), reporting problems at path.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string, depth int) {
	n = d.resolve(n, path, depth)
	if n == nil {
		return
	}
	if v.CanAddr() {
		if u, ok := v.Addr().Interface().(unmarshaler); ok {
			u.decodeYAML(d, n, path)
			return
		}
	}
	if v.Kind() == reflect.Pointer {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		d.decode(n, v.Elem(), path, depth)
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, path, depth)
	case reflect.Map:
		d.decodeMap(n, v, path, depth)
	case reflect.Slice:
		d.decodeSlice(n, v, path, depth)
	case reflect.String:
		if s, ok := d.expectScalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		s, ok := d.expectScalar(n, path, "true or false")
		if !ok {
			return
		}
		switch s {
		case "true":
			v.SetBool(true)
		case "false":
			v.SetBool(false)
		default:
			d.fail(n, path, "want true or false, got %q", s)
		}
	case reflect.Int, reflect.Int64:
		s, ok := d.expectScalar(n, path, "a whole number")
		if !ok {
			return
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			d.fail(n, path, "want a whole number, got %q", s)
			return
		}
		if i > maxMagnitude || i < -maxMagnitude {
			d.fail(n, path, "%s is out of range (at most %d either way)", s, int64(maxMagnitude))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		s, ok := d.expectScalar(n, path, "a number")
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "want a number, got %q", s)
			return
		}
		if math.Abs(f) > maxMagnitude {
			d.fail(n, path, "%s is out of range (at most %d either way)", s, int64(maxMagnitude))
			return
		}
		v.SetFloat(f)
	default:
		d.fail(n, path, "internal: cannot decode into %s", v.Type())
	}
}

func (d *decoder) expectScalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.fail(n, path, "want %s, got %s", want, kindName(n))
		return "", false
	}
	return d.scalar(n, path)
}

// mappingPairs yields the key/value pairs of a mapping node, reporting
// duplicate and non-scalar keys.
func (d *decoder) mappingPairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "keys must be plain strings")
			continue
		}
		if k.Value == "<<" {
			d.fail(k, path, "merge keys (<<) are not supported; write the keys out")
			continue
		}
		if seen[k.Value] {
			d.fail(k, join(path, k.Value), "duplicate key")
			continue
		}
		seen[k.Value] = true
		if d.keys != nil {
			d.keys[join(path, k.Value)] = d.pos(k, join(path, k.Value))
		}
		fn(k.Value, k, v)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // an empty section keeps its defaults
	}
	fields := map[string][]int{}
	var names []string
	d.structFields(n, v, path, nil, fields, &names)
	if path == "" && n.Kind == yaml.MappingNode && len(n.Content) > 0 && !anyKnownKey(n, fields) {
		// Not this kind of file at all (a symlink to /etc/shadow parses as
		// a mapping of its lines): its keys are its content, so none is
		// quoted.
		d.fail(n, path, "none of the top-level keys is a known key (known keys: %s); is this the right file? (its keys are not shown)", strings.Join(names, ", "))
		return
	}
	d.mappingPairs(n, path, func(key string, k, val *yaml.Node) {
		i, ok := fields[key]
		if !ok {
			if !keyNameRE.MatchString(key) {
				// A key no author would write is the content of a file
				// that is not this language; it is not quoted.
				d.fail(k, path, "an unknown key that is not a key name (not shown; known keys: %s)", strings.Join(names, ", "))
				return
			}
			d.fail(k, join(path, key), "unknown key (known keys: %s)", strings.Join(names, ", "))
			return
		}
		d.decode(val, v.FieldByIndex(i), join(path, key), depth+1)
	})
}

// keyNameRE matches what a key in these languages looks like; an unknown
// key that does not is not quoted back.
var keyNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// anyKnownKey reports whether some key of the mapping n is one of fields.
func anyKnownKey(n *yaml.Node, fields map[string][]int) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if _, ok := fields[n.Content[i].Value]; ok {
			return true
		}
	}
	return false
}

// structFields lists the keys of struct v by their field index, setting
// its Pos on the way. A field tagged `yaml:",inline"` lends its own keys
// to the mapping, as a goal's success: takes every check of a step's
// expect: beside keys of its own.
func (d *decoder) structFields(n *yaml.Node, v reflect.Value, path string, at []int, fields map[string][]int, names *[]string) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Type == posType && f.Name == "Pos" {
			v.Field(i).Set(reflect.ValueOf(d.pos(n, path)))
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		index := append(slices.Clip(at), i)
		if name == "" && opts == "inline" && f.Type.Kind() == reflect.Struct {
			d.structFields(n, v.Field(i), path, index, fields, names)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		fields[name] = index
		*names = append(*names, name)
	}
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if v.Type().Key().Kind() != reflect.String {
		d.fail(n, path, "internal: map key must be a string")
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(v.Type()))
	}
	d.mappingPairs(n, path, func(key string, k, val *yaml.Node) {
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, elem, join(path, key), depth+1)
		v.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), elem)
	})
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, "want a list, got %s", kindName(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		if d.keys != nil {
			d.keys[index(path, i)] = d.pos(item, index(path, i))
		}
		d.decode(item, s.Index(i), index(path, i), depth+1)
	}
	v.Set(s)
}

// osLookup is the production environment lookup.
func osLookup(name string) (string, bool) { return os.LookupEnv(name) }

// valueOf returns the addressable value p points to.
func valueOf(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

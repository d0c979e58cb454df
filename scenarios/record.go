package scenarios

import (
	"bytes"
	"fmt"
	"image"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// needsGoalOrSteps is the problem of a scenario with neither, which a
// recording does not need: it makes the steps.
const needsGoalOrSteps = "a scenario needs a goal (for the model) or steps (scripted)"

// recordingTolerates reports whether a problem is one a recording's
// scenario may have.
func recordingTolerates(p Problem) bool { return p.Msg == needsGoalOrSteps || p.Msg == goalNeedsModel }

// LoadRecording reads and validates a scenario to record against: it is
// LoadChecked, except that the scenario needs neither a goal nor steps,
// and a goal needs no model. The goal, its plan and success criteria and
// the steps are dropped from what is returned: a recording launches the
// app and takes its steps from the operator.
func LoadRecording(scenarioPath, operatorPath string, lookup Lookup, checks ...Check) (*Files, error) {
	files, err := load(scenarioPath, operatorPath, lookup, loadRecording, checks...)
	if err != nil {
		return nil, err
	}
	sc := files.Scenario
	sc.Goal, sc.Plan, sc.Success, sc.Steps, sc.ReferenceImages, sc.AgenticMaxIterations = "", nil, nil, nil, nil, 0
	sc.Recording = true
	return files, nil
}

// RecordedStep is one step of a recording, as it is written.
type RecordedStep struct {
	Tool string
	Args map[string]any
	// Expect holds the checks the operator accepted (nil: none).
	Expect *Expect
	// Saw says what the step saw, written as a comment above it. It is
	// the application's text, already redacted.
	Saw []string
	// Baseline is the window as the step left it, with the secrets on it
	// blacked out, when Expect has a screenshot check: the image that
	// check compares with, written beside the scenario
	// (BaselineDir/<name>.png).
	Baseline image.Image
}

// Recording is what `kasmrt record` writes: the source scenario's own
// sections (app, browser, provides, targets, tools) as written, with the
// windows and click targets named during the recording and the recorded
// steps.
type Recording struct {
	// Source is the scenario file recorded against, as read.
	Source []byte
	// Header is a comment put at the top of the file.
	Header       string
	Windows      map[string]WindowMatch
	ClickTargets map[string]ClickTarget
	Steps        []RecordedStep
}

// droppedKeys are the source scenario's keys a recording replaces.
var droppedKeys = []string{"goal", "plan", "success", "steps", "reference_images", "agentic_max_iterations"}

// Write renders the recording as a scenario file. The source's other keys
// are kept as written, placeholders and secret references included, so no
// value the run resolved (a secret's above all) is written.
func (r Recording) Write() ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(r.Source, &doc); err != nil {
		return nil, fmt.Errorf("read the source scenario: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the source scenario is not a mapping")
	}
	root := doc.Content[0]
	for _, k := range droppedKeys {
		deleteKey(root, k)
	}
	if r.Header != "" {
		doc.HeadComment = commentText(r.Header)
	}
	if len(r.Windows) > 0 {
		m := mappingUnder(root, "windows")
		for _, name := range sortedKeys(r.Windows) {
			w := r.Windows[name]
			v := flowMap()
			if w.Class != "" {
				addScalar(v, "class", w.Class)
			}
			if w.Title != "" {
				addScalar(v, "title", w.Title)
			}
			if w.PID != nil {
				addScalar(v, "pid", strconv.FormatBool(*w.PID))
			}
			setKey(m, name, v)
		}
	}
	if len(r.ClickTargets) > 0 {
		m := mappingUnder(root, "click_targets")
		for _, name := range sortedKeys(r.ClickTargets) {
			setKey(m, name, clickTargetNode(r.ClickTargets[name]))
		}
	}
	steps := &yaml.Node{Kind: yaml.SequenceNode}
	for i, st := range r.Steps {
		n := &yaml.Node{Kind: yaml.MappingNode}
		args := flowMap()
		for _, k := range sortedKeys(st.Args) {
			args.Content = append(args.Content, scalar(k), valueNode(st.Args[k]))
		}
		n.Content = append(n.Content, scalar(st.Tool), args)
		if e := expectNode(st.Expect); e != nil {
			n.Content = append(n.Content, scalar("expect"), e)
		}
		saw := append([]string{fmt.Sprintf("step %d", i+1)}, st.Saw...)
		n.HeadComment = commentText(strings.Join(saw, "\n"))
		steps.Content = append(steps.Content, n)
	}
	if len(r.Steps) == 0 {
		steps.Style = yaml.FlowStyle
	}
	root.Content = append(root.Content, scalar("steps"), steps)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("write the scenario: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("write the scenario: %w", err)
	}
	return buf.Bytes(), nil
}

// commentText makes every line of s a comment line, with control
// characters removed: a comment is the application's text.
func commentText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				return ' '
			}
			return r
		}, l)
		lines[i] = "# " + strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func flowMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle} }

// addScalar adds a string-valued key; the value is quoted when YAML would
// read it as something else (a number, a boolean, null).
func addScalar(m *yaml.Node, k, v string) {
	m.Content = append(m.Content, scalar(k), valueNode(v))
}

// valueNode encodes an argument as JSON would type it: strings stay
// strings, quoted when they would read as another type.
func valueNode(v any) *yaml.Node {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return scalar(fmt.Sprint(v))
	}
	return &n
}

func boolNode(b bool) *yaml.Node { return valueNode(b) }

func deleteKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, scalar(key), v)
}

// mappingUnder returns the mapping at key, made (and put at the end)
// when the source has none.
func mappingUnder(root *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key && root.Content[i+1].Kind == yaml.MappingNode {
			return root.Content[i+1]
		}
	}
	deleteKey(root, key) // an empty `key:` (null) is replaced
	m := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content, scalar(key), m)
	return m
}

func clickTargetNode(t ClickTarget) *yaml.Node {
	v := flowMap()
	switch {
	case t.Name != "":
		addScalar(v, "name", t.Name)
		if t.Role != "" {
			addScalar(v, "role", t.Role)
		}
	case t.Text != "":
		addScalar(v, "text", t.Text)
		if t.Near != "" {
			addScalar(v, "near", t.Near)
		}
	default:
		v.Content = append(v.Content, scalar("x"), valueNode(t.X), scalar("y"), valueNode(t.Y))
	}
	if t.Description != "" {
		addScalar(v, "description", t.Description)
	}
	return v
}

// expectNode renders the checks a step carries, only the fields set.
func expectNode(e *Expect) *yaml.Node {
	if e == nil {
		return nil
	}
	n := &yaml.Node{Kind: yaml.MappingNode}
	if e.Within > 0 {
		n.Content = append(n.Content, scalar("within_s"), valueNode(e.Within))
	}
	if t := e.WindowTitle; t != nil {
		v := flowMap()
		if t.Contains != "" {
			addScalar(v, "contains", t.Contains)
		} else {
			addScalar(v, "equals", t.Equals)
		}
		n.Content = append(n.Content, scalar("window_title"), v)
	}
	if t := e.ScreenText; t != nil {
		v := flowMap()
		addScalar(v, "contains", t.Contains)
		n.Content = append(n.Content, scalar("screen_text"), v)
	}
	if len(e.CDP) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, name := range sortedKeys(e.CDP) {
			c := e.CDP[name]
			v := flowMap()
			addBool(v, "present", c.Present)
			addBool(v, "visible", c.Visible)
			if c.Text != nil {
				addScalar(v, "text", *c.Text)
			}
			if c.TextContains != "" {
				addScalar(v, "text_contains", c.TextContains)
			}
			if c.Value != nil {
				addScalar(v, "value", *c.Value)
			}
			if c.Count != nil {
				v.Content = append(v.Content, scalar("count"), valueNode(*c.Count))
			}
			m.Content = append(m.Content, scalar(name), v)
		}
		n.Content = append(n.Content, scalar("cdp"), m)
	}
	if c := e.Screenshot; c != nil {
		n.Content = append(n.Content, scalar("screenshot"), screenshotNode(c))
	}
	if len(e.Controls) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, name := range sortedKeys(e.Controls) {
			c := e.Controls[name]
			v := flowMap()
			addBool(v, "present", c.Present)
			addBool(v, "enabled", c.Enabled)
			addBool(v, "checked", c.Checked)
			addBool(v, "focused", c.Focused)
			m.Content = append(m.Content, valueNode(name), v)
		}
		n.Content = append(n.Content, scalar("controls"), m)
	}
	if e.ExitCode != nil {
		n.Content = append(n.Content, scalar("exit_code"), valueNode(*e.ExitCode))
	}
	if len(n.Content) == 0 {
		return nil
	}
	return n
}

// screenshotNode renders a screenshot check, only the fields set.
func screenshotNode(c *ScreenshotCheck) *yaml.Node {
	v := flowMap()
	addScalar(v, "name", c.Name)
	if c.MaxDiffRatio > 0 {
		v.Content = append(v.Content, scalar("max_diff_ratio"), valueNode(c.MaxDiffRatio))
	}
	if c.Threshold != nil {
		v.Content = append(v.Content, scalar("threshold"), valueNode(*c.Threshold))
	}
	if len(c.Mask) > 0 {
		v.Content = append(v.Content, scalar("mask"), valueNode(c.Mask))
	}
	if len(c.MaskRegions) > 0 {
		v.Content = append(v.Content, scalar("mask_regions"), valueNode(c.MaskRegions))
	}
	if c.Within > 0 {
		v.Content = append(v.Content, scalar("within_s"), valueNode(c.Within))
	}
	return v
}

func addBool(m *yaml.Node, k string, b *bool) {
	if b != nil {
		m.Content = append(m.Content, scalar(k), boolNode(*b))
	}
}

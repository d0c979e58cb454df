package cdp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// Element is an interactive element of the page as the accessibility tree
// sees it.
type Element struct {
	// Handle names the element for ClickDescribed ("e12"). It is the DOM
	// node's backend id, so it stays the same for as long as the node lives
	// (within one page) and never names a node of another page.
	Handle string
	// Role is the accessibility role ("button", "textbox", "link", …).
	Role string
	// Name is the accessible name: a label, alt text or the button's text.
	Name string
	// Text is the element's current value where it has one (a text field's
	// content, a select's choice). Chromium masks password fields.
	Text string
	// Disabled is true for an element that does not take input now.
	Disabled bool
	// Box is the element's border box in CSS pixels of the viewport; empty
	// when the element has no layout box.
	Box image.Rectangle
}

func (e Element) String() string {
	s := fmt.Sprintf("%s %s %q", e.Handle, e.Role, e.Name)
	if e.Text != "" {
		s += fmt.Sprintf(" text %q", e.Text)
	}
	if e.Disabled {
		s += " (disabled)"
	}
	return s
}

// interactiveRoles are the roles a user can act on; the rest of the tree
// (text, groups, landmarks) is context, not a target.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true,
	"checkbox": true, "radio": true, "combobox": true, "listbox": true,
	"option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true,
	"spinbutton": true, "treeitem": true,
}

// ListInteractive returns the page's interactive elements in reading
// order (top to bottom, then left to right). A non-empty filter keeps the elements whose role, name or text
// contains it, ignoring case.
func (t *Tab) ListInteractive(ctx context.Context, filter string) ([]Element, error) {
	var els []Element
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		var err error
		els, err = interactiveElements(ctx, tgt)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list interactive elements: %w", err)
	}
	if filter == "" {
		return els, nil
	}
	f := strings.ToLower(strings.TrimSpace(filter))
	kept := els[:0]
	for _, e := range els {
		if strings.Contains(strings.ToLower(e.Role), f) || strings.Contains(strings.ToLower(e.Name), f) || strings.Contains(strings.ToLower(e.Text), f) {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

// interactiveElements reads the full accessibility tree once and keeps the
// interactive, non-ignored nodes that stand for a DOM node.
func interactiveElements(ctx context.Context, tgt *chromedp.Target) ([]Element, error) {
	tree, err := cdp.Call(ctx, tgt, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		return nil, err
	}
	var els []Element
	seen := map[cdp.BackendNodeID]bool{}
	for _, n := range tree.Nodes {
		if n.Ignored || n.BackendDOMNodeID == 0 || seen[n.BackendDOMNodeID] {
			continue
		}
		role := axString(n.Role)
		if !interactiveRoles[role] {
			continue
		}
		seen[n.BackendDOMNodeID] = true
		e := Element{
			Handle: handleFor(n.BackendDOMNodeID),
			Role:   role,
			Name:   strings.TrimSpace(axString(n.Name)),
			Text:   strings.TrimSpace(axString(n.Value)),
		}
		for _, p := range n.Properties {
			if p.Name == "disabled" && axString(p.Value) == "true" {
				e.Disabled = true
			}
		}
		if q, err := cdp.Call(ctx, tgt, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: n.BackendDOMNodeID}); err == nil && len(q.Quads) > 0 {
			e.Box = quadBounds(q.Quads[0])
		}
		els = append(els, e)
	}
	// The tree's own order follows its internal structure, not the page;
	// reading order (top to bottom, then left to right) is what a person
	// or a model expects. Elements without a box go last.
	slices.SortStableFunc(els, func(a, b Element) int {
		if ea, eb := a.Box.Empty(), b.Box.Empty(); ea != eb {
			if ea {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(a.Box.Min.Y, b.Box.Min.Y); c != 0 {
			return c
		}
		return cmp.Compare(a.Box.Min.X, b.Box.Min.X)
	})
	return els, nil
}

// axString renders an accessibility value as text: strings unquoted,
// numbers and booleans as written.
func axString(v *accessibility.Value) string {
	if v == nil || len(v.Value) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v.Value, &s); err == nil {
		return s
	}
	return string(v.Value)
}

func handleFor(id cdp.BackendNodeID) string { return "e" + strconv.FormatInt(int64(id), 10) }

// parseHandle reads a handle back to its backend node id.
func parseHandle(h string) (cdp.BackendNodeID, bool) {
	h = strings.TrimSpace(h)
	if len(h) < 2 || h[0] != 'e' {
		return 0, false
	}
	n, err := strconv.ParseInt(h[1:], 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return cdp.BackendNodeID(n), true
}

// quadBounds is the bounding rectangle of a quad (x1,y1 … x4,y4).
func quadBounds(q dom.Quad) image.Rectangle {
	if len(q) < 8 {
		return image.Rectangle{}
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := 0; i < 8; i += 2 {
		minX, maxX = math.Min(minX, q[i]), math.Max(maxX, q[i])
		minY, maxY = math.Min(minY, q[i+1]), math.Max(maxY, q[i+1])
	}
	return image.Rect(int(math.Round(minX)), int(math.Round(minY)), int(math.Round(maxX)), int(math.Round(maxY)))
}

// maxCandidates bounds the candidates an error lists, so a big page does not
// flood the model's context.
const maxCandidates = 20

// DescribedNotFoundError says no interactive element has the handle or text
// asked for. Candidates are the page's interactive elements (at most 20),
// for the model to choose from.
type DescribedNotFoundError struct {
	Handle, Text string
	Candidates   []Element
}

func (e *DescribedNotFoundError) Error() string {
	what := "text " + strconv.Quote(e.Text)
	if e.Handle != "" {
		what = "handle " + e.Handle
	}
	return fmt.Sprintf("no interactive element with %s; candidates: %s", what, listElements(e.Candidates))
}

func (e *DescribedNotFoundError) Is(target error) bool { return target == ErrNotFound }

// ErrAmbiguous is matched (errors.Is) by an AmbiguousError.
var ErrAmbiguous = errors.New("ambiguous element")

// AmbiguousError says several interactive elements have the text asked for.
type AmbiguousError struct {
	Text       string
	Candidates []Element
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%d interactive elements match text %q; click one by handle: %s", len(e.Candidates), e.Text, listElements(e.Candidates))
}

func (e *AmbiguousError) Is(target error) bool { return target == ErrAmbiguous }

func listElements(els []Element) string {
	if len(els) == 0 {
		return "none"
	}
	parts := make([]string, len(els))
	for i, e := range els {
		parts[i] = e.String()
	}
	return strings.Join(parts, "; ")
}

func firstN(els []Element, n int) []Element {
	if len(els) > n {
		return els[:n]
	}
	return els
}

// ClickDescribed clicks an interactive element chosen by handle (from
// ListInteractive) or, when handle is empty, by its visible text: the
// element whose name or text equals text (ignoring case and surrounding
// space), else the one that contains it. Several matches give an
// *AmbiguousError and none a *DescribedNotFoundError, both listing
// candidates. It returns the element clicked.
func (t *Tab) ClickDescribed(ctx context.Context, handle, text string) (Element, error) {
	if (handle == "") == (text == "") {
		return Element{}, errors.New("click described element: give a handle or a text, not both or neither")
	}
	var clicked Element
	err := t.target(ctx, func(ctx context.Context, tgt *chromedp.Target) error {
		els, err := interactiveElements(ctx, tgt)
		if err != nil {
			return err
		}
		el, err := choose(els, handle, text)
		if err != nil {
			return err
		}
		if el.Disabled {
			return fmt.Errorf("%s is disabled", el)
		}
		id, _ := parseHandle(el.Handle)
		if _, err := clickNode(ctx, tgt, id); err != nil {
			return fmt.Errorf("%s: %w", el, err)
		}
		clicked = el
		return nil
	})
	if err != nil {
		return Element{}, fmt.Errorf("click described element: %w", err)
	}
	return clicked, nil
}

// choose picks the element a handle or text names.
func choose(els []Element, handle, text string) (Element, error) {
	if handle != "" {
		h := strings.TrimSpace(handle)
		for _, e := range els {
			if e.Handle == h {
				return e, nil
			}
		}
		return Element{}, &DescribedNotFoundError{Handle: h, Candidates: firstN(els, maxCandidates)}
	}
	want := strings.ToLower(strings.Join(strings.Fields(text), " "))
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	var exact, partial []Element
	for _, e := range els {
		n, v := norm(e.Name), norm(e.Text)
		switch {
		case n == want || (v != "" && v == want):
			exact = append(exact, e)
		case strings.Contains(n, want) || strings.Contains(v, want):
			partial = append(partial, e)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = partial
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Element{}, &DescribedNotFoundError{Text: text, Candidates: firstN(els, maxCandidates)}
	default:
		return Element{}, &AmbiguousError{Text: text, Candidates: firstN(matches, maxCandidates)}
	}
}

// errNotRendered is a click on an element with no box on the page.
var errNotRendered = errors.New("element has no layout box (not rendered)")

// clickNode scrolls the node into view and clicks the centre of its first
// content quad with a real mouse press and release, as a user would. It
// returns the viewport point clicked.
func clickNode(ctx context.Context, tgt *chromedp.Target, node cdp.BackendNodeID) (image.Point, error) {
	if _, err := cdp.Call(ctx, tgt, dom.ScrollIntoViewIfNeeded, dom.ScrollIntoViewIfNeededParams{BackendNodeID: node}); err != nil {
		return image.Point{}, fmt.Errorf("scroll into view: %w", err)
	}
	q, err := cdp.Call(ctx, tgt, dom.GetContentQuads, dom.GetContentQuadsParams{BackendNodeID: node})
	if err != nil {
		return image.Point{}, fmt.Errorf("locate: %w", err)
	}
	if len(q.Quads) == 0 || len(q.Quads[0]) < 8 {
		return image.Point{}, errNotRendered
	}
	quad := q.Quads[0]
	var x, y float64
	for i := 0; i < 8; i += 2 {
		x += quad[i] / 4
		y += quad[i+1] / 4
	}
	return clickAt(ctx, tgt, x, y)
}

// clickAt presses and releases the left mouse button at a viewport point,
// and returns it.
func clickAt(ctx context.Context, tgt *chromedp.Target, x, y float64) (image.Point, error) {
	if _, err := chromedp.MouseClickXY(x, y)(ctx, tgt); err != nil {
		return image.Point{}, fmt.Errorf("click at %.0f,%.0f: %w", x, y, err)
	}
	return image.Pt(int(x), int(y)), nil
}

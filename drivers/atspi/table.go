package atspi

import (
	"context"
	"fmt"
	"image"

	"github.com/godbus/dbus/v5"
)

const (
	ifaceTable = "org.a11y.atspi.Table"
	// nullPath is the object path AT-SPI answers for no accessible.
	nullPath = dbus.ObjectPath("/org/a11y/atspi/null")
	// maxShownCells bounds how many children of a large table one read
	// lists: a screen of rows, not the table.
	maxShownCells = 1000
)

// screenBox is a reply of Component.GetExtents.
type screenBox struct{ X, Y, W, H int32 }

// rect is the box as a rectangle, empty when the toolkit gave no size.
func (e screenBox) rect() image.Rectangle {
	if e.W <= 0 || e.H <= 0 {
		return image.Rectangle{}
	}
	return image.Rect(int(e.X), int(e.Y), int(e.X+e.W), int(e.Y+e.H))
}

// extentsOf is the screen rectangle of the accessible r, empty when it
// gives none.
func (b *Bus) extentsOf(ctx context.Context, r ref) image.Rectangle {
	var e screenBox
	if b.object(r).CallWithContext(ctx, ifaceComponent+".GetExtents", 0, coordTypeScreen).Store(&e) != nil {
		return image.Rectangle{}
	}
	return e.rect()
}

// shownCells returns the children of a large table that its view shows:
// its column headers and the rows from the one at its top edge to the one
// at its bottom edge, found by asking the table which cells lie at those
// points. Asking for every child would make the toolkit build an
// accessible for each of thousands of cells, and the model can act only
// on the rows it sees. Children are taken to be the column headers
// followed by the cells row by row, as GTK and Qt order them; the caller
// drops what lies outside area.
func (b *Bus) shownCells(ctx context.Context, table ref, area image.Rectangle, childCount int) ([]ref, error) {
	obj := b.object(table)
	columnsCall := obj.GoWithContext(ctx, ifaceProperties+".Get", 0, nil, ifaceTable, "NColumns")
	firstCall := obj.GoWithContext(ctx, ifaceAccessible+".GetChildAtIndex", 0, nil, int32(0))
	bottom := b.indexAt(ctx, table, image.Pt(area.Min.X+1, area.Max.Y-2))
	columns := 1
	var columnsV dbus.Variant
	if (<-columnsCall.Done).Store(&columnsV) == nil {
		if n, ok := columnsV.Value().(int32); ok && n > 0 {
			columns = int(n)
		}
	}
	// The top row is the one at the table's top edge, or, when a column
	// header (or nothing) is there, the one just below the headers.
	top := b.indexAt(ctx, table, image.Pt(area.Min.X+1, area.Min.Y+1))
	var first ref
	if (<-firstCall.Done).Store(&first) == nil && first.Path != nullPath && top < columns {
		top = -1
		if header := b.extentsOf(ctx, first); !header.Empty() && header.Min.Y >= area.Min.Y && header.Min.Y <= area.Min.Y+1 {
			top = b.indexAt(ctx, table, image.Pt(area.Min.X+1, header.Max.Y+1))
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if top < 0 {
		// No row at the top: the table shows its first rows, if any.
		top = columns
	}
	if bottom < 0 {
		// No row at the bottom: the rows end above it.
		bottom = childCount - 1
	}
	rowStart := func(i int) int { return columns + (max(i-columns, 0)/columns)*columns }
	from, to := rowStart(top), min(rowStart(bottom)+columns, childCount, rowStart(top)+maxShownCells)
	indices := make([]int, 0, columns+max(to-from, 0))
	for i := range min(columns, childCount) {
		indices = append(indices, i)
	}
	for i := max(from, columns); i < to; i++ {
		indices = append(indices, i)
	}
	calls := make([]*dbus.Call, len(indices))
	for i, index := range indices {
		calls[i] = obj.GoWithContext(ctx, ifaceAccessible+".GetChildAtIndex", 0, nil, int32(index))
	}
	cells := make([]ref, 0, len(indices))
	for _, call := range calls {
		var cell ref
		if (<-call.Done).Store(&cell) == nil && cell.Path != nullPath {
			cells = append(cells, cell)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list the shown cells of a table: %w", err)
	}
	return cells, nil
}

// indexAt is the index in table of the child at p on the screen, or -1
// when there is none.
func (b *Bus) indexAt(ctx context.Context, table ref, p image.Point) int {
	var cell ref
	err := b.object(table).CallWithContext(ctx, ifaceComponent+".GetAccessibleAtPoint", 0, int32(p.X), int32(p.Y), coordTypeScreen).Store(&cell)
	if err != nil || cell.Path == nullPath || cell.Path == "" {
		return -1
	}
	var index int32
	if b.object(cell).CallWithContext(ctx, ifaceAccessible+".GetIndexInParent", 0).Store(&index) != nil {
		return -1
	}
	return int(index)
}

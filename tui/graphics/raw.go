package graphics

import (
	"strconv"
	"strings"
)

// Positioned wraps an image escape sequence so that, written with tea.Raw,
// it draws with its top-left corner at the 1-based screen cell (row, col)
// and leaves the cursor where the renderer had it: save cursor (ESC 7),
// move (CUP), the image, restore cursor (ESC 8).
func Positioned(row, col int, seq string) string {
	var b strings.Builder
	b.Grow(len(seq) + 16)
	b.WriteString("\x1b7\x1b[")
	b.WriteString(strconv.Itoa(max(1, row)))
	b.WriteByte(';')
	b.WriteString(strconv.Itoa(max(1, col)))
	b.WriteByte('H')
	b.WriteString(seq)
	b.WriteString("\x1b8")
	return b.String()
}

// TmuxPassthrough wraps seq in tmux's DCS passthrough so tmux forwards it to
// the outer terminal (tmux needs "set -g allow-passthrough on").
func TmuxPassthrough(seq string) string {
	return "\x1bPtmux;" + strings.ReplaceAll(seq, "\x1b", "\x1b\x1b") + "\x1b\\"
}

// Package graphics turns screenshots into terminal output for the console's
// screen pane: kitty graphics, DEC sixel, half-block cells or a text label,
// with the terminal detection that picks between them.
//
// Every encoder is safe to call from a goroutine other than the UI's: the
// console runs them inside a tea.Cmd and hands the result to Update.
package graphics

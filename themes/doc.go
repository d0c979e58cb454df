// Package themes holds the console's palettes and the styles derived from
// them.
package themes

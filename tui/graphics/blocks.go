package graphics

import (
	"image"
	"image/color"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// RenderBlocks draws img into exactly rows lines of exactly cols cells. Each
// cell is "▀" with the upper pixel as foreground and the lower as
// background, so the image is fitted to cols×(2·rows) pixels and padded with
// blank cells. profile picks the colour escapes: TrueColor as 24-bit,
// ANSI256 and ANSI converted to their palettes, and ASCII or NoTTY as
// uncoloured shade characters by luminance.
func RenderBlocks(img image.Image, cols, rows int, profile colorprofile.Profile) string {
	if cols <= 0 || rows <= 0 {
		return ""
	}
	m := Fit(img, cols, rows, 1, 2)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	colour := profile > colorprofile.ASCII
	// Without colours, luminance is drawn with shade characters.
	shades := [...]string{" ", "░", "▒", "▓", "█"}
	var b strings.Builder
	b.Grow(rows * cols * 40)
	for row := range rows {
		if row > 0 {
			b.WriteByte('\n')
		}
		var lastFG, lastBG string
		y := 2 * row
		for x := range cols {
			if x >= w || y >= h {
				if lastFG != "" || lastBG != "" {
					b.WriteString("\x1b[m")
					lastFG, lastBG = "", ""
				}
				b.WriteByte(' ')
				continue
			}
			top := m.RGBAAt(x, y)
			bottom := top
			if y+1 < h {
				bottom = m.RGBAAt(x, y+1)
			}
			if !colour {
				b.WriteString(shades[luma(top, bottom)*len(shades)/256])
				continue
			}
			fg, bg := sgr(top, profile, false), sgr(bottom, profile, true)
			if fg != lastFG || bg != lastBG {
				b.WriteString("\x1b[")
				b.WriteString(fg)
				b.WriteByte(';')
				b.WriteString(bg)
				b.WriteByte('m')
				lastFG, lastBG = fg, bg
			}
			b.WriteString("▀")
		}
		if lastFG != "" || lastBG != "" {
			b.WriteString("\x1b[m")
		}
	}
	return b.String()
}

// luma is the mean Rec. 601 luminance of two pixels, 0–255.
func luma(a, b color.RGBA) int {
	l := func(c color.RGBA) int { return (299*int(c.R) + 587*int(c.G) + 114*int(c.B)) / 1000 }
	return (l(a) + l(b)) / 2
}

// sgr returns the SGR parameters that set c as foreground (or background)
// in profile.
func sgr(c color.RGBA, profile colorprofile.Profile, background bool) string {
	base := 38
	if background {
		base = 48
	}
	// ansi's converters are called directly rather than profile.Convert,
	// which caches every colour it sees in a package-wide map: with photos
	// of screens that map would only grow.
	switch profile {
	case colorprofile.ANSI:
		n := int(ansi.Convert16(c))
		if n < 8 {
			return strconv.Itoa(base - 8 + n)
		}
		return strconv.Itoa(base + 52 + n - 8)
	case colorprofile.ANSI256:
		return strconv.Itoa(base) + ";5;" + strconv.Itoa(int(ansi.Convert256(c)))
	default:
		return strconv.Itoa(base) + ";2;" + strconv.Itoa(int(c.R)) + ";" + strconv.Itoa(int(c.G)) + ";" + strconv.Itoa(int(c.B))
	}
}

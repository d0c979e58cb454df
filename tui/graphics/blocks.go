package graphics

import (
	"image"
	"image/color"
	"strconv"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/image/draw"
)

// quadrants are the block elements for a cell split into 2×2 sub-pixels,
// indexed by which of them take the foreground colour: bit 0 upper left,
// bit 1 upper right, bit 2 lower left, bit 3 lower right. Only the first
// eight are drawn (the lower right is always background; swapping the two
// colours covers the rest), all from Unicode's Block Elements, which
// terminal fonts carry or terminals draw themselves.
var quadrants = [8]string{" ", "▘", "▝", "▀", "▖", "▌", "▞", "▛"}

// RenderBlocks draws img into exactly rows lines of exactly cols cells. Each
// cell shows 2×2 sub-pixels with two colours, drawn as a quadrant block
// element ("▘", "▀", "▞"…) with the foreground and background set: twice
// the horizontal resolution of half blocks, which is what makes a dialog's
// words readable (docs/architecture.md, "Legible screens in half-block
// terminals"). A cell is twice as tall as wide, so a sub-pixel covers one
// square pixel across and two down: the image is fitted to 2·cols×4·rows
// square pixels and scaled with Catmull-Rom, which keeps text strokes
// sharper than averaging, then each cell's four sub-pixels are split into
// the two groups whose mean colours represent them with the least error.
// The image is padded with blank cells. profile picks the colour escapes:
// TrueColor as 24-bit, ANSI256 and ANSI converted to their palettes, and
// ASCII or NoTTY as uncoloured shade characters by luminance.
func RenderBlocks(img image.Image, cols, rows int, profile colorprofile.Profile) string {
	if cols <= 0 || rows <= 0 {
		return ""
	}
	m := fitSubpixels(img, cols, rows)
	w, h := m.Rect.Dx(), m.Rect.Dy()
	colour := profile > colorprofile.ASCII
	// Without colours, luminance is drawn with shade characters.
	shades := [...]string{" ", "░", "▒", "▓", "█"}
	// A screen has few distinct colours, and converting one to a palette
	// costs far more than looking it up.
	escapes := map[color.RGBA]string{}
	escape := func(c color.RGBA, background bool) string {
		k := c
		if background {
			k.A = 0
		}
		e, ok := escapes[k]
		if !ok {
			e = sgr(c, profile, background)
			escapes[k] = e
		}
		return e
	}
	var b strings.Builder
	b.Grow(rows * cols * 40)
	for row := range rows {
		if row > 0 {
			b.WriteByte('\n')
		}
		var lastFG, lastBG string
		y := 2 * row
		for col := range cols {
			x := 2 * col
			if x >= w || y >= h {
				if lastFG != "" || lastBG != "" {
					b.WriteString("\x1b[m")
					lastFG, lastBG = "", ""
				}
				b.WriteByte(' ')
				continue
			}
			px := [4]color.RGBA{m.RGBAAt(x, y), m.RGBAAt(min(x+1, w-1), y), m.RGBAAt(x, min(y+1, h-1)), m.RGBAAt(min(x+1, w-1), min(y+1, h-1))}
			if !colour {
				b.WriteString(shades[(luma(px[0], px[1])+luma(px[2], px[3]))/2*len(shades)/256])
				continue
			}
			glyph, top, bottom := splitCell(px)
			fg, bg := escape(top, false), escape(bottom, true)
			if glyph == 0 {
				// A uniform cell is a space: its foreground is not seen,
				// so only a change of background needs an escape.
				fg = lastFG
				if fg == "" {
					fg = "39"
				}
			}
			if fg != lastFG || bg != lastBG {
				b.WriteString("\x1b[")
				b.WriteString(fg)
				b.WriteByte(';')
				b.WriteString(bg)
				b.WriteByte('m')
				lastFG, lastBG = fg, bg
			}
			b.WriteString(quadrants[glyph])
		}
		if lastFG != "" || lastBG != "" {
			b.WriteString("\x1b[m")
		}
	}
	return b.String()
}

// fitSubpixels scales img to the sub-pixels of a cols×rows pane: at most
// 2·cols across and 2·rows down, each sub-pixel standing for one square
// pixel across and two down, so the picture keeps its aspect ratio. Images
// smaller than the pane are not enlarged.
func fitSubpixels(img image.Image, cols, rows int) *image.RGBA {
	b := img.Bounds()
	w, h := fitSize(b.Dx(), b.Dy(), 2*cols, 4*rows)
	dst := image.NewRGBA(image.Rect(0, 0, w, max(1, (h+1)/2)))
	if w == 0 || h == 0 {
		return dst
	}
	// Catmull-Rom's cost grows with the reduction; averaging a large
	// screen down to twice the size first is cheap and keeps its
	// sharpening for the last step, where it matters.
	src, sb := img, b
	if sw, sh := 2*dst.Rect.Dx(), 2*dst.Rect.Dy(); b.Dx() > sw && b.Dy() > sh {
		small := boxScale(asRGBA(img), sw, sh)
		src, sb = small, small.Rect
	}
	draw.CatmullRom.Scale(dst, dst.Rect, src, sb, draw.Src, nil)
	return dst
}

// splitCell picks which of a cell's four sub-pixels (upper left, upper
// right, lower left, lower right) take the foreground: of the eight ways to
// split them in two, the one whose two mean colours leave the least
// squared error. It returns the quadrant index and the two colours.
func splitCell(px [4]color.RGBA) (glyph int, fg, bg color.RGBA) {
	bestErr := -1
	for mask := range len(quadrants) {
		var sums [2][3]int
		var n [2]int
		for i, p := range px {
			g := mask >> i & 1
			sums[g][0] += int(p.R)
			sums[g][1] += int(p.G)
			sums[g][2] += int(p.B)
			n[g]++
		}
		var means [2]color.RGBA
		for g := range 2 {
			if n[g] > 0 {
				means[g] = color.RGBA{uint8((sums[g][0] + n[g]/2) / n[g]), uint8((sums[g][1] + n[g]/2) / n[g]), uint8((sums[g][2] + n[g]/2) / n[g]), 255}
			}
		}
		e := 0
		for i, p := range px {
			c := means[mask>>i&1]
			dr, dg, db := int(p.R)-int(c.R), int(p.G)-int(c.G), int(p.B)-int(c.B)
			e += 2*dr*dr + 4*dg*dg + 3*db*db
		}
		if bestErr < 0 || e < bestErr {
			bestErr, glyph, fg, bg = e, mask, means[1], means[0]
		}
		if e == 0 {
			break
		}
	}
	if glyph == 0 {
		fg = bg
	}
	return glyph, fg, bg
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

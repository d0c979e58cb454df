// Package vision is the room where kasmrt asks the vision model about a
// fresh capture: where a described control is (Locate), and whether an
// expected change happened (Judge, Check). It also scales screens to what
// each model profile expects and maps answers back to screen pixels.
package vision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/image/draw"

	"github.com/kasmrt/kasmrt/engine/model"
)

// Turner sends one model turn; *model.Client satisfies it. Callers that sum
// usage wrap it to see each Response.
type Turner interface {
	Turn(ctx context.Context, req model.Request) (model.Response, error)
}

// ErrUnavailable marks a question the model could not answer usably: the
// call failed, or the answer was malformed or outside the image. It is never
// a reason to click.
var ErrUnavailable = errors.New("vision answer unavailable")

// ErrNotFound is the model's explicit answer that the described thing is
// not on the screen.
var ErrNotFound = errors.New("not found on screen")

// Scale records the size of the screen and of the image sent for it, so a
// point on one maps exactly to the other.
type Scale struct {
	Screen image.Point
	Sent   image.Point
}

// Downscale returns img at the profile's preferred size and the scale
// between the two. An image already at that size is returned unchanged.
// Resampling uses Catmull-Rom, which keeps small widget text legible; an
// opaque RGBA screen (every capture) goes through the tabulated resampler,
// which gives the same pixels as x/image/draw's in a fraction of the time
// (BenchmarkDownscale).
func Downscale(img image.Image, p model.Profile) (image.Image, Scale) {
	b := img.Bounds()
	w, h := p.Image.Fit(b.Dx(), b.Dy())
	s := Scale{Screen: image.Pt(b.Dx(), b.Dy()), Sent: image.Pt(w, h)}
	if s.Sent == s.Screen {
		return img, s
	}
	if rgba, ok := img.(*image.RGBA); ok && rgba.Opaque() {
		return resampleRGBA(rgba, w, h), s
	}
	return resize(img, w, h, draw.CatmullRom), s
}

// Downscaler downscales the screens of one run for one profile, as
// Downscale does. A screen that differs from the one before in a few rows
// costs about those rows: the rest of the result is copied from the last
// one. It keeps the last screen to compare with, so a screen must not
// change after it was given. It is safe for concurrent use.
type Downscaler struct {
	profile model.Profile
	mu      sync.Mutex
	last    resampling
}

// NewDownscaler returns a downscaler for the profile's image size.
func NewDownscaler(p model.Profile) *Downscaler { return &Downscaler{profile: p} }

// Downscale returns img at the profile's preferred size and the scale
// between the two, the same pixels as Downscale(img, profile).
func (d *Downscaler) Downscale(img image.Image) (image.Image, Scale) {
	rgba, ok := img.(*image.RGBA)
	if !ok {
		return Downscale(img, d.profile)
	}
	small, s := d.downscale(rgba, false)
	return small, s
}

// DownscaleOpaque is Downscale of a screen the caller knows to be opaque
// (an X11 capture, whose every pixel the capture made opaque): no pixel's
// alpha is read, and the result, at whatever size, is opaque too.
func (d *Downscaler) DownscaleOpaque(img *image.RGBA) (*image.RGBA, Scale) {
	return d.downscale(img, true)
}

// downscale is Downscale of an RGBA screen, known to be opaque or not yet.
func (d *Downscaler) downscale(rgba *image.RGBA, opaque bool) (*image.RGBA, Scale) {
	img := image.Image(rgba)
	b := img.Bounds()
	w, h := d.profile.Image.Fit(b.Dx(), b.Dy())
	s := Scale{Screen: image.Pt(b.Dx(), b.Dy()), Sent: image.Pt(w, h)}
	if s.Sent == s.Screen {
		return rgba, s
	}
	d.mu.Lock()
	dst, ok := d.last.scale(rgba, w, h, opaque)
	d.mu.Unlock()
	if !ok {
		return resize(img, w, h, draw.CatmullRom).(*image.RGBA), s
	}
	return dst, s
}

func resize(img image.Image, w, h int, scaler draw.Scaler) image.Image {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	scaler.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	return dst
}

// MapPoint maps a point a model gave in convention c on the sent image back
// to screen pixels. Absolute points must lie inside the sent image
// (0 ≤ x < width); relative points inside 0–1000. Anything else, including
// NaN and infinities, is ErrUnavailable.
func MapPoint(s Scale, c model.Coordinates, x, y float64) (image.Point, error) {
	if s.Screen.X <= 0 || s.Screen.Y <= 0 || s.Sent.X <= 0 || s.Sent.Y <= 0 {
		return image.Point{}, fmt.Errorf("%w: empty image", ErrUnavailable)
	}
	if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return image.Point{}, fmt.Errorf("%w: point is not finite", ErrUnavailable)
	}
	var fx, fy float64
	switch c {
	case model.Absolute:
		if x < 0 || y < 0 || x >= float64(s.Sent.X) || y >= float64(s.Sent.Y) {
			return image.Point{}, fmt.Errorf("%w: point (%g, %g) is outside the %d×%d image", ErrUnavailable, x, y, s.Sent.X, s.Sent.Y)
		}
		// The centre of sent pixel x lies at x+0.5; take the screen
		// pixel that contains it.
		fx = (x + 0.5) * float64(s.Screen.X) / float64(s.Sent.X)
		fy = (y + 0.5) * float64(s.Screen.Y) / float64(s.Sent.Y)
	case model.Relative1000:
		if x < 0 || y < 0 || x > 1000 || y > 1000 {
			return image.Point{}, fmt.Errorf("%w: point (%g, %g) is outside 0–1000", ErrUnavailable, x, y)
		}
		fx = x / 1000 * float64(s.Screen.X)
		fy = y / 1000 * float64(s.Screen.Y)
	default:
		return image.Point{}, fmt.Errorf("%w: unknown coordinate convention %q", ErrUnavailable, c)
	}
	px := min(int(math.Floor(fx)), s.Screen.X-1)
	py := min(int(math.Floor(fy)), s.Screen.Y-1)
	return image.Pt(px, py), nil
}

// Locate asks the model where description is on img and returns the point
// in img's own pixel coordinates (offset by img.Bounds().Min). A malformed
// or out-of-bounds answer, or a failed model call, is ErrUnavailable; an
// explicit "not found" is ErrNotFound.
func Locate(ctx context.Context, t Turner, p model.Profile, img image.Image, description string) (image.Point, error) {
	sent, scale := Downscale(img, p)
	pngBytes, err := encodePNG(sent)
	if err != nil {
		return image.Point{}, err
	}
	resp, err := t.Turn(ctx, model.Request{
		System:   locateSystem,
		Messages: []model.Message{{Role: model.RoleUser, Text: locatePrompt(p.Coordinates, scale.Sent, description), Images: []model.Image{{PNG: pngBytes}}}},
	})
	if err != nil {
		return image.Point{}, fmt.Errorf("%w: locate %q: %w", ErrUnavailable, description, err)
	}
	x, y, err := parseLocate(resp.Text)
	if err != nil {
		return image.Point{}, fmt.Errorf("locate %q: %w", description, err)
	}
	pt, err := MapPoint(scale, p.Coordinates, x, y)
	if err != nil {
		return image.Point{}, fmt.Errorf("locate %q: %w", description, err)
	}
	return pt.Add(img.Bounds().Min), nil
}

const locateSystem = "You locate user-interface elements on screenshots. You answer with one JSON object and nothing else."

// SystemPrompts returns the system prompts the locator and the judge send,
// by role, so run manifests can record their hashes.
func SystemPrompts() map[string]string {
	return map[string]string{"locate": locateSystem, "judge": judgeSystem}
}

func locatePrompt(c model.Coordinates, sent image.Point, description string) string {
	var conv string
	if c == model.Relative1000 {
		conv = "x and y are coordinates scaled to 0–1000 across the image's width and height, x from the left edge and y from the top edge"
	} else {
		conv = fmt.Sprintf("x and y are pixel coordinates in this image, which is %d pixels wide and %d pixels high, x from the left edge and y from the top edge", sent.X, sent.Y)
	}
	return fmt.Sprintf("Find this on the screenshot: %s\n\nAnswer with only a JSON object {\"point\": [x, y]} giving the centre of it, where %s. If it is not visible, answer {\"found\": false}.", description, conv)
}

// parseLocate reads {"point": [x, y]} (or Qwen's native "point_2d"), or
// {"found": false}.
func parseLocate(text string) (float64, float64, error) {
	raw, ok := extractJSON(text)
	if !ok {
		return 0, 0, fmt.Errorf("%w: answer has no JSON object: %q", ErrUnavailable, clip(text))
	}
	// Qwen sometimes wraps its answer in a one-element list.
	var list []json.RawMessage
	if json.Unmarshal([]byte(raw), &list) == nil {
		if len(list) != 1 {
			return 0, 0, fmt.Errorf("%w: answer lists %d objects, want one", ErrUnavailable, len(list))
		}
		raw = string(list[0])
	}
	var v struct {
		Point   []float64 `json:"point"`
		Point2D []float64 `json:"point_2d"`
		Found   *bool     `json:"found"`
	}
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return 0, 0, fmt.Errorf("%w: answer is not the expected JSON: %q", ErrUnavailable, clip(text))
	}
	point := v.Point
	if point == nil {
		point = v.Point2D
	}
	if point == nil {
		if v.Found != nil && !*v.Found {
			return 0, 0, ErrNotFound
		}
		return 0, 0, fmt.Errorf("%w: answer has no point: %q", ErrUnavailable, clip(text))
	}
	if len(point) != 2 {
		return 0, 0, fmt.Errorf("%w: point has %d numbers, want 2", ErrUnavailable, len(point))
	}
	return point[0], point[1], nil
}

var (
	answerTag = regexp.MustCompile(`(?s)<answer>(.*?)</answer>`)
	codeFence = regexp.MustCompile("(?s)```[a-zA-Z]*\\s*(.*?)```")
)

// extractJSON finds the JSON in a model answer: inside <answer> tags or a
// code fence if present, then from the first brace or bracket to the last.
func extractJSON(text string) (string, bool) {
	if m := answerTag.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	if m := codeFence.FindStringSubmatch(text); m != nil {
		text = m[1]
	}
	start := strings.IndexAny(text, "{[")
	if start < 0 {
		return "", false
	}
	closer := "}"
	if text[start] == '[' {
		closer = "]"
	}
	end := strings.LastIndex(text, closer)
	if end < start {
		return "", false
	}
	return text[start : end+1], true
}

func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

func encodePNG(img image.Image) ([]byte, error) {
	var b bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode screen for the model: %w", err)
	}
	return b.Bytes(), nil
}

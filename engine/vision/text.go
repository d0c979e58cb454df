package vision

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"

	"github.com/kasmrt/kasmrt/drivers/ocr"
	"github.com/kasmrt/kasmrt/engine/model"
)

// Locator answers "where is this" about an image, in the image's own pixel
// coordinates. The vision model and OCR both answer it.
type Locator interface {
	Locate(ctx context.Context, img image.Image, what string) (image.Point, error)
}

// TextReader answers "what text is here" about an image. No words is a
// valid answer.
type TextReader interface {
	ReadText(ctx context.Context, img image.Image) ([]ocr.Word, error)
}

// ErrAmbiguous is an answer that found the thing in more than one place.
var ErrAmbiguous = errors.New("found in more than one place")

// Model locates with the vision model.
type Model struct {
	Turner  Turner
	Profile model.Profile
}

// Locate asks the model; see the package function Locate.
func (m Model) Locate(ctx context.Context, img image.Image, description string) (image.Point, error) {
	return Locate(ctx, m.Turner, m.Profile, img, description)
}

// OCR reads text with tesseract and locates text by reading it.
type OCR struct {
	Reader *ocr.Reader
}

// ReadText returns the words on img.
func (o OCR) ReadText(ctx context.Context, img image.Image) ([]ocr.Word, error) {
	words, err := o.Reader.Read(ctx, img)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return words, nil
}

// Locate returns the centre of the one place text is read on img. Not
// read is ErrNotFound and read more than once ErrAmbiguous, each saying
// what was read.
func (o OCR) Locate(ctx context.Context, img image.Image, text string) (image.Point, error) {
	matches, words, err := o.FindText(ctx, img, text)
	if err != nil {
		return image.Point{}, err
	}
	if len(matches) != 1 {
		return image.Point{}, TextNotOne(text, matches, words, img.Bounds())
	}
	return Centre(matches[0].Box), nil
}

// FindText returns every place text is read on img, and all the words.
func (o OCR) FindText(ctx context.Context, img image.Image, text string) ([]ocr.Match, []ocr.Word, error) {
	words, err := o.ReadText(ctx, img)
	if err != nil {
		return nil, nil, err
	}
	return ocr.Find(words, text), words, nil
}

// Centre is the middle pixel of r.
func Centre(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}

// TextNotOne words the error for text read no times (ErrNotFound, with
// what was read instead) or several times (ErrAmbiguous, with where each
// is in area's terms, never in pixels, since the model may read it).
func TextNotOne(text string, matches []ocr.Match, words []ocr.Word, area image.Rectangle) error {
	if len(matches) == 0 {
		read := strings.Join(strings.Fields(ocr.Text(words)), " ")
		if read == "" {
			return fmt.Errorf("%w: no text %q: no text was read there", ErrNotFound, text)
		}
		return fmt.Errorf("%w: no text %q; read: %q", ErrNotFound, text, clip(read))
	}
	places := make([]string, len(matches))
	for i, m := range matches {
		places[i] = fmt.Sprintf("%q %s", m.Text, Whereabouts(Centre(m.Box), area))
	}
	return fmt.Errorf("%w: the text %q is read %d times: %s; narrow the target with within or near", ErrAmbiguous, text, len(matches), strings.Join(places, ", "))
}

// Whereabouts says where p lies in area in words ("in the top left"), for
// messages the model reads.
func Whereabouts(p image.Point, area image.Rectangle) string {
	if area.Empty() {
		return "on the screen"
	}
	third := func(v, lo, size int, names [3]string) string {
		return names[min(max((v-lo)*3/size, 0), 2)]
	}
	row := third(p.Y, area.Min.Y, area.Dy(), [3]string{"top", "middle", "bottom"})
	col := third(p.X, area.Min.X, area.Dx(), [3]string{"left", "centre", "right"})
	if row == "middle" && col == "centre" {
		return "in the centre"
	}
	return "in the " + row + " " + col
}

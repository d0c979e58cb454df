package vision

import (
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/kasmrt/kasmrt/drivers/ocr"
)

var (
	_ Locator    = Model{}
	_ Locator    = OCR{}
	_ TextReader = OCR{}
)

func TestTextNotOne(t *testing.T) {
	t.Parallel()
	area := image.Rect(100, 100, 400, 400)
	words := []ocr.Word{{Text: "Save", Box: image.Rect(110, 110, 150, 120), Line: 1}, {Text: "save", Box: image.Rect(300, 350, 340, 360), Line: 2}}
	tests := []struct {
		name    string
		text    string
		matches []ocr.Match
		words   []ocr.Word
		is      error
		want    []string
	}{
		{"nothing read", "Open", nil, nil, ErrNotFound, []string{`no text "Open": no text was read there`}},
		{"other words read", "Open", nil, words, ErrNotFound, []string{`no text "Open"; read: "Save save"`}},
		{"read twice", "save", ocr.Find(words, "save"), words, ErrAmbiguous,
			[]string{`read 2 times: "Save" in the top left, "save" in the bottom right`, "within or near"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := TextNotOne(tt.text, tt.matches, tt.words, area)
			if !errors.Is(err, tt.is) {
				t.Errorf("err %v, want %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
}

func TestWhereabouts(t *testing.T) {
	t.Parallel()
	area := image.Rect(0, 0, 300, 300)
	for _, tt := range []struct {
		p    image.Point
		want string
	}{
		{image.Pt(10, 10), "in the top left"}, {image.Pt(150, 150), "in the centre"},
		{image.Pt(299, 150), "in the middle right"}, {image.Pt(150, 299), "in the bottom centre"},
		{image.Pt(-5, 400), "in the bottom left"},
	} {
		if got := Whereabouts(tt.p, area); got != tt.want {
			t.Errorf("Whereabouts(%v) = %q, want %q", tt.p, got, tt.want)
		}
	}
}

package cache

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
)

func TestParseMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in            string
		want          Mode
		reads, writes bool
		bad           bool
	}{
		{"", Off, false, false, false},
		{"off", Off, false, false, false},
		{"read-only", ReadOnly, true, false, false},
		{"read-write", ReadWrite, true, true, false},
		{"on", Off, false, false, true},
	} {
		m, err := ParseMode(tt.in)
		if (err != nil) != tt.bad || m != tt.want || m.Reads() != tt.reads || m.Writes() != tt.writes {
			t.Errorf("ParseMode(%q) = %q, %v (reads %v, writes %v)", tt.in, m, err, m.Reads(), m.Writes())
		}
	}
}

func TestDir(t *testing.T) {
	t.Parallel()
	if got := Dir("scenarios/login.yaml"); got != filepath.Join("scenarios", "login.kasmrt-cache") {
		t.Errorf("Dir = %q", got)
	}
}

// screen draws a 1280x800 white screen with dark boxes, like a form.
func screen(boxes ...image.Rectangle) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 800))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	for _, b := range boxes {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				// A pattern inside each box, so a crop is found by what
				// is in it and not only by its edges.
				v := noise(x-b.Min.X, y-b.Min.Y)
				img.Set(x, y, color.RGBA{v, v / 2, 40, 0xff})
			}
		}
	}
	return img
}

// noise is a grey level that looks random from pixel to pixel, so a crop
// matches only where it was taken.
func noise(x, y int) uint8 {
	h := uint32(x)*2654435761 ^ uint32(y)*2246822519
	h ^= h >> 13
	h *= 3266489917
	h ^= h >> 16
	return uint8(h)
}

// TestHashDistance: the same screen, one with a caret-sized change, and
// one with a small button moved fit (the hash is the coarse check; the
// control, the page element and the crop are the fine ones); a dialog
// over the form, or another screen, does not.
func TestHashDistance(t *testing.T) {
	t.Parallel()
	form := []image.Rectangle{image.Rect(40, 40, 400, 80), image.Rect(40, 120, 360, 150), image.Rect(40, 600, 160, 640)}
	base := Hash(screen(form...))
	caret := Hash(screen(append(form, image.Rect(300, 125, 302, 145))...))
	moved := Hash(screen(form[0], form[1], image.Rect(900, 300, 1020, 340)))
	dialog := Hash(screen(append(form, image.Rect(300, 200, 980, 600))...))
	other := Hash(screen(image.Rect(0, 0, 1280, 60), image.Rect(100, 300, 1180, 700)))
	for _, tt := range []struct {
		name string
		h    string
		fits bool
	}{
		{"the same screen", base, true},
		{"a caret more", caret, true},
		{"a small button moved", moved, true},
		{"a dialog over the form", dialog, false},
		{"another screen", other, false},
	} {
		d := Distance(base, tt.h)
		if (d >= 0 && d <= MaxDistance) != tt.fits {
			t.Errorf("%s: distance %d (fits at most %d), want fits=%v", tt.name, d, MaxDistance, tt.fits)
		}
	}
	if Distance(base, "zz") != -1 || Distance("", "") != -1 {
		t.Error("a malformed hash has a distance")
	}
}

// TestFindCrop: a grounded click's crop is found where it was and a few
// pixels off, and not once the place shows something else.
func TestFindCrop(t *testing.T) {
	t.Parallel()
	button := image.Rect(600, 380, 700, 420)
	p := image.Pt(650, 400)
	crop, err := Crop(screen(button), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		img  image.Image
		want bool
		at   image.Point
	}{
		{"where it was", screen(button), true, p},
		{"ten pixels off", screen(button.Add(image.Pt(10, -6))), true, p.Add(image.Pt(10, -6))},
		{"gone", screen(), false, image.Point{}},
		{"far away", screen(button.Add(image.Pt(200, 0))), false, image.Point{}},
	} {
		at, got, err := FindCrop(tt.img, crop, p, 24)
		if err != nil || got != tt.want || at != tt.at {
			t.Errorf("%s: FindCrop = %v, %v, %v; want %v at %v", tt.name, at, got, err, tt.want, tt.at)
		}
	}
}

// TestStoreLoad: a stored trajectory reads back; another key's, or none,
// reads as nothing; storing again removes the crops no longer used.
func TestStoreLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "s.kasmrt-cache")
	key := "0123456789abcdef0123456789abcdef"
	if tr, err := Load(dir, key); tr != nil || err != nil {
		t.Fatalf("Load of nothing = %v, %v", tr, err)
	}
	old := CropName(key, 1)
	tr := Trajectory{Key: key, Steps: []Step{{Tool: "click_grounded", Args: map[string]any{"description": "OK"}, Crop: old}}, End: &End{Verdict: "goal-met"}}
	if err := Store(dir, tr, map[string][]byte{old: []byte("png")}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir, key)
	if err != nil || got == nil || got.Schema != Schema || len(got.Steps) != 1 || got.Steps[0].Crop != old || got.End.Verdict != "goal-met" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	if other, err := Load(dir, "f"+key[1:]); other != nil || err != nil {
		t.Errorf("another key's Load = %+v, %v", other, err)
	}
	tr.Steps[0].Crop = ""
	if err := Store(dir, tr, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, old)); err == nil {
		t.Error("the unused crop stayed")
	}
	if _, err := ReadCrop(dir, "../x.png"); err == nil {
		t.Error("ReadCrop read outside the folder")
	}
}

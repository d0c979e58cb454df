package ocr

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kasmrt/kasmrt/drivers/x11"
	"github.com/kasmrt/kasmrt/internal/testkit"
)

// need marks a test of the integration layer that runs tesseract and the
// other programs named.
func need(t testing.TB, bins ...string) {
	t.Helper()
	testkit.Need(t, append([]string{Command}, bins...)...)
}

func decode(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// zenityWindow starts Xvfb and a zenity question, and returns a capture of
// the dialog's window once its text is painted.
func zenityWindow(t testing.TB) (screen *image.RGBA, window image.Rectangle) {
	t.Helper()
	need(t, "Xvfb", "zenity")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	s, err := x11.StartServer(ctx, x11.DisplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c, err := x11.Dial(s.Display())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cmd := exec.Command("zenity", "--question", "--title=Proceed?", "--text=Continue the test?", "--width=320")
	cmd.Env = append(os.Environ(), "DISPLAY="+s.Display(), "GSETTINGS_BACKEND=memory", "NO_AT_BRIDGE=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	w, err := c.FindWindow(ctx, x11.WindowMatch{Title: "Proceed?"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the first frame after mapping
	img, _, err := c.WaitSettled(ctx, x11.SettleOptions{Interval: 100 * time.Millisecond, Cap: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return img, image.Rect(w.X, w.Y, w.X+w.Width, w.Y+w.Height)
}

// The words of a real GTK dialog are read with boxes inside the dialog,
// in screen coordinates, and its buttons are found by their labels.
func TestReadGTKDialog(t *testing.T) {
	t.Parallel()
	screen, win := zenityWindow(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, helper := range []string{"-", helperBinary(t)} {
		r := NewReaderWith(1, helper)
		defer r.Close()
		words, err := r.Read(ctx, screen.SubImage(win))
		if err != nil {
			t.Fatal(err)
		}
		checkDialogWords(t, words, win)
	}
}

// checkDialogWords checks what was read on zenity's question dialog.
func checkDialogWords(t *testing.T, words []Word, win image.Rectangle) {
	t.Helper()
	text := Text(words)
	for _, want := range []string{"Continue the test?", "Yes", "No"} {
		if len(Find(words, want)) != 1 {
			t.Errorf("%q found %d times in %q", want, len(Find(words, want)), text)
		}
	}
	for _, w := range words {
		if !w.Box.In(win) || w.Confidence < 0 || w.Confidence > 100 {
			t.Errorf("word %+v: box outside the window %v or confidence out of range", w, win)
		}
	}
	yes, no := Find(words, "yes"), Find(words, "No")
	if len(yes) == 1 && len(no) == 1 && yes[0].Box.Min.X <= no[0].Box.Max.X {
		t.Errorf("Yes at %v is not right of No at %v, as zenity lays them out", yes[0].Box, no[0].Box)
	}
}

// A whole screen is read in reading order, one row per line, even where
// tesseract lists a row's parts out of order.
func TestReadScreenInRows(t *testing.T) {
	t.Parallel()
	need(t)
	// A capture of the xterm demo after it greeted the visitor.
	img := decode(t, "../../scenarios/examples/greeting-done.png")
	words, err := NewReader(1).Read(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if text := Text(words); !strings.Contains(text, "Hello, Ada Lovelace!") {
		t.Errorf("read %q, want the greeting on one line", text)
	}
}

// A blank image has no words, and that is an answer.
func TestReadBlank(t *testing.T) {
	t.Parallel()
	need(t)
	words, err := NewReader(1).Read(context.Background(), image.NewRGBA(image.Rect(0, 0, 200, 100)))
	if err != nil || len(words) != 0 {
		t.Errorf("blank image read as %v, %v", words, err)
	}
}

func TestReadWithoutTesseract(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := NewReader(1).Read(context.Background(), image.NewRGBA(image.Rect(0, 0, 10, 10))); err != ErrNotInstalled {
		t.Errorf("err = %v, want ErrNotInstalled", err)
	}
}

func TestParseTSVAndFind(t *testing.T) {
	t.Parallel()
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t640\t400\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t10\t20\t40\t12\t96.5\tSave\n" +
		"5\t1\t1\t1\t1\t2\t55\t20\t20\t12\t91\tAs…\n" +
		"5\t1\t1\t1\t2\t1\t10\t40\t40\t12\t88\tsave\n" +
		"5\t1\t2\t1\t1\t1\t300\t20\t30\t12\t95\tAs\n" +
		"5\t1\t2\t1\t1\t2\t340\t20\t30\t12\t95\t \n"
	words, err := parseTSV([]byte(tsv))
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(words); got != "Save As… As\nsave" {
		t.Errorf("Text = %q", got)
	}
	tests := []struct {
		phrase string
		boxes  []image.Rectangle
	}{
		{"Save", []image.Rectangle{image.Rect(10, 20, 50, 32), image.Rect(10, 40, 50, 52)}},
		{"save as", []image.Rectangle{image.Rect(10, 20, 75, 32)}},
		{"as save", nil},
		{"Open", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var boxes []image.Rectangle
		for _, m := range Find(words, tt.phrase) {
			boxes = append(boxes, m.Box)
		}
		if len(boxes) != len(tt.boxes) || (len(boxes) > 0 && boxes[0] != tt.boxes[0]) {
			t.Errorf("Find(%q) = %v, want %v", tt.phrase, boxes, tt.boxes)
		}
	}
	if _, err := parseTSV([]byte("h\n5\t1\t1\t1\t1\t1\tx\t0\t1\t1\t9\tw\n")); err == nil {
		t.Error("a malformed row was accepted")
	}
}

// BenchmarkReadScreen reads the xterm demo's 1280x800 capture.
func BenchmarkReadScreen(b *testing.B) {
	need(b)
	benchReaders(b, decode(b, "../../scenarios/examples/greeting-done.png"))
}

// BenchmarkReadBlank reads a blank 32x32 image: what every read pays
// before any text. Through the command that is tesseract's start and the
// loading of its model; the long-lived helper pays it once.
func BenchmarkReadBlank(b *testing.B) {
	need(b)
	img := image.NewRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = 0xff
	}
	benchReaders(b, img)
}

// BenchmarkReadWindow reads a zenity dialog's window.
func BenchmarkReadWindow(b *testing.B) {
	screen, win := zenityWindow(b)
	benchReaders(b, screen.SubImage(win))
}

// benchReaders reads img with the tesseract command for each read, and
// through the long-lived helper.
func benchReaders(b *testing.B, img image.Image) {
	for _, c := range []struct{ name, helper string }{{"command", "-"}, {"helper", helperBinary(b)}} {
		b.Run(c.name, func(b *testing.B) {
			r := NewReaderWith(1, c.helper)
			defer r.Close()
			// The helper's start is not a read.
			if _, err := r.Read(context.Background(), img); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.Read(context.Background(), img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFind finds a two-word phrase among the words of a zenity dialog
// read once: the part of resolving a text target after the read.
func BenchmarkFind(b *testing.B) {
	screen, win := zenityWindow(b)
	words, err := NewReader(1).Read(context.Background(), screen.SubImage(win))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if len(Find(words, "the test?")) != 1 {
			b.Fatal("phrase not found")
		}
	}
}

package report

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kasmrt/kasmrt/internal/screenpng"
)

// Frame is one captured screen. Its PNG is encoded at most once, by
// whichever needs it first: the report's writer in the background, or a
// caller that sends the full-size screen to the model. A frame made from a
// PNG alone (a headless page's capture, as the browser encoded it) is
// decoded at most once, by whichever first asks for its pixels.
type Frame struct {
	img *image.RGBA
	// bounds is img's, known before img for a frame made from a PNG.
	bounds image.Rectangle
	// encoder, when set, is the report's, which reuses what the screen
	// shares with the one encoded before it.
	encoder *screenpng.Encoder
	// opaque says img's every pixel is opaque by construction (an X11
	// capture), so encoding it reads no pixel's alpha.
	opaque bool

	// decode, for a frame made from a PNG, sets img or decodeErr.
	decode    sync.Once
	decodeErr error
	decoded   atomic.Bool

	encode sync.Once
	png    []byte
	err    error
	// cores is how many goroutines encoded it (zero: every core), read
	// once encoded is set.
	cores   int
	encoded atomic.Bool

	hash sync.Once
	sum  [32]byte
}

// NewFrame wraps a capture; img must not change afterwards.
func NewFrame(img *image.RGBA) *Frame {
	f := &Frame{img: img, bounds: img.Bounds()}
	f.decode.Do(func() {})
	f.decoded.Store(true)
	return f
}

// NewFrame wraps a capture of the run whose report w writes: its PNG is
// encoded with the screens before it, recompressing only the bands that
// changed (the same bytes either way). img must not change afterwards.
func (w *Writer) NewFrame(img *image.RGBA) *Frame {
	f := NewFrame(img)
	f.encoder = &w.encoder
	return f
}

// NewCaptureFrame is NewFrame of an X11 capture: every pixel of img is
// opaque (the capture sets each one's alpha), so its PNG is encoded
// without reading the alpha of 1,024,000 pixels again first. img must not
// change afterwards.
func (w *Writer) NewCaptureFrame(img *image.RGBA) *Frame {
	f := w.NewFrame(img)
	f.opaque = true
	return f
}

// KnownOpaque says the frame's every pixel is opaque by construction (it
// was made by NewCaptureFrame), so what is made from it, such as the
// model's downscale, is too.
func (f *Frame) KnownOpaque() bool { return f.opaque }

// NewPNGFrame wraps a capture that came encoded as PNG (a headless page,
// as the browser encoded it): data is written as it is and never encoded
// here, and its pixels are decoded only when Image or Sum first asks for
// them, so a capture that is only kept costs no decode. Its size comes
// from the PNG's header; a header that cannot be read is an error here.
// data must not change afterwards.
func (w *Writer) NewPNGFrame(data []byte) (*Frame, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read the screen's PNG header: %w", err)
	}
	f := &Frame{bounds: image.Rect(0, 0, cfg.Width, cfg.Height), cores: CameEncoded, png: data}
	f.encode.Do(func() {})
	f.encoded.Store(true)
	return f, nil
}

// CameEncoded is what EncodedOn says of a frame that came encoded.
const CameEncoded = -1

// Bounds is the screen's size, known without decoding it.
func (f *Frame) Bounds() image.Rectangle { return f.bounds }

// Image is the captured screen, decoded on the first call for a frame
// made from a PNG. A PNG that does not decode is an error on every call.
func (f *Frame) Image() (*image.RGBA, error) {
	f.decode.Do(func() {
		img, err := screenpng.Decode(f.png)
		switch {
		case err != nil:
			f.decodeErr = fmt.Errorf("decode screen: %w", err)
		case img.Bounds() != f.bounds:
			// The header was read apart from the decode; a disagreement
			// would give the events a size the pixels do not have.
			f.decodeErr = fmt.Errorf("decode screen: %v, but its header said %v", img.Bounds(), f.bounds)
		default:
			f.img = img
		}
		f.decoded.Store(true)
	})
	return f.img, f.decodeErr
}

// Decoded says whether the screen's pixels have been asked for and
// decoded (always, for a frame made from pixels). It is how a test tells
// that a capture was only kept, never decoded on the step's path.
func (f *Frame) Decoded() bool { return f.decoded.Load() }

// PNG returns the screen encoded as PNG, encoding it on every core on the
// first call.
func (f *Frame) PNG() ([]byte, error) { return f.pngOn(0) }

// pngOn is PNG, encoding on at most cores goroutines if it must (zero:
// every core).
func (f *Frame) pngOn(cores int) ([]byte, error) {
	f.encode.Do(func() {
		f.cores = cores
		switch {
		case f.encoder != nil && f.opaque:
			f.png, f.err = f.encoder.EncodeOpaque(f.img, cores)
		case f.encoder != nil:
			f.png, f.err = f.encoder.Encode(f.img, cores)
		default:
			f.png, f.err = screenpng.BytesOn(f.img, cores)
		}
		if f.err != nil {
			f.err = fmt.Errorf("encode screen: %w", f.err)
		}
		f.encoded.Store(true)
	})
	return f.png, f.err
}

// EncodedOn says, once the PNG is encoded, on how many cores it was: one
// when the report's writer encoded it in the background, zero when a
// caller that needed it first encoded it on every core, CameEncoded when
// it was never encoded here. It is how a test tells which of them was on
// the step's path.
func (f *Frame) EncodedOn() (cores int, encoded bool) {
	if !f.encoded.Load() {
		return 0, false
	}
	return f.cores, true
}

// Sum identifies the screen's pixels, computed once: what repeat
// detection compares instead of keeping the screens. Two frames of one
// process with the same size and pixels have the same sum, and two that
// differ in a single byte almost surely do not. It decodes a frame made
// from a PNG, and fails as Image does.
func (f *Frame) Sum() ([32]byte, error) {
	img, err := f.Image()
	if err != nil {
		return [32]byte{}, err
	}
	f.hash.Do(func() { f.sum = pixelSum(img) })
	return f.sum, nil
}

// pixelSeed seeds every frame's sum in this process. It is chosen once
// and never changes, so the sums of one run compare; no sum is kept past
// the process, so a fresh seed per process costs nothing.
var pixelSeed = maphash.MakeSeed()

// pixelSum is img's size and a 64-bit maphash of its pixels. Repeat
// detection compares a run's few hundred screens with each other, where a
// 64-bit hash's chance of a collision is below 1e-14; maphash reads a
// 4 MB screen about six times as fast as SHA-256, whose resistance to a
// chosen collision nothing here needs (docs/benchmarks.md, "Per step at
// 1280x800").
func pixelSum(img *image.RGBA) [32]byte {
	var sum [32]byte
	binary.LittleEndian.PutUint64(sum[0:], maphash.Bytes(pixelSeed, img.Pix))
	binary.LittleEndian.PutUint32(sum[8:], uint32(img.Rect.Dx()))
	binary.LittleEndian.PutUint32(sum[12:], uint32(img.Rect.Dy()))
	binary.LittleEndian.PutUint32(sum[16:], uint32(img.Stride))
	return sum
}

// screenQueue bounds the screens waiting to be written, so a run that
// captures faster than the disk takes them holds at most this many
// captures (4 MB each at 1280x800) before SaveFrame waits.
const screenQueue = 4

type pendingScreen struct {
	rel   string
	frame *Frame
}

// SaveFrame numbers f as the next screens/NNNN.png, queues it to be
// encoded and written in the background and returns its path relative to
// the report directory. The file appears complete or not at all (it is
// renamed into place); Close waits for every queued screen, and a reader
// that may race the writer opens it with OpenScreen.
func (w *Writer) SaveFrame(f *Frame) string {
	w.mu.Lock()
	w.screens++
	rel := fmt.Sprintf("screens/%04d.png", w.screens)
	if w.queue == nil && !w.closed {
		w.queue = make(chan pendingScreen, screenQueue)
		w.written = make(chan struct{})
		go w.writeScreens(w.queue, w.written)
	}
	queue, closed := w.queue, w.closed
	w.mu.Unlock()
	if closed {
		// Too late for the background: write it here.
		w.writeScreen(pendingScreen{rel, f})
		return rel
	}
	queue <- pendingScreen{rel, f}
	return rel
}

func (w *Writer) writeScreens(queue <-chan pendingScreen, done chan<- struct{}) {
	defer close(done)
	for p := range queue {
		w.writeScreen(p)
	}
}

func (w *Writer) writeScreen(p pendingScreen) {
	if err := w.writeScreenFile(p); err != nil {
		w.mu.Lock()
		w.fail(err)
		w.mu.Unlock()
	}
}

func (w *Writer) writeScreenFile(p pendingScreen) error {
	// One core: the other is the next step's.
	data, err := p.frame.pngOn(1)
	if err != nil {
		return fmt.Errorf("write %s: %w", p.rel, err)
	}
	path := filepath.Join(w.dir, filepath.FromSlash(p.rel))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p.rel, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", p.rel, err)
	}
	return nil
}

// flushScreens stops taking screens in the background and waits until
// every queued one is on disk.
func (w *Writer) flushScreens() {
	w.mu.Lock()
	queue, written := w.queue, w.written
	w.queue, w.closed = nil, true
	w.mu.Unlock()
	if queue != nil {
		close(queue)
		<-written
	}
}

// screenWait bounds how long OpenScreen waits for a screen still being
// written.
const screenWait = 3 * time.Second

// OpenScreen opens the report's screen rel (screens/NNNN.png) in dir,
// waiting a little for one the run has announced but not yet written.
func OpenScreen(dir, rel string) (*os.File, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	deadline := time.Now().Add(screenWait)
	for {
		f, err := os.Open(path)
		if err == nil || !errors.Is(err, fs.ErrNotExist) || time.Now().After(deadline) {
			return f, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

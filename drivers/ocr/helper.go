package ocr

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
)

// HelperCommand is kasmrt's long-lived tesseract (cmd/kasmrt-ocr), looked
// for next to the running program, then on PATH.
const HelperCommand = "kasmrt-ocr"

// maxAnswer bounds one TSV answer of the helper.
const maxAnswer = 64 << 20

// helper is one running kasmrt-ocr: it loaded tesseract's model once and
// reads every image the Reader sends it, one at a time.
type helper struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	// dead is set once the helper stopped; the Reader then reads with
	// the command.
	dead atomic.Bool
}

// findHelper returns the path of kasmrt-ocr, or "" when it is not
// installed.
func findHelper() string {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), HelperCommand)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	if p, err := exec.LookPath(HelperCommand); err == nil {
		return p
	}
	return ""
}

// startHelper starts the helper at path. It lives until Close, not for
// one request: it must not end with a read's context.
func startHelper(path string) (*helper, error) {
	cmd := exec.Command(path)
	cmd.Env = tesseractEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	return &helper{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// read sends img (its bounds start at 0,0) and returns the TSV. A context
// that ends mid-read stops the helper: its answer can no longer be told
// from the next one's.
func (h *helper) read(ctx context.Context, img *image.RGBA) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dead.Load() {
		return nil, errors.New("the OCR helper has stopped")
	}
	type answer struct {
		tsv []byte
		err error
	}
	done := make(chan answer, 1)
	go func() {
		tsv, err := h.exchange(img)
		done <- answer{tsv, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			h.stop()
		}
		return a.tsv, a.err
	case <-ctx.Done():
		h.stop()
		<-done
		return nil, ctx.Err()
	}
}

func (h *helper) exchange(img *image.RGBA) ([]byte, error) {
	b := img.Bounds()
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(b.Dx()))
	binary.BigEndian.PutUint32(head[4:], uint32(b.Dy()))
	if _, err := h.in.Write(head[:]); err != nil {
		return nil, fmt.Errorf("send an image to the OCR helper: %w", err)
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y) : img.PixOffset(b.Min.X, y)+b.Dx()*4]
		if _, err := h.in.Write(row); err != nil {
			return nil, fmt.Errorf("send an image to the OCR helper: %w", err)
		}
	}
	var status [5]byte
	if _, err := io.ReadFull(h.out, status[:]); err != nil {
		return nil, fmt.Errorf("read the OCR helper's answer: %w", err)
	}
	n := binary.BigEndian.Uint32(status[1:])
	if n > maxAnswer {
		return nil, fmt.Errorf("the OCR helper answered %d bytes, more than %d", n, maxAnswer)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(h.out, body); err != nil {
		return nil, fmt.Errorf("read the OCR helper's answer: %w", err)
	}
	if status[0] != 0 {
		return nil, fmt.Errorf("the OCR helper: %s", body)
	}
	return body, nil
}

// stop ends the helper; the caller holds mu.
func (h *helper) stop() {
	if h.dead.Swap(true) {
		return
	}
	_ = h.in.Close()
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
}

func (h *helper) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stop()
}

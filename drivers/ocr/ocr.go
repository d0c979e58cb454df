// Package ocr reads the text on a screen image with Debian's tesseract.
package ocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os/exec"
	"strings"
)

// Command is the tesseract executable looked up in PATH.
const Command = "tesseract"

// ErrNotInstalled is returned when tesseract is not on PATH.
var ErrNotInstalled = errors.New("tesseract is not installed (Debian packages tesseract-ocr and tesseract-ocr-eng)")

// Text returns the English text tesseract reads in img, as it lays it out
// (one line per line of text). Small GUI labels read less reliably than
// body text; accessible names and page text are better sources where an
// app has them.
func Text(ctx context.Context, img image.Image) (string, error) {
	path, err := exec.LookPath(Command)
	if err != nil {
		return "", ErrNotInstalled
	}
	var in bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&in, img); err != nil {
		return "", fmt.Errorf("read text: encode the image: %w", err)
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "stdin", "stdout", "-l", "eng")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, &stderr
	// One thread is several times faster on a shared machine than
	// tesseract's default of one per core.
	cmd.Env = append(cmd.Environ(), "OMP_THREAD_LIMIT=1")
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("read text: %w", ctx.Err())
		}
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return "", fmt.Errorf("read text with tesseract: %v: %s", err, msg)
	}
	return out.String(), nil
}

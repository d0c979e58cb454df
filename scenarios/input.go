package scenarios

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// maxSecretBytes bounds a secret file: a password or a key, not a document.
const maxSecretBytes = 64 << 10

// maxImageBytes bounds a reference image, which is sent to the model with
// every request that keeps it.
const maxImageBytes = 8 << 20

// readBounded reads a file the user named, refusing anything that is not a
// regular file and anything longer than limit bytes. It opens without
// blocking, so a FIFO is refused at once instead of waiting for a writer
// (which Ctrl-C could not interrupt), and /dev/zero is refused before a
// byte is read.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fileKind(st.Mode()))
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%w: the file is %d bytes; the limit is %d", errTooLarge, st.Size(), limit)
	}
	// The size can change after the stat; the limit holds regardless.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: the file is over %d bytes", errTooLarge, limit)
	}
	return data, nil
}

var errTooLarge = errors.New("too large")

// fileKind names what a non-regular file is, for the refusal.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

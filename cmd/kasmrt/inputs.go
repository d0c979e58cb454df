package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// requireRegularFile refuses a file flag naming a FIFO, a device or a
// directory before anything opens it: opening a FIFO blocks until a writer
// comes, and /dev/zero never ends.
func requireRegularFile(flag, path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, unwrapPath(err))
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s %s: not a regular file", flag, path)
	}
	return nil
}

// refuseBlockingOutput refuses an output file flag naming a FIFO or a
// socket, whose opening or writing would stall the run on whoever is (or
// is not) at the other end.
func refuseBlockingOutput(flag, path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, unwrapPath(err))
	}
	if st.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 || st.IsDir() {
		return fmt.Errorf("%s %s: not a file to write (a FIFO, a socket or a directory)", flag, path)
	}
	return nil
}

//go:build !cgo

package main

import (
	"fmt"
	"os"
)

// Without cgo there is no tesseract library to hold: say how to build it.
func main() {
	fmt.Fprintln(os.Stderr, "kasmrt-ocr needs cgo and Debian's libtesseract-dev: build it with CGO_ENABLED=1")
	os.Exit(1)
}

//go:build cgo

// Command kasmrt-ocr is kasmrt's long-lived tesseract: it loads the
// English model once and then reads image after image from its standard
// input, answering each with tesseract's TSV on its standard output. Every
// run of the tesseract command loads the model again, which costs as much
// CPU as reading a whole screen (docs/benchmarks.md, "Reading text"), so
// drivers/ocr uses this helper when it is installed next to kasmrt or on
// PATH, and the command otherwise. It is built apart from kasmrt, which
// stays a static binary without cgo.
//
// The protocol (drivers/ocr/helper.go): a request is the image's width and
// height as big-endian uint32s, then its RGBA pixels, row by row; the
// answer is a status byte (0 read, 1 failed), a big-endian uint32 length
// and that many bytes of TSV (with its header row) or of the error.
package main

/*
#cgo LDFLAGS: -ltesseract
#include <stdlib.h>
#include <tesseract/capi.h>
*/
import "C"

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// tsvHeader is the header row the tesseract command prints before its TSV
// rows; the library's TSV has none.
const tsvHeader = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"

// maxSide bounds an image's sides, so a corrupt header cannot make the
// helper allocate without limit.
const maxSide = 16384

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "kasmrt-ocr:", err)
		os.Exit(1)
	}
}

func serve(in io.Reader, out io.Writer) error {
	api := C.TessBaseAPICreate()
	defer C.TessBaseAPIDelete(api)
	lang := C.CString("eng")
	defer C.free(unsafe.Pointer(lang))
	if C.TessBaseAPIInit3(api, nil, lang) != 0 {
		return errors.New("load tesseract's English model (Debian package tesseract-ocr-eng)")
	}
	// Sparse text, as the command is run with --psm 11: text anywhere on
	// a screen rather than one column of a page.
	C.TessBaseAPISetPageSegMode(api, C.PSM_SPARSE_TEXT)
	r, w := bufio.NewReader(in), bufio.NewWriter(out)
	var header [8]byte
	var pix []byte
	for {
		if _, err := io.ReadFull(r, header[:]); err != nil {
			return err
		}
		width, height := binary.BigEndian.Uint32(header[:4]), binary.BigEndian.Uint32(header[4:])
		if width == 0 || height == 0 || width > maxSide || height > maxSide {
			return fmt.Errorf("an image of %dx%d pixels is not one to read", width, height)
		}
		n := int(width) * int(height) * 4
		if cap(pix) < n {
			pix = make([]byte, n)
		}
		pix = pix[:n]
		if _, err := io.ReadFull(r, pix); err != nil {
			return fmt.Errorf("read an image: %w", err)
		}
		C.TessBaseAPISetImage(api, (*C.uchar)(unsafe.Pointer(&pix[0])), C.int(width), C.int(height), 4, C.int(width*4))
		// Screens are 96 dpi; saying so spares tesseract its estimate.
		C.TessBaseAPISetSourceResolution(api, 96)
		text := C.TessBaseAPIGetTsvText(api, 0)
		status, answer := byte(0), ""
		if text == nil {
			status, answer = 1, "tesseract read nothing: the recognition failed"
		} else {
			answer = tsvHeader + C.GoString(text)
			C.TessDeleteText(text)
		}
		var head [5]byte
		head[0] = status
		binary.BigEndian.PutUint32(head[1:], uint32(len(answer)))
		if _, err := w.Write(head[:]); err != nil {
			return err
		}
		if _, err := w.WriteString(answer); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

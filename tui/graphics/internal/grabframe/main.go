// Command grabframe captures the realistic screenshots the graphics tests
// and benchmarks use: it starts Xvfb, opens an xterm and a zenity dialog,
// reads the root window with GetImage and writes PNGs.
//
//	go run ./tui/graphics/internal/grabframe -o tui/graphics/testdata
package main

import (
	"bufio"
	"flag"
	"fmt"
	"image"
	"image/png"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

func main() {
	out := flag.String("o", ".", "directory for the PNGs")
	flag.Parse()
	if err := run(*out); err != nil {
		log.Fatal(err)
	}
}

func run(dir string) error {
	for _, size := range []string{"1280x800", "640x400"} {
		if err := grab(size, filepath.Join(dir, "frame-"+size+".png")); err != nil {
			return fmt.Errorf("grab %s: %w", size, err)
		}
	}
	return nil
}

func grab(size, path string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	xvfb := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", size+"x24", "-nolisten", "tcp")
	xvfb.ExtraFiles = []*os.File{w}
	if err := xvfb.Start(); err != nil {
		return fmt.Errorf("start Xvfb: %w", err)
	}
	defer xvfb.Process.Kill()
	w.Close()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read display number: %w", err)
	}
	display := ":" + strings.TrimSpace(line)
	env := append(os.Environ(), "DISPLAY="+display)
	xterm := exec.Command("xterm", "-geometry", "90x30+10+10", "-fa", "DejaVu Sans Mono", "-fs", "10",
		"-bg", "#1e1e2e", "-fg", "#cdd6f4", "-e", "sh", "-c", "ls -l --color=always /usr/bin | head -40; sleep 30")
	xterm.Env = env
	zenity := exec.Command("zenity", "--question", "--text", "Save the changes to groceries.txt before closing?")
	zenity.Env = env
	for _, c := range []*exec.Cmd{xterm, zenity} {
		if err := c.Start(); err != nil {
			return fmt.Errorf("start %s: %w", c.Path, err)
		}
		defer c.Process.Kill()
	}
	time.Sleep(2 * time.Second)

	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return fmt.Errorf("connect %s: %w", display, err)
	}
	defer conn.Close()
	screen := xproto.Setup(conn).DefaultScreen(conn)
	width, height := int(screen.WidthInPixels), int(screen.HeightInPixels)
	reply, err := xproto.GetImage(conn, xproto.ImageFormatZPixmap, xproto.Drawable(screen.Root),
		0, 0, uint16(width), uint16(height), ^uint32(0)).Reply()
	if err != nil {
		return fmt.Errorf("get image: %w", err)
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	for i := 0; i < width*height; i++ {
		img.Pix[4*i], img.Pix[4*i+1], img.Pix[4*i+2], img.Pix[4*i+3] = reply.Data[4*i+2], reply.Data[4*i+1], reply.Data[4*i], 255
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

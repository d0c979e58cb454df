package report

import (
	"fmt"
	"io"
)

// DefaultAppLogMaxBytes bounds app.log when the operator file sets no
// runner.app_log_max_bytes: a chatty application must not fill the disk.
const DefaultAppLogMaxBytes = 16 << 20

// cappedLog keeps the first half of its budget in the file as it arrives
// and the most recent half in a ring in memory; when more arrived than the
// budget, finish marks the cut and appends the tail. The start of a run
// (how the app came up) and its end (how it failed) both survive.
type cappedLog struct {
	dst     io.Writer
	head    int64 // bytes the head may still take
	tail    []byte
	next    int // where the ring writes next: its oldest byte once full
	dropped int64
}

// LimitAppLog sets how many bytes app.log keeps (0: the default). Call it
// before the application writes anything.
func (w *Writer) LimitAppLog(max int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.appCap = newCappedLog(w.appLog, max)
}

func newCappedLog(dst io.Writer, max int64) *cappedLog {
	if max <= 0 {
		max = DefaultAppLogMaxBytes
	}
	half := max / 2
	return &cappedLog{dst: dst, head: max - half, tail: make([]byte, 0, half)}
}

func (c *cappedLog) Write(p []byte) (int, error) {
	n := len(p)
	if c.head > 0 {
		k := min(int64(len(p)), c.head)
		if _, err := c.dst.Write(p[:k]); err != nil {
			return 0, err
		}
		c.head -= k
		p = p[k:]
	}
	c.keepTail(p)
	return n, nil
}

// keepTail adds p to the ring, counting what it pushes out.
func (c *cappedLog) keepTail(p []byte) {
	size := cap(c.tail)
	if size == 0 {
		c.dropped += int64(len(p))
		return
	}
	if len(p) > size {
		c.dropped += int64(len(p) - size)
		p = p[len(p)-size:]
	}
	for len(p) > 0 {
		if len(c.tail) < size {
			k := min(len(p), size-len(c.tail))
			c.tail = append(c.tail, p[:k]...)
			p = p[k:]
			c.next = len(c.tail) % size
			continue
		}
		k := copy(c.tail[c.next:], p)
		c.dropped += int64(k)
		p = p[k:]
		c.next = (c.next + k) % size
	}
}

// finish writes the tail, after a line that says how much was cut when
// anything was.
func (c *cappedLog) finish() error {
	if c.dropped > 0 {
		if _, err := fmt.Fprintf(c.dst, "\n[kasmrt: app.log cut here: %d bytes left out; the last %d bytes follow]\n", c.dropped, len(c.tail)); err != nil {
			return err
		}
	}
	if _, err := c.dst.Write(c.tail[c.next:]); err != nil {
		return err
	}
	_, err := c.dst.Write(c.tail[:c.next])
	c.tail, c.next = c.tail[:0], 0
	return err
}

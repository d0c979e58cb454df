package wayland

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
)

// This file is a minimal Wayland client: the wire format (a header of
// object id, size and opcode, then 32-bit arguments, strings and arrays
// padded to 32 bits, file descriptors beside the bytes), object ids, and
// a read loop that hands each event to the handler of its object. The
// driver speaks five interfaces over it (wl_registry, wl_shm, the wlroots
// screencopy, virtual pointer and virtual keyboard), which is less code
// than a library and its generator would bring, and no Go Wayland library
// is offered by the module proxy this project builds from.

// wire is one connection to a compositor.
type wire struct {
	c *net.UnixConn

	writeMu sync.Mutex

	mu       sync.Mutex
	nextID   uint32
	handlers map[uint32]func(op uint16, a *args)
	// err is why the connection ended, once it has.
	err  error
	done chan struct{}
}

// dialWire connects to the compositor's socket at path and starts reading
// its events.
func dialWire(path string) (*wire, error) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, err
	}
	w := &wire{c: c, nextID: 2, handlers: map[uint32]func(uint16, *args){}, done: make(chan struct{})}
	w.handlers[displayID] = w.displayEvent
	go w.read()
	return w, nil
}

// displayID is wl_display, the object every connection starts with.
const displayID = 1

// newID allocates a client object id and sets the handler of its events
// (nil: its events are dropped).
func (w *wire) newID(h func(op uint16, a *args)) uint32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.nextID
	w.nextID++
	if h != nil {
		w.handlers[id] = h
	}
	return id
}

// forget drops an object's handler once the object is destroyed.
func (w *wire) forget(id uint32) {
	w.mu.Lock()
	delete(w.handlers, id)
	w.mu.Unlock()
}

// closed reports why the connection ended, or nil while it is open.
func (w *wire) closed() error {
	select {
	case <-w.done:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.err
	default:
		return nil
	}
}

// msg builds one request's arguments.
type msg struct {
	b   []byte
	fds []int
}

func (m *msg) uint(v uint32) *msg { m.b = binary.LittleEndian.AppendUint32(m.b, v); return m }
func (m *msg) int(v int32) *msg   { return m.uint(uint32(v)) }
func (m *msg) fd(fd int) *msg     { m.fds = append(m.fds, fd); return m }

func (m *msg) string(s string) *msg {
	m.uint(uint32(len(s) + 1))
	m.b = append(m.b, s...)
	m.b = append(m.b, 0)
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
	return m
}

// send writes a request of object id.
func (w *wire) send(id uint32, op uint16, m *msg) error {
	if m == nil {
		m = &msg{}
	}
	size := 8 + len(m.b)
	buf := make([]byte, 8, size)
	binary.LittleEndian.PutUint32(buf, id)
	binary.LittleEndian.PutUint32(buf[4:], uint32(size)<<16|uint32(op))
	buf = append(buf, m.b...)
	var oob []byte
	if len(m.fds) > 0 {
		oob = syscall.UnixRights(m.fds...)
	}
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if err := w.closed(); err != nil {
		return err
	}
	if _, _, err := w.c.WriteMsgUnix(buf, oob, nil); err != nil {
		return fmt.Errorf("write to the compositor: %w", err)
	}
	return nil
}

// args reads one event's arguments.
type args struct {
	b   []byte
	err error
}

func (a *args) uint() uint32 {
	if len(a.b) < 4 {
		a.err = errors.New("short event")
		return 0
	}
	v := binary.LittleEndian.Uint32(a.b)
	a.b = a.b[4:]
	return v
}

func (a *args) int() int32 { return int32(a.uint()) }

func (a *args) string() string {
	n := int(a.uint())
	padded := (n + 3) &^ 3
	if n == 0 || len(a.b) < padded {
		a.b = nil
		return ""
	}
	s := string(a.b[:n-1])
	a.b = a.b[padded:]
	return s
}

// read hands each event to its object's handler until the connection
// ends. File descriptors the compositor sends are closed: none of the
// events the driver reads carries one it needs.
func (w *wire) read() {
	var pending []byte
	buf := make([]byte, 64<<10)
	oob := make([]byte, syscall.CmsgSpace(28*4))
	var err error
	for {
		n, oobn, _, _, rerr := w.c.ReadMsgUnix(buf, oob)
		if oobn > 0 {
			closeRights(oob[:oobn])
		}
		if rerr != nil {
			err = fmt.Errorf("the compositor closed the connection: %w", rerr)
			break
		}
		pending = append(pending, buf[:n]...)
		for len(pending) >= 8 {
			id := binary.LittleEndian.Uint32(pending)
			word := binary.LittleEndian.Uint32(pending[4:])
			size, op := int(word>>16), uint16(word)
			if size < 8 {
				err = fmt.Errorf("the compositor sent a message of %d bytes", size)
				break
			}
			if len(pending) < size {
				break
			}
			w.mu.Lock()
			h := w.handlers[id]
			w.mu.Unlock()
			if h != nil {
				h(op, &args{b: pending[8:size]})
			}
			pending = pending[size:]
		}
		if err != nil {
			break
		}
		if w.closed() != nil {
			break
		}
	}
	w.finish(err)
}

// finish records why the connection ended and wakes its waiters.
func (w *wire) finish(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case <-w.done:
		return
	default:
	}
	w.err = err
	close(w.done)
}

// displayEvent reads wl_display's events: a protocol error ends the
// connection, as the compositor will.
func (w *wire) displayEvent(op uint16, a *args) {
	switch op {
	case 0: // error
		obj, code, text := a.uint(), a.uint(), a.string()
		w.finish(fmt.Errorf("the compositor reported a protocol error on object %d (code %d): %s", obj, code, text))
	case 1: // delete_id
		w.forget(a.uint())
	}
}

// roundtrip waits until the compositor has handled every request sent
// before it (wl_display.sync).
func (w *wire) roundtrip() error {
	done := make(chan struct{})
	var once sync.Once
	id := w.newID(func(uint16, *args) { once.Do(func() { close(done) }) })
	if err := w.send(displayID, 0, new(msg).uint(id)); err != nil {
		return err
	}
	select {
	case <-done:
		return nil
	case <-w.done:
		return w.closed()
	}
}

// Close ends the connection.
func (w *wire) Close() error {
	w.finish(errors.New("connection closed"))
	return w.c.Close()
}

// closeRights closes the file descriptors of a control message.
func closeRights(oob []byte) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		fds, err := syscall.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}
}

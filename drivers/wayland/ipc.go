package wayland

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
)

// ipc is a connection to sway's IPC socket: i3's protocol, a magic
// string, the payload's length and type, then JSON.
type ipc struct {
	mu sync.Mutex
	c  net.Conn
}

const ipcMagic = "i3-ipc"

// IPC message types.
const (
	ipcCommand   = 0
	ipcSubscribe = 2
	ipcTree      = 4
	ipcOutputs   = 3
	// ipcEventWindow is the type of a window event (bit 31 marks events).
	ipcEventWindow = 0x80000003
)

func dialIPC(path string) (*ipc, error) {
	c, err := net.Dial("unix", path)
	if err != nil {
		return nil, fmt.Errorf("connect to sway's IPC socket %s: %w", path, err)
	}
	return &ipc{c: c}, nil
}

func (p *ipc) write(typ uint32, payload []byte) error {
	buf := make([]byte, 0, len(ipcMagic)+8+len(payload))
	buf = append(buf, ipcMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
	buf = binary.LittleEndian.AppendUint32(buf, typ)
	buf = append(buf, payload...)
	_, err := p.c.Write(buf)
	return err
}

func (p *ipc) read() (typ uint32, payload []byte, err error) {
	head := make([]byte, len(ipcMagic)+8)
	if _, err := io.ReadFull(p.c, head); err != nil {
		return 0, nil, err
	}
	if string(head[:len(ipcMagic)]) != ipcMagic {
		return 0, nil, errors.New("sway's IPC answered without its magic string")
	}
	n := binary.LittleEndian.Uint32(head[len(ipcMagic):])
	typ = binary.LittleEndian.Uint32(head[len(ipcMagic)+4:])
	payload = make([]byte, n)
	if _, err := io.ReadFull(p.c, payload); err != nil {
		return 0, nil, err
	}
	return typ, payload, nil
}

// call sends a message and decodes its reply into v.
func (p *ipc) call(typ uint32, payload string, v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.write(typ, []byte(payload)); err != nil {
		return fmt.Errorf("ask sway: %w", err)
	}
	for {
		got, body, err := p.read()
		if err != nil {
			return fmt.Errorf("read sway's answer: %w", err)
		}
		if got&0x80000000 != 0 {
			continue // an event on a subscribed connection
		}
		if err := json.Unmarshal(body, v); err != nil {
			return fmt.Errorf("read sway's answer: %w", err)
		}
		return nil
	}
}

// command runs sway commands and fails with the first one that failed.
func (p *ipc) command(cmd string) error {
	var res []struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
	}
	if err := p.call(ipcCommand, cmd, &res); err != nil {
		return err
	}
	for _, r := range res {
		if !r.Success {
			return fmt.Errorf("sway refused %q: %s", cmd, r.Error)
		}
	}
	return nil
}

// node is a node of sway's layout tree.
type node struct {
	ID               uint32 `json:"id"`
	Type             string `json:"type"`
	Name             string `json:"name"`
	Rect             rect   `json:"rect"`
	Focused          bool   `json:"focused"`
	PID              int    `json:"pid"`
	AppID            string `json:"app_id"`
	Shell            string `json:"shell"`
	Visible          bool   `json:"visible"`
	Nodes            []node `json:"nodes"`
	FloatingNodes    []node `json:"floating_nodes"`
	WindowProperties *struct {
		Class, Instance string
	} `json:"window_properties"`
}

type rect struct {
	X, Y, Width, Height int
}

func (p *ipc) tree() (node, error) {
	var n node
	err := p.call(ipcTree, "", &n)
	return n, err
}

// views are the tree's application windows, in tree order, floating ones
// after the tiled ones of their workspace.
func (n node) views() []node {
	var out []node
	var walk func(n node)
	walk = func(n node) {
		if n.PID != 0 && (n.Type == "con" || n.Type == "floating_con") {
			out = append(out, n)
		}
		for _, c := range n.Nodes {
			walk(c)
		}
		for _, c := range n.FloatingNodes {
			walk(c)
		}
	}
	walk(n)
	return out
}

// subscribe turns the connection into one that receives window events.
func (p *ipc) subscribe() error {
	var res struct {
		Success bool `json:"success"`
	}
	if err := p.call(ipcSubscribe, `["window"]`, &res); err != nil {
		return err
	}
	if !res.Success {
		return errors.New("sway refused the subscription to window events")
	}
	return nil
}

// nextEvent waits for the next event on a subscribed connection.
func (p *ipc) nextEvent() (uint32, error) {
	typ, _, err := p.read()
	return typ, err
}

func (p *ipc) Close() error { return p.c.Close() }

// criterion quotes a value for a sway criterion.
func criterion(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

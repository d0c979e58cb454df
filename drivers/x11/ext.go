package x11

import (
	"fmt"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// extensions serialises xgb's extension set-up. xgb's Init functions
// register the extension's event and error decoders in package-level maps
// of xgb that every connection's reader goroutine reads without a lock,
// so they must run once per process, before other connections depend on
// them; later connections only look up the extension's opcode for
// themselves. This is the one package-level variable here, and it exists
// to guard xgb's.
var extensions = struct {
	sync.Mutex
	// firstEvent is the first event number each extension was registered
	// with.
	firstEvent map[string]byte
}{firstEvent: map[string]byte{}}

// initExtension makes extension name usable on x: through xgb's init the
// first time in this process, by its opcode alone afterwards. It fails when
// the server lacks the extension, or numbers its events differently from
// the server the decoders were registered for.
func initExtension(x *xgb.Conn, name string, initXGB func(*xgb.Conn) error) error {
	extensions.Lock()
	defer extensions.Unlock()
	first, registered := extensions.firstEvent[name]
	reply, err := xproto.QueryExtension(x, uint16(len(name)), name).Reply()
	if err != nil {
		return fmt.Errorf("query extension %s: %w", name, err)
	}
	if !reply.Present {
		return fmt.Errorf("the server has no %s extension", name)
	}
	if !registered {
		if err := initXGB(x); err != nil {
			return fmt.Errorf("extension %s: %w", name, err)
		}
		extensions.firstEvent[name] = reply.FirstEvent
		return nil
	}
	if reply.FirstEvent != first {
		return fmt.Errorf("extension %s: this server numbers its events from %d, another connection's from %d", name, reply.FirstEvent, first)
	}
	x.ExtLock.Lock()
	x.Extensions[name] = reply.MajorOpcode
	x.ExtLock.Unlock()
	return nil
}

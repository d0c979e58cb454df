package serve

import (
	"crypto/rand"
	"encoding/hex"
	"html/template"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/net/websocket"

	"github.com/kasmrt/kasmrt/engine"
)

// NoVNCDir is where Debian's novnc package installs noVNC, which the
// takeover's browser view serves.
const NoVNCDir = "/usr/share/novnc"

// viewPrefix is where a takeover's browser view is served: outside /v1,
// since a browser cannot send the bearer token with a page, its scripts
// or a WebSocket. The view's ticket, minted by POST …/takeover with the
// token, stands in for it.
const viewPrefix = "/takeover-view/"

// views are the browser views' tickets: each names one takeover of one
// run, holds as long as that takeover (its password) lasts, and is
// 128 random bits, as strong as the token a non-loopback server needs.
type views struct {
	dir string // noVNC's files; "" when noVNC is not installed

	mu      sync.Mutex
	tickets map[string]viewTicket
}

type viewTicket struct{ run, password string }

func newViews() *views {
	v := &views{tickets: map[string]viewTicket{}}
	if _, err := os.Stat(filepath.Join(NoVNCDir, "core", "rfb.js")); err == nil {
		v.dir = NoVNCDir
	}
	return v
}

// mint returns the path of a browser view of run's takeover, or "" when
// noVNC is not installed.
func (v *views) mint(run string, a engine.TakeoverAccess) string {
	if v.dir == "" {
		return ""
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return ""
	}
	t := hex.EncodeToString(b)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.tickets[t] = viewTicket{run: run, password: a.Password}
	return viewPrefix + t + "/"
}

// lookup finds the takeover a ticket names while it lasts; a ticket of a
// takeover that ended is forgotten.
func (v *views) lookup(m *Manager, ticket string) (engine.TakeoverAccess, bool) {
	v.mu.Lock()
	t, ok := v.tickets[ticket]
	v.mu.Unlock()
	if !ok {
		return engine.TakeoverAccess{}, false
	}
	if p, err := m.run(t.run); err == nil {
		if to, ok := p.run.(takeoverable); ok {
			if a, on := to.TakenOver(); on && a.Password == t.password {
				return a, true
			}
		}
	}
	v.mu.Lock()
	delete(v.tickets, ticket)
	v.mu.Unlock()
	return engine.TakeoverAccess{}, false
}

// handler serves the views: the page, noVNC's files and the WebSocket
// that carries the VNC connection to the run's loopback VNC server.
func (v *views) handler(m *Manager) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, viewPrefix)
		ticket, sub, _ := strings.Cut(rest, "/")
		a, ok := v.lookup(m, ticket)
		if !ok || r.Method != http.MethodGet {
			writeError(w, http.StatusNotFound, "no takeover in progress has this view; take the desktop over again (POST /v1/runs/{id}/takeover)")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		// The ticket is in the URL: no page it links to may learn it.
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		switch {
		case sub == "":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_ = viewPage.Execute(w, a)
		case sub == "websockify":
			v.proxy(a).ServeHTTP(w, r)
		case strings.HasPrefix(sub, "novnc/") && !strings.HasSuffix(sub, "/"):
			http.StripPrefix(viewPrefix+ticket+"/novnc", http.FileServerFS(os.DirFS(v.dir))).ServeHTTP(w, r)
		default:
			writeError(w, http.StatusNotFound, "no such file in the view")
		}
	})
}

// proxy carries the browser's WebSocket to the VNC server, byte for
// byte: noVNC speaks RFB itself, with the password the page gave it.
func (v *views) proxy(a engine.TakeoverAccess) http.Handler {
	return websocket.Server{
		// httpguard.Guard has checked the Origin already.
		Handshake: func(*websocket.Config, *http.Request) error { return nil },
		Handler: func(ws *websocket.Conn) {
			defer ws.Close()
			ws.PayloadType = websocket.BinaryFrame
			c, err := net.Dial("tcp", a.Addr)
			if err != nil {
				return
			}
			defer c.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(c, ws); done <- struct{}{} }()
			go func() { _, _ = io.Copy(ws, c); done <- struct{}{} }()
			<-done
		},
	}
}

// viewPage connects noVNC to the view's WebSocket with the one-time
// password; it is the one page the password is written into, served only
// to the ticket's holder and never stored.
var viewPage = template.Must(template.New("view").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>kasmrt takeover</title>
<style>html,body{margin:0;height:100%;background:#222;color:#ddd;font:14px sans-serif}#bar{padding:4px 8px}#screen{height:calc(100% - 28px)}</style>
</head><body>
<div id="bar">kasmrt takeover — <span id="state">connecting…</span> Closing this page hands the desktop back.</div>
<div id="screen"></div>
<script type="module">
import RFB from "./novnc/core/rfb.js";
const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + location.pathname + "websockify";
const rfb = new RFB(document.getElementById("screen"), url, {credentials: {password: {{.Password}}}});
rfb.scaleViewport = true;
const state = document.getElementById("state");
rfb.addEventListener("connect", () => { state.textContent = "connected"; document.body.dataset.state = "connected"; });
rfb.addEventListener("disconnect", () => { state.textContent = "disconnected: the desktop is handed back"; document.body.dataset.state = "disconnected"; });
</script>
</body></html>
`))

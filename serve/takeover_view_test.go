package serve

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/net/websocket"

	"github.com/kasmrt/kasmrt/engine"
)

// viewRun is a published run taken over, whose "VNC server" is addr.
type viewRun struct {
	takeoverRun
	addr string
}

func (r *viewRun) TakeOver(ctx context.Context, by string) (engine.TakeoverAccess, error) {
	a, err := r.takeoverRun.TakeOver(ctx, by)
	a.Addr = r.addr
	return a, err
}

func (r *viewRun) TakenOver() (engine.TakeoverAccess, bool) {
	return engine.TakeoverAccess{Addr: r.addr, Password: "Pw3xK9mQ"}, r.taken
}

// TestTakeoverBrowserView: the takeover's answer names a browser view
// that needs no token but its ticket: the page holds the password and
// loads noVNC, the WebSocket reaches the VNC server, and the view ends
// with the takeover.
func TestTakeoverBrowserView(t *testing.T) {
	t.Parallel()
	if newViews().dir == "" {
		t.Skip("noVNC is not installed (bash scripts/setup.sh)")
	}
	// A VNC server that says its version, as x11vnc does first.
	vncLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer vncLn.Close()
	go func() {
		for {
			c, err := vncLn.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("RFB 003.008\n"))
			c.Close()
		}
	}()
	m, _ := testManager(t, t.Context())
	srv := httptest.NewServer(NewHandler(m, HTTPOptions{Token: apiToken}))
	defer srv.Close()
	run := &viewRun{takeoverRun: takeoverRun{dir: t.TempDir() + "/r-view"}, addr: vncLn.Addr().String()}
	defer m.Publish(RunInfo{Name: "v"}, run)()

	resp, body := apiDo(t, srv, "POST", "/v1/runs/r-view/takeover", "{}", nil)
	var ans struct{ Password, View string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &ans) != nil || !strings.HasPrefix(ans.View, viewPrefix) {
		t.Fatalf("takeover: %d %s", resp.StatusCode, body)
	}
	get := func(path string) (*http.Response, string) {
		resp, err := http.Get(srv.URL + path) // no token: the ticket is the credential
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp2, page := get(ans.View)
	if resp2.StatusCode != http.StatusOK || !strings.Contains(page, `import RFB from "./novnc/core/rfb.js"`) || !strings.Contains(page, `"Pw3xK9mQ"`) {
		t.Fatalf("the view: %d %s", resp2.StatusCode, page)
	}
	if resp2.Header.Get("Cache-Control") != "no-store" || resp2.Header.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the view's headers: %v", resp2.Header)
	}
	if r, _ := get(ans.View + "novnc/core/rfb.js"); r.StatusCode != http.StatusOK {
		t.Errorf("noVNC's rfb.js: %d", r.StatusCode)
	}
	for _, bad := range []string{viewPrefix + "0123456789abcdef0123456789abcdef/", ans.View + "novnc/core/", ans.View + "novnc/../../etc/passwd"} {
		if r, _ := get(bad); r.StatusCode == http.StatusOK {
			t.Errorf("%s answers 200", bad)
		}
	}
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + ans.View + "websockify"
	ws, err := websocket.Dial(u, "", srv.URL)
	if err != nil {
		t.Fatalf("the view's WebSocket: %v", err)
	}
	version := make([]byte, 12)
	if _, err := io.ReadFull(ws, version); err != nil || string(version) != "RFB 003.008\n" {
		t.Errorf("through the WebSocket: %q, %v", version, err)
	}
	ws.Close()
	// Another site's page cannot open the WebSocket.
	if _, err := websocket.Dial(u, "", "http://evil.example"); err == nil {
		t.Error("a WebSocket from another origin was accepted")
	}
	if resp, body := apiDo(t, srv, "POST", "/v1/runs/r-view/handback", "", nil); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("hand back: %d %s", resp.StatusCode, body)
	}
	if r, _ := get(ans.View); r.StatusCode != http.StatusNotFound {
		t.Errorf("the view after the hand-back: %d, want 404", r.StatusCode)
	}
}

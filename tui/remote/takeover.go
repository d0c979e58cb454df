package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/kasmrt/kasmrt/tui"
)

// TakeOverDesktop takes the run's desktop over (POST …/takeover), as T
// does in a local console (tui.TakeoverControls). The VNC server listens
// on the run's machine's loopback; the access's URL is the browser view
// on the server when it offers one, else reach the VNC server through an
// SSH tunnel.
func (c *Client) TakeOverDesktop(ctx context.Context) (tui.TakeoverAccess, error) {
	resp, err := c.request(ctx, http.MethodPost, c.base+"/takeover", struct{}{})
	if err != nil {
		return tui.TakeoverAccess{}, fmt.Errorf("take over: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return tui.TakeoverAccess{}, fmt.Errorf("take over: %w", apiError(resp))
	}
	var a struct{ Addr, URL, Password, View string }
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return tui.TakeoverAccess{}, fmt.Errorf("take over: read the answer: %w", err)
	}
	if root, _, ok := strings.Cut(c.base, "/v1/"); ok && strings.HasPrefix(a.View, "/") {
		// The browser view is on the server attach reached, where the
		// VNC address, the run machine's loopback, may not be.
		a.URL = root + a.View
	}
	return tui.TakeoverAccess{Addr: a.Addr, URL: a.URL, Password: a.Password}, nil
}

// HandBackDesktop hands the desktop back (POST …/handback).
func (c *Client) HandBackDesktop() error {
	if err := c.post(c.base+"/handback", struct{}{}); err != nil {
		return fmt.Errorf("hand back: %w", err)
	}
	return nil
}

package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/kasmrt/kasmrt/tui"
)

// TakeOverDesktop takes the run's desktop over (POST …/takeover), as T
// does in a local console (tui.TakeoverControls). The VNC server listens
// on the run's machine's loopback: from elsewhere, reach it through an
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
	var a struct{ Addr, URL, Password string }
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		return tui.TakeoverAccess{}, fmt.Errorf("take over: read the answer: %w", err)
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

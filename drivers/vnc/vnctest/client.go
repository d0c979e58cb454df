// Package vnctest is a minimal RFB 3.8 client for tests: it connects,
// answers VNC authentication and sends keys, which is all a test of a
// takeover needs of a viewer.
package vnctest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/kasmrt/kasmrt/drivers/vnc"
)

// Client is a connected, authenticated RFB session.
type Client struct {
	c             net.Conn
	Width, Height int
	Name          string
}

// ioTimeout bounds each exchange with the server, so a server that stops
// answering fails the test rather than hanging it.
const ioTimeout = 30 * time.Second

// Dial connects to addr and authenticates with password.
func Dial(addr, password string) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, ioTimeout)
	if err != nil {
		return nil, err
	}
	cl := &Client{c: c}
	if err := cl.handshake(password); err != nil {
		c.Close()
		return nil, err
	}
	return cl, nil
}

func (cl *Client) handshake(password string) error {
	_ = cl.c.SetDeadline(time.Now().Add(ioTimeout))
	defer cl.c.SetDeadline(time.Time{})
	version := make([]byte, 12)
	if _, err := io.ReadFull(cl.c, version); err != nil {
		return fmt.Errorf("read the server's version: %w", err)
	}
	if _, err := cl.c.Write([]byte("RFB 003.008\n")); err != nil {
		return err
	}
	var n uint8
	if err := binary.Read(cl.c, binary.BigEndian, &n); err != nil {
		return fmt.Errorf("read the security types: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("the server refused the connection: %s", cl.reason())
	}
	types := make([]byte, n)
	if _, err := io.ReadFull(cl.c, types); err != nil {
		return err
	}
	hasVNCAuth := false
	for _, t := range types {
		hasVNCAuth = hasVNCAuth || t == 2
	}
	if !hasVNCAuth {
		return fmt.Errorf("the server offers no VNC authentication (types %v)", types)
	}
	if _, err := cl.c.Write([]byte{2}); err != nil {
		return err
	}
	challenge := make([]byte, 16)
	if _, err := io.ReadFull(cl.c, challenge); err != nil {
		return fmt.Errorf("read the challenge: %w", err)
	}
	if _, err := cl.c.Write(vnc.Response(password, challenge)); err != nil {
		return err
	}
	var result uint32
	if err := binary.Read(cl.c, binary.BigEndian, &result); err != nil {
		return fmt.Errorf("read the security result: %w", err)
	}
	if result != 0 {
		return &AuthError{Reason: cl.reason()}
	}
	if _, err := cl.c.Write([]byte{1}); err != nil { // shared
		return err
	}
	var init struct {
		W, H   uint16
		Format [16]byte
		NameN  uint32
	}
	if err := binary.Read(cl.c, binary.BigEndian, &init); err != nil {
		return fmt.Errorf("read the server's init: %w", err)
	}
	name := make([]byte, init.NameN)
	if _, err := io.ReadFull(cl.c, name); err != nil {
		return err
	}
	cl.Width, cl.Height, cl.Name = int(init.W), int(init.H), string(name)
	// Drain whatever the server sends (nothing, until an update is asked
	// for) so its writes never block on a full socket.
	go func() { _, _ = io.Copy(io.Discard, cl.c) }()
	return nil
}

// AuthError is a password the server refused.
type AuthError struct{ Reason string }

func (e *AuthError) Error() string { return "VNC authentication failed: " + e.Reason }

// IsAuthError reports whether err is a refused password.
func IsAuthError(err error) bool {
	var a *AuthError
	return errors.As(err, &a)
}

func (cl *Client) reason() string {
	var n uint32
	if binary.Read(cl.c, binary.BigEndian, &n) != nil || n > 4096 {
		return "(no reason given)"
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(cl.c, b); err != nil {
		return "(no reason given)"
	}
	return string(b)
}

// Key presses and releases the key with this X keysym.
func (cl *Client) Key(keysym uint32) error {
	for _, down := range []byte{1, 0} {
		msg := []byte{4, down, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(msg[4:], keysym)
		if _, err := cl.c.Write(msg); err != nil {
			return fmt.Errorf("send key 0x%x: %w", keysym, err)
		}
	}
	return nil
}

// Type sends each character of an ASCII string as its keysym (Latin-1
// keysyms are the characters' codes).
func (cl *Client) Type(s string) error {
	for _, r := range s {
		if err := cl.Key(uint32(r)); err != nil {
			return err
		}
	}
	return nil
}

// KeyReturn is the Return key's keysym.
const KeyReturn = 0xff0d

// Close leaves the session; x11vnc -once then exits.
func (cl *Client) Close() error { return cl.c.Close() }

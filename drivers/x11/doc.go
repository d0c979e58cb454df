// Package x11 drives an X11 desktop session: it starts Xvfb when no display
// is given, launches applications, finds their windows, captures the screen
// and injects keyboard and pointer input through XTEST. It can also ask a
// window's client whether its main loop still runs (Ping, _NET_WM_PING)
// and which window a pointer at a point would reach (WindowAt).
package x11

// Package x11 drives an X11 desktop session: it starts Xvfb when no display
// is given, launches applications, finds their windows, captures the screen
// and injects keyboard and pointer input through XTEST.
package x11

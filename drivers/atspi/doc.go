// Package atspi reads and acts on the named controls an application
// publishes over the AT-SPI accessibility bus, through D-Bus.
//
// The runtime connects to the session bus, asks org.a11y.Bus for the address
// of the accessibility bus, finds the application under test by process id
// among the applications registered there, and walks its accessible tree for
// visible controls that have a name and at least one action. A Control can
// be clicked through its action, and carries its screen extents so a caller
// can fall back to a pointer click at its centre.
package atspi

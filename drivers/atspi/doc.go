// Package atspi reads and acts on the named controls an application
// publishes over the AT-SPI accessibility bus, through D-Bus.
//
// The runtime connects to the session bus, asks org.a11y.Bus for the address
// of the accessibility bus, and asks the registry for the application under
// test: the one whose bus connection belongs to the app's process or one of
// its descendants (Discover). It walks that application's accessible tree
// for visible controls that have a name and at least one action, with the
// rules of its toolkit (GTK 4's own backend reports states and names
// differently from GTK 3's atk-bridge, Qt and Chromium). A Control can
// be clicked through its action, and carries its screen extents so a caller
// can fall back to a pointer click at its centre.
package atspi

// Package atspi reads and acts on the named controls an application
// publishes over the AT-SPI accessibility bus, through D-Bus.
//
// The runtime connects to the session bus, asks org.a11y.Bus for the address
// of the accessibility bus, and asks the registry for the application under
// test: the one whose bus connection belongs to the app's process or one of
// its descendants (Discover). It walks that application's accessible tree
// for visible controls that have a name and at least one action, with the
// rules of its toolkit (GTK 4's own backend reports states and names
// differently from GTK 3's atk-bridge, Qt and Chromium). A Control carries
// its screen extents, can say whether it holds a point (Contains) and where
// its window is (WindowExtents), so a caller can click it with the pointer
// at its centre as a person would; it can also be pressed through its
// action. Every call on the bus is bounded (CallTimeout, ActionTimeout): an
// application whose main loop is blocked answers nothing, and an action
// that does not return is ErrActionStuck.
package atspi

// Package wayland drives a headless Wayland session: Debian's sway on the
// wlroots headless backend, started per run with a runtime directory of
// its own and no Xwayland. It speaks the desktop contract
// (drivers/desktop): the screen through wlr-screencopy, keys through a
// virtual keyboard (zwp_virtual_keyboard_v1) and the pointer through a
// virtual pointer (wlr-virtual-pointer), both held for the whole session,
// and the windows and the focus through sway's JSON IPC. What X11 offers
// and a Wayland compositor does not (a window manager's ping to tell a
// hung client, windows of other clients' popups) is named in Missing.
package wayland

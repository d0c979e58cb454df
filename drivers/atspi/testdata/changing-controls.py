#!/usr/bin/python3
"""A GTK 3 window whose controls change when its buttons are clicked: Rename
renames Alpha; Change removes Beta and adds Gamma. The cache tests of the
atspi package drive it over the accessibility bus."""
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

window = Gtk.Window(title="Changing controls")
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
window.add(box)
alpha = Gtk.Button(label="Alpha")
beta = Gtk.Button(label="Beta")
rename = Gtk.Button(label="Rename")
change = Gtk.Button(label="Change")
for b in (alpha, beta, rename, change):
    box.pack_start(b, False, False, 0)


def on_rename(_):
    alpha.set_label("Alpha renamed")


def on_change(_):
    beta.destroy()
    gamma = Gtk.Button(label="Gamma")
    box.pack_start(gamma, False, False, 0)
    gamma.show()


rename.connect("clicked", on_rename)
change.connect("clicked", on_change)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()

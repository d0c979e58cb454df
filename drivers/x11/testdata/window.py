#!/usr/bin/env python3
# A GTK 3 window that answers _NET_WM_PING from its main loop, for the
# ping test: stopped with SIGSTOP, it cannot answer.
import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

win = Gtk.Window(title="ping me")
win.set_default_size(200, 100)
win.connect("destroy", Gtk.main_quit)
win.show_all()
Gtk.main()

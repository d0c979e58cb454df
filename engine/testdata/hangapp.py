#!/usr/bin/python3
# A GTK 3 window whose buttons block its main loop, for the
# responsiveness tests: "Freeze" sleeps for 1000 s in its handler (a hung
# application: it paints nothing and answers nothing), "Slow" for the
# seconds given as the first argument (default 1.5) and then writes
# "done" into its label (a slow application that answers in time).
import sys
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk

slow = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5

win = Gtk.Window(title="hang test")
win.set_default_size(320, 160)
win.connect("destroy", Gtk.main_quit)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)
label = Gtk.Label(label="waiting")
freeze = Gtk.Button(label="Freeze")
freeze.connect("clicked", lambda _b: time.sleep(1000))
slowly = Gtk.Button(label="Slow")


def work_slowly(_button):
    time.sleep(slow)
    label.set_text("done")


slowly.connect("clicked", work_slowly)
box.pack_start(label, True, True, 0)
box.pack_start(freeze, True, True, 0)
box.pack_start(slowly, True, True, 0)
win.add(box)
win.show_all()
Gtk.main()

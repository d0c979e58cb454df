#!/usr/bin/python3
"""A GTK 3 window with a tree view whose rows change when its buttons are
clicked: Add row appends "Row N", Remove row deletes the first row, Rename
row renames the first row, Fill appends a thousand rows, Scroll shows the
last row and Sort sorts the rows in descending order. With --rows N it
starts with N rows. The cache tests of the atspi package drive it over the
accessibility bus."""
import sys

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gtk  # noqa: E402

rows = 3
if len(sys.argv) > 2 and sys.argv[1] == "--rows":
    rows = int(sys.argv[2])

store = Gtk.ListStore(str)
added = 0


def add(n):
    global added
    for _ in range(n):
        added += 1
        store.append(["Row %d" % added])


add(rows)
window = Gtk.Window(title="Tree view")
window.set_default_size(400, 500)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
window.add(box)
view = Gtk.TreeView(model=store)
view.append_column(Gtk.TreeViewColumn("Name", Gtk.CellRendererText(), text=0))
scrolled = Gtk.ScrolledWindow()
scrolled.set_vexpand(True)
scrolled.add(view)
box.pack_start(scrolled, True, True, 0)
buttons = {
    "Add row": lambda _: add(1),
    "Remove row": lambda _: store.remove(store.get_iter_first()),
    "Rename row": lambda _: store.set_value(store.get_iter_first(), 0, "Renamed row"),
    "Fill": lambda _: add(1000),
    "Scroll": lambda _: view.scroll_to_cell(Gtk.TreePath(len(store) - 1), None, False, 0, 0),
    "Sort": lambda _: store.set_sort_column_id(0, Gtk.SortType.DESCENDING),
}
for label, act in buttons.items():
    b = Gtk.Button(label=label)
    b.connect("clicked", act)
    box.pack_start(b, False, False, 0)
window.connect("destroy", Gtk.main_quit)
window.show_all()
Gtk.main()

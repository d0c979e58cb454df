#!/usr/bin/env bash
# Installs the Debian packages kasmrt's runs and tests use, once: when every
# tool is already present it does nothing. Safe to run repeatedly.
set -euo pipefail

packages=(xvfb x11-utils x11-apps xterm xfonts-base fonts-dejavu-core dbus dbus-x11
  at-spi2-core zenity gtk-3-examples chromium tesseract-ocr tesseract-ocr-eng
  libsixel-bin tmux gnome-calculator speedcrunch xclip openbox mousepad aptitude-doc-en
  libxml2-utils gir1.2-gtk-3.0 python3-gi libtesseract-dev python3-junitparser x11vnc novnc
  sway grim wtype qtwayland5)
# One probe per package: a file the package installs.
probes=(/usr/bin/Xvfb /usr/bin/xwininfo /usr/bin/xclock /usr/bin/xterm
  /usr/share/fonts/X11/misc/fonts.dir /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
  /usr/bin/dbus-daemon /usr/bin/dbus-launch /usr/libexec/at-spi-bus-launcher
  /usr/bin/zenity /usr/bin/gtk3-widget-factory /usr/bin/chromium /usr/bin/tesseract
  /usr/share/tesseract-ocr/5/tessdata/eng.traineddata /usr/bin/img2sixel /usr/bin/tmux
  /usr/bin/gnome-calculator /usr/bin/speedcrunch /usr/bin/xclip /usr/bin/openbox /usr/bin/mousepad
  /usr/share/doc/aptitude/html/en/index.html /usr/bin/xmllint
  /usr/lib/x86_64-linux-gnu/girepository-1.0/Gtk-3.0.typelib /usr/lib/python3/dist-packages/gi/__init__.py
  /usr/include/tesseract/capi.h /usr/lib/python3/dist-packages/junitparser/__init__.py /usr/bin/x11vnc
  /usr/share/novnc/core/rfb.js
  /usr/bin/sway /usr/bin/grim /usr/bin/wtype
  /usr/lib/x86_64-linux-gnu/qt5/plugins/platforms/libqwayland-generic.so)

missing=()
for i in "${!packages[@]}"; do
  [ -e "${probes[$i]}" ] || missing+=("${packages[$i]}")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

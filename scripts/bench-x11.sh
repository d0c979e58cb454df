#!/bin/sh
# Benchmarks the X11 driver against the process-per-action method (scrot per
# capture, xdotool per action) in one run. Installs scrot and xdotool, which
# only this benchmark needs, when they are missing and apt-get is usable.
set -eu
cd "$(dirname "$0")/.."
if ! command -v scrot >/dev/null || ! command -v xdotool >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends scrot xdotool
fi
exec go test -run '^$' -bench . -benchtime 50x -count 1 ./drivers/x11/

#!/usr/bin/env bash
# Takes the README's picture of report.html: runs the bundled goal demo
# (its model turns replayed from the recording, so no endpoint is needed)
# in an embedded session, opens its report.html in headless Chromium and
# writes the screenshot to docs/report-page.png.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-bin/kasmrt}
out=${2:-docs/report-page.png}
go build -o "$bin" ./cmd/kasmrt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset DISPLAY DBUS_SESSION_BUS_ADDRESS # the demo runs in its own Xvfb and bus
"$bin" run scenarios/examples/goal-text-editor.yaml -o scenarios/examples/operator-goal.yaml \
  --replay-model scenarios/examples/goal-text-editor.model.jsonl \
  --headless --display - --report "$work/report" >/dev/null
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-dark-mode \
  --user-data-dir="$work/profile" --window-size=1100,900 \
  --screenshot="$work/page.png" "file://$work/report/report.html" 2>/dev/null
# Eight-bit palette colours keep the picture small.
if command -v pngquant >/dev/null; then
  pngquant --force --output "$out" 64 "$work/page.png"
else
  cp "$work/page.png" "$out"
fi
echo "report-screenshot: wrote $out"

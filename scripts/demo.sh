#!/usr/bin/env bash
# Runs the bundled demo scenario in an embedded session and says where the
# report is.
set -euo pipefail
bin=${1:-bin/kasmrt}
reports=${2:-reports}
scenario=scenarios/examples/xterm-greeting.yaml
export KASM_DEMO_DIR=${KASM_DEMO_DIR:-$(mktemp -d)}
out="$reports/demo-$(date +%Y%m%d-%H%M%S)"
echo "demo: validating $scenario"
"$bin" validate "$scenario"
unset DISPLAY # the demo always runs in its own Xvfb
if [ -t 0 ] && [ -t 1 ]; then
  # On a terminal: watch it live (q leaves the console once the verdict is
  # in), then step through the saved run.
  "$bin" run "$scenario" --tui --report "$out" || true
  "$bin" replay "$out"
else
  "$bin" run "$scenario" --headless --report "$out"
fi
echo "demo: report in $out (replay it with: $bin replay $out)"

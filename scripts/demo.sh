#!/usr/bin/env bash
# Runs the bundled demos in embedded sessions and says where the reports
# are: a scripted run against xterm, then a goal run against a zenity dialog
# whose model turns are replayed from a recording (no model endpoint needed).
set -euo pipefail
bin=${1:-bin/kasmrt}
reports=${2:-reports}
export KASM_DEMO_DIR=${KASM_DEMO_DIR:-$(mktemp -d)}
stamp=$(date +%Y%m%d-%H%M%S)
unset DISPLAY DBUS_SESSION_BUS_ADDRESS # the demos run in their own Xvfb and bus

scripted=scenarios/examples/xterm-greeting.yaml
goal=scenarios/examples/goal-text-editor.yaml
goal_args=(-o scenarios/examples/operator-goal.yaml --replay-model scenarios/examples/goal-text-editor.model.jsonl)
out1="$reports/demo-scripted-$stamp"
out2="$reports/demo-goal-$stamp"

echo "demo: validating the scenarios"
"$bin" validate "$scripted" >/dev/null
KASM_RUNTIME_VISION_ENDPOINT=http://replay.invalid/v1 "$bin" validate "$goal" -o scenarios/examples/operator-goal.yaml >/dev/null

if [ -t 0 ] && [ -t 1 ]; then
  # On a terminal: watch each run live (q leaves the console once the
  # verdict is in), then step through the goal run.
  echo "demo: 1/2 scripted run — press q when the verdict is in"; sleep 1
  "$bin" run "$scripted" --tui --report "$out1" || true
  echo "demo: 2/2 goal run with a replayed model — press q when the verdict is in"; sleep 1
  "$bin" run "$goal" "${goal_args[@]}" --tui --report "$out2" || true
  "$bin" replay "$out2"
else
  "$bin" run "$scripted" --headless --report "$out1"
  "$bin" run "$goal" "${goal_args[@]}" --headless --report "$out2"
fi
echo "demo: reports in $out1 and $out2 (replay one with: $bin replay $out2)"

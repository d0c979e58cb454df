#!/usr/bin/env bash
# Times warm action-cache replays of the gallery's GTK 4 calculator, phase
# by phase, for one or more kasmrt binaries run alternately (a before and
# an after). The trajectory is the one BenchmarkActionCacheGallery replays
# (cmd/kasmrt/cache_test.go, calculatorTurns: 14 calls, a 3 s wait among
# them); the first binary stores it in one run with the model, then every
# binary replays it read-only N times. Prints the load before and after,
# each run's wall time and scripts/run-phases.py's table (one column per
# run, in the order they ran).
#   scripts/bench-cache-phases.sh N BIN...   (needs Xvfb, dbus-daemon,
#   gnome-calculator, xclip)
set -euo pipefail
n=$1
shift
bins=()
for b in "$@"; do bins+=("$(realpath "$b")"); done
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cp "$root/scenarios/examples/gallery/gtk4-calculator.yaml" "$root/scenarios/examples/gallery/operator-gallery.yaml" "$dir/"
python3 - "$dir/turns.jsonl" <<'PY'
import json, sys
turns = [("observe_screen", "{}"), ("click_element", '{"name":"1"}'), ("observe_screen", "{}"),
         ("click_element", '{"name":"2"}'), ("click_element", '{"name":"×"}'), ("click_element", '{"name":"3"}'),
         ("click_element", '{"name":"4"}'), ("observe_screen", "{}"), ("click_element", '{"name":"="}'),
         ("observe_screen", "{}"), ("wait", '{"seconds":3}'), ("observe_screen", "{}"),
         ("press_key", '{"key":"ctrl+c"}'), ("result_is", '{"value":"408"}'),
         ("record_verdict", '{"verdict":"goal-met","reason":"The calculator shows 408 and result_is confirmed it."}')]
with open(sys.argv[1], "w") as f:
    for i, (name, args) in enumerate(turns):
        msg = {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_%d" % (i + 1), "type": "function", "function": {"name": name, "arguments": args}}]}
        resp = {"id": "t-%d" % i, "object": "chat.completion", "model": "scripted",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": msg}]}
        f.write(json.dumps({"method": "POST", "path": "/v1/chat/completions", "request": "-",
                            "response": json.dumps(resp) + "\n", "status": 200}) + "\n")
PY
cd "$dir"
export DBUS_SESSION_BUS_ADDRESS=
run() { # BIN MODE REPORT
  local start end
  start=$(date +%s.%N)
  "$1" run gtk4-calculator.yaml -o operator-gallery.yaml --replay-model turns.jsonl --cache "$2" \
    --headless --display - --report "$3" > "$3.out" 2>&1 || { echo "run failed: $3"; tail -n 20 "$3.out"; exit 1; }
  end=$(date +%s.%N)
  printf '%s %.2f s\n' "$3" "$(echo "$end - $start" | bc)"
}
run "${bins[0]}" read-write "$dir/cold"
echo "load before: $(cat /proc/loadavg)"
reports=()
for i in $(seq 1 "$n"); do
  j=0
  for bin in "${bins[@]}"; do
    j=$((j + 1))
    run "$bin" read-only "$dir/warm-b$j-$i"
    reports+=("$dir/warm-b$j-$i")
  done
done
echo "load after: $(cat /proc/loadavg)"
"$root/scripts/run-phases.py" "${reports[@]}"

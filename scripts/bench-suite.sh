#!/usr/bin/env bash
# Measures kasmrt suite's wall time and per-run cost: N scripted xmessage
# scenarios (one observe_screen each) with --workers 1, 2 and 4.
#   scripts/bench-suite.sh [N]   (default 20; needs bin/kasmrt, Xvfb, xmessage)
set -euo pipefail
n=${1:-20}
bin=$(realpath "${KASMRT:-bin/kasmrt}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
for i in $(seq -w 1 "$n"); do
  printf 'name: bench %s\napp:\n  command: [xmessage, -geometry, +40+40, bench %s]\n  window: {class: Xmessage}\nsteps:\n  - observe_screen: {}\n' "$i" "$i" > "s$i.yaml"
done
printf 'runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession:\n  width: 640\n  height: 400\n  accessibility: false\n' > op.yaml
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in 1 2 4; do
  /usr/bin/time -f "workers $w: wall %e s, peak RSS of kasmrt %M KB" "$bin" suite 's*.yaml' -o op.yaml --workers "$w" --out "out-$w" > /dev/null || true
  python3 - "out-$w/suite.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
d = sorted(r["duration_ms"] for r in s["runs"])
print(f"  {len(d)} runs: per-run duration median {d[len(d)//2]} ms, min {d[0]}, max {d[-1]}, sum {sum(d)} ms")
PY
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

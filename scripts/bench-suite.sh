#!/usr/bin/env bash
# Measures kasmrt suite's wall time and per-run cost: N scripted xmessage
# scenarios (one observe_screen each) with --workers 1, 2 and 4. Each run's
# fixed cost is split from its events and files: display (run.started to
# session.started: Xvfb and openbox), launch (to app.window), teardown
# (verdict to run.ended), report (run.ended to manifest.json written). Peak
# memory per run is the most the suite's child processes (each run's Xvfb,
# window manager, bus and app) held at once, divided by the runs alive.
# Each worker count runs twice: "fresh" (--fresh-displays, a new Xvfb per
# run) and "kept" (each worker keeps its display, reset between runs).
#   scripts/bench-suite.sh [N] [WORKERS...]   (default 20, workers 1 2 4;
#   needs bin/kasmrt, Xvfb, xmessage)
set -euo pipefail
n=${1:-20}
if [ "$#" -gt 0 ]; then shift; fi
workers=(1 2 4)
if [ "$#" -gt 0 ]; then workers=("$@"); fi
bin=$(realpath "${KASMRT:-bin/kasmrt}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
for i in $(seq -w 1 "$n"); do
  printf 'name: bench %s\napp:\n  command: [xmessage, -geometry, +40+40, bench %s]\n  window: {class: Xmessage}\nsteps:\n  - observe_screen: {}\n' "$i" "$i" > "s$i.yaml"
done
printf 'runner:\n  settle_interval_ms: 30\n  settle_cap_ms: 400\nsession:\n  width: 640\n  height: 400\n  accessibility: false\n' > op.yaml

# sample PID OUT: every 100 ms, the RSS of PID's descendants and how many
# Xvfb among them, until PID exits.
sample() {
  while kill -0 "$1" 2>/dev/null; do
    ps -e -o pid=,ppid=,rss=,comm= | awk -v root="$1" '
      { pid[NR]=$1; ppid[NR]=$2; rss[NR]=$3; comm[NR]=$4; n=NR }
      END {
        keep[root]=1
        for (changed=1; changed;) { changed=0
          for (i=1; i<=n; i++) if (!(pid[i] in keep) && (ppid[i] in keep)) { keep[pid[i]]=1; changed=1 } }
        total=0; x=0
        for (i=1; i<=n; i++) if (pid[i] in keep && pid[i] != root) { total+=rss[i]; if (comm[i]=="Xvfb") x++ }
        print total, x }' >> "$2"
    sleep 0.1
  done
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for w in "${workers[@]}"; do
for mode in fresh kept; do
  flag=""
  if [ "$mode" = fresh ]; then flag=--fresh-displays; fi
  id="$w-$mode"
  rm -f "mem-$id"
  /usr/bin/time -o "time-$id" -f "%e %M" "$bin" suite 's*.yaml' -o op.yaml --workers "$w" $flag --headless --out "out-$id" > /dev/null &
  pid=$!
  sleep 0.05
  kasmrt=$(pgrep -P "$pid" -x kasmrt || echo "$pid")
  sample "$kasmrt" "mem-$id" &
  wait "$pid" || true
  wait || true
  python3 - "$w $mode" "out-$id" "time-$id" "mem-$id" <<'PY'
import datetime, glob, json, os, statistics, sys
w, out, timef, memf = sys.argv[1:5]
wall, peak_kasmrt = open(timef).read().split()
def t(s):
    return datetime.datetime.fromisoformat(s[:26].rstrip("Z")).timestamp()
parts = {"display": [], "launch": [], "step": [], "teardown": [], "report": [], "run": []}
for d in sorted(glob.glob(out + "/runs/*")):
    ev = {}
    for line in open(d + "/events.jsonl"):
        e = json.loads(line)
        ev.setdefault(e["kind"], t(e["t"]))
        if e["kind"] == "step.ended":
            ev["last.step"] = t(e["t"])
    m = json.load(open(d + "/manifest.json"))
    written = os.stat(d + "/manifest.json").st_mtime
    parts["display"].append(ev["session.started"] - ev["run.started"])
    parts["launch"].append(ev["app.window"] - ev["session.started"])
    parts["step"].append(ev["last.step"] - ev["step.started"])
    parts["teardown"].append(ev["run.ended"] - ev["verdict"])
    parts["report"].append(written - ev["run.ended"])
    parts["run"].append(written - ev["run.started"])
med = {k: statistics.median(v) * 1000 for k, v in parts.items()}
fixed = med["run"] - med["step"]
per_run = 0
for line in open(memf):
    total, xvfb = map(int, line.split())
    if xvfb:
        per_run = max(per_run, total / xvfb)
print(f"workers {w}: wall {float(wall):.1f} s, {len(parts['run'])} runs; medians per run: whole {med['run']:.0f} ms = "
      f"display {med['display']:.0f} + launch {med['launch']:.0f} + step {med['step']:.0f} + teardown {med['teardown']:.0f} + report {med['report']:.0f} + other; "
      f"fixed cost {fixed:.0f} ms; peak memory per run {per_run/1024:.0f} MB; kasmrt peak RSS {int(peak_kasmrt)/1024:.0f} MB")
PY
done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

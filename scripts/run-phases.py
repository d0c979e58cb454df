#!/usr/bin/env python3
"""Splits the wall time of goal runs into phases from their events.jsonl:
the display, the app's launch to its window, the window to the controls
offered (painting and discovery overlap), the loop's calls by tool (the
model's or the cache's), the time between calls (the planner's fit
checks, the Environment Update, the checks before a turn), the success
criteria, and the report.

    scripts/run-phases.py REPORT_DIR...     (one column per run)
"""
import collections
import datetime
import json
import sys


def load(run):
    events = []
    with open(run + "/events.jsonl") as f:
        for line in f:
            e = json.loads(line)
            e["_t"] = datetime.datetime.fromisoformat(e["t"][:26].rstrip("Z"))
            events.append(e)
    return events


def phases(run):
    ev = load(run)
    t0 = ev[0]["_t"]

    def first(kind):
        return next(e["_t"] for e in ev if e["kind"] == kind)

    p = collections.OrderedDict()
    p["display (Xvfb, openbox)"] = first("session.started") - t0
    p["app launch to window"] = first("app.window") - first("session.started")
    p["window to controls offered"] = first("tools") - first("app.window")
    spent, count = collections.defaultdict(float), collections.Counter()
    between, prev = 0.0, first("tools")
    for e in ev:
        # The loop's calls: the model's, or the action cache's replays.
        if e.get("source") not in ("model", "cache"):
            continue
        if e["kind"] == "step.started":
            between += (e["_t"] - prev).total_seconds()
        elif e["kind"] == "step.ended":
            spent[e["tool"]] += e["duration_ms"] / 1000
            count[e["tool"]] += 1
            prev = e["_t"]
    p["between calls (fit checks, Environment Update, checks)"] = datetime.timedelta(seconds=between)
    for tool in sorted(spent):
        p["call %s x%d" % (tool, count[tool])] = datetime.timedelta(seconds=spent[tool])
    p["success criteria, final checks"] = first("verdict") - prev
    p["report, strike"] = first("run.ended") - first("verdict")
    p["total"] = first("run.ended") - t0
    return p


def main(runs):
    tables = [phases(r) for r in runs]
    keys = []
    for t in tables:
        keys += [k for k in t if k not in keys]
    for k in keys:
        cells = ["%7.2f" % t[k].total_seconds() if k in t else "      -" for t in tables]
        print("%-56s %s" % (k, " ".join(cells)))


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""bench/folds/report.py [CSV]: the CSV of bench/folds/run (default
$BENCH_LOGS/folds/results.csv, out of the tree) summed over folds, as the
table of bench/folds/results.md."""
import collections
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.environ.get("BENCH_LOGS", "/tmp/mtdpp-bench-logs")
rows = list(csv.DictReader(open(sys.argv[1] if len(sys.argv) > 1 else os.path.join(LOGS, "folds", "results.csv"))))
sums = collections.OrderedDict()
for r in rows:
    key = (r["dataset"], r["kind"], r["build"], r["params"])
    s = sums.setdefault(key, {"folds": set(), "n": 0, "m": [0.0] * 4, "sec": 0.0, "of": r["folds"]})
    n = int(r["baskets"])
    s["folds"].add(r["fold"])
    s["n"] += n
    s["sec"] += float(r["seconds"])
    for i, m in enumerate(("mpr", "p5", "p10", "p20")):
        s["m"][i] += n * float(r[m])
print("| dataset | kind | build | params | folds | baskets | MPR | P@5 | P@10 | P@20 | train s (all folds) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for (ds, kind, build, params), s in sorted(sums.items()):
    m = " | ".join("%.2f" % (x / s["n"]) for x in s["m"])
    print(f"| {ds} | {kind} | {build} | `{params}` | {len(s['folds'])} of {s['of']} | {s['n']} | {m} | {s['sec']:.0f} |")

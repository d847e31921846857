#!/usr/bin/env python3
"""Writes the report of bench/precision/run from the files it exports.

    bench/precision/report.py [DIR [PAGE [DIR2 ...]]]

reads DIR (default: $BENCH_LOGS/precision): results.csv (one row per model
and set of test baskets), baskets.csv (one row per test basket),
machine.txt (key=value), and as much from each further folder DIR2 ...
(runs of other datasets or splits, reported together); writes
DIR/results.md and, when PAGE is given (not ''), the same text into PAGE's
section "report" (the page's text outside it stays).
"""
import csv
import os
import sys
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from kind_report import LOGS, splice  # noqa: E402

HELD_OUT = {"random": "random", "last": "last added"}
METRICS = [("mpr", "MPR"), ("p5", "P@5"), ("p10", "P@10"), ("p20", "P@20")]


def num(x):
    return float(x) if x not in ("", None) else None


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(out + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]) + "\n"


def sci(x):
    x = num(x)
    return "" if x is None else "0" if x == 0 else f"{x:.1e}"


def both(r, key, nd=2):
    d, s = num(r[key + "_d"]), num(r[key + "_s"])
    return f"{d:.{nd}f} / {s:.{nd}f}"


def metric_gap(r):
    """The largest difference between double and single over the four figures, in points."""
    return sci(max(abs(num(r[k + "_d"]) - num(r[k + "_s"])) for k, _ in METRICS))


def moves(baskets):
    """Per model and test baskets (model:test), the baskets whose held-out item moved: how many,
    by at most how many places, from which rank on (in double)."""
    out = {}
    for b in baskets:
        d, s = num(b["rank_d"]), num(b["rank_s"])
        if d != s:
            n, by, at = out.get(b["model"], (0, 0, None))
            out[b["model"]] = (n + 1, max(by, abs(d - s)), d if at is None else min(at, d))
    return out


def run_line(machine):
    return (
        f"Measured {machine.get('date', '?')} on {machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, "
        f"shared; load {machine.get('load', '?')} at the end), {machine.get('postgres', '?').split(' on ')[0]}, "
        f"mtdpp {machine.get('commit', '?')} built with `-DMTDPP_VALUE_SCORES`, BLAS {machine.get('blas', '?')} "
        f"({machine.get('blas_core', '?')}); {machine.get('wall_minutes', '?')} minutes. "
        f"Datasets: {machine.get('datasets', '?')}; splits: {machine.get('splits', '?')} (the canonical split on "
        f"every test basket, the others on {machine.get('subset', '?')} by md5 of the order id); kinds: "
        f"{machine.get('kinds', '?')}, each with `mtdpp_train`'s defaults.\n")


def report(rows, machines, baskets):
    moved_at = moves(baskets)
    out = [run_line(m) for m in machines]
    out.append("### Figures, double / single precision\n")
    out.append(
        "Each model scored twice on the same test baskets, every catalog item a candidate: in double from "
        "its value (`bench.value_scores`), in single as users get it (`mtdpp_score` on the stored model). "
        "*same model*: the value, stored by `mtdpp_save`, is row for row the model `mtdpp_train` stored. "
        "*evaluate*: `mtdpp_evaluate`'s MPR of the stored model on the same baskets (a check of the "
        "protocol). *gap*: the largest difference of the four figures, in points.\n")
    rows_out = []
    for r in rows:
        rows_out.append([
            r["dataset"], r["split"], HELD_OUT.get(r["test"], r["test"]), r["kind"], r["rank"], r["baskets"],
            both(r, "mpr", 3), f"{num(r['mpr_eval']):.3f}" if r["mpr_eval"] else "", both(r, "p5"),
            both(r, "p10"), both(r, "p20"), metric_gap(r), {"t": "yes", "f": "**no**"}.get(r["same_model"], "?")])
    out.append(table(["dataset", "split", "held out", "kind", "rank", "baskets", "MPR", "evaluate", "P@5",
                      "P@10", "P@20", "gap", "same model"], rows_out))
    out.append("\n### Scores and top 10\n")
    out.append(
        "*scores*: the scores compared (every candidate the model knows, every basket); |d - s| the "
        "absolute difference of a score in double and in single precision (scores are ln probabilities "
        "plus the hybrid's evidence); *rel*: the largest |d - s| / max(1, |d|). *held-out moved*: baskets "
        "whose held-out item's rank differs, by at most how many places, and the best rank (in double) "
        "at which one moved. *top 10*: baskets whose top "
        "10 (by score, then item id) differs in order, and in items, with the most items that differ.\n")
    rows_out = []
    for r in rows:
        n, by, at = moved_at.get(f"{r['model']}:{r['test']}", (0, 0, None))
        moved = f"{n} (by {by:g} at most, at rank {at:,g} or below)" if n else "0"
        items = f"{r['top_items']} (max {r['top_items_max']}; 1 item: {r['top_items_one']})" \
            if int(r["top_items"]) else "0"
        rows_out.append([
            r["dataset"], r["split"], HELD_OUT.get(r["test"], r["test"]), r["kind"], f"{int(r['scores']):,}",
            sci(r["max_abs"]), sci(r["median_abs"]), sci(r["p99_abs"]), sci(r["max_rel"]), moved,
            r["top_order"], items, r["null_mismatch"]])
    out.append(table(["dataset", "split", "held out", "kind", "scores", "max abs", "median abs", "p99 abs",
                      "rel", "held-out moved", "top 10 order", "top 10 items", "NULL one way"], rows_out))
    out.append("\n### Stored size\n")
    out.append(
        "The biases, factors and task factors of `mtdpp.items` as stored (real), and as the same columns "
        "would take in double precision (float8); the value `mtdpp_fit` returns holds them in double "
        "(with the neighbour lists of the hybrid, whose weights are single precision either way). "
        "*cache*: what a backend's copy of the model holds of V and R^2, items x rank x 2 values "
        "(model.h), in float as today and in double.\n")
    rows_out, seen = [], set()
    for r in rows:
        if r["model"] in seen:
            continue
        seen.add(r["model"])
        real, double = int(r["bytes_real"]), int(r["bytes_double"])
        cells = int(r["n_items"]) * int(r["rank"])
        rows_out.append([r["dataset"], r["split"], r["kind"], r["n_items"], r["rank"], f"{real / 1e6:.2f}",
                         f"{double / 1e6:.2f}", f"{double / real:.2f}", f"{int(r['value_bytes']) / 1e6:.2f}",
                         f"{cells * 8 / 1e6:.2f} / {cells * 16 / 1e6:.2f}"])
    out.append(table(["dataset", "split", "kind", "items", "rank", "real (MB)", "double (MB)", "ratio",
                      "value (MB)", "cache float / double (MB)"], rows_out))
    return "\n".join(out)


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def main():
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else LOGS / "precision"
    page = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    rows, baskets, machines = [], [], []
    for f in [folder] + [Path(a) for a in sys.argv[3:]]:
        rows += read_csv(f / "results.csv")
        baskets += read_csv(f / "baskets.csv")
        machine = {}
        with open(f / "machine.txt") as fh:
            for line in fh:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    machine[k] = v
        machines.append(machine)
    datasets = [d for m in machines for d in m.get("datasets", "").split()]
    rows.sort(key=lambda r: (datasets.index(r["dataset"]) if r["dataset"] in datasets else 99,
                             r["split"] != "canonical", r["split"], r["test"] != "random", r["kind"] != "hybrid"))
    text = report(rows, machines, baskets)
    (folder / "results.md").write_text(text)
    if page:
        splice(page, "report", text)


if __name__ == "__main__":
    main()

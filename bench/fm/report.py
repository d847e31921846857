#!/usr/bin/env python3
"""bench/fm/report.py DIR: results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/fm/run), beside item-kNN's
figures of bench/quality/results.csv (same splits, same protocol)."""
import csv
import json
import statistics
import sys
from pathlib import Path

# The paper's Table 1 (Factorization Machines, d = 2, each basket a user)
# and Table 2 (Instacart: protocol (1) a random item held out, (2) the last
# one), on its own, leakier protocol; by dataset and test.
PAPER = {
    ("amazon_diaper", "random"): "67.92 / 24.01 / 32.62 / 46.25 (r 5)",
    ("amazon_daf", "random"): "65.21 / 10.62 / 16.71 / 24.20 (r 5)",
    ("belgian_retail", "random"): "65.08 / 20.85 / 21.10 / 21.37 (r 10)",
    ("uk_retail", "random"): "56.91 / 0.47 / 0.83 / 1.50 (r 5)",
    ("instacart_sample", "random"): "61.10 / 4.55 / 6.30 / 7.67 (r 5, protocol 1)",
    ("instacart_sample", "last"): "62.47 / 9.35 / 10.66 / 11.92 (r 5, protocol 2)",
}
ORDER = ["amazon_diaper", "amazon_daf", "uk_retail", "instacart_sample", "belgian_retail"]
KINDS = ["fm", "popularity", "itemknn"]
METRICS = ("mpr", "p5", "p10", "p20")


def num(x):
    return float(x) if x not in ("", None) else None


def fig(r):
    return " / ".join(f"{num(r[k]):.2f}" for k in METRICS)


def main(out):
    out = Path(out)
    every = [r for r in csv.DictReader(open(out / "results.csv")) if r["kind"] in KINDS]
    # item-kNN from the quality benchmark, on the same splits and test baskets
    quality = Path(__file__).resolve().parent.parent / "quality" / "results.csv"
    if quality.exists():
        every += [r for r in csv.DictReader(open(quality)) if r["kind"] == "itemknn"]
    rows = [r for r in every if r["status"] == "ok"]
    failed = [r for r in every if r["status"] != "ok" and r["kind"] == "fm"]
    checks = list(csv.DictReader(open(out / "checks.csv")))
    extra = list(csv.reader(open(out / "extra.csv")))[1:] if (out / "extra.csv").exists() else []
    machine = dict(l.rstrip("\n").split("=", 1) for l in open(out / "machine.txt") if "=" in l)
    datasets = [d for d in ORDER if any(r["dataset"] == d and r["kind"] == "fm" for r in rows)]
    md = ["# The kind fm (a factorization machine) against popularity and item-kNN", ""]
    md += [f"`bench/fm/run` (`bench/quality/run` with `BENCH_KINDS=\"fm popularity\"`, "
           f"then `bench/fm/report.py`), commit {machine.get('commit', '?')}, {machine.get('date', '?')}, "
           f"on {machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, {machine.get('memory', '?')}), "
           f"{machine.get('postgres', '?').split(' on ')[0]}. The machine was shared with other "
           f"engineers' tests and benchmarks (load {machine.get('load', '?')} at the end): times are "
           "indicative. `maintenance_work_mem` 2GB (bench/lib.sh). Every model is trained with "
           "`mtdpp_train`'s defaults; every candidate of the catalog is ranked (data/README.md's "
           "protocol). Item-kNN's figures are bench/quality/results.csv's (the same splits and test "
           "baskets, an earlier commit: item-kNN has not changed since). MPR / P@5 / P@10 / P@20.", ""]
    md += ["## Canonical split", "",
           "| dataset | test | fm | popularity | itemknn | the paper's FM (Tables 1, 2) |",
           "|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical" and r["test"] == test}
            if "fm" not in got:
                continue
            cells = [fig(got[k]) if k in got else "" for k in KINDS]
            md.append(f"| {d} | {test} | " + " | ".join(cells) + f" | {PAPER.get((d, test), '-')} |")
    md += ["", "Training (the whole `mtdpp_train` statement, seconds, and the fit's own), the rank and L2 "
           "chosen on the validation slice (rank 32, L2 1e-5 against rank 128, L2 1e-6), epochs "
           "(best / run, of the model kept), and completion latency (a top 10, p50 / p99 ms over "
           "1000 calls in one session):", "",
           "| dataset | fm: train s (fit s) | rank | l2 | epochs | validation MPR (rank 32 / 128) | latency | "
           "popularity: latency | itemknn: train s | latency |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for d in datasets:
        got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical" and r["test"] == "random"}
        if "fm" not in got:
            got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical"}
        f = got["fm"]
        h = json.loads(f["hyperparams"])
        cands = h.get("capacity", {}).get("candidates", [])
        vals = " / ".join(f"{c['validation_mpr']:.2f}" if c.get("validation_mpr") is not None else "-" for c in cands)
        lat = lambda k: (f"{num(got[k]['lat_p50_ms']):.2f} / {num(got[k]['lat_p99_ms']):.2f}"
                         if k in got and got[k]["lat_p50_ms"] else "")
        knn = f"{num(got['itemknn']['wall_seconds']):.1f}" if "itemknn" in got else ""
        md.append(f"| {d} | {num(f['wall_seconds']):.1f} ({num(f['train_seconds']):.1f}) | {f['rank']} | {h.get('l2')} | "
                  f"{f['best_epoch']} / {f['epochs_run']} | {vals} | {lat('fm')} | {lat('popularity')} | {knn} | {lat('itemknn')} |")
    splits = sorted({r["split"] for r in rows if r["kind"] == "fm"}, key=lambda s: (s != "canonical", s))
    md += ["", "## Every split", "",
           "fm's figures, then the gap to popularity and to item-kNN (fm minus the other, points, "
           "MPR / P@5 / P@10 / P@20); other seeds' splits are evaluated on 3,000 test baskets. "
           "Median and worst over the splits.", "",
           "| dataset | test | split | fm | − popularity | − itemknn |",
           "|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            per = []
            for s in splits:
                got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == s and r["test"] == test}
                if "fm" not in got:
                    continue
                g = lambda k: [num(got["fm"][m]) - num(got[k][m]) if k in got else float("nan") for m in METRICS]
                own = [num(got["fm"][m]) for m in METRICS]
                per.append((own, g("popularity"), g("itemknn")))
                fmt = lambda v, sign: " / ".join((f"{x:+.2f}" if sign else f"{x:.2f}") for x in v)
                md.append(f"| {d} | {test} | {s} | {fmt(own, False)} | {fmt(per[-1][1], True)} | {fmt(per[-1][2], True)} |")
            if len(per) > 1:
                for label, agg in (("median", statistics.median), ("worst", min)):
                    row = [[agg(p[j][i] for p in per) for i in range(4)] for j in range(3)]
                    md.append(f"| {d} | {test} | {label} | " + " | ".join(
                        " / ".join((f"{x:+.2f}" if j else f"{x:.2f}") for x in row[j]) for j in range(3)) + " |")
    md += ["", "## Checks", "",
           "| dataset | model | top 10 = full ranking by mtdpp_score | MPR recomputed in SQL / mtdpp_evaluate |",
           "|---|---|---|---|"]
    for c in checks:
        if c["check_name"] == "topk" and c["model"].rsplit("_", 1)[-1] in KINDS:
            m = next((x for x in checks if x["model"] == c["model"] and x["check_name"] == "mpr"), None)
            ms = f"{num(m['mpr_sql']):.4f} / {num(m['mpr_eval']):.4f}" if m else ""
            md.append(f"| {c['dataset']} | {c['model']} | {c['agree']} of {c['baskets']} baskets | {ms} |")
    if extra:
        md += ["", "On each canonical split, for the fm model: scores of 200 test baskets against the whole "
               "catalog that are not finite, and completions of a top 10 of 200 test baskets whose "
               "`mtdpp_explain` contributions do not sum to the score less the item's weight w_c:", "",
               "| dataset | check | baskets | count |", "|---|---|---|---|"]
        for e in extra:
            md.append(f"| {e[0]} | {e[1]} | {e[2]} | {e[3]} |")
    if (out / "notes.md").exists():
        md += ["", (out / "notes.md").read_text().rstrip("\n")]
    if failed:
        md += ["", "## Not measured", ""] + [f"- {r['model']}: {r['status']}: {r['error']}" for r in failed]
    (out / "results.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)

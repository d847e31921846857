#!/usr/bin/env python3
"""bench/poisson/report.py DIR: results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/poisson/run), beside item-kNN's
figures of bench/quality/results.csv (same splits, same protocol)."""
import csv
import json
import statistics
import sys
from pathlib import Path

# The paper's Table 1 (Poisson Factorization, r factors), on its own, leakier
# protocol; no row for Instacart (Table 2 has no PF).
PAPER = {
    "amazon_diaper": "50.30 / 4.78 / 10.03 / 19.90 (r 40)",
    "amazon_daf": "51.36 / 4.16 / 5.88 / 9.08 (r 40)",
    "belgian_retail": "87.02 / 21.46 / 23.06 / 23.90 (r 40)",
    "uk_retail": "73.12 / 1.77 / 2.31 / 3.01 (r 100)",
}
ORDER = ["amazon_diaper", "amazon_daf", "uk_retail", "instacart_sample", "belgian_retail"]
KINDS = ["poisson", "popularity", "itemknn"]


def num(x):
    return float(x) if x not in ("", None) else None


def fig(r):
    return " / ".join(f"{num(r[k]):.2f}" for k in ("mpr", "p5", "p10", "p20"))


def main(out):
    out = Path(out)
    quality = Path(__file__).resolve().parent.parent / "quality" / "results.csv"
    every = [r for r in csv.DictReader(open(out / "results.csv")) if r["kind"] in KINDS and r["target"] == "random"]
    knn = [r for r in csv.DictReader(open(quality)) if r["kind"] == "itemknn" and r["status"] == "ok"]
    rows = [r for r in every if r["status"] == "ok"]
    measured = {(r["dataset"], r["split"], r["test"]) for r in rows}
    rows += [r for r in knn if (r["dataset"], r["split"], r["test"]) in measured]
    failed = [r for r in every if r["status"] != "ok"]
    checks = list(csv.DictReader(open(out / "checks.csv")))
    extra = list(csv.reader(open(out / "extra.csv")))[1:] if (out / "extra.csv").exists() else []
    machine = dict(l.rstrip("\n").split("=", 1) for l in open(out / "machine.txt") if "=" in l)
    datasets = [d for d in ORDER if any(r["dataset"] == d for r in rows)]
    md = ["# The kind poisson against popularity and item-kNN", ""]
    md += [f"`bench/poisson/run` (`bench/quality/run` with `BENCH_KINDS=\"poisson popularity\"`, "
           f"then `bench/poisson/report.py`), commit {machine.get('commit', '?')}, {machine.get('date', '?')}, "
           f"on {machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, {machine.get('memory', '?')}), "
           f"{machine.get('postgres', '?').split(' on ')[0]}. The machine was shared with other "
           f"engineers' tests and benchmarks (load {machine.get('load', '?')} at the end): times are "
           "indicative. `maintenance_work_mem` 2GB (bench/lib.sh). Every model is trained with "
           "`mtdpp_train`'s defaults; every candidate of the catalog is ranked (data/README.md's "
           "protocol). item-kNN's figures are those of `bench/quality/results.csv` (same splits and "
           "protocol, an earlier commit). MPR / P@5 / P@10 / P@20.", ""]
    md += ["## Canonical split", "",
           "| dataset | test | poisson | popularity | itemknn | paper's Table 1 (PF) |",
           "|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical" and r["test"] == test}
            if not got:
                continue
            cells = [fig(got[k]) if k in got else "" for k in KINDS]
            md.append(f"| {d} | {test} | " + " | ".join(cells) + f" | {PAPER.get(d, '-')} |")
    md += ["", "Training (the whole `mtdpp_train` statement, seconds: the search of c and the rank on the "
           "validation slice, then the fit), completion latency (a top 10, p50 / p99 ms over 1000 calls in "
           "one session) and the values chosen on the validation slice:", "",
           "| dataset | poisson: train s | latency | rank | c | popularity: latency |",
           "|---|---|---|---|---|---|"]
    for d in datasets:
        got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical" and r["test"] == "random"}
        if "poisson" not in got:
            continue
        h = json.loads(got["poisson"]["hyperparams"])
        lat = lambda k: (f"{num(got[k]['lat_p50_ms']):.2f} / {num(got[k]['lat_p99_ms']):.2f}"
                         if k in got and got[k]["lat_p50_ms"] else "")
        md.append(f"| {d} | {num(got['poisson']['wall_seconds']):.1f} | {lat('poisson')} | {h.get('rank')} | "
                  f"{h.get('c')} | {lat('popularity')} |")
    splits = sorted({r["split"] for r in rows}, key=lambda s: (s != "canonical", s))
    md += ["", "## Every split", "",
           "MPR / P@5 / P@10 / P@20 of poisson, then the gap to popularity and to item-kNN (poisson minus "
           "the other, points, MPR / P@20); other seeds' splits are evaluated on 3,000 test baskets. "
           "Median and worst over the splits.", "",
           "| dataset | test | split | poisson | rank, c | train s | − popularity MPR / P@20 | − itemknn MPR / P@20 |",
           "|---|---|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            gaps, figs = [], []
            for s in splits:
                got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == s and r["test"] == test}
                if "poisson" not in got:
                    continue
                g = lambda k, m: num(got["poisson"][m]) - num(got[k][m]) if k in got else float("nan")
                gaps.append((g("popularity", "mpr"), g("popularity", "p20"), g("itemknn", "mpr"), g("itemknn", "p20")))
                figs.append([num(got["poisson"][k]) for k in ("mpr", "p5", "p10", "p20")])
                h = json.loads(got["poisson"]["hyperparams"])
                md.append(f"| {d} | {test} | {s} | {fig(got['poisson'])} | {h.get('rank')}, {h.get('c')} | "
                          f"{num(got['poisson']['wall_seconds']):.1f} | "
                          f"{gaps[-1][0]:+.2f} / {gaps[-1][1]:+.2f} | {gaps[-1][2]:+.2f} / {gaps[-1][3]:+.2f} |")
            if len(gaps) > 1:
                med = [statistics.median(x[i] for x in gaps) for i in range(4)]
                worst = [min(x[i] for x in gaps) for i in range(4)]
                fmed = " / ".join(f"{statistics.median(x[i] for x in figs):.2f}" for i in range(4))
                fworst = " / ".join(f"{min(x[i] for x in figs):.2f}" for i in range(4))
                md.append(f"| {d} | {test} | median | {fmed} | | | {med[0]:+.2f} / {med[1]:+.2f} | {med[2]:+.2f} / {med[3]:+.2f} |")
                md.append(f"| {d} | {test} | worst | {fworst} | | | {worst[0]:+.2f} / {worst[1]:+.2f} | {worst[2]:+.2f} / {worst[3]:+.2f} |")
    md += ["", "## Checks", "",
           "| dataset | model | top 10 = full ranking by mtdpp_score | MPR recomputed in SQL / mtdpp_evaluate |",
           "|---|---|---|---|"]
    for c in checks:
        if c["check_name"] == "topk" and c["model"].rsplit("_", 1)[-1] in KINDS:
            m = next((x for x in checks if x["model"] == c["model"] and x["check_name"] == "mpr"), None)
            ms = f"{num(m['mpr_sql']):.4f} / {num(m['mpr_eval']):.4f}" if m else ""
            md.append(f"| {c['dataset']} | {c['model']} | {c['agree']} of {c['baskets']} baskets | {ms} |")
    md += ["", "On each canonical split, for the poisson model: scores of 200 test baskets against the whole "
           "catalog that are not finite and positive, and completions of a top 10 of 200 test baskets whose "
           "`mtdpp_explain` has no row or a contribution that is not finite:", "",
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

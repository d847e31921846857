#!/usr/bin/env python3
"""bench/rules/report.py DIR: results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/rules/run)."""
import csv
import json
import statistics
import sys
from pathlib import Path

# The paper's Table 1 (Associative Classifier: CBA, support 1%, confidence
# 20%), on its own, leakier protocol; no MPR (CBA scores no item outside its
# rules), no row for the other datasets nor for Instacart (Table 2).
PAPER = {
    "amazon_diaper": "- / 16.66 / 16.66 / 16.66",
    "amazon_daf": "- / 4.16 / 4.16 / 4.16",
}
ORDER = ["amazon_diaper", "amazon_daf", "uk_retail", "instacart_sample", "belgian_retail"]
KINDS = ["rules", "popularity", "itemknn"]


def num(x):
    return float(x) if x not in ("", None) else None


def fig(r):
    return " / ".join(f"{num(r[k]):.2f}" for k in ("mpr", "p5", "p10", "p20"))


def main(out):
    out = Path(out)
    # bench/quality/run adds a multitask model on instacart_sample: not measured here
    every = [r for r in csv.DictReader(open(out / "results.csv")) if r["kind"] in KINDS]
    rows = [r for r in every if r["status"] == "ok"]
    failed = [r for r in every if r["status"] != "ok"]
    checks = list(csv.DictReader(open(out / "checks.csv")))
    extra = list(csv.reader(open(out / "extra.csv")))[1:]
    machine = dict(l.rstrip("\n").split("=", 1) for l in open(out / "machine.txt") if "=" in l)
    datasets = [d for d in ORDER if any(r["dataset"] == d for r in rows)]
    md = ["# The kind rules against popularity and item-kNN", ""]
    md += [f"`bench/rules/run` (`bench/quality/run` with `BENCH_KINDS=\"rules popularity itemknn\"`, "
           f"then `bench/rules/report.py`), commit {machine.get('commit', '?')}, {machine.get('date', '?')}, "
           f"on {machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, {machine.get('memory', '?')}), "
           f"{machine.get('postgres', '?').split(' on ')[0]}. The machine was shared with other "
           f"engineers' tests and benchmarks (load {machine.get('load', '?')} at the end): times are "
           "indicative. `maintenance_work_mem` 2GB (bench/lib.sh). Every model is trained with "
           "`mtdpp_train`'s defaults; every candidate of the catalog is ranked (data/README.md's "
           "protocol). MPR / P@5 / P@10 / P@20.", ""]
    md += ["## Canonical split", "",
           "| dataset | test | rules | popularity | itemknn | rules, paper's thresholds | paper's Table 1 (AC) |",
           "|---|---|---|---|---|---|---|"]
    paper_rows = {e[0]: e for e in extra if e[1] == "paper_thresholds"}
    for d in datasets:
        for test in ("random", "last"):
            got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical" and r["test"] == test}
            if not got:
                continue
            p = paper_rows.get(d)
            ps = " / ".join(p[3].split("/")[:4]) if p and test == ("last" if d == "instacart_sample" else "random") else ""
            cells = [fig(got[k]) if k in got else "" for k in KINDS]
            md.append(f"| {d} | {test} | " + " | ".join(cells) + f" | {ps} | {PAPER.get(d, '-') if test != 'random' or d != 'instacart_sample' else '-'} |")
    md += ["", "Training (the whole `mtdpp_train` statement, seconds), completion latency (a top 10, "
           "p50 / p99 ms over 1000 calls in one session) and the thresholds chosen on the validation slice:", "",
           "| dataset | rules: train s | latency | min_support | min_confidence | max_antecedent | rules kept | "
           "itemknn: train s | latency | popularity: latency | paper's thresholds: rules, train s |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for d in datasets:
        got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == "canonical"}
        if "rules" not in got:
            continue
        h = json.loads(got["rules"]["hyperparams"])
        lat = lambda k: (f"{num(got[k]['lat_p50_ms']):.2f} / {num(got[k]['lat_p99_ms']):.2f}"
                         if k in got and got[k]["lat_p50_ms"] else "")
        p = paper_rows.get(d)
        md.append(f"| {d} | {num(got['rules']['wall_seconds']):.1f} | {lat('rules')} | {h.get('min_support')} | "
                  f"{h.get('min_confidence')} | {h.get('max_antecedent')} | "
                  f"{next((e[3] for e in extra if e[0] == d and e[1] == 'rules_kept'), '')} | "
                  f"{num(got['itemknn']['wall_seconds']):.1f} | {lat('itemknn')} | {lat('popularity')} | "
                  f"{p[3].split('/')[4] + ', ' + p[3].split('/')[5] if p else ''} |")
    splits = sorted({r["split"] for r in rows}, key=lambda s: (s != "canonical", s))
    md += ["", "## Every split", "",
           "MPR and P@20 of rules, then the gap to popularity and to item-kNN (rules minus the other, "
           "points); other seeds' splits are evaluated on 3,000 test baskets. Median and worst over the splits.", "",
           "| dataset | test | split | rules MPR / P@20 | − popularity MPR / P@20 | − itemknn MPR / P@20 |",
           "|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            gaps = []
            for s in splits:
                got = {r["kind"]: r for r in rows if r["dataset"] == d and r["split"] == s and r["test"] == test}
                if "rules" not in got:
                    continue
                g = lambda k, m: num(got["rules"][m]) - num(got[k][m]) if k in got else float("nan")
                gaps.append((g("popularity", "mpr"), g("popularity", "p20"), g("itemknn", "mpr"), g("itemknn", "p20")))
                md.append(f"| {d} | {test} | {s} | {num(got['rules']['mpr']):.2f} / {num(got['rules']['p20']):.2f} | "
                          f"{gaps[-1][0]:+.2f} / {gaps[-1][1]:+.2f} | {gaps[-1][2]:+.2f} / {gaps[-1][3]:+.2f} |")
            if len(gaps) > 1:
                med = [statistics.median(x[i] for x in gaps) for i in range(4)]
                worst = [min(x[i] for x in gaps) for i in range(4)]
                md.append(f"| {d} | {test} | median | | {med[0]:+.2f} / {med[1]:+.2f} | {med[2]:+.2f} / {med[3]:+.2f} |")
                md.append(f"| {d} | {test} | worst | | {worst[0]:+.2f} / {worst[1]:+.2f} | {worst[2]:+.2f} / {worst[3]:+.2f} |")
    md += ["", "## Checks", "",
           "| dataset | model | top 10 = full ranking by mtdpp_score | MPR recomputed in SQL / mtdpp_evaluate |",
           "|---|---|---|---|"]
    for c in checks:
        if c["check_name"] == "topk" and c["model"].rsplit("_", 1)[-1] in KINDS:
            m = next((x for x in checks if x["model"] == c["model"] and x["check_name"] == "mpr"), None)
            ms = f"{num(m['mpr_sql']):.4f} / {num(m['mpr_eval']):.4f}" if m else ""
            md.append(f"| {c['dataset']} | {c['model']} | {c['agree']} of {c['baskets']} baskets | {ms} |")
    md += ["", "On each canonical split, for the rules model: scores of 200 test baskets against the whole catalog "
           "that are not finite, and completions of a top 10 of 200 test baskets with a rule that fires "
           "(score at least 1) whose rule `mtdpp_explain` does not give (its contribution, the rule's "
           "confidence, equal to the score minus 1):", "",
           "| dataset | check | baskets | count |", "|---|---|---|---|"]
    for e in extra:
        if e[1] not in ("paper_thresholds", "rules_kept"):
            md.append(f"| {e[0]} | {e[1]} | {e[2]} | {e[3]} |")
    if (out / "notes.md").exists():
        md += ["", (out / "notes.md").read_text().rstrip("\n")]
    if failed:
        md += ["", "## Not measured", ""] + [f"- {r['model']}: {r['status']}: {r['error']}" for r in failed]
    (out / "results.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)

#!/usr/bin/env python3
"""bench/bayesian_lowrank/report.py DIR: results.md from DIR's results.csv,
checks.csv, extra.csv and machine.txt (bench/bayesian_lowrank/run), beside
lowrank and item-kNN from bench/quality/results.csv and the paper's figures."""
import csv
import json
import statistics
import sys
from pathlib import Path

# The paper's Table 1, Bayesian Low Rank DPP (MPR / P@5 / P@10 / P@20), on its own protocol
PAPER = {
    "amazon_diaper": "72.38 / 26.31 / 36.21 / 51.51",
    "amazon_daf": "70.55 / 13.59 / 19.51 / 27.83",
    "belgian_retail": "89.08 / 21.43 / 23.10 / 25.12",
    "uk_retail": "61.31 / 1.07 / 1.91 / 3.25",
}
ORDER = ["amazon_diaper", "amazon_daf", "uk_retail", "instacart_sample", "belgian_retail"]
K = "bayesian_lowrank"


def num(x):
    return float(x) if x not in ("", None) else None


def fig(r):
    return " / ".join(f"{num(r[k]):.2f}" for k in ("mpr", "p5", "p10", "p20"))


def main(out):
    out = Path(out)
    every = [r for r in csv.DictReader(open(out / "results.csv")) if r["kind"] in (K, "popularity")]
    rows = [r for r in every if r["status"] == "ok"]
    failed = [r for r in every if r["status"] != "ok"]
    quality = [r for r in csv.DictReader(open(out.parent / "quality" / "results.csv"))
               if r["status"] == "ok" and r["kind"] in ("lowrank", "itemknn")]
    rows_all = rows + quality
    checks = list(csv.DictReader(open(out / "checks.csv"))) if (out / "checks.csv").exists() else []
    extra = list(csv.reader(open(out / "extra.csv")))[1:] if (out / "extra.csv").exists() else []
    machine = dict(l.rstrip("\n").split("=", 1) for l in open(out / "machine.txt") if "=" in l)
    datasets = [d for d in ORDER if any(r["dataset"] == d and r["kind"] == K for r in rows)]
    md = ["# The kind bayesian_lowrank against popularity, lowrank and item-kNN", ""]
    md += [f"`bench/bayesian_lowrank/run` (`bench/quality/run` with `BENCH_KINDS=\"bayesian_lowrank popularity\"`, "
           f"one dataset at a time, then `bench/bayesian_lowrank/report.py`), commit {machine.get('commit', '?')}, "
           f"{machine.get('date', '?')}, on {machine.get('cpu', '?')} ({machine.get('cores', '?')} cores, "
           f"{machine.get('memory', '?')}), {machine.get('postgres', '?').split(' on ')[0]}. The machine was shared "
           f"with other engineers' tests and benchmarks (load {machine.get('load', '?')} at the end): times are "
           "indicative. Every model is trained with `mtdpp_train`'s defaults; every candidate of the catalog is "
           "ranked (data/README.md's protocol). lowrank and itemknn: bench/quality/results.csv (an earlier "
           "commit, same protocol and splits). MPR / P@5 / P@10 / P@20.", ""]
    md += ["## Canonical split", "",
           "| dataset | test | bayesian_lowrank | popularity | lowrank | itemknn | paper's Bayesian Low Rank DPP |",
           "|---|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            got = {r["kind"]: r for r in rows_all if r["dataset"] == d and r["split"] == "canonical" and r["test"] == test}
            if K not in got:
                continue
            cells = [fig(got[k]) if k in got else "" for k in (K, "popularity", "lowrank", "itemknn")]
            md.append(f"| {d} | {test} | " + " | ".join(cells) + f" | {PAPER.get(d, '-') if test == 'random' else '-'} |")
    md += ["", "Training (the whole `mtdpp_train` statement, seconds), completion latency (a top 10, p50 / p99 ms "
           "over 1000 calls in one session), and what the validation slice chose: the step size, and the "
           "validation MPR of the posterior mean against the mode (the lowrank fit the chain starts from):", "",
           "| dataset | train s | latency | lowrank: train s | latency | prior precision | step size | "
           "validation MPR: mode / posterior mean (each step size) |", "|---|---|---|---|---|---|---|---|"]
    for d in datasets:
        got = {r["kind"]: r for r in rows_all if r["dataset"] == d and r["split"] == "canonical"}
        if K not in got:
            continue
        h = json.loads(got[K]["hyperparams"])
        s = h.get("sampler", {})
        cands = ", ".join(f"{c['step_size']:g}: {c['validation_mpr']}" for c in s.get("candidates", []))
        lat = lambda k: (f"{num(got[k]['lat_p50_ms']):.2f} / {num(got[k]['lat_p99_ms']):.2f}"
                         if k in got and got[k]["lat_p50_ms"] else "")
        lr = f"{num(got['lowrank']['wall_seconds']):.1f}" if "lowrank" in got else ""
        md.append(f"| {d} | {num(got[K]['wall_seconds']):.1f} | {lat(K)} | {lr} | {lat('lowrank')} | "
                  f"{h.get('prior_precision', 0):.3g} | {h.get('step_size')} | {s.get('validation_mpr_mode')} / {cands} |")
    splits = sorted({r["split"] for r in rows}, key=lambda s: (s != "canonical", s))
    md += ["", "## Every split", "",
           "MPR and P@20 of bayesian_lowrank, then the gap to popularity, lowrank and item-kNN (bayesian_lowrank "
           "minus the other, points); other seeds' splits are evaluated on 3,000 test baskets. Median and worst "
           "over the splits.", "",
           "| dataset | test | split | MPR / P@20 | − popularity | − lowrank | − itemknn |", "|---|---|---|---|---|---|---|"]
    for d in datasets:
        for test in ("random", "last"):
            gaps = []
            for s in splits:
                got = {r["kind"]: r for r in rows_all if r["dataset"] == d and r["split"] == s and r["test"] == test}
                if K not in got:
                    continue
                g = lambda k, m: num(got[K][m]) - num(got[k][m]) if k in got else float("nan")
                gaps.append([g(k, m) for k in ("popularity", "lowrank", "itemknn") for m in ("mpr", "p20")])
                x = gaps[-1]
                md.append(f"| {d} | {test} | {s} | {num(got[K]['mpr']):.2f} / {num(got[K]['p20']):.2f} | "
                          f"{x[0]:+.2f} / {x[1]:+.2f} | {x[2]:+.2f} / {x[3]:+.2f} | {x[4]:+.2f} / {x[5]:+.2f} |")
            if len(gaps) > 1:
                med = [statistics.median(x[i] for x in gaps) for i in range(6)]
                worst = [min(x[i] for x in gaps) for i in range(6)]
                for name, v in (("median", med), ("worst", worst)):
                    md.append(f"| {d} | {test} | {name} | | {v[0]:+.2f} / {v[1]:+.2f} | {v[2]:+.2f} / {v[3]:+.2f} | "
                              f"{v[4]:+.2f} / {v[5]:+.2f} |")
    md += ["", "## Checks", "",
           "| dataset | model | top 10 = full ranking by mtdpp_score | MPR recomputed in SQL / mtdpp_evaluate |",
           "|---|---|---|---|"]
    for c in checks:
        if c["check_name"] == "topk" and c["model"].endswith(K):
            m = next((x for x in checks if x["model"] == c["model"] and x["check_name"] == "mpr"), None)
            ms = f"{num(m['mpr_sql']):.4f} / {num(m['mpr_eval']):.4f}" if m else ""
            md.append(f"| {c['dataset']} | {c['model']} | {c['agree']} of {c['baskets']} baskets | {ms} |")
    md += ["", "On each canonical split: scores of 200 test baskets against the whole catalog that are not finite, "
           "and completions of a top 10 of 200 test baskets without a finite `mtdpp_explain` contribution:", "",
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

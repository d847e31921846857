#!/usr/bin/env python3
"""bench/bayesian_lowrank/report.py [DIR]: the section "report" of bench/bayesian_lowrank/results.md from DIR's results.csv,
checks.csv, extra.csv and machine.txt (bench/bayesian_lowrank/run), beside
lowrank and item-kNN from bench/quality/run's results.csv and the paper's figures.
(DIR: $BENCH_LOGS/bayesian_lowrank, by default /tmp/mtdpp-bench-logs/bayesian_lowrank.)"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kind_report as kr  # noqa: E402

K = "bayesian_lowrank"
BASELINES = ["popularity", "lowrank", "itemknn"]

# The paper's Table 1, Bayesian Low Rank DPP (MPR / P@5 / P@10 / P@20), on its own protocol
PAPER = {
    "amazon_diaper": "72.38 / 26.31 / 36.21 / 51.51",
    "amazon_daf": "70.55 / 13.59 / 19.51 / 27.83",
    "belgian_retail": "89.08 / 21.43 / 23.10 / 25.12",
    "uk_retail": "61.31 / 1.07 / 1.91 / 3.25",
}
# what extra.csv counts: the checks bench/bayesian_lowrank/run makes on each canonical split
EXTRA_CHECKS = (
    "On each canonical split: scores of 200 test baskets against the whole catalog that are not finite, "
    "and completions of a top 10 of 200 test baskets without a finite `mtdpp_explain` contribution:"
)


def main(out):
    b = kr.load(out, K, [K, "popularity"], from_quality=["lowrank", "itemknn"])
    md = kr.header(b, "The kind bayesian_lowrank against popularity, lowrank and item-kNN",
                   "`bench/quality/run` with `BENCH_KINDS=\"bayesian_lowrank popularity\"`, one dataset at a time",
                   f"{kr.TRAINED}; {kr.RANKED} lowrank and itemknn: bench/quality/run's results.csv (an earlier "
                   "commit, same protocol and splits).")
    # the paper held out a random item
    md += kr.canonical_section(
        b, "| dataset | test | bayesian_lowrank | popularity | lowrank | itemknn | paper's Bayesian Low Rank DPP |",
        [K] + BASELINES, lambda d, test, got: [PAPER.get(d, "-") if test == "random" else "-"])
    md += ["", "Training (the whole `mtdpp_train` statement, seconds), completion latency (a top 10, p50 / p99 ms "
           "over 1000 calls in one session), and what the validation slice chose: the step size, and the "
           "validation MPR of the posterior mean against the mode (the lowrank fit the chain starts from):", ""]
    md += kr.table_head("| dataset | train s | latency | lowrank: train s | latency | prior precision | step size | "
                        "validation MPR: mode / posterior mean (each step size) |")
    for d in b.datasets:
        got = kr.results(b, d, "canonical")
        if K not in got:
            continue
        h = json.loads(got[K]["hyperparams"])
        sampler = h.get("sampler", {})
        candidates = ", ".join(f"{c['step_size']:g}: {c['validation_mpr']}" for c in sampler.get("candidates", []))
        lowrank = f"{kr.num(got['lowrank']['wall_seconds']):.1f}" if "lowrank" in got else ""
        md.append(kr.row([d, f"{kr.num(got[K]['wall_seconds']):.1f}", kr.latency(got.get(K)), lowrank,
                          kr.latency(got.get("lowrank")), f"{h.get('prior_precision', 0):.3g}",
                          str(h.get("step_size")), f"{sampler.get('validation_mpr_mode')} / {candidates}"]))
    md += kr.every_split_section(
        b, "MPR and P@20 of bayesian_lowrank, then the gap to popularity, lowrank and item-kNN (bayesian_lowrank "
        "minus the other, points)",
        "| dataset | test | split | MPR / P@20 | − popularity | − lowrank | − itemknn |",
        BASELINES, ("mpr", "p20"), ("mpr", "p20"), own_summary=False)
    kr.finish(b, md, [K], EXTRA_CHECKS)


if __name__ == "__main__":
    main(kr.folder_argument(__file__))

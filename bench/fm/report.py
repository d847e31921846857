#!/usr/bin/env python3
"""bench/fm/report.py [DIR]: the section "report" of bench/fm/results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/fm/run), beside item-kNN's
figures of bench/quality/run's results.csv (same splits, same protocol).
(DIR: $BENCH_LOGS/fm, by default /tmp/mtdpp-bench-logs/fm.)"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kind_report as kr  # noqa: E402

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
KINDS = ["fm", "popularity", "itemknn"]
# what extra.csv counts: the checks bench/fm/run makes on each canonical split
EXTRA_CHECKS = (
    "On each canonical split, for the fm model: scores of 200 test baskets against the whole "
    "catalog that are not finite, and completions of a top 10 of 200 test baskets whose "
    "`mtdpp_explain` contributions do not sum to the score less the item's weight w_c:"
)


def validation_mprs(hyperparams):
    """The validation MPR of each capacity fm tried, "-" where it has none."""
    candidates = hyperparams.get("capacity", {}).get("candidates", [])
    return " / ".join(f"{c['validation_mpr']:.2f}" if c.get("validation_mpr") is not None else "-"
                      for c in candidates)


def main(out):
    # item-kNN from the quality benchmark, on the same splits and test baskets
    b = kr.load(out, "fm", ["fm", "popularity"], from_quality=["itemknn"])
    md = kr.header(b, "The kind fm (a factorization machine) against popularity and item-kNN",
                   "`bench/quality/run` with `BENCH_KINDS=\"fm popularity\"`",
                   f"{kr.MAINTENANCE_MEMORY} {kr.TRAINED}; {kr.RANKED} Item-kNN's figures are "
                   "bench/quality/run's results.csv's (the same splits and test baskets, an earlier "
                   "commit: item-kNN has not changed since).")
    md += kr.canonical_section(b, "| dataset | test | fm | popularity | itemknn | the paper's FM (Tables 1, 2) |",
                               KINDS, lambda d, test, got: [PAPER.get((d, test), "-")])
    md += ["", "Training (the whole `mtdpp_train` statement, seconds, and the fit's own), the rank and L2 "
           "chosen on the validation slice (rank 32, L2 1e-5 against rank 128, L2 1e-6), epochs "
           "(best / run, of the model kept), and completion latency (a top 10, p50 / p99 ms over "
           "1000 calls in one session):", ""]
    md += kr.table_head("| dataset | fm: train s (fit s) | rank | l2 | epochs | validation MPR (rank 32 / 128) | "
                        "latency | popularity: latency | itemknn: train s | latency |")
    for d in b.datasets:
        # the random test's models, or the last one's where only that was measured
        got = kr.results(b, d, "canonical", "random")
        if "fm" not in got:
            got = kr.results(b, d, "canonical")
        f = got["fm"]
        h = json.loads(f["hyperparams"])
        knn = f"{kr.num(got['itemknn']['wall_seconds']):.1f}" if "itemknn" in got else ""
        md.append(kr.row([d, f"{kr.num(f['wall_seconds']):.1f} ({kr.num(f['train_seconds']):.1f})", f["rank"],
                          str(h.get("l2")), f"{f['best_epoch']} / {f['epochs_run']}", validation_mprs(h),
                          kr.latency(got.get("fm")), kr.latency(got.get("popularity")), knn,
                          kr.latency(got.get("itemknn"))]))
    md += kr.every_split_section(
        b, "fm's figures, then the gap to popularity and to item-kNN (fm minus the other, points, "
        "MPR / P@5 / P@10 / P@20)", "| dataset | test | split | fm | − popularity | − itemknn |",
        ["popularity", "itemknn"], kr.METRICS, kr.METRICS, own_summary=True)
    kr.finish(b, md, KINDS, EXTRA_CHECKS)


if __name__ == "__main__":
    main(kr.folder_argument(__file__))

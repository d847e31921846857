#!/usr/bin/env python3
"""bench/poisson/report.py [DIR]: the section "report" of bench/poisson/results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/poisson/run), beside item-kNN's
figures of bench/quality/run's results.csv (same splits, same protocol).
(DIR: $BENCH_LOGS/poisson, by default /tmp/mtdpp-bench-logs/poisson.)"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kind_report as kr  # noqa: E402

# The paper's Table 1 (Poisson Factorization, r factors), on its own, leakier
# protocol; no row for Instacart (Table 2 has no PF).
PAPER = {
    "amazon_diaper": "50.30 / 4.78 / 10.03 / 19.90 (r 40)",
    "amazon_daf": "51.36 / 4.16 / 5.88 / 9.08 (r 40)",
    "belgian_retail": "87.02 / 21.46 / 23.06 / 23.90 (r 40)",
    "uk_retail": "73.12 / 1.77 / 2.31 / 3.01 (r 100)",
}
KINDS = ["poisson", "popularity", "itemknn"]
# what extra.csv counts: the checks bench/poisson/run makes on each canonical split
EXTRA_CHECKS = (
    "On each canonical split, for the poisson model: scores of 200 test baskets against the whole "
    "catalog that are not finite and positive, and completions of a top 10 of 200 test baskets whose "
    "`mtdpp_explain` has no row or a contribution that is not finite:"
)


def chosen_and_train_seconds(r):
    """The rank and c chosen on the validation slice, and the training time."""
    h = json.loads(r["hyperparams"])
    return [f"{h.get('rank')}, {h.get('c')}", f"{kr.num(r['wall_seconds']):.1f}"]


def main(out):
    b = kr.load(out, "poisson", ["poisson", "popularity"], from_quality=["itemknn"])
    md = kr.header(b, "The kind poisson against popularity and item-kNN",
                   "`bench/quality/run` with `BENCH_KINDS=\"poisson popularity\"`",
                   f"{kr.MAINTENANCE_MEMORY} {kr.TRAINED}; {kr.RANKED} item-kNN's figures are those of "
                   "`bench/quality/run's results.csv` (same splits and protocol, an earlier commit).")
    md += kr.canonical_section(b, "| dataset | test | poisson | popularity | itemknn | paper's Table 1 (PF) |",
                               KINDS, lambda d, test, got: [PAPER.get(d, "-")])
    md += ["", "Training (the whole `mtdpp_train` statement, seconds: the search of c and the rank on the "
           "validation slice, then the fit), completion latency (a top 10, p50 / p99 ms over 1000 calls in "
           "one session) and the values chosen on the validation slice:", ""]
    md += kr.table_head("| dataset | poisson: train s | latency | rank | c | popularity: latency |")
    for d in b.datasets:
        got = kr.results(b, d, "canonical", "random")
        if "poisson" not in got:
            continue
        h = json.loads(got["poisson"]["hyperparams"])
        md.append(kr.row([d, f"{kr.num(got['poisson']['wall_seconds']):.1f}", kr.latency(got.get("poisson")),
                          str(h.get("rank")), str(h.get("c")), kr.latency(got.get("popularity"))]))
    md += kr.every_split_section(
        b, "MPR / P@5 / P@10 / P@20 of poisson, then the gap to popularity and to item-kNN (poisson minus "
        "the other, points, MPR / P@20)",
        "| dataset | test | split | poisson | rank, c | train s | − popularity MPR / P@20 | "
        "− itemknn MPR / P@20 |",
        ["popularity", "itemknn"], kr.METRICS, ("mpr", "p20"), own_summary=True, more=chosen_and_train_seconds)
    kr.finish(b, md, KINDS, EXTRA_CHECKS)


if __name__ == "__main__":
    main(kr.folder_argument(__file__))

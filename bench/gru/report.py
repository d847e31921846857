#!/usr/bin/env python3
"""bench/gru/report.py [DIR]: the section "report" of bench/gru/results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/gru/run), beside popularity and
item-kNN from bench/quality/run's results.csv (same splits, same test baskets).
(DIR: $BENCH_LOGS/gru, by default /tmp/mtdpp-bench-logs/gru.)"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kind_report as kr  # noqa: E402

# The paper's Table 2, Recurrent Neural Network (GRU4Rec's code), Instacart,
# protocol (2): the last item added held out of the test baskets; on the
# full Instacart data and the paper's own protocol.
PAPER_RNN = "73.31 / 1.08 / 1.99 / 3.20"
BASELINES = ["popularity", "itemknn"]
# gru is trained twice on instacart_sample: for a random item and for the last one
MODELS = ["gru", "gru, last"]
# what extra.csv counts: the checks bench/gru/run makes on each canonical split
EXTRA_CHECKS = (
    "On each canonical split, for the gru model: scores of 200 test baskets against the whole "
    "catalog that are not finite, and basket items of each top-3 completion of 200 test baskets "
    "without a finite `mtdpp_explain` contribution:"
)


def model_column(r):
    return "gru, last" if r["kind"] == "gru" and r["target"] == "last" else r["kind"]


def main(out):
    b = kr.load(out, "gru", ["gru"], from_quality=BASELINES, column=model_column, own=MODELS)
    md = kr.header(b, "The kind gru against popularity and item-kNN",
                   "`bench/quality/run` with `BENCH_KINDS=\"gru\"` and, on instacart_sample, "
                   "`BENCH_LAST_KINDS=\"gru\"`",
                   f"{kr.TRAINED} and `position_col => 'position'`, the order of lines in orders.csv (a real "
                   f"add-to-cart order on instacart_sample only); {kr.RANKED} popularity and item-kNN: "
                   "bench/quality/run's results.csv, the same splits and test baskets.")
    md += kr.canonical_section(
        b, "| dataset | test | gru | gru, last | popularity | itemknn |", MODELS + BASELINES,
        intro="`gru` is trained with `target => 'random'`; `gru, last` with `target => 'last'` (instacart_sample). "
        "Test `last`: the last item added is held out (the paper's protocol (2)); `random`: a random one.")
    md += ["", f"The paper's Table 2, Recurrent Neural Network (GRU4Rec's own code) on Instacart, protocol (2): "
           f"{PAPER_RNN}; its multi-task DPP 90.07 / 9.91 / 13.67 / 19.97. Those are on the full Instacart data "
           "and the paper's leakier protocol; instacart_sample is a 24k-order slice, so only the order of the "
           "figures compares.", ""]
    md += ["Training (the whole `mtdpp_train` statement, seconds, with the race that chooses the step and "
           "the hidden size), completion latency (a top 10, p50 / p99 ms over 1000 calls in one session) and "
           "what was chosen on the validation slice:", ""]
    md += kr.table_head("| dataset | model | train s | epochs (best) | latency p50 / p99 | hidden size | step |")
    gru = [r for r in b.rows if r["column"] in MODELS]
    for r in sorted(gru, key=lambda r: (kr.DATASETS.index(r["dataset"]), r["target"] != "random")):
        # the paper's test: the last item on Instacart, a random one elsewhere
        if r["split"] != "canonical" or r["test"] != ("last" if r["dataset"] == "instacart_sample" else "random"):
            continue
        h = json.loads(r["hyperparams"]) if r["hyperparams"] else {}
        md.append(kr.row([r["dataset"], r["model"], f"{kr.num(r['wall_seconds']):.1f}",
                          f"{r['epochs_run']} ({r['best_epoch']})", kr.latency(r), r["rank"],
                          str(h.get("learning_rate"))]))
    md += kr.every_split_section(
        b, "MPR and P@20 of gru, then its gap to popularity and to item-kNN (gru minus the other, points)",
        "| dataset | model | test | split | gru MPR / P@20 | − popularity MPR / P@20 | − itemknn MPR / P@20 |",
        BASELINES, ("mpr", "p20"), ("mpr", "p20"), own_summary=True)
    kr.finish(b, md, ["gru"], EXTRA_CHECKS)


if __name__ == "__main__":
    main(kr.folder_argument(__file__))

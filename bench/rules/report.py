#!/usr/bin/env python3
"""bench/rules/report.py [DIR]: the section "report" of bench/rules/results.md from DIR's results.csv, checks.csv,
extra.csv and machine.txt (written by bench/rules/run).
(DIR: $BENCH_LOGS/rules, by default /tmp/mtdpp-bench-logs/rules.)"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import kind_report as kr  # noqa: E402

# The paper's Table 1 (Associative Classifier: CBA, support 1%, confidence
# 20%), on its own, leakier protocol; no MPR (CBA scores no item outside its
# rules), no row for the other datasets nor for Instacart (Table 2).
PAPER = {
    "amazon_diaper": "- / 16.66 / 16.66 / 16.66",
    "amazon_daf": "- / 4.16 / 4.16 / 4.16",
}
KINDS = ["rules", "popularity", "itemknn"]
# extra.csv's rows that feed the tables above its checks
TABLE_ROWS = ("paper_thresholds", "rules_kept")
# what extra.csv counts: the checks bench/rules/run makes on each canonical split
EXTRA_CHECKS = (
    "On each canonical split, for the rules model: scores of 200 test baskets against the whole catalog "
    "that are not finite, and completions of a top 10 of 200 test baskets with a rule that fires "
    "(score at least 1) whose rule `mtdpp_explain` does not give (its contribution, the rule's "
    "confidence, equal to the score minus 1):"
)


def main(out):
    # bench/quality/run adds a multitask model on instacart_sample: not measured here
    b = kr.load(out, "rules", KINDS)
    md = kr.header(b, "The kind rules against popularity and item-kNN",
                   "`bench/quality/run` with `BENCH_KINDS=\"rules popularity itemknn\"`",
                   f"{kr.MAINTENANCE_MEMORY} {kr.TRAINED}; {kr.RANKED}")
    # the paper's thresholds: "MPR/P@5/P@10/P@20/rules/train s"
    paper_rows = {e[0]: e[3].split("/") for e in b.extra if e[1] == "paper_thresholds"}

    def paper_cells(d, test, got):
        # on the paper's own test: the last item on Instacart, a random one elsewhere
        paper_test = "last" if d == "instacart_sample" else "random"
        p = paper_rows.get(d)
        return [" / ".join(p[:4]) if p and test == paper_test else "", PAPER.get(d, "-")]

    md += kr.canonical_section(
        b, "| dataset | test | rules | popularity | itemknn | rules, paper's thresholds | paper's Table 1 (AC) |",
        KINDS, paper_cells)
    md += ["", "Training (the whole `mtdpp_train` statement, seconds), completion latency (a top 10, "
           "p50 / p99 ms over 1000 calls in one session) and the thresholds chosen on the validation slice:", ""]
    md += kr.table_head("| dataset | rules: train s | latency | min_support | min_confidence | max_antecedent | "
                        "rules kept | itemknn: train s | latency | popularity: latency | "
                        "paper's thresholds: rules, train s |")
    for d in b.datasets:
        got = kr.results(b, d, "canonical")
        if "rules" not in got:
            continue
        h = json.loads(got["rules"]["hyperparams"])
        kept = next((e[3] for e in b.extra if e[0] == d and e[1] == "rules_kept"), "")
        p = paper_rows.get(d)
        md.append(kr.row([d, f"{kr.num(got['rules']['wall_seconds']):.1f}", kr.latency(got.get("rules")),
                          str(h.get("min_support")), str(h.get("min_confidence")), str(h.get("max_antecedent")),
                          kept, f"{kr.num(got['itemknn']['wall_seconds']):.1f}", kr.latency(got.get("itemknn")),
                          kr.latency(got.get("popularity")), f"{p[4]}, {p[5]}" if p else ""]))
    md += kr.every_split_section(
        b, "MPR and P@20 of rules, then the gap to popularity and to item-kNN (rules minus the other, points)",
        "| dataset | test | split | rules MPR / P@20 | − popularity MPR / P@20 | − itemknn MPR / P@20 |",
        ["popularity", "itemknn"], ("mpr", "p20"), ("mpr", "p20"), own_summary=False)
    kr.finish(b, md, KINDS, EXTRA_CHECKS, [e for e in b.extra if e[1] not in TABLE_ROWS])


if __name__ == "__main__":
    main(kr.folder_argument(__file__))

#!/usr/bin/env python3
"""Writes bench/quality/paired.md from the CSV of bench/quality/paired."""
import csv
import statistics
import sys

ORDER = {"MPR": 0, "P@5": 1, "P@10": 2, "P@20": 3}
SPLITS = {"canonical": 0}


def main(path):
    rows = list(csv.DictReader(open(path)))
    rows.sort(key=lambda r: (r["dataset"], SPLITS.get(r["split"], 1), r["split"], r["test"],
                             ORDER[r["metric"]]))
    commits = sorted({r["commit"] for r in rows})
    out = ["# The default kind against the better of item-kNN and EASE, basket by basket", "",
           "Written by `bench/quality/paired` (commits %s): `hybrid`, `ease` and `itemknn` trained"
           % ", ".join("`%s`" % c for c in commits),
           "with the defaults, as `bench/quality/run` trains them, each test basket ranked by each model "
           "as `mtdpp_evaluate` ranks it (the held-out item among the catalog's items not in the basket; "
           "on the canonical, 101 and 102 splits the figures are those of `results.md`), and the hybrid set "
           "against the better of the other two on each metric, on the same baskets. *only hybrid* / "
           "*only other*: the baskets whose held-out item only that model has in its top K; z: McNemar's "
           "statistic for the precisions, the mean difference of percentile ranks over its standard "
           "error for MPR. |z| > 1.96: a difference the test baskets alone would show by chance less "
           "than one time in twenty." + (
               " belgian_retail's `ease` is the exact fit (`BENCH_PARAMS_ease='{\"ease_solver\":\"exact\"}'`), "
               "as in `results.md`: the kind's default fits neighbourhoods above 8,000 items."
               if any(r["dataset"] == "belgian_retail" for r in rows) else ""), "",
           "| data | split | held out | metric | baskets | hybrid | better other | difference | only hybrid | only other | z |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    behind = []
    for r in rows:
        out.append("| %s | %s | %s | %s | %s | %s | %s %s | %+.2f | %s | %s | %s |" % (
            r["dataset"], r["split"], r["test"], r["metric"], r["baskets"], r["hybrid"],
            r["reference"], r["reference_figure"], float(r["difference"]), r["hybrid_only"],
            r["reference_only"], r["z"]))
        if float(r["difference"]) < 0:
            behind.append(r)
    ahead = [r for r in rows if r["z"] and float(r["z"]) > 1.96]
    out += ["", "Ahead beyond |z| 1.96: %d of %d cells (%s)." % (
        len(ahead), len(rows), ", ".join("%s %d" % (m, sum(r["metric"] == m for r in ahead))
                                         for m in ORDER)),
            "", "Where the hybrid is behind: %d of %d cells; beyond |z| 1.96: %s." % (
        len(behind), len(rows),
        "; ".join("%s %s %s %s %+.2f (z %s)" % (r["dataset"], r["split"], r["test"], r["metric"],
                                               float(r["difference"]), r["z"])
                  for r in behind if r["z"] and float(r["z"]) < -1.96) or "none")]
    out += ["", "Were the hybrid and the better other equal in every cell, about %.1f of %d cells would "
            "fall below z -1.96 by chance alone." % (len(rows) / 40, len(rows))]
    out += summary(rows)
    print("\n".join(out))


def summary(rows):
    """The bar's terms: over each dataset's splits, the hybrid's median and worst split against
    the median and worst of the better other of each split (a bar at least as high as the better
    of item-kNN's and EASE's own median and worst)."""
    groups = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["test"], r["metric"]), []).append(r)
    out = ["", "## Median and worst split", "",
           "Over each dataset's splits: the hybrid's median and worst against the median and worst "
           "of the better other of each split, which is at least the better of item-kNN's and "
           "EASE's own median and worst.", "",
           "| data | held out | metric | splits | hybrid median | other median | difference | "
           "hybrid worst | other worst | difference |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    behind = 0
    for (ds, test, metric), rs in sorted(groups.items(), key=lambda g: (g[0][0], g[0][1], ORDER[g[0][2]])):
        h = [float(r["hybrid"]) for r in rs]
        o = [float(r["reference_figure"]) for r in rs]
        med = statistics.median(h) - statistics.median(o)
        worst = min(h) - min(o)
        behind += (med < 0) + (worst < 0)
        out.append("| %s | %s | %s | %d | %.2f | %.2f | %+.2f | %.2f | %.2f | %+.2f |" % (
            ds, test, metric, len(rs), statistics.median(h), statistics.median(o), med,
            min(h), min(o), worst))
    out += ["", "Behind: %d of %d figures." % (behind, 2 * len(groups))]
    return out


if __name__ == "__main__":
    main(sys.argv[1])

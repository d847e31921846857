"""What the reports of one kind against popularity and item-kNN share
(bench/rules, poisson, fm, bayesian_lowrank, gru: each folder's report.py).

Each of them reads what its `run` wrote under $BENCH_LOGS/<folder>/
(results.csv, checks.csv, extra.csv, machine.txt; default BENCH_LOGS:
/tmp/mtdpp-bench-logs, out of the tree); baselines it did not measure itself
come from $BENCH_LOGS/quality/results.csv, on the same splits and test
baskets.  A report loads them with load(), builds its markdown from the
tables below and its own text, and writes it with finish(): beside the raw
files, and as the section "report" of the folder's results.md, whose notes
written by hand, outside that section, stay.
"""
import os
import csv
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
LOGS = Path(os.environ.get("BENCH_LOGS", "/tmp/mtdpp-bench-logs"))
QUALITY_RESULTS = LOGS / "quality" / "results.csv"
DATASETS = ["amazon_diaper", "amazon_daf", "uk_retail", "instacart_sample", "belgian_retail"]
TESTS = ("random", "last")
METRICS = ("mpr", "p5", "p10", "p20")
# the protocol the runs share, for their reports' first paragraph
MAINTENANCE_MEMORY = "`maintenance_work_mem` 2GB (bench/lib.sh)."
TRAINED = "Every model is trained with `mtdpp_train`'s defaults"
RANKED = "every candidate of the catalog is ranked (data/README.md's protocol)."


def num(x):
    return float(x) if x not in ("", None) else None


def figures(result, metrics=METRICS):
    return " / ".join(f"{num(result[m]):.2f}" for m in metrics)


def signed(values):
    return " / ".join(f"{v:+.2f}" for v in values)


def unsigned(values):
    return " / ".join(f"{v:.2f}" for v in values)


def read_csv(path):
    """The rows of a CSV file as dicts; none when a run did not write it."""
    return list(csv.DictReader(open(path))) if path.exists() else []


def row(cells):
    return "| " + " | ".join(cells) + " |"


def table_head(head):
    """A table's header line and the separator under it."""
    return [head, "|" + "---|" * (head.count("|") - 1)]


def by_kind(result):
    return result["kind"]


@dataclass
class Bench:
    out: Path
    kind: str
    rows: list      # every result with status ok, each with its "column"
    failed: list    # this run's results that did not finish
    checks: list
    extra: list     # extra.csv's rows, as lists, without the header
    machine: dict
    own: list       # the columns of the kind under report
    datasets: list  # those it was measured on, in DATASETS' order
    splits: list    # canonical first


def load(out, kind, measured, from_quality=(), column=by_kind, own=None):
    """The results of the kinds `measured` by this folder's run, and those of
    the kinds `from_quality` (target random) from bench/quality; `column`
    names a result's column in the tables, `own` the kind's columns."""
    out = Path(out)
    every = [r for r in read_csv(out / "results.csv") if r["kind"] in measured]
    rows = [r for r in every if r["status"] == "ok"]
    rows += [r for r in read_csv(QUALITY_RESULTS)
             if r["kind"] in from_quality and r["status"] == "ok" and r["target"] == "random"]
    for r in rows:
        r["column"] = column(r)
    own = own or [kind]
    kind_rows = [r for r in rows if r["column"] in own]
    extra = list(csv.reader(open(out / "extra.csv")))[1:] if (out / "extra.csv").exists() else []
    machine = dict(l.rstrip("\n").split("=", 1) for l in open(out / "machine.txt") if "=" in l)
    return Bench(out=out, kind=kind, rows=rows, failed=[r for r in every if r["status"] != "ok"],
                 checks=read_csv(out / "checks.csv"), extra=extra, machine=machine, own=own,
                 datasets=[d for d in DATASETS if any(r["dataset"] == d for r in kind_rows)],
                 splits=sorted({r["split"] for r in kind_rows}, key=lambda s: (s != "canonical", s)))


def results(bench, dataset, split, test=None):
    """A dataset's results on one split (and test), by column."""
    return {r["column"]: r for r in bench.rows
            if r["dataset"] == dataset and r["split"] == split and test in (None, r["test"])}


def latency(r):
    """p50 / p99 ms of a result's completions, blank where not measured."""
    return f"{num(r['lat_p50_ms']):.2f} / {num(r['lat_p99_ms']):.2f}" if r and r["lat_p50_ms"] else ""


def header(bench, title, how_run, setup):
    """The title and the paragraph on the run: how it was run, the machine,
    then the kind's own `setup`."""
    m = bench.machine
    return [f"# {title}", "",
            f"`bench/{bench.kind}/run` ({how_run}, then `bench/{bench.kind}/report.py`), "
            f"commit {m.get('commit', '?')}, {m.get('date', '?')}, on {m.get('cpu', '?')} "
            f"({m.get('cores', '?')} cores, {m.get('memory', '?')}), {m.get('postgres', '?').split(' on ')[0]}. "
            f"The machine ran other tests and benchmarks at the same time (load {m.get('load', '?')} "
            f"at the end): times are indicative. {setup} MPR / P@5 / P@10 / P@20.", ""]


def canonical_section(bench, head, columns, more=lambda dataset, test, got: [], intro=None):
    """The canonical split's figures of each column, a row per dataset and
    test the kind was measured on; `more` gives the cells after them."""
    md = ["## Canonical split", ""] + ([intro, ""] if intro else []) + table_head(head)
    for d in bench.datasets:
        for test in TESTS:
            got = results(bench, d, "canonical", test)
            if any(c in got for c in bench.own):
                md.append(row([d, test] + [figures(got[c]) if c in got else "" for c in columns]
                              + more(d, test, got)))
    return md


def split_row(cells):
    # the rows of the median and the worst leave cells blank as "| |"
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def every_split_section(bench, intro, head, baselines, own_metrics, gap_metrics, own_summary, more=None):
    """Per dataset, column of the kind and test: a row per split with the
    kind's figures (`own_metrics`), the `more` cells, and its gap to each
    baseline (`gap_metrics`, the kind minus the baseline); then, over two
    or more splits, the median and the worst (the lowest) of each figure,
    the kind's own left blank unless `own_summary`."""
    md = ["", "## Every split", "",
          f"{intro}; other seeds' splits are evaluated on 3,000 test baskets. Median and worst over the splits.",
          ""] + table_head(head)
    for d in bench.datasets:
        for column in bench.own:
            label = [column] if len(bench.own) > 1 else []
            for test in TESTS:
                per_split = []
                for s in bench.splits:
                    got = results(bench, d, s, test)
                    if column not in got:
                        continue
                    r = got[column]
                    kind_figures = [num(r[m]) for m in own_metrics]
                    gaps = [[num(r[m]) - num(got[b][m]) if b in got else float("nan") for m in gap_metrics]
                            for b in baselines]
                    per_split.append([kind_figures] + gaps)
                    more_cells = more(r) if more else []
                    md.append(split_row([d] + label + [test, s, unsigned(kind_figures)] + more_cells
                                        + [signed(g) for g in gaps]))
                if len(per_split) > 1:
                    for name, summary in (("median", statistics.median), ("worst", min)):
                        values = [[summary(p[j][i] for p in per_split) for i in range(len(p0))]
                                  for j, p0 in enumerate(per_split[0])]
                        md.append(split_row([d] + label + [test, name, unsigned(values[0]) if own_summary else ""]
                                            + [""] * len(more_cells) + [signed(v) for v in values[1:]]))
    return md


def checks_section(bench, kinds):
    """The top 10 against the full ranking and the MPR recomputed in SQL, for
    the models of the given kinds (a model is named dataset_kind[_variant])."""
    md = ["", "## Checks", ""] + table_head(
        "| dataset | model | top 10 = full ranking by mtdpp_score | MPR recomputed in SQL / mtdpp_evaluate |")
    for c in bench.checks:
        kind = c["model"][len(c["dataset"]) + 1:]
        if c["check_name"] != "topk" or not any(kind == k or kind.startswith(k + "_") for k in kinds):
            continue
        m = next((x for x in bench.checks if x["model"] == c["model"] and x["check_name"] == "mpr"), None)
        mpr = f"{num(m['mpr_sql']):.4f} / {num(m['mpr_eval']):.4f}" if m else ""
        md.append(f"| {c['dataset']} | {c['model']} | {c['agree']} of {c['baskets']} baskets | {mpr} |")
    return md


def finish(bench, md, checked_kinds, extra_intro, extra=None):
    """Appends the checks of the models of `checked_kinds`, extra.csv's counts
    (`extra`, all of them by default) under `extra_intro` and the results
    that did not finish, and writes results.md beside the raw files and into
    the folder's results.md."""
    md += checks_section(bench, checked_kinds)
    extra = bench.extra if extra is None else extra
    # a run that wrote no extra checks gets no empty table
    if extra:
        md += ["", extra_intro, ""] + table_head("| dataset | check | baskets | count |")
        md += [row(e[:4]) for e in extra]
    if bench.failed:
        md += ["", "## Not measured", ""] + [f"- {r['model']}: {r['status']}: {r['error']}" for r in bench.failed]
    text = "\n".join(md) + "\n"
    (bench.out / "results.md").write_text(text)
    splice(BENCH / bench.kind / "results.md", "report", text)


def splice(page, name, text):
    """Replaces the section `name` of the results page `page` (the lines
    between "<!-- begin name -->" and "<!-- end name -->") with `text`, or
    appends it when the page has none; the rest of the page stays."""
    page = Path(page)
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    old = page.read_text().split("\n") if page.exists() else []
    new = [begin] + text.rstrip("\n").split("\n") + [end]
    if begin in old and end in old:
        old[old.index(begin):old.index(end) + 1] = new
    else:
        old = (old + [""] if old and old != [""] else []) + new
    page.write_text("\n".join(old).rstrip("\n") + "\n")


def folder_argument(script):
    """The folder of raw files a report reads: its argument, or
    $BENCH_LOGS/<the script's folder>."""
    return Path(sys.argv[1]) if len(sys.argv) > 1 else LOGS / Path(script).resolve().parent.name

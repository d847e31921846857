#!/usr/bin/env python3
"""Writes the benchmark's reports from the CSV files its runs export.

    bench/quality/report.py [DIR [PAGE]]

reads DIR (default: $BENCH_LOGS/quality, BENCH_LOGS by default
/tmp/mtdpp-bench-logs), writes DIR/results.md and DIR/plots/, and copies the
report into the section "report" of the results page PAGE, with the PNGs
into PAGE's plots/ (default: bench/quality/results.md when DIR is the
default; none otherwise).  The page's text outside that section stays.

Quality (bench/quality/run): results.csv (one row per model and test baskets),
checks.csv, histories.csv (loss and validation MPR per epoch), machine.txt
(key=value) and bench/quality/reference.csv (the paper's Tables 1-2 and the figures
of the data's README, typed in by hand).  Plots are drawn by gnuplot; the
scripts and data it reads are written beside them, out of the tree.
"""
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from kind_report import LOGS, splice  # noqa: E402
DATASETS = ["amazon_diaper", "amazon_daf", "belgian_retail", "uk_retail", "instacart_sample"]
KINDS = ["multitask", "multitask_nobias", "logistic", "lowrank", "hybrid", "itemknn", "ease", "popularity"]
METRICS = [("mpr", "MPR"), ("p5", "P@5"), ("p10", "P@10"), ("p20", "P@20")]
HELD_OUT = {"random": "a random item held out", "last": "the last item added held out"}


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def f(x, nd=2, sign=False):
    x = num(x)
    return "" if x is None else f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def read_kv(path):
    out = OrderedDict()
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    out[k] = v
    return out


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def label(r):
    return r["kind"] + (f" (target {r['target']})" if r["target"] not in ("random", "") else "")


def order(r):
    k = r["kind"]
    return (DATASETS.index(r["dataset"]) if r["dataset"] in DATASETS else 99, r["test"] != "last",
            KINDS.index(k) if k in KINDS else 99, r["target"] != "random")


def med_worst(values, worst, nd=2, sign=False):
    """'median (worst)' over the splits, or the one value."""
    v = [x for x in values if x is not None]
    if not v:
        return ""
    if len(v) == 1:
        return f(v[0], nd, sign)
    return f"{f(statistics.median(v), nd, sign)} ({f(worst(v), nd, sign)})"


def machine_table(m):
    return md_table(["", ""], [
        ["CPU", f"{m.get('cpu', '')}, {m.get('cores', '')} cores"], ["memory", m.get("memory", "")],
        ["PostgreSQL", m.get("postgres", "")],
        ["BLAS", f"{m.get('blas', '')} (OpenBLAS kernels: {m.get('blas_core') or 'not OpenBLAS'})"],
        ["load average at the end", m.get("load", "") + " (the machine is shared with other work)"]])


def gnuplot(plots, name, script):
    with open(os.path.join(plots, name + ".gp"), "w") as fh:
        fh.write(script)
    try:
        r = subprocess.run(["gnuplot", name + ".gp"], capture_output=True, text=True, cwd=plots)
    except FileNotFoundError:
        print("gnuplot not found: no plots", file=sys.stderr)
        return False
    if r.returncode != 0:
        print(f"gnuplot {name}: {r.stderr}", file=sys.stderr)
    return r.returncode == 0


def groups(ok):
    """(dataset, test) pairs in report order."""
    out = []
    for r in ok:
        if (r["dataset"], r["test"]) not in out:
            out.append((r["dataset"], r["test"]))
    return out


def group_title(ds, test):
    return ds if ds != "instacart_sample" else f"{ds}, {HELD_OUT[test]}"


def over_splits(ok):
    """Per dataset and test: per model label, its row on each split."""
    by = defaultdict(lambda: OrderedDict())
    for r in ok:
        by[(r["dataset"], r["test"])].setdefault(label(r), {})[r["split"]] = r
    return by


def quality_tables(ok, not_ok, splits):
    out = []
    by = over_splits(ok)
    for g in groups(ok):
        out.append(f"### {group_title(*g)}\n")
        t = []
        for lab, per in by[g].items():
            rs = list(per.values())
            cells = [med_worst([num(r[c]) for r in rs], min) for c, _ in METRICS]
            ranks = [per[s]["rank"] if s in per else "-" for s in splits]
            t.append([lab, f"{len(rs)}/{len(splits)}"] + cells +
                     [med_worst([num(r["train_seconds"]) for r in rs], max, 1),
                      ranks[0] if len(set(ranks)) == 1 else " / ".join(ranks)])
        for r in not_ok:
            if (r["dataset"], r["test"]) == g and r["split"] == splits[0]:
                t.append([label(r), "0"] + [f"{r['status']}: {r['error'][:80]}"] + [""] * 6)
        out.append(md_table(["model", "splits", "MPR", "P@5", "P@10", "P@20", "train s", "rank"], t))
    return out


def gap_tables(ok):
    """Each kind's gap to itemknn and to ease, split by split, then median (worst)."""
    out = []
    by = over_splits(ok)
    for g in groups(ok):
        refs = {k: by[g][k] for k in ("itemknn", "ease") if k in by[g]}
        t = []
        for lab, per in by[g].items():
            row = [lab]
            for name, ref in refs.items():
                for c, _ in METRICS:
                    d = [num(per[s][c]) - num(ref[s][c]) for s in per if s in ref and lab != name]
                    row.append(med_worst(d, min, 2, True))
            if any(row[1:]):
                t.append(row)
        if t:
            out.append(f"### {group_title(*g)}\n")
            out.append(md_table(["model"] + [f"{c} vs {ref}" for ref in refs for _, c in METRICS], t))
    return out


def default_tables(ok, kind="hybrid"):
    """The default kind against the better of itemknn and ease, cell by cell: per split the
    default's figure minus the better reference's, then every cell where it is behind."""
    by = over_splits(ok)
    t, behind = [], []
    for g in groups(ok):
        per = by[g].get(kind)
        refs = [by[g][k] for k in ("itemknn", "ease") if k in by[g]]
        if not per or not refs:
            continue
        row = [group_title(*g)]
        for c, name in METRICS:
            d = []
            for s in per:
                best = [num(ref[s][c]) for ref in refs if s in ref and num(ref[s][c]) is not None]
                if not best or num(per[s][c]) is None:
                    continue
                d.append(num(per[s][c]) - max(best))
                if d[-1] < 0:
                    behind.append(f"{group_title(*g)}, split {s}, {name}: {f(d[-1], 2, True)}")
            row.append(med_worst(d, min, 2, True))
        t.append(row)
    if not t:
        return []
    out = [md_table(["data"] + [n for _, n in METRICS], t)]
    out.append("Cells where it is behind: " + ("; ".join(behind) + "." if behind else "none.") + "\n")
    out.append("Which of them are more than the noise of the test baskets: `paired.md` "
               "(`bench/quality/paired`, basket by basket).\n")
    return out


def canonical_table(rows):
    t = []
    for r in rows:
        held = HELD_OUT[r["test"]] if r["dataset"] == "instacart_sample" else ""
        if r["status"] != "ok":
            t.append([r["dataset"], held, label(r), f"{r['status']}: {r['error'][:80]}"] + [""] * 9)
            continue
        t.append([r["dataset"], held, label(r), f(r["mpr"]), f(r["p5"]), f(r["p10"]), f(r["p20"]),
                  f(r["train_seconds"], 1) + (f" ({f(r['busy'])})" if r.get("busy") else ""), f(r["eval_seconds"], 1),
                  f"{f(r['lat_p50_ms'])} / {f(r['lat_p99_ms'])} / {f(r['lat_first_ms'], 1)}", r["rank"],
                  f"{r['best_epoch']}/{r['epochs_run']}" if r["epochs_run"] not in ("", "0") else "-", r["n_items"]])
    return md_table(["dataset", "held out", "model", "MPR", "P@5", "P@10", "P@20", "train s (busy cores)", "evaluate s",
                     "latency p50 / p99 / first (ms)", "rank", "best/run epochs", "items"], t)


def refs_for(ref, r, source):
    """The reference rows of a model: the same kind on the same data (instacart: the paper's protocol)."""
    ds = r["dataset"]
    if ds == "instacart_sample":
        protocol = {("multitask", "last", "last"): "2", ("multitask", "random", "last"): "3",
                    ("multitask", "random", "random"): "1", ("lowrank", "random", "last"): "2",
                    ("lowrank", "random", "random"): "1"}.get((r["kind"], r["target"], r["test"]))
        if source != "paper" or protocol is None:
            return []
        ds = "instacart:" + protocol
    return [x for x in ref if x["dataset"] == ds and x["source"] == source and x["kind"] == r["kind"]]


def references(canon, ref):
    fig = lambda x: f"{x['mpr']} / {x['p5']} / {x['p10']} / {x['p20']}"
    out = []
    for ds in DATASETS:
        rows = [r for r in canon if r["dataset"] == ds]
        if not rows:
            continue
        t = [[label(r) + (f", {HELD_OUT[r['test']]}" if ds == "instacart_sample" else ""),
              " / ".join(f(r[c]) for c, _ in METRICS),
              "; ".join(fig(x) + (f" ({x['label']})" if x["label"] != x["kind"] else "")
                        for x in refs_for(ref, r, "readme")),
              "; ".join(f"{fig(x)} ({x['label']}, r={x['r']})" for x in refs_for(ref, r, "paper"))]
             for r in rows]
        out.append(f"### {ds}\n")
        out.append(md_table(["model", "ours", "data README (same protocol)", "paper (Table 1 / 2)"], t))
        others = [x for x in ref if x["kind"] == "" and (x["dataset"] == ds or ds == "instacart_sample"
                                                          and x["dataset"].startswith("instacart:"))]
        if others:
            out.append("Other reference models (no counterpart in mtdpp): " + "; ".join(
                f"{x['label']} ({x['source'].replace('readme', 'data README')}"
                f"{', r=' + x['r'] if x['r'] else ''}): {fig(x)}" for x in others) + ".\n")
    out.append("The paper's Instacart protocols (Table 2, the full dataset at rank 80; ours is a 24k-order "
               "slice, so only the direction of the differences compares): (1) random item held out, trained on "
               "random targets; (2) last item held out, trained on last targets; (3) trained on random, last "
               "held out.\n")
    return out


def plot_quality(plots, canon, ref):
    """Grouped bars of MPR and P@20 on the canonical split, with two references."""
    gs = groups(canon)
    models = list(OrderedDict.fromkeys(label(r) for r in canon))
    series = models + ["paper: multi-task logDPP", "data README: item-kNN"]
    by = {(r["dataset"], r["test"], label(r)): r for r in canon}
    for col in ("mpr", "p20"):
        with open(os.path.join(plots, f"quality_{col}.dat"), "w") as fh:
            for ds, test in gs:
                fake = {"dataset": ds, "test": test, "kind": "multitask", "target": test}
                pr = refs_for(ref, fake, "paper")
                fake.update(kind="itemknn", target="random")
                rr = refs_for(ref, fake, "readme")
                vals = [f(by[(ds, test, m)][col], 3) if (ds, test, m) in by else "NaN" for m in models]
                vals += [pr[0][col] if pr else "NaN", rr[0][col] if rr else "NaN"]
                name = ds.replace("_", "\\n", 1) + ("\\n(last held out)" if test == "last" else "")
                fh.write(f"\"{name}\" " + " ".join(vals) + "\n")
    parts = []
    for col, title, yr in (("mpr", "MPR (50 = random, 100 = perfect)", "[45:100]"),
                           ("p20", "precision@20 (%)", "[0:*]")):
        cols = [f"'quality_{col}.dat' using {i + 2}{':xtic(1)' if i == 0 else ''} title '{s}' "
                f"fs {'pattern 4' if i >= len(models) else 'solid 0.85'} border -1 lc {i + 1}"
                for i, s in enumerate(series)]
        parts.append(f"set title '{title}'\nset yrange {yr}\nplot " + ", \\\n     ".join(cols) + "\n")
    return gnuplot(plots, "quality", f"""set terminal pngcairo size 1500,1000 font 'sans,10' noenhanced
set output 'quality.png'
set rmargin 42
set multiplot layout 2,1 title 'mtdpp: test MPR and precision@20, canonical split (hatched: references)'
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.95
set grid ytics
set key outside right top vertical font 'sans,9'
{parts[0]}
unset key
{parts[1]}
unset multiplot
""")


def plot_histories(plots, hist, canon):
    made = []
    by_model = defaultdict(list)
    for h in hist:
        by_model[h["model"]].append(h)
    for ds in DATASETS:
        curves = [(r["model"], label(r)) for r in canon if r["dataset"] == ds and by_model.get(r["model"])]
        curves = list(OrderedDict.fromkeys(curves))
        for name, _ in curves:
            pts = by_model[name]
            first = num(pts[0]["loss"]) or float("nan")
            with open(os.path.join(plots, f"hist_{name}.dat"), "w") as fh:
                for p in pts:
                    fh.write(f"{p['epoch']} {(num(p['loss']) or float('nan')) / first:.6g} {p['val_mpr'] or 'NaN'}\n")
        if not curves:
            continue
        plot = lambda c: ", \\\n     ".join(f"'hist_{n}.dat' using 1:{c} with linespoints lw 2 pt 7 ps 0.6 "
                                            f"lc {i + 1} title '{lab}'" for i, (n, lab) in enumerate(curves))
        if gnuplot(plots, f"training_{ds}", f"""set terminal pngcairo size 1400,550 font 'sans,10' noenhanced
set output 'training_{ds}.png'
set multiplot layout 1,2 title '{ds}: training loss and validation MPR per epoch (validation slice of the training baskets)'
set grid
set xlabel 'epoch'
set key bottom left font 'sans,9'
set title 'training loss / loss of epoch 1 (losses differ by kind)'
plot {plot(2)}
set key bottom right
set title 'validation MPR (the best epoch is kept)'
plot {plot(3)}
unset multiplot
"""):
            made.append(ds)
    return made


def chosen_table(ok, splits):
    """Per dataset and model, the keys that differ from the defaults on each
    split; keys with one value in every model are said once, after the table."""
    per = defaultdict(dict)
    for r in ok:
        if r["test"] == "random" or r["dataset"] != "instacart_sample":
            per[(r["dataset"], label(r))][r["split"]] = json.loads(r["chosen"]) if r["chosen"] else {}
    values = defaultdict(set)
    for d in per.values():
        for chosen in d.values():
            for k in set(k for d2 in per.values() for c in d2.values() for k in c):
                values[k].add(json.dumps(chosen.get(k)))
    same = {k: json.loads(next(iter(v))) for k, v in values.items() if len(v) == 1}
    t = []
    for (ds, lab), d in sorted(per.items(), key=lambda x: order({"dataset": x[0][0], "test": "random",
                                                                 "kind": x[0][1], "target": "random"})):
        cells = [", ".join(f"{k} {json.dumps(v)}" for k, v in sorted(d[s].items()) if k not in same) or "-"
                 if s in d else "" for s in splits]
        if any(c not in ("-", "") for c in cells):
            t.append([ds, lab] + cells)
    note = "In every model: " + ", ".join(f"{k} {json.dumps(v)}" for k, v in sorted(same.items())) + ".\n"
    return (md_table(["dataset", "model"] + [f"split {s}" for s in splits], t) + "\n" if t else "Beside the keys "
            "below, no model differs from its kind's defaults.\n") + (note if same else "")


def quality(out_dir, page=None):
    rows = read_csv(os.path.join(out_dir, "results.csv"))
    if rows and "split" not in rows[0]:
        sys.exit(f"{out_dir}/results.csv was written by an earlier bench/quality/run: run bench/quality/run again")
    rows.sort(key=order)
    checks = read_csv(os.path.join(out_dir, "checks.csv"))
    hist = read_csv(os.path.join(out_dir, "histories.csv"))
    ref = read_csv(os.path.join(HERE, "reference.csv"))
    m = read_kv(os.path.join(out_dir, "machine.txt"))
    splits = m.get("splits", "canonical").split()
    ok = [r for r in rows if r["status"] == "ok"]
    not_ok = [r for r in rows if r["status"] != "ok"]
    canon = [r for r in ok if r["split"] == "canonical"]
    plots = os.path.join(out_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    for fn in os.listdir(plots):
        if fn.startswith(("quality", "training_", "hist_")):
            os.remove(os.path.join(plots, fn))

    out = ["# mtdpp benchmark results\n",
           f"Written by `bench/quality/run` on {m.get('date', '?')} from commit `{m.get('commit', '?')}`; the run took "
           f"{m.get('wall_minutes', '?')} min. Raw figures, out of the tree under `$BENCH_LOGS/quality/`: `results.csv` (one row "
           "per model and set of test baskets), `checks.csv`, `histories.csv` (per epoch, canonical split).\n", "## Machine\n", machine_table(m),
           "## Protocol\n",
           "The data's README (`shared/data/README.md`; where each dataset comes from: `bench/README.md`): train on "
           "the training baskets only; for each test basket, context = the basket without its held-out item, "
           "candidates = every item of the dataset's `orders.csv` not in the context "
           "(`mtdpp_evaluate(..., catalog_size => N)`); rank = 1 + #higher + half the ties; MPR = mean of "
           "100 (n - rank)/(n - 1); P@K = % of baskets with rank <= K. Every kind is trained as users train it: "
           "`mtdpp_train(name, '<split>.train_lines', position_col => 'position', kind => ...)`, every other "
           "setting its default (what it chooses from the data, it chooses on validation baskets carved out of "
           "the training baskets), one training at a time.\n",
           f"Splits: **{', '.join(splits)}**. *canonical* is the dataset's `split.csv`; a number is the seed of "
           "`make_split.py --seed N` (70/30 by basket; uk_retail `--max-size 100`; instacart_sample "
           "`--protocol last`, and `random` for its second set of test baskets, the same baskets). The canonical "
           "split is evaluated on all its test baskets; "
           + (f"the others on a fixed subset of {m.get('subset')} test baskets (the first by md5 of the order id)."
              if m.get("subset", "0") != "0" else "the others on all theirs too.") +
           " Over the splits: the **median**, and the **worst** in brackets (the lowest figure; for training "
           "time, the longest).\n",
           f"Latency (canonical split): `mtdpp_complete(basket without its held-out item, 10, model)` on "
           f"{m.get('lat_calls', 1000)} test baskets, each timed inside the server (`bench.latency` in "
           "`bench/bench.sql`); *first* is the first call of a new session: it loads the library and the model.\n",
           "## Quality over the splits\n",
           "*rank*: `mtdpp.models.rank` on each split; hyperparameters chosen from the data in *Hyperparameters* "
           "below.\n"]
    out += quality_tables(ok, not_ok, splits)
    out.append("## Gaps to item-kNN and EASE\n")
    out.append("Each model's figure minus that of `itemknn` (item-to-item co-occurrence) and of `ease` on the same "
               "split and test baskets, then the median over the splits and the worst (lowest) in brackets: "
               "positive = better than the reference.\n")
    out += gap_tables(ok)
    default = default_tables(ok)
    if default:
        out.append("## The default kind against the better of item-kNN and EASE\n")
        out.append("`hybrid` (what `mtdpp_train` trains without a kind) minus the higher of `itemknn`'s and "
                   "`ease`'s figure, split by split on the same test baskets, then the median over the splits "
                   "and the worst in brackets.\n")
        out += default
    out.append("## Canonical split: every figure\n")
    out.append(canonical_table([r for r in rows if r["split"] == "canonical"]))
    out.append("## Beside the references (canonical split)\n")
    out.append("Ours; the data README's figure for the same kind of model on the same split (same protocol); the "
               "paper's Table 1 row (its own, leakier protocol: rows rather than baskets split), with its rank r. "
               "MPR / P@5 / P@10 / P@20.\n")
    out += references(canon, ref)
    out.append("## Plots\n")
    if canon and plot_quality(plots, canon, ref):
        out.append("![test MPR and P@20](plots/quality.png)\n")
    for ds in plot_histories(plots, hist, canon):
        out.append(f"![training curves, {ds}](plots/training_{ds}.png)\n")
    out.append("## Hyperparameters\n")
    out.append("The hyperparameters each model stored (`mtdpp.models.hyperparams`) that differ from its kind's "
               "defaults (`mtdpp_hyperparameters(kind)`), on each split: what the data chose.\n")
    out.append(chosen_table(ok, splits))
    if checks:
        out.append("## Checks\n")
        topk = [c for c in checks if c["check_name"] == "topk"]
        bad = [c for c in topk if c["agree"] != c["baskets"]]
        out.append(f"- `mtdpp_complete(basket, 10)` (pruned) against the top 10 of `mtdpp_score` over the whole "
                   f"catalog, ties by item id, 200 test baskets per model: {len(topk) - len(bad)} of {len(topk)} "
                   "models agree on every basket" + ("." if not bad else "; disagreements: " + "; ".join(
                       f"{c['model']}: {c['agree']}/{c['baskets']}" for c in bad) + "."))
        for c in checks:
            if c["check_name"] == "mpr":
                out.append(f"- {c['model']}: MPR / P@20 recomputed in SQL from `mtdpp_score`: {f(c['mpr_sql'], 4)} / "
                           f"{f(c['p20_sql'], 4)}; `mtdpp_evaluate`: {f(c['mpr_eval'], 4)} / {f(c['p20_eval'], 4)} "
                           f"({c['baskets']} baskets).")
        out.append("")
    if not_ok:
        out.append("## Not measured\n")
        which = OrderedDict()
        for r in not_ok:
            which.setdefault((r["dataset"], label(r), r["status"], r["error"]), []).append(r["split"])
        for (ds, lab, status, error), where in which.items():
            out.append(f"- {ds} / {lab}, splits {', '.join(OrderedDict.fromkeys(where))}: {status}: {error}")
        out.append("")
    with open(os.path.join(out_dir, "results.md"), "w") as fh:
        fh.write("\n".join(out) + "\n")
    if page:
        splice(page, "report", "\n".join(out) + "\n")
        dest = os.path.join(os.path.dirname(page), "plots")
        os.makedirs(dest, exist_ok=True)
        for fn in os.listdir(plots):
            if fn.endswith(".png"):
                shutil.copy(os.path.join(plots, fn), dest)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        quality(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    else:
        quality(str(LOGS / "quality"), os.path.join(HERE, "results.md"))

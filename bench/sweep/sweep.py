#!/usr/bin/env python3
"""Coordinate-wise hyperparameter sweep of the `multitask` kind (driven by bench/sweep/run).

Selection uses ONLY the validation MPR that the trainer measures on a slice
of the TRAINING baskets (max of mtdpp.models.val_mpr_history); the test
baskets are never read while choosing.  Only after the choice is written down
are the chosen setting and the current defaults evaluated on the test
baskets, in a section of their own.

Search (per dataset), from the extension's current defaults:
    for pass in 1..SWEEP_PASSES (2):
        for key in l2, rank, learning_rate, negatives, lr_decay, w:
            try every value of the key's grid, the other keys as they are;
            keep the value with the best validation MPR (ties keep the current one)
Across datasets: the defaults, every dataset's winner and a "consensus" (per
key the value most winners chose) are trained on every dataset; the setting
with the best mean validation MPR over the datasets is recommended.

Every run is cached in runs.csv under $BENCH_LOGS/sweep (default
/tmp/mtdpp-bench-logs/sweep, out of the tree), keyed by the commit built, the
dataset, its budget, the seed and the six values, so an interrupted sweep
resumes where it stopped and a rerun on the same commit costs nothing.

Environment: SWEEP_DATASETS (space-separated subset), SWEEP_PASSES,
SWEEP_SKIP_TEST=1 (no test evaluation), SWEEP_EXTRA='{"label": {"l2": 1e-5,
...}, ...}' (more candidates for the cross-dataset step; missing keys take
the defaults).  Connection: PG* from bench/lib.sh (bench_start).
"""
import csv
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = os.path.join(os.environ.get("BENCH_LOGS", "/tmp/mtdpp-bench-logs"), "sweep")
os.makedirs(LOGS, exist_ok=True)
RUNS_CSV = os.path.join(LOGS, "runs.csv")
RESULTS_MD = os.path.join(HERE, "results.md")
TESTS_CSV = os.path.join(LOGS, "tests.csv")
COMMIT = os.environ.get("BENCH_COMMIT", "unknown")

GRID = {
    "l2": [1e-6, 1e-5, 1e-4, 1e-3],
    "rank": [16, 32, 64],
    "learning_rate": [0.005, 0.01, 0.02, 0.05],
    "negatives": [3, 5, 10],
    "lr_decay": [0.9, 0.95, 1.0],
    "w": [0.01, 0.1, 1.0],
}
KEYS = list(GRID)

# dataset -> (seeds averaged, budget: extra training arguments that make the
# big datasets affordable; the same budget for every setting of a dataset)
DATASETS = {
    "amazon_diaper": ([0, 1, 2], {}),
    "amazon_daf": ([0, 1], {}),
    "instacart_sample": ([0], {"epochs": 15}),
    "uk_retail": ([0], {"epochs": 15, "positives": 2}),
}
CATALOG_TEST = {  # test evaluation: (schema of the test baskets, note)
    "amazon_diaper": ("amazon_diaper", ""),
    "amazon_daf": ("amazon_daf", ""),
    "instacart_sample": ("instacart_sample_random", "split_random.csv (random item held out), target => 'random'"),
    "uk_retail": ("uk_retail", ""),
}
FIELDS = ["commit", "dataset", "budget", "seed"] + KEYS + [
    "val_mpr", "best_epoch", "epochs_run", "train_seconds", "val_history", "error", "when"]


def log(msg):
    print(time.strftime("[%H:%M:%S] ") + msg, file=sys.stderr, flush=True)


def psql(sql):
    r = subprocess.run(["psql", "-X", "-qAt", "-v", "ON_ERROR_STOP=1"], input=sql,
                       capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def fmt(v):
    return repr(float(v)) if isinstance(v, float) else str(v)


def budget_str(budget):
    return json.dumps(budget, sort_keys=True)


def key_of(ds, budget, seed, s):
    return (COMMIT, ds, budget_str(budget), str(seed)) + tuple(fmt(s[k]) for k in KEYS)


class Cache:
    def __init__(self):
        self.rows = {}
        if os.path.exists(RUNS_CSV):
            with open(RUNS_CSV, newline="") as f:
                for row in csv.DictReader(f):
                    k = tuple(row[c] for c in ["commit", "dataset", "budget", "seed"] + KEYS)
                    self.rows[k] = row
        new = not os.path.exists(RUNS_CSV)
        self.f = open(RUNS_CSV, "a", newline="")
        self.w = csv.DictWriter(self.f, FIELDS)
        if new:
            self.w.writeheader()

    def get(self, k):
        return self.rows.get(k)

    def put(self, k, row):
        self.rows[k] = row
        self.w.writerow(row)
        self.f.flush()


def train_sql(name, ds, s, seed, budget, extra_args=""):
    params = {k: s[k] for k in KEYS if k != "rank"}
    args = dict(budget)
    epochs = args.pop("epochs", None)
    params.update(args)
    return (f"SELECT * FROM mtdpp_train('{name}', '{ds}.train_lines', position_col => 'position', "
            f"rank => {int(s['rank'])}, epochs => {epochs if epochs else 'NULL'}, seed => {seed}, "
            f"activate => false{extra_args}, params => '{json.dumps(params)}'::jsonb);\n")


def run(cache, ds, s, seed, budget):
    """Max validation MPR of one training (cached)."""
    k = key_of(ds, budget, seed, s)
    row = cache.get(k)
    if row is None:
        sql = ("SELECT mtdpp_drop('sweep') FROM mtdpp.models WHERE name = 'sweep' LIMIT 1;\n" +
               train_sql("sweep", ds, s, seed, budget) +
               "SELECT json_build_object('val', (SELECT max(x) FROM unnest(val_mpr_history) x WHERE x <> 'NaN'),"
               " 'best_epoch', best_epoch, 'epochs_run', cardinality(val_mpr_history),"
               " 'seconds', train_seconds, 'hist', val_mpr_history)"
               " FROM mtdpp.models WHERE name = 'sweep' ORDER BY version DESC LIMIT 1;\n"
               "SELECT mtdpp_drop('sweep') FROM mtdpp.models WHERE name = 'sweep' LIMIT 1;\n")
        t0 = time.time()
        rc, out, err = psql(sql)
        row = {"commit": COMMIT, "dataset": ds, "budget": budget_str(budget), "seed": seed,
               "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
        row.update({kk: fmt(s[kk]) for kk in KEYS})
        res = None
        for line in out.splitlines():
            if line.startswith("{"):
                res = json.loads(line)
        if rc != 0 or res is None or res["val"] is None:
            row.update(val_mpr="", best_epoch="", epochs_run="", train_seconds=f"{time.time() - t0:.1f}",
                       val_history="", error=(err.strip().splitlines() or ["no result"])[0][:200])
        else:
            row.update(val_mpr=f"{res['val']:.4f}", best_epoch=res["best_epoch"], epochs_run=res["epochs_run"],
                       train_seconds=f"{res['seconds']:.2f}",
                       val_history=" ".join(f"{x:.2f}" if isinstance(x, (int, float)) else str(x)
                                            for x in res["hist"]),
                       error="")
        cache.put(k, row)
        log(f"{ds} seed {seed} {desc(s)}: val {row['val_mpr'] or row['error']} "
            f"({row['train_seconds']} s, best epoch {row['best_epoch']}/{row['epochs_run']})")
    return float(row["val_mpr"]) if row["val_mpr"] else -math.inf


def score(cache, ds, s):
    seeds, budget = DATASETS[ds]
    vals = [run(cache, ds, s, seed, budget) for seed in seeds]
    return sum(vals) / len(vals)


def desc(s, defaults=None):
    parts = []
    for k in KEYS:
        mark = "*" if defaults is not None and fmt(s[k]) != fmt(defaults[k]) else ""
        parts.append(f"{k}={s[k]:g}{mark}")
    return " ".join(parts)


def probe_defaults():
    """The extension's own defaults, as it resolves them (a probe training on amazon_diaper)."""
    rc, out, err = psql(
        "SELECT mtdpp_drop('sweep_probe') FROM mtdpp.models WHERE name = 'sweep_probe' LIMIT 1;\n"
        "\\o /dev/null\nSELECT * FROM mtdpp_train('sweep_probe', 'amazon_diaper.train_lines', activate => false);\n\\o\n"
        "SELECT hyperparams FROM mtdpp.models WHERE name = 'sweep_probe';\n"
        "SELECT mtdpp_drop('sweep_probe');\n")
    if rc != 0:
        sys.exit("probe failed: " + err)
    hp = json.loads([l for l in out.splitlines() if l.startswith("{")][0])
    d = {}
    for k in KEYS:
        v = hp[k]
        d[k] = int(v) if k in ("rank", "negatives") else float(f"{float(v):.12g}")
    return d, hp


def coordinate_search(cache, ds, defaults, passes, trail):
    cur = dict(defaults)
    cur_val = score(cache, ds, cur)
    trail.append((ds, 0, "start", dict(cur), cur_val, True))
    for p in range(1, passes + 1):
        for k in KEYS:
            values = sorted(set(GRID[k]) | {cur[k]})
            best_v, best_val = cur[k], cur_val
            for v in values:
                cand = dict(cur, **{k: v})
                val = cur_val if v == cur[k] else score(cache, ds, cand)
                if val > best_val + 1e-9:
                    best_v, best_val = v, val
            for v in values:
                cand = dict(cur, **{k: v})
                trail.append((ds, p, k, cand, score(cache, ds, cand), v == best_v))
            cur[k], cur_val = best_v, best_val
    return cur, cur_val


def seeds_detail(cache, ds, s):
    seeds, budget = DATASETS[ds]
    out = []
    tot = 0.0
    for seed in seeds:
        row = cache.get(key_of(ds, budget, seed, s))
        out.append(row)
    return out


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(str(x) for x in r) + " |")
    return "\n".join(lines)


def evaluate_test(ds, s, label):
    """Full-budget training of S (seed 0) and its test figures (cached in tests.csv)."""
    key = "|".join((COMMIT, ds) + tuple(fmt(s[k]) for k in KEYS))
    if os.path.exists(TESTS_CSV):
        with open(TESTS_CSV, newline="") as fh:
            for row in csv.DictReader(fh):
                if row["key"] == key:
                    return json.loads(row["result"])
    res = evaluate_test_run(ds, s, label)
    if res is not None:
        new = not os.path.exists(TESTS_CSV)
        with open(TESTS_CSV, "a", newline="") as fh:
            w = csv.DictWriter(fh, ["key", "result"])
            if new:
                w.writeheader()
            w.writerow({"key": key, "result": json.dumps(res)})
    return res


def evaluate_test_run(ds, s, label):
    schema, _ = CATALOG_TEST[ds]
    params = {k: s[k] for k in KEYS if k != "rank"}
    sql = ("SELECT mtdpp_drop('sweep_test') FROM mtdpp.models WHERE name = 'sweep_test' LIMIT 1;\n\\o /dev/null\n" +
           f"SELECT * FROM mtdpp_train('sweep_test', '{ds}.train_lines', position_col => 'position', "
           f"rank => {int(s['rank'])}, seed => 0, params => '{json.dumps(params)}'::jsonb);\n\\o\n"
           f"SELECT json_build_object('e', e, 'm', (SELECT json_build_object('s', train_seconds, 'val',"
           f" (SELECT max(x) FROM unnest(val_mpr_history) x WHERE x <> 'NaN'), 'be', best_epoch,"
           f" 'er', cardinality(val_mpr_history)) FROM mtdpp.models WHERE name = 'sweep_test'))"
           f" FROM mtdpp_evaluate('sweep_test', '{schema}.test_baskets',"
           f" catalog_size => (SELECT count(DISTINCT item_id)::int FROM {schema}.orders)) e;\n"
           "SELECT mtdpp_drop('sweep_test');\n")
    rc, out, err = psql(sql)
    if rc != 0:
        log(f"test evaluation of {label} on {ds} failed: {err.strip()}")
        return None
    res = json.loads([l for l in out.splitlines() if l.startswith("{")][0])
    log(f"test {ds} {label}: MPR {res['e']['mpr']:.2f} P@20 {res['e']['precision_at_20']:.2f}")
    return res


def main():
    names = os.environ.get("SWEEP_DATASETS", " ".join(DATASETS)).split()
    passes = int(os.environ.get("SWEEP_PASSES", "2"))
    cache = Cache()
    defaults, hp = probe_defaults()
    log(f"commit {COMMIT}; defaults {desc(defaults)}")
    fixed = {k: v for k, v in hp.items() if k not in KEYS and k not in ("seed", "kind", "verbose")}

    trail = []
    winners = {}
    t_start = time.time()
    for ds in names:
        winners[ds] = coordinate_search(cache, ds, defaults, passes, trail)
        log(f"{ds}: winner {desc(winners[ds][0])} val {winners[ds][1]:.2f}")

    # cross-dataset candidates
    cands = [("defaults of the swept commit", dict(defaults))]
    for ds in names:
        cands.append((f"winner of {ds}", dict(winners[ds][0])))
    for lab, extra in json.loads(os.environ.get("SWEEP_EXTRA", "{}")).items():
        cands.append((lab, {k: type(defaults[k])(extra.get(k, defaults[k])) for k in KEYS}))
    cons = {}
    for k in KEYS:
        votes = Counter(fmt(winners[ds][0][k]) for ds in names)
        top = max(votes.values())
        tied = [v for v in GRID[k] if votes.get(fmt(v), 0) == top] or [defaults[k]]
        cons[k] = defaults[k] if any(fmt(v) == fmt(defaults[k]) for v in tied) else tied[len(tied) // 2]
    cands.append(("consensus (per key, the value most winners chose)", cons))
    uniq = []
    for label, s in cands:
        for u in uniq:
            if all(fmt(u[1][k]) == fmt(s[k]) for k in KEYS):
                u[0].append(label)
                break
        else:
            uniq.append(([label], s))
    table = []
    for labels, s in uniq:
        vals = {ds: score(cache, ds, s) for ds in names}
        table.append((labels, s, vals, sum(vals.values()) / len(vals)))
    best_of = {ds: max(t[2][ds] for t in table) for ds in names}
    chosen = max(table, key=lambda t: t[3])
    sweep_seconds = time.time() - t_start
    log(f"chosen: {desc(chosen[1])} (mean validation MPR {chosen[3]:.2f})")

    # ---- report (selection part; no test data read so far) ----
    out = []
    out.append("# Hyperparameter sweep of the `multitask` kind\n")
    out.append(f"Generated by `bench/sweep/run` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
               f"extension built from commit `{COMMIT}`.\n")
    out.append("**Selection used only the validation MPR** (the maximum of `mtdpp.models.val_mpr_history`: "
               "MPR on a validation slice that the trainer carves out of the *training* baskets). "
               "The test baskets were read only after the choice, for the last section.\n")
    out.append("## Method\n")
    out.append(f"- Start: the extension's defaults at this commit: `{desc(defaults)}`; the other "
               f"hyperparameters stay at their defaults: `{json.dumps(fixed, sort_keys=True)}`.")
    out.append(f"- Coordinate-wise search, {passes} passes over the keys in the order "
               f"{', '.join(KEYS)}; for each key every value of its grid is tried with the other keys "
               "as they are, and the best value is kept (a tie keeps the current value). Grid: " +
               "; ".join(f"{k} {{{', '.join(f'{v:g}' for v in GRID[k])}}}" for k in KEYS) + ".")
    out.append("- Budgets: " + "; ".join(
        f"{ds}: seeds {DATASETS[ds][0]} (validation MPR averaged over seeds)"
        + (f", cheaper training {budget_str(DATASETS[ds][1])}" if DATASETS[ds][1] else ", full training")
        for ds in names) + ". The seed also draws the validation slice, so averaging seeds averages "
               "over validation slices too. Under a cut budget (fewer epochs) settings that learn fast "
               "(high learning rate, no decay) are favoured.")
    out.append("- Across datasets: the defaults, each dataset's winner and a consensus setting are trained "
               "on every dataset; the recommendation is the candidate with the best mean validation MPR.")
    runs = [r for k, r in cache.rows.items() if k[0] == COMMIT and k[1] in names]
    total = sum(float(r["train_seconds"] or 0) for r in runs)
    out.append(f"- Runs one at a time (one backend, BLAS single-threaded) on a 2-core machine shared with "
               f"other work: {len(runs)} trainings, {total / 60:.0f} min of training in all (this invocation: "
               f"{sweep_seconds / 60:.0f} min; cached runs cost nothing). Raw runs: `runs.csv`; "
               f"test evaluations: `tests.csv` (both under `$BENCH_LOGS/sweep/`).\n")

    out.append("## Recommendation\n")
    out.append(f"**{desc(chosen[1], defaults)}** (`*` = differs from the defaults of the swept commit), "
               f"chosen as: {', '.join(chosen[0])}.\n")
    rows = []
    for labels, s, vals, mean in sorted(table, key=lambda t: -t[3]):
        rows.append([("**" if t_is(chosen, labels) else "") + "; ".join(labels) + ("**" if t_is(chosen, labels) else ""),
                     f"`{desc(s, defaults)}`"] +
                    [f"{vals[ds]:.2f}" for ds in names] + [f"{mean:.2f}"])
    out.append(md_table(["candidate", "setting"] + [f"val MPR {ds}" for ds in names] + ["mean"], rows))
    out.append("")

    out.append("## Per dataset\n")
    for ds in names:
        seeds, budget = DATASETS[ds]
        out.append(f"### {ds}\n")
        out.append(f"Winner: `{desc(winners[ds][0], defaults)}`, validation MPR {winners[ds][1]:.2f} "
                   f"(defaults: {score(cache, ds, defaults):.2f}).\n")
        rows = []
        for (d, p, k, s, val, kept) in trail:
            if d != ds:
                continue
            det = seeds_detail(cache, ds, s)
            secs = sum(float(r["train_seconds"]) for r in det if r) / max(len(det), 1)
            per_seed = " / ".join((r["val_mpr"] and f"{float(r['val_mpr']):.2f}") or "failed" for r in det)
            ep = " / ".join(f"{r['best_epoch']}/{r['epochs_run']}" if r["val_mpr"] else "-" for r in det)
            err = "; ".join(r["error"] for r in det if r["error"])
            rows.append([p, k, s["l2"], s["rank"], s["learning_rate"], s["negatives"], s["lr_decay"], s["w"],
                         (f"**{val:.2f}**" if kept and k != "start" else (f"{val:.2f}" if val > -math.inf else "failed")),
                         per_seed, ep, f"{secs:.1f}", err])
        out.append(md_table(["pass", "varied", "l2", "rank", "lr", "neg", "lr_decay", "w", "val MPR",
                             "per seed", "best/run epochs", "seconds", "error"], rows))
        out.append("\n(bold: the value kept for that key in that pass)\n")

    # ---- test figures, after the choice ----
    if os.environ.get("SWEEP_SKIP_TEST") != "1":
        out.append("## Test figures (read only after the choice above)\n")
        out.append("Full training budget (the default epochs and positives), seed 0, evaluated with "
                   "`mtdpp_evaluate(..., catalog_size => distinct items of orders.csv)` on the "
                   "dataset's test baskets. instacart_sample: " + CATALOG_TEST["instacart_sample"][1] + ".\n")
        out.append("The recommendation above was fixed before these figures were computed; the other "
                   "settings are shown for comparison only.\n")
        rows = []
        shown = [("recommended", chosen[1]), ("defaults of the swept commit", defaults)]
        for lab, extra in json.loads(os.environ.get("SWEEP_EXTRA", "{}")).items():
            shown.append((lab, {k: type(defaults[k])(extra.get(k, defaults[k])) for k in KEYS}))
        for ds in names:
            done = []
            for label, s in shown:
                if any(all(fmt(s[k]) == fmt(d[k]) for k in KEYS) for d in done):
                    continue
                done.append(s)
                r = evaluate_test(ds, s, label)
                if r is None:
                    rows.append([ds, label, "failed", "", "", "", "", "", ""])
                    continue
                e, m = r["e"], r["m"]
                rows.append([ds, f"{label} (`{desc(s, defaults)}`)", f"{e['mpr']:.2f}", f"{e['precision_at_5']:.2f}",
                             f"{e['precision_at_10']:.2f}", f"{e['precision_at_20']:.2f}",
                             f"{m['val']:.2f}", f"{m['be']}/{m['er']}", f"{m['s']:.1f}"])
        out.append(md_table(["dataset", "setting", "test MPR", "P@5", "P@10", "P@20",
                             "val MPR (full budget)", "best/run epochs", "train s"], rows))
        out.append("")
    with open(RESULTS_MD, "w") as f:
        f.write("\n".join(out) + "\n")
    log(f"wrote {RESULTS_MD}")


def t_is(chosen, labels):
    return chosen[0] is labels


if __name__ == "__main__":
    main()

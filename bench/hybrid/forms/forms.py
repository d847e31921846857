#!/usr/bin/env python3
"""The rules for the hybrid's evidence weights, compared (bench/hybrid/forms/run).

  forms.py split DIR SCHEMA      one split's scores (DIR/SCHEMA_{val,test}.csv)
                                 -> DIR/SCHEMA.json, and prints it
  forms.py summary DIR GROUP...  GROUP: comma-separated schemas of a dataset;
                                 prints the median and worst gap of each rule
                                 to itemknn and ease, on the validation halves
                                 and on the test baskets

Ranks follow the benchmark: rank = 1 + #higher + half the ties among every
catalog item outside the context; MPR, P@5, P@10, P@20.
"""
import csv
import json
import sys

import numpy as np

# the hybrid's grids (kind_hybrid.c): 0, then 2^(g/2 - 4); the pair's every other
GRID = [0.0] + [2.0 ** ((g - 1) / 2.0 - 4.0) for g in range(1, 32)]
PAIR = [GRID[2 * g] for g in range(16)]
RULES = {
    'cosine only': [(b, 0.0) for b in GRID],
    'ease only': [(0.0, b) for b in GRID],
    'single form': [(b, 0.0) for b in GRID] + [(0.0, b) for b in GRID[1:]],
    'pair': [(a, b) for a in PAIR for b in PAIR],
}


def load(path):
    rows = list(csv.reader(open(path)))
    oid = np.array([int(r[0]) for r in rows])
    pos = np.array([int(r[2]) for r in rows])
    col = lambda k, none: np.array([float(r[k]) if r[k] != '' else none for r in rows])
    starts = np.r_[0, np.nonzero(np.diff(oid))[0] + 1]
    return pos, col(3, -1e300), col(4, 0.0), col(5, 0.0), starts


def metrics(score, pos, starts, half=None):
    ends = np.r_[starts[1:], len(score)]
    if half is not None:
        keep = np.arange(len(starts)) % 2 == half
        starts, ends = starts[keep], ends[keep]
    pr, top = [], np.zeros(3)
    for s, e in zip(starts, ends):
        sc, ps = score[s:e], pos[s:e]
        if ps.sum() != 1:
            continue
        h = sc[ps == 1][0]
        rank = 1 + (sc > h).sum() + ((sc == h).sum() - 1) / 2.0
        pr.append(100.0 * (e - s - rank) / (e - s - 1))
        top += [rank <= 5, rank <= 10, rank <= 20]
    return np.r_[np.mean(pr), 100.0 * top / len(pr)]


def smoothed(table, line):
    """Sum of the four metrics at each point of LINE, averaged with its neighbours on it."""
    tot = [table[c].sum() for c in line]
    return [np.mean(tot[max(i - 1, 0):i + 2]) for i in range(len(line))]


def choose(table, rule):
    """The weights RULE chooses on TABLE, as kind_hybrid.c does: per form the
    best smoothed beta, then the better form; the pair over its 2-D grid."""
    if rule == 'pair':
        n = len(PAIR)
        tot = np.array([[table[(a, b)].sum() for b in PAIR] for a in PAIR])
        sm = np.array([[tot[max(i - 1, 0):i + 2, max(j - 1, 0):j + 2].mean() for j in range(n)] for i in range(n)])
        i, j = np.unravel_index(np.argmax(sm), sm.shape)
        return (PAIR[i], PAIR[j])
    best, pick = -1.0, None
    for axis in (['cosine only', 'ease only'] if rule == 'single form' else [rule]):
        line = RULES[axis]
        sm = smoothed(table, line)
        k = int(np.argmax(sm))
        if sm[k] > best:
            best, pick = sm[k], line[k]
    return pick


def split(out, schema):
    val = load(f'{out}/{schema}_val.csv')
    test = load(f'{out}/{schema}_test.csv')
    every = set().union(*RULES.values())
    res = {'validation halves': {}, 'test': {}}
    vp, vd, vk, ve, vs = val
    halves = [{c: metrics(vd + c[0] * vk + c[1] * ve, vp, vs, h) for c in every} for h in (0, 1)]
    whole = {c: (halves[0][c] + halves[1][c]) / 2 for c in every}
    tp, td, tk, te, ts = test
    for rule in RULES:
        # chosen on one half, measured on the other
        res['validation halves'][rule] = (sum(halves[1 - h][choose(halves[h], rule)] for h in (0, 1)) / 2).tolist()
        c = choose(whole, rule)
        res['test'][rule] = metrics(td + c[0] * tk + c[1] * te, tp, ts).tolist() + [c[0], c[1]]
    for name, ref in (('itemknn', vk), ('ease', ve)):
        res['validation halves'][name] = ((metrics(ref, vp, vs, 0) + metrics(ref, vp, vs, 1)) / 2).tolist()
    res['test']['itemknn'] = metrics(tk, tp, ts).tolist()
    res['test']['ease'] = metrics(te, tp, ts).tolist()
    res['test']['multitask'] = metrics(td, tp, ts).tolist()
    json.dump(res, open(f'{out}/{schema}.json', 'w'), indent=1)
    print(schema, json.dumps(res['test']))


def summary(out, groups):
    for group in groups:
        names = group.split(',')
        runs = [json.load(open(f'{out}/{n}.json')) for n in names]
        for where in ('validation halves', 'test'):
            print(f'\n{names[0]}, {len(runs)} splits, {where}: median (worst) gap, MPR / P@5 / P@10 / P@20\n')
            print('| rule | vs itemknn | vs ease |\n|---|---|---|')
            for rule in RULES:
                cells = []
                for ref in ('itemknn', 'ease'):
                    d = np.array([np.array(r[where][rule][:4]) - np.array(r[where][ref][:4]) for r in runs])
                    cells.append(' / '.join(f'{m:+.2f} ({w:+.2f})' for m, w in zip(np.median(d, 0), d.min(0))))
                print(f'| {rule} | {cells[0]} | {cells[1]} |')


if __name__ == '__main__':
    if sys.argv[1] == 'split':
        split(sys.argv[2], sys.argv[3])
    else:
        summary(sys.argv[2], sys.argv[3:])

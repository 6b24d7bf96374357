#!/usr/bin/env python3
"""How far do curves smooth in k get on the choice score, each fitted to the very cell it is scored on? For every
cell of an `alsim calibrate --choice-al` report, fits a curve in k to that cell's own measured spec-on step times
(k >= 1; k = 0 is kept as measured, since speculation off runs another program) and picks the k of the highest
AL(k) / step on the curve; the pick is scored like alsim's, by the measured throughput it loses against the
measured best k (right under 1 %).

A curve fitted to the cell sees what no held-out model may read, yet it still misses where the cell's measured step
moves by more than a low-order curve in k follows (a GEMM that is slow at one token count and not the next). The
figures are a yardstick for the model's misses, not a bound: a model can be right where a fitted curve is not.
Alsim's figures on the cells the cubic gets right separate its own error from such cells. Each way's wrong cells are
also counted by the measured throughput they lose (1-2 %, 2-3 %, 3-5 %, over 5 %): how near its misses are to a tie.

    alsim calibrate calibration/measured --choice-al all --format json > report.json
    python3 calibration/ceiling.py report.json [--cells 3]

Curves: monotone (the measured steps made non-decreasing in k, nothing else), line, quadratic, cubic, robust cubic
(one that gives up the steps far off it, as a model blind to a kernel's spike would) and knee (a + b·k +
c·max(0, k − k0), the knee k0 free in quarter steps: a step leaving its weight stream). AL(k) is each cell's `al`,
the one alsim judged it under; the step times are the kit file's (read as `repeat.py` reads them). The script
recomputes the regret of alsim's own k from the two and refuses the report where that disagrees with the report's.

Standard library only, so it runs where the kit's files are, with no GPU and no torch.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import repeat
from repeat import Unusable

RIGHT_BELOW = repeat.RIGHT_BELOW / 100  # the choice score's "right", as a share of the measured best throughput
AGREE_WITHIN = 1e-6  # alsim's regret recomputed here against the report's
WHERE_CUBIC_IS_RIGHT = "alsim where cubic right"
KNEE_STEP = 0.25  # the knee k0 is searched in quarter steps strictly inside the cell's k, where it is not the line
# The bands a wrong cell's regret is counted in, [lo, hi), from "right" up: how near a miss is to a tie.
_MISS_EDGES = (RIGHT_BELOW, 0.02, 0.03, 0.05, float("inf"))
MISS_BANDS = tuple(zip(_MISS_EDGES, _MISS_EDGES[1:]))


def read_steps(path):
    """A kit step-time file as {(hardware, model, drafter, context, concurrency): {k: step_ms}}."""
    try:
        steps, name = repeat.read(path)
    except OSError as e:
        raise Unusable(f"{path}: {e.strerror}") from e
    cells = {}
    for (context, concurrency, k), ms in steps.items():
        cells.setdefault((*name, float(context), concurrency), {})[k] = ms
    return cells


def solve(a, b):
    """Solves a·x = b (a small normal-equation system) by Gaussian elimination with pivoting; a singular system (too
    few distinct k for the curve) is refused."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    scale = max(abs(x) for row in a for x in row) or 1.0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) <= 1e-12 * scale:
            raise Unusable("the curve's fit is singular: too few distinct k for it")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def least_squares(features, ys, weights=None):
    """Coefficients of the (weighted) least-squares fit of ys on the feature rows."""
    weights = weights or [1.0] * len(ys)
    n = len(features[0])
    ata = [[sum(w * f[i] * f[j] for f, w in zip(features, weights)) for j in range(n)] for i in range(n)]
    aty = [sum(w * f[i] * y for f, y, w in zip(features, ys, weights)) for i in range(n)]
    return solve(ata, aty)


def evaluate(coef, features):
    return [sum(c * x for c, x in zip(coef, f)) for f in features]


def monotone(ks, ys):
    """The least-squares non-decreasing sequence in k (pool adjacent violators); ks are sorted."""
    blocks = []
    for y in ys:
        blocks.append([y, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            value, count = blocks.pop()
            blocks[-1] = [(blocks[-1][0] * blocks[-1][1] + value * count) / (blocks[-1][1] + count),
                          blocks[-1][1] + count]
    return [value for value, count in blocks for _ in range(count)]


def powers(ks, degree):
    return [[k ** p for p in range(degree + 1)] for k in ks]


def polynomial(degree):
    def fit(ks, ys):
        rows = powers(ks, degree)
        return evaluate(least_squares(rows, ys), rows)
    return fit


def robust_cubic(ks, ys):
    """A cubic that gives up the steps far off it (Tukey's biweight, reweighted until the weights settle): a
    curve that ignores a kernel's spike instead of bending towards it."""
    rows = powers(ks, 3)
    weights = [1.0] * len(ys)
    for _ in range(30):
        fitted = evaluate(least_squares(rows, ys, weights), rows)
        residuals = [y - f for y, f in zip(ys, fitted)]
        cut = 4.685 * statistics.median(abs(r) for r in residuals) / 0.6745
        if cut == 0:
            break
        new = [(1 - (r / cut) ** 2) ** 2 if abs(r) < cut else 0.0 for r in residuals]
        if sum(w > 0 for w in new) < 5 or new == weights:
            break
        weights = new
    return fitted


def knee(ks, ys):
    def fitted(k0):
        rows = [[1, k, max(0.0, k - k0)] for k in ks]
        values = evaluate(least_squares(rows, ys), rows)
        return sum((v - y) ** 2 for v, y in zip(values, ys)), values
    # Strictly inside the cell's k: at or outside its ends the hinge is the line again (a singular fit).
    knees = [ks[0] + KNEE_STEP * i for i in range(1, int((ks[-1] - ks[0]) / KNEE_STEP))]
    return min((fitted(k0) for k0 in knees), key=lambda f: f[0])[1]


CURVES = {
    "monotone": monotone,
    "line": polynomial(1),
    "quadratic": polynomial(2),
    "cubic": polynomial(3),
    "robust cubic": robust_cubic,
    "knee": knee,
}


def smoothed(steps, curve):
    """The cell's step times (k = 0 among them) with its spec-on steps replaced by the curve fitted to them."""
    spec = sorted(k for k in steps if k >= 1)
    if len(spec) < 5:
        raise Unusable(f"spec-on steps at {len(spec)} k; the curves need five or more")
    return {0: steps[0], **dict(zip(spec, CURVES[curve](spec, [steps[k] for k in spec])))}


def regret(steps, al, k):
    rate = {j: al(j) / ms for j, ms in steps.items()}
    return (max(rate.values()) - rate[k]) / max(rate.values())


def pick(steps, al):
    return max(steps, key=lambda k: al(k) / steps[k])


def summary(regrets):
    """Cells, right, median and largest regret, and the wrong cells counted by regret band (`MISS_BANDS`)."""
    if not regrets:
        return {"cells": 0, "right": 0, "regret_median": None, "regret_max": None, "misses": []}
    return {
        "cells": len(regrets),
        "right": sum(r < RIGHT_BELOW for r in regrets),
        "regret_median": statistics.median(regrets),
        "regret_max": max(regrets),
        "misses": [sum(lo <= r < hi for r in regrets) for lo, hi in MISS_BANDS],
    }


def report_cells(report):
    """(origin, fold, cell) for every cell of an `alsim calibrate DIR --choice-al … --format json` report."""
    for entry in report["files"]:
        for fold in ("held_out", "in_sample"):
            for cell in entry[fold]["cells"]:
                yield entry["origin"], fold, cell


def judged(origin, cell, steps):
    """The cell's key, its measured steps at the k its AL covers, and that AL as a function of k; refused by name
    where the report's cell or the kit's rows cannot give them."""
    try:
        key = (cell["hardware"], cell["model"], cell["drafter"], float(cell["context"]), int(cell["concurrency"]))
        al = [None if a is None else float(a) for a in cell["al"]]
        if not isinstance(cell["alsim_k"], int) or ("regret" in cell and not isinstance(cell["regret"], float | int)):
            raise TypeError("alsim_k must be an integer and regret a number")
        if "acceptance" not in cell:
            raise KeyError("acceptance")
    except KeyError as e:
        raise Unusable(f"{origin}: a cell lacks {e}: {cell}") from e
    except (TypeError, ValueError) as e:
        raise Unusable(f"{origin}: a cell's numbers are not numbers ({e}): {cell}") from e
    if key not in steps:
        raise Unusable(f"{origin}: no rows for the report's cell {key}")
    # As alsim scores a cell: only the k both the rows and the AL cover.
    measured = {k: ms for k, ms in steps[key].items() if k < len(al) and al[k] is not None}
    if cell["alsim_k"] not in measured or 0 not in measured:
        raise Unusable(f"{origin}: cell {key} has no measured step and AL at k = 0 or at alsim's k {cell['alsim_k']}")
    return key, measured, al.__getitem__


def disagreement(cell, mine):
    """Why alsim's regret recomputed here is not the source's (its regret, or else its right flag), or None."""
    if "regret" in cell:
        if abs(mine - cell["regret"]) > AGREE_WITHIN:
            return f"loses {mine:.6f} here, {cell['regret']:.6f} in the report"
    elif "right" in cell and (mine < RIGHT_BELOW) != cell["right"]:
        return f"loses {mine:.4f} here, where the record says right = {cell['right']}"
    return None


def score(cells, steps_of):
    """Per way of choosing (alsim held out, alsim in sample, alsim held out on the cells the cubic gets right, each
    curve on the held-out cells): the pooled summary, the summaries per file and the cells the cubic loses most on.
    `cells` are (origin, fold, cell) as `report_cells` yields them."""
    ways = ["alsim held out", "alsim in sample", WHERE_CUBIC_IS_RIGHT, *CURVES]
    pooled = {w: [] for w in ways}
    per_file, worst = {}, []
    for origin, fold, cell in cells:
        file_ways = per_file.setdefault(origin, {w: [] for w in ways})
        key, measured, al = judged(origin, cell, steps_of(origin))
        mine = regret(measured, al, cell["alsim_k"])
        why = disagreement(cell, mine)
        if why:
            raise Unusable(f"{origin}: cell {key} under {cell['acceptance']}: alsim's k {cell['alsim_k']} {why} "
                           "(another kit file or another AL?)")
        way = "alsim held out" if fold == "held_out" else "alsim in sample"
        pooled[way].append(mine)
        file_ways[way].append(mine)
        if fold != "held_out":
            continue
        for curve in CURVES:
            try:
                chosen = pick(smoothed(measured, curve), al)
            except Unusable as e:
                raise Unusable(f"{origin}: cell {key}, {curve}: {e}") from e
            r = regret(measured, al, chosen)
            pooled[curve].append(r)
            file_ways[curve].append(r)
            if curve == "cubic":
                worst.append((r, key, cell["acceptance"], pick(measured, al), chosen, cell["alsim_k"]))
                if r < RIGHT_BELOW:
                    # What alsim loses where the measured steps are smooth enough to be picked from: its own error.
                    pooled[WHERE_CUBIC_IS_RIGHT].append(mine)
                    file_ways[WHERE_CUBIC_IS_RIGHT].append(mine)
    return (
        {w: summary(r) for w, r in pooled.items()},
        {o: {w: summary(r) for w, r in ways_.items()} for o, ways_ in per_file.items()},
        sorted(worst, reverse=True),
    )


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", help="alsim calibrate DIR --choice-al … --format json")
    p.add_argument("--cells", type=int, default=3, help="list this many cells the cubic loses most on")
    args = p.parse_args(argv)
    try:
        try:
            report = json.loads(Path(args.report).read_text())
            cells = list(report_cells(report))
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise Unusable(f"{args.report}: not an `alsim calibrate DIR --choice-al … --format json` report "
                           f"({e!r})") from e
        cache = {}

        def steps_of(origin):
            if origin not in cache:
                cache[origin] = read_steps(origin)
            return cache[origin]

        pooled, per_file, worst = score(cells, steps_of)
    except Unusable as e:
        print(e, file=sys.stderr)
        return 2
    width = max(len(way) for way in pooled)
    print(f"{'way of choosing k':<{width}} {'cells':>6} {'right':>6} {'share':>6} {'median':>7} {'largest':>8}")
    for way, s in pooled.items():
        if not s["cells"]:
            print(f"{way:<{width}} {0:>6}")
            continue
        print(f"{way:<{width}} {s['cells']:>6} {s['right']:>6} {s['right'] / s['cells']:>6.1%} "
              f"{s['regret_median']:>7.1%} {s['regret_max']:>8.1%}")
    bands = [f"{lo:.0%}-{hi:.0%}" if hi < float("inf") else f"over {lo:.0%}" for lo, hi in MISS_BANDS]
    print(f"\nwrong cells by the measured throughput they lose ({', '.join(bands)}):")
    for way, s in pooled.items():
        print(f"  {way:<{width}} {' '.join(f'{n:>5}' for n in s['misses'])}")
    print("\nper file, right (alsim held out / alsim in sample / cubic on the cell's own steps):")
    for origin, ways in per_file.items():
        print(f"  {Path(origin).name}: {ways['alsim held out']['right']} / {ways['alsim in sample']['right']} / "
              f"{ways['cubic']['right']} of {ways['cubic']['cells']}")
    if args.cells > 0:
        print("\nlargest regrets of the cubic (measured best k, the cubic's, alsim's held out):")
        for r, key, source, best, cubic, alsim in worst[:args.cells]:
            hardware, model, _, context, concurrency = key
            print(f"  {r:.1%}  {hardware} {model} {source}, context {context:g}, concurrency {concurrency}: "
                  f"k {best}, {cubic}, {alsim}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Is a measured choice of k repeatable? Compares two step-time files of the same GPU, model and drafter (the
same measure.py command run twice, on two machines): the step times' relative difference over the rows both hold,
and, per (context, concurrency) cell, whether the second run's best k is also right in the first run — it loses
under 1 % of the first run's measured throughput, the rule `alsim calibrate --choice-al` scores alsim's k by.
Throughput is AL(k) / step_ms with AL from a constant-α chain, (1 − α^(k+1)) / (1 − α), for each α given.

    python3 calibration/repeat.py calibration/measured/h100-qwen3-235b-a22b-eagle3.csv \
        calibration/measured/repeat/h100-qwen3-235b-a22b-eagle3.csv [--alpha 0.6,0.7,0.8]

Standard library only, so it runs where the kit's files are, with no GPU and no torch.
"""

import argparse
import csv
import statistics
import sys

RIGHT_BELOW = 1.0  # % of measured throughput lost: the choice score's "right"
KEY = ("hardware", "model", "drafter")


class Unusable(Exception):
    pass


def read(path):
    """Rows of a kit step-time file as {(context, concurrency, k): step_ms}, and its (hardware, model, drafter)."""
    with open(path, newline="") as f:
        reader = csv.DictReader(line for line in f if not line.startswith("#"))
        steps, names = {}, set()
        for line, row in enumerate(reader, start=2):
            try:
                cell = (int(row["context"]), int(row["concurrency"]), int(row["k"]))
                steps[cell] = float(row["step_ms"])
                names.add(tuple(row[c] for c in KEY))
            except (KeyError, TypeError, ValueError) as e:
                raise Unusable(f"{path}: data row {line - 1}: {e!r} (needs context, concurrency, k, step_ms)")
    if len(names) != 1:
        raise Unusable(f"{path}: expected one (hardware, model, drafter), found {sorted(names)}")
    return steps, names.pop()


def chain_al(alpha, k):
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def compare(first, second, alphas):
    """Step-time differences and, per α, the cells where the second run's best k is right in the first."""
    shared = sorted(set(first) & set(second))
    if not shared:
        raise Unusable("the two files share no (context, concurrency, k) row")
    diffs = sorted(abs(second[c] - first[c]) / first[c] * 100 for c in shared)
    cells = sorted({c[:2] for c in shared})
    choice = {}
    for alpha in alphas:
        right, same, regrets = 0, 0, []
        for cell in cells:
            ks = [c[2] for c in shared if c[:2] == cell]
            rate_first = {k: chain_al(alpha, k) / first[cell + (k,)] for k in ks}
            rate_second = {k: chain_al(alpha, k) / second[cell + (k,)] for k in ks}
            best_first = max(rate_first, key=rate_first.get)
            best_second = max(rate_second, key=rate_second.get)
            regret = (rate_first[best_first] - rate_first[best_second]) / rate_first[best_first] * 100
            regrets.append(regret)
            right += regret < RIGHT_BELOW
            same += best_first == best_second
        choice[alpha] = {"cells": len(cells), "same_k": same, "right": right, "regret_max": max(regrets)}
    return {
        "rows": len(shared),
        "step_diff_median": statistics.median(diffs),
        "step_diff_max": diffs[-1],
        "choice": choice,
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("first", help="step-time file of the first run")
    p.add_argument("second", help="the same measurement run again")
    p.add_argument("--alpha", default="0.6,0.7,0.8", help="constant-α chains for AL(k), comma-separated")
    args = p.parse_args(argv)
    try:
        alphas = [float(a) for a in args.alpha.split(",")]
        if not all(0 < a < 1 for a in alphas):
            raise ValueError
    except ValueError:
        print(f"--alpha: {args.alpha!r} is not a list of numbers in (0, 1)", file=sys.stderr)
        return 2
    try:
        first, name_first = read(args.first)
        second, name_second = read(args.second)
        if name_first != name_second:
            raise Unusable(f"the files measure different things: {name_first} and {name_second}")
        result = compare(first, second, alphas)
    except (OSError, Unusable) as e:
        print(e, file=sys.stderr)
        return 2
    print(f"{' '.join(name_first)}: {result['rows']} rows in both; step time differs by "
          f"{result['step_diff_median']:.1f} % median, {result['step_diff_max']:.1f} % at most")
    for alpha, c in result["choice"].items():
        print(f"  alpha {alpha}: the second run's best k is right in the first in {c['right']} of {c['cells']} "
              f"cells (the same k in {c['same_k']}), largest loss {c['regret_max']:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())

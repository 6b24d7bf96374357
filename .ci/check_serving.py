"""Holds `alsim calibrate` on the shared serving pairs to the committed targets and expected figures.

Usage: check_serving.py EXPECTED.json CALIBRATION.json  (the second is alsim's own --format json output).
Exits 1 naming every figure off its target or its expected value."""

import json
import sys

expected = json.load(open(sys.argv[1], encoding="utf-8"))
summary = json.load(open(sys.argv[2], encoding="utf-8"))["summary"]
problems = []
targets = expected["targets"]
if summary["speedup_median_abs_rel_error"] > targets["speedup_median_abs_rel_error_max"]:
    problems.append(f"median speedup error {summary['speedup_median_abs_rel_error']:.4f} above the target")
if summary["trend_sign_agreement"] < targets["trend_sign_agreement_min"]:
    problems.append(f"trend sign right in {summary['trend_sign_agreement']:.3f} of groups, below the target")
if targets["beat_flat_line"] and summary["speedup_median_abs_rel_error"] >= summary["flat_line_median_abs_rel_error"]:
    problems.append("the model does not beat a flat line per group")
want = expected["expected"]
for key, value in want.items():
    if key == "tolerance":
        continue
    got = summary[key]
    off = abs(got - value) > want["tolerance"] if isinstance(value, float) else got != value
    if off:
        problems.append(f"{key} = {got} where {value} is expected (update .ci/serving_expected.json if the change is meant)")
for p in problems:
    print(f"serving pairs: {p}")
print(
    "serving pairs: median speedup error {:.1f} % (flat line {:.1f} %), trend sign right in {:.0f} of {} groups".format(
        summary["speedup_median_abs_rel_error"] * 100,
        summary["flat_line_median_abs_rel_error"] * 100,
        summary["trend_sign_agreement"] * summary["trend_groups"],
        summary["trend_groups"],
    )
)
sys.exit(1 if problems else 0)

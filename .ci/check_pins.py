"""Holds `alsim pins check` on the InferenceX snapshot to the committed summary (issue 12).

Usage: check_pins.py EXPECTED.json REPORT.json  (the second is alsim's own --format json output).
Exits 1 naming every figure that moved: pins, ok, errors by class, unresolved, allowed."""

import json
import sys

expected = json.load(open(sys.argv[1], encoding="utf-8"))
summary = json.load(open(sys.argv[2], encoding="utf-8"))["summary"]
problems = [
    f"{key} = {summary.get(key)} where {value} is expected (update .ci/pins_expected.json if the change is meant)"
    for key, value in expected.items()
    if summary.get(key) != value
]
for p in problems:
    print(f"pins on the snapshot: {p}")
by_class = ", ".join(f"{c} {n}" for c, n in sorted(summary["errors_by_class"].items())) or "none"
print(
    f"pins on the snapshot: {summary['pins']} pins, {summary['ok']} ok, {summary['errors']} errors ({by_class}), "
    f"{summary['unresolved']} unresolved, {summary['allowed']} allowed"
)
sys.exit(1 if problems else 0)

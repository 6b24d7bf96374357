"""How the step-time model's defaults were chosen on measured serving pairs, and how well they hold out.

    ALSIM=target/debug/alsim python3 notebooks/serving_defaults.py ../shared/data/serving/inferencex_dsr1_mtp_vs_off_b200_b300.csv

Runs `alsim calibrate FILE --format json` over a grid of defaults — DeepSeek-R1's expert novelty (models.csv)
and the hardware rows' per-token overheads and compute efficiencies (hardware.csv), passed as --model-profile
and --profile files — and prints, for each expert novelty at the chosen overheads, the median speedup error and
the share of groups whose trend over concurrency is right; then a leave-one-group-out check: for each group,
the defaults are chosen on the other groups (lowest median speedup error) and the held-out group is scored
with them. Needs the shared data, so it is not one of the notebooks CI runs.

    ALSIM=target/debug/alsim python3 notebooks/serving_defaults.py --level tests/data/speedbench_level.csv

scores SPEED-Bench's level (the project's transcription; no shared data needed) over a grid of the cost per
decode token per MoE layer under expert parallelism (`moe_token_us`), each deployment (model) held out in turn:
the value is chosen on the others (lowest mean level error: the median does not move while the value moves
fewer than half the held-in rows, and ties would fall to the grid's first value) and the held-out deployment
scored with it."""

import csv
import io
import itertools
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
ALSIM = os.environ.get("ALSIM", str(ROOT / "target" / "debug" / "alsim"))
GRID = {
    "expert_novelty": [0.0, 0.25, 0.5, 0.75, 1.0],
    "token_us": [0, 5, 10],
    "spec_token_us": [0, 10, 20],
    "flops_eff": [0.4, 0.6],
    "attn_eff": [0.25, 0.5],
}
CHOSEN = {"expert_novelty": 0.5, "token_us": 5, "spec_token_us": 0, "flops_eff": 0.4, "attn_eff": 0.25}
LEVEL_GRID = [0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]


def rows(path, keys):
    lines = [l for l in (ROOT / path).read_text().splitlines() if not l.startswith("#")]
    table = list(csv.reader(lines))
    return table[0], [r for r in table[1:] if r[0] in keys]


def write(path, header, body):
    out = io.StringIO()
    csv.writer(out).writerows([header, *body])
    pathlib.Path(path).write_text(out.getvalue())


def calibrate(data, config, tmp):
    hw_header, hw_rows = rows("profiles/hardware.csv", {"b200", "b300"})
    for r in hw_rows:
        for key, value in config.items():
            if key in hw_header:
                r[hw_header.index(key)] = str(value)
    model_header, model_rows = rows("profiles/models.csv", {"dsr1"})
    write(f"{tmp}/hardware.csv", hw_header, hw_rows)
    write(f"{tmp}/models.csv", model_header + ["expert_novelty"], [r + [str(config["expert_novelty"])] for r in model_rows])
    out = subprocess.run(
        [ALSIM, "calibrate", data, "--profile", f"{tmp}/hardware.csv", "--model-profile", f"{tmp}/models.csv", "--format", "json"],
        check=True, capture_output=True, text=True,
    )
    report = json.loads(out.stdout)
    groups = {
        g["label"]: ([abs(p["predicted"] / p["measured"] - 1) for p in g["points"]], g["trend"] and g["trend"]["agree"])
        for g in report["serving"]["groups"]
    }
    return report["summary"], groups


def main(data):
    keys = list(GRID)
    with tempfile.TemporaryDirectory() as tmp:
        results = {values: calibrate(data, dict(zip(keys, values)), tmp) for values in itertools.product(*GRID.values())}
    for novelty in GRID["expert_novelty"]:
        s = results[tuple({**CHOSEN, "expert_novelty": novelty}[k] for k in keys)][0]
        print(f"expert novelty {novelty:4}: median speedup error {s['speedup_median_abs_rel_error']:.4f} "
              f"(flat line {s['flat_line_median_abs_rel_error']:.4f}), trend right in "
              f"{round(s['trend_sign_agreement'] * s['trend_groups'])} of {s['trend_groups']}")
    labels = list(results[tuple(CHOSEN[k] for k in keys)][1])
    held_out, trends = [], []
    for label in labels:
        def others(values):
            return statistics.median(e for other in labels if other != label for e in results[values][1][other][0])
        best = min(results, key=others)
        errors, trend = results[best][1][label]
        held_out += errors
        if trend is not None:
            trends.append(trend)
    print(f"leave one group out ({len(results)} configurations): median speedup error {statistics.median(held_out):.4f}, "
          f"trend right in {sum(trends)} of {len(trends)}")


def level(data):
    """Leave-one-deployment-out choice of moe_token_us on the level rows of `data`."""
    by_value = {}
    with tempfile.TemporaryDirectory() as tmp:
        for value in LEVEL_GRID:
            header, body = rows("profiles/hardware.csv", {"b200"})
            for r in body:
                r[header.index("moe_token_us")] = str(value)
            write(f"{tmp}/hardware.csv", header, body)
            out = subprocess.run([ALSIM, "calibrate", data, "--score", f"{tmp}/hardware.csv", "--format", "json"],
                                 check=True, capture_output=True, text=True)
            by_value[value] = [(g["key"]["model"], abs(p["predicted"] / p["measured"] - 1))
                               for g in json.loads(out.stdout)["serving"]["groups"] for p in g["points"]]
    for value, errors in by_value.items():
        print(f"moe_token_us {value:4}: median level error {statistics.median(e for _, e in errors):.4f}, "
              f"mean {statistics.mean(e for _, e in errors):.4f}")
    held_out = []
    for model in sorted({m for m, _ in by_value[0]}):
        best = min(by_value, key=lambda v: statistics.mean(e for m, e in by_value[v] if m != model))
        errors = [e for m, e in by_value[best] if m == model]
        held_out += errors
        print(f"held out {model}: chosen {best}, errors " + " ".join(f"{e:.3f}" for e in errors))
    print(f"leave one deployment out: median level error {statistics.median(held_out):.4f}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--level":
        level(sys.argv[2])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit(__doc__)

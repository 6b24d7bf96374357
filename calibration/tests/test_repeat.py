"""Tests of repeat.py, the comparison of two runs of one measurement: it needs no GPU and no torch.

    python3 -m unittest discover -s calibration/tests
"""

import contextlib
import io
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import repeat  # noqa: E402

HEADER = "hardware,model,drafter,context,concurrency,k,step_ms\n"


def kit_file(folder, name, steps, model="m"):
    """A step-time file with one row per (context, concurrency, k): step_ms."""
    path = Path(folder) / name
    rows = "".join(f"h100,{model},d,{c},{b},{k},{ms}\n" for (c, b, k), ms in steps.items())
    path.write_text("# gpu: a test\n" + HEADER + rows)
    return path


class Repeat(unittest.TestCase):
    def test_a_run_scaled_uniformly_picks_the_same_k_everywhere(self):
        first = {(1024, b, k): 10 + b * (1 + k) for b in (1, 64) for k in range(4)}
        second = {c: ms * 1.02 for c, ms in first.items()}
        result = repeat.compare(first, second, [0.7])
        self.assertAlmostEqual(result["step_diff_median"], 2.0, places=9)
        self.assertEqual(result["choice"][0.7], {"cells": 2, "same_k": 2, "right": 2, "regret_max": 0.0})

    def test_a_second_run_that_moves_the_best_k_is_scored_in_the_first_runs_throughput(self):
        # alpha 0.5: AL 1, 1.5, 1.75; first run's throughput 0.1, 0.15/1.4 = 0.107, 1.75/20; best k 1
        first = {(1024, 1, 0): 10.0, (1024, 1, 1): 14.0, (1024, 1, 2): 20.0}
        second = {(1024, 1, 0): 10.0, (1024, 1, 1): 20.0, (1024, 1, 2): 20.0}  # best k 0 there
        choice = repeat.compare(first, second, [0.5])["choice"][0.5]
        lost = (1.5 / 14 - 1 / 10) / (1.5 / 14) * 100
        self.assertEqual((choice["same_k"], choice["right"]), (0, 0))
        self.assertAlmostEqual(choice["regret_max"], lost, places=9)

    def test_files_of_different_models_or_without_step_times_are_refused(self):
        with tempfile.TemporaryDirectory() as folder:
            a = kit_file(folder, "a.csv", {(1024, 1, 0): 10.0})
            b = kit_file(folder, "b.csv", {(1024, 1, 0): 10.0}, model="other")
            broken = Path(folder) / "c.csv"
            broken.write_text(HEADER + "h100,m,d,1024,1,zero,10\n")
            for pair, says in (((a, b), "different things"), ((a, broken), "c.csv: data row 1")):
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    self.assertEqual(repeat.main([str(p) for p in pair]), 2)
                self.assertIn(says, err.getvalue())

    def test_the_committed_repeat_runs_agree_on_the_choice(self):
        # repeat/first/ is the first run (the kit's files before their routing was redrawn to the expected expert
        # count), repeat/ the second, repeat/third/ the third, all with the same seeds; each later run is scored in
        # an earlier one's throughput.
        repeat_dir = Path(__file__).resolve().parent.parent / "measured" / "repeat"
        runs = [repeat_dir / "first", repeat_dir, repeat_dir / "third"]
        pairs = [(a, b) for i, a in enumerate(runs) for b in runs[i + 1 :]]
        compared = 0
        for earlier, later in pairs:
            for again in sorted(later.glob("*.csv")):
                if again.name.endswith("-layers.csv") or not (earlier / again.name).exists():
                    continue
                first, _ = repeat.read(earlier / again.name)
                second, _ = repeat.read(again)
                for alpha, c in repeat.compare(first, second, [0.6, 0.7, 0.8])["choice"].items():
                    self.assertEqual(c["right"], c["cells"], f"{later.name}/{again.name} alpha {alpha}")
                compared += 1
        self.assertEqual(compared, 6, "two files, three runs: three pairs each")

    def test_another_routing_draw_at_the_expected_count_agrees_on_the_choice(self):
        # repeat/seed1/ is the kit's own file measured again with `--routing-seed 1`: other routings, each waking the
        # expected number of experts, so the draw alone differs; its best k is scored in the kit file's throughput.
        measured = Path(__file__).resolve().parent.parent / "measured"
        again = sorted(p for p in (measured / "repeat" / "seed1").glob("*.csv") if not p.name.endswith("-layers.csv"))
        self.assertEqual(len(again), 2)
        for path in again:
            first, _ = repeat.read(measured / path.name)
            second, _ = repeat.read(path)
            result = repeat.compare(first, second, [0.6, 0.7, 0.8])
            self.assertLess(result["step_diff_median"], 1.0, path.name)
            for alpha, c in result["choice"].items():
                self.assertEqual((c["right"], c["cells"]), (18, 18), f"{path.name} alpha {alpha}")


if __name__ == "__main__":
    unittest.main()

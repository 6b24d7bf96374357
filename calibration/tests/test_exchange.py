"""Tests of the expert-parallel exchange harness that need no GPU: the models and sizes it takes from the
profiles, the routing counts per destination GPU, the bytes, the CSV it writes and — where alsim is built — the
fit `alsim calibrate` makes of it; where torch is installed, a gloo run on the CPU with tiny sizes.

    python3 -m unittest discover -s calibration/tests
"""

import csv
import importlib.util
import json
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
KIT = HERE.parent
REPO = KIT.parent
sys.path.insert(0, str(KIT))

from epkit import plan  # noqa: E402
from stepkit import shapes  # noqa: E402
from stepkit.output import write_csv  # noqa: E402

HAS_TORCH = importlib.util.find_spec("torch") is not None
ALSIM = REPO / "target" / "debug" / "alsim"


def profiles(path=REPO / "profiles/models.csv"):
    return shapes.read_rows(path)


def calibrate(path):
    """`alsim calibrate PATH --format json`, parsed."""
    done = subprocess.run([str(ALSIM), "calibrate", str(path), "--format", "json"], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    return json.loads(done.stdout)


def read_back(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    comments = [line for line in lines if line.startswith("#")]
    return comments, list(csv.DictReader(line for line in lines if not line.startswith("#")))


class Sizes(unittest.TestCase):
    def test_every_moe_profile_and_no_dense_one(self):
        models = {m.key: m for m in plan.moe_shapes(profiles())}
        self.assertEqual(models["minimax-m3"], plan.MoeShape("minimax-m3", 6144, 4, 128))
        self.assertEqual(models["dsr1"], plan.MoeShape("dsr1", 7168, 8, 256))
        self.assertNotIn("llama-3.3-70b", models)
        self.assertEqual([m.key for m in plan.moe_shapes(profiles(), ["DeepSeek-R1"])], ["dsr1"])

    def test_refusals_name_the_model(self):
        with self.assertRaises(shapes.ProfileError) as e:
            plan.moe_shapes(profiles(), ["llama-3.3-70b"])
        self.assertIn("no MoE layers", str(e.exception))
        with self.assertRaises(shapes.ProfileError) as e:
            plan.check_placement(plan.MoeShape("odd", 64, 2, 6), 4)
        self.assertIn("6 experts do not split evenly over 4 GPUs", str(e.exception))
        for model in plan.moe_shapes(profiles()):
            for gpus in (2, 4, 8):
                plan.check_placement(model, gpus)  # every embedded MoE model splits over 2, 4 and 8


class Routing(unittest.TestCase):
    def test_each_token_goes_once_to_each_gpu_holding_one_of_its_experts(self):
        model = plan.MoeShape("m", 64, 4, 32)
        for tokens, gpus in [(1, 2), (7, 4), (64, 8)]:
            counts = plan.route(model, tokens, gpus)
            self.assertEqual((len(counts), {len(r) for r in counts}), (gpus, {gpus}))
            for row in counts:
                self.assertTrue(tokens <= sum(row) <= tokens * min(model.top_k, gpus), (tokens, gpus, row))
                self.assertTrue(all(0 <= c <= tokens for c in row))
        self.assertEqual(plan.route(model, 64, 8), plan.route(model, 64, 8), "every process draws the same")
        self.assertNotEqual(plan.route(model, 64, 8), plan.route(model, 64, 4))

    def test_the_extremes_of_top_k(self):
        # Every expert chosen: every GPU gets every token. One expert per GPU and top-1: one copy per token.
        self.assertEqual(plan.route(plan.MoeShape("all", 8, 8, 8), 5, 4), [[5] * 4] * 4)
        for row in plan.route(plan.MoeShape("one", 8, 1, 4), 50, 4):
            self.assertEqual(sum(row), 50)

    def test_copies_follow_uniform_top_k(self):
        # A GPU holding E/N experts gets a token unless all k choices miss it: N (1 − C(E − E/N, k) / C(E, k)).
        model = plan.MoeShape("minimax-m3", 6144, 4, 128)
        counts = plan.route(model, 512, 8)
        expected = 8 * (1 - math.comb(112, 4) / math.comb(128, 4))
        measured = sum(map(sum, counts)) / (8 * 512)
        self.assertAlmostEqual(measured / expected, 1, delta=0.02)

    def test_link_bytes_leave_out_the_local_copy(self):
        mean, most = plan.link_bytes([[3, 1], [2, 4]], 10, "bf16")
        self.assertEqual((mean, most), ((1 * 20 + 2 * 20) / 2, 40))
        self.assertEqual(plan.link_bytes([[3, 1], [2, 4]], 10, "fp32"), (60, 80))


class Rows(unittest.TestCase):
    def test_rows_and_header_are_what_calibrate_reads(self):
        model = plan.MoeShape("dsr1", 7168, 8, 256)
        counts = plan.route(model, 16, 4)
        times = dict(zip(plan.TIMES, [0.01, 0.03, 0.025, 0.04, 0.035]))
        row = plan.row("h100", model, 16, "bf16", counts, times, 50)
        self.assertEqual((row["gpus"], row["tokens_per_gpu"], row["repeats"]), (4, 16, 50))
        self.assertAlmostEqual(row["copies_per_token"], sum(map(sum, counts)) / 64)
        self.assertEqual(row["link_bytes"], round(plan.link_bytes(counts, 7168, "bf16")[0]))
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "x.csv"
            write_csv(path, plan.header(["gpu: test"], 2, 5), plan.COLUMNS, [row])
            comments, rows = read_back(path)
            self.assertEqual(comments[0], "# gpu: test")
            self.assertTrue(any("2 warm-up runs, then 5 repeats" in c for c in comments))
            self.assertEqual(list(rows[0]), plan.COLUMNS)
            # What alsim calibrate requires of an exchange file.
            for column in ["hardware", "gpus", "model", "tokens_per_gpu", "link_bytes", "dispatch_ms", "combine_ms"]:
                self.assertIn(column, rows[0])
            self.assertEqual(float(rows[0]["dispatch_ms"]), 0.03)

    @unittest.skipUnless(ALSIM.exists(), "alsim is not built (cargo build)")
    def test_calibrate_fits_the_latency_and_bandwidth_per_gpu_count(self):
        # Rows the harness would write for an exchange of exactly latency + 2·link_bytes / bandwidth.
        link = {2: (20.0, 160.0), 4: (30.0, 120.0)}
        rows = []
        for gpus, (latency_us, gb_s) in link.items():
            for model in plan.moe_shapes(profiles(), ["minimax-m3", "qwen3-235b-a22b"]):
                for tokens in (1, 8, 64, 512):
                    counts = plan.route(model, tokens, gpus)
                    us = latency_us + 2 * round(plan.link_bytes(counts, model.hidden, "bf16")[0]) * 1e-3 / gb_s
                    times = dict.fromkeys(plan.TIMES, us / 2e3)
                    rows.append(plan.row("h100", model, tokens, "bf16", counts, times, 1))
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "h100-ep-exchange.csv"
            write_csv(path, ["synthetic"], plan.COLUMNS, rows)
            report = calibrate(path)
        groups = {g["gpus"]: g for g in report["exchange"]["groups"]}
        for gpus, (latency_us, gb_s) in link.items():
            fit = groups[gpus]["fit"]
            # The CSV keeps 0.1 µs of each time: the fit comes back to within that rounding.
            self.assertAlmostEqual(fit["latency_us"] / latency_us, 1, delta=0.01)
            self.assertAlmostEqual(fit["bandwidth_gb_s"] / gb_s, 1, delta=0.01)
        self.assertLess(report["summary"]["exchange_held_out_median_abs_rel_error"], 0.01)


@unittest.skipUnless(HAS_TORCH, "torch is not installed")
class Gloo(unittest.TestCase):
    def test_a_cpu_run_writes_the_exchange_file(self):
        with tempfile.TemporaryDirectory() as d:
            args = [sys.executable, str(KIT / "exchange.py"), "--device", "cpu", "--gpus", "2,4", "--tokens", "1,4",
                    "--model", "tiny-moe", "--models-csv", str(HERE / "tiny_models.csv"), "--warmup", "1",
                    "--repeats", "3", "--out", d]
            done = subprocess.run(args, capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            path = Path(d) / "cpu-ep-exchange.csv"
            comments, rows = read_back(path)
            self.assertTrue(any("gloo on the CPU" in c for c in comments), comments)
            self.assertEqual([(int(r["gpus"]), int(r["tokens_per_gpu"])) for r in rows],
                             [(2, 1), (2, 4), (4, 1), (4, 4)])
            for r in rows:
                self.assertTrue(1 <= float(r["copies_per_token"]) <= 2, r)  # top-2
                for part in ("dispatch", "combine"):
                    self.assertTrue(0 < float(r[f"{part}_ms"]) <= float(r[f"{part}_max_ms"]), r)
                self.assertEqual(int(r["hidden"]), 256)
            again = subprocess.run(args, capture_output=True, text=True)
            self.assertNotEqual(again.returncode, 0)
            self.assertIn("--force", again.stderr)
            if ALSIM.exists():
                self.assertEqual(calibrate(path)["kind"], "exchange")


if __name__ == "__main__":
    unittest.main()

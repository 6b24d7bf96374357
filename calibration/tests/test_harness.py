"""Tests of the calibration harness that need no GPU: shapes from profile rows, CSV rows, and — where torch is
installed — CPU smoke runs of the whole harness (GQA/MSA, MLA and hybrid linear-attention stacks, EAGLE3 and MTP
drafters) and the Triton kernels (attention, latent attention, Gated DeltaNet) in Triton's interpreter.

    python3 -m unittest discover -s calibration/tests
"""

import csv
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
KIT = HERE.parent
REPO = KIT.parent
sys.path.insert(0, str(KIT))

from stepkit import shapes  # noqa: E402
from stepkit.output import COLUMNS, step_row, write_csv  # noqa: E402

HAS_TORCH = importlib.util.find_spec("torch") is not None


def model(key):
    return shapes.model_shape(shapes.find(shapes.read_rows(REPO / "profiles/models.csv"), key, "model"))


def drafter(key, target):
    return shapes.drafter_shape(shapes.find(shapes.read_rows(REPO / "profiles/drafters.csv"), key, "drafter"), target)


class Shapes(unittest.TestCase):
    def test_minimax_m3_widths_match_its_config(self):
        m = model("MiniMax-M3")
        self.assertEqual((m.dense_inter, m.shared_inter, m.moe_inter), (12288, 3072, 3072))
        self.assertEqual([(t.name, t.count) for t in m.types], [("dense", 3), ("moe-sparse", 57)])
        self.assertEqual((m.group, m.sparse_keys, m.index_dim), (16, 2176, 128))

    def test_llama_mlp_width_matches_its_config(self):
        m = model("llama-3.3-70b")
        self.assertEqual((m.dense_inter, m.experts, m.types[0].name, m.types[0].count), (28672, 0, "dense", 80))

    def test_drafters(self):
        m = model("minimax-m3")
        mha, gqa = drafter("Inferact/MiniMax-M3-EAGLE3", m), drafter("inferact-minimax-m3-eagle3-gqa", m)
        self.assertEqual((mha.kv_heads, mha.head_dim, mha.vocab), (64, 128, 200064))
        self.assertEqual((gqa.kv_heads, gqa.head_dim), (4, 128))
        llama = drafter("llama-3.3-70b-eagle3", model("llama-3.3-70b"))
        self.assertEqual(llama.vocab, 32000)  # the pruned draft vocabulary of the profile

    def test_latent_attention_model_and_its_share(self):
        m = model("dsr1")
        self.assertTrue(m.mla)
        self.assertEqual((m.dense_inter, m.shared_inter, m.moe_inter, m.experts), (18432, 2048, 2048, 256))
        share = shapes.model_shape(shapes.find(shapes.read_rows(KIT / "profiles/models.csv"), "dsr1-ep8", "model"))
        # One GPU's expert share: the same layers and widths, an eighth of the experts, top-8 routing kept.
        self.assertEqual((share.dense_inter, share.shared_inter, share.experts, share.top_k), (18432, 2048, 32, 8))
        self.assertEqual([(t.name, t.count) for t in share.types], [("dense", 3), ("moe", 58)])
        mtp = shapes.drafter_shape(shapes.find(shapes.read_rows(KIT / "profiles/drafters.csv"), "dsr1-ep8-mtp",
                                               "drafter"), share)
        self.assertTrue(mtp.mtp and mtp.moe)
        self.assertEqual(mtp.vocab, share.vocab)

    def test_hybrid_model_counts_its_linear_layers(self):
        m = model("qwen3.5-397b-a17b")
        self.assertEqual([(t.name, t.count) for t in m.types], [("moe", 15), ("moe-linear", 45)])
        self.assertEqual((m.gdn_value_heads, m.gated, m.experts, m.top_k, m.moe_inter), (64, True, 512, 10, 1024))
        self.assertTrue(drafter("qwen3.5-397b-a17b-mtp", m).mtp)

    def test_moe_without_shared_expert_and_small_draft_vocabulary(self):
        m = model("qwen3-235b-a22b")
        self.assertEqual((m.shared_inter, m.dense_inter, m.moe_inter), (0, 0, 1536))
        d = drafter("qwen3-235b-a22b-eagle3", m)
        self.assertEqual((d.vocab, d.target_vocab), (32000, 151936))
        self.assertIn("d2t", d.describe())

    def test_unbuildable_rows_are_named(self):
        for key, words in [("deepseek-v4-pro", "MLA"), ("glm-5.2", "sparse"), ("kimi-k3", "linear-attention")]:
            with self.assertRaises(shapes.ProfileError) as e:
                model(key)
            self.assertIn(words, str(e.exception))
            self.assertIn("models.csv:", str(e.exception))
        with self.assertRaises(shapes.ProfileError) as e:
            drafter("llama-3.2-1b", model("llama-3.3-70b"))
        self.assertIn("one-layer", str(e.exception))
        with self.assertRaises(shapes.ProfileError) as e:
            model("no-such-model")
        self.assertIn("known: minimax-m3", str(e.exception))

    def test_lists(self):
        self.assertEqual(shapes.parse_list("1-3,8,2", "--widths"), [1, 2, 3, 8])
        for bad in ["0", "3-1", "x"]:
            with self.assertRaises(shapes.ProfileError):
                shapes.parse_list(bad, "--widths")


class Rows(unittest.TestCase):
    def test_step_is_layers_by_count_plus_head_plus_drafts(self):
        m = model("minimax-m3")
        point = {
            "batch": 4, "width": 3, "context": 1024, "head_ms": 0.5, "lm_head_ms": 0.4,
            "types": {
                "dense": {"layer_ms": 1.0, "dense_ms": 0.5, "attention_ms": 0.25, "attention_impl": "sdpa"},
                "moe-sparse": {"layer_ms": 2.0, "dense_ms": 0.5, "attention_ms": 0.25, "experts_ms": 1.0,
                               "touched": 11.5, "impl": "loop", "attention_impl": "triton"},
            },
        }
        row = step_row(m, "h200", "inferact-minimax-m3-eagle3", point, 1.5)
        self.assertAlmostEqual(row["verify_ms"], 3 * 1.0 + 57 * 2.0 + 0.5)
        self.assertAlmostEqual(row["step_ms"], row["verify_ms"] + 2 * 1.5)
        self.assertAlmostEqual(row["experts_ms"], 57.0)
        self.assertEqual((row["k"], row["al"], row["experts_touched"]), (2, 3, 11.5))
        self.assertEqual(row["attention_impl"], "sdpa/triton")
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "x.csv"
            write_csv(path, ["gpu: test"], COLUMNS, [row])
            lines = path.read_text().splitlines()
            self.assertEqual(lines[0], "# gpu: test")
            back = next(csv.DictReader(lines[1:]))
            # What alsim calibrate requires of a step-time file.
            for column in ["hardware", "model", "tp", "concurrency", "k", "al", "context", "step_ms"]:
                self.assertIn(column, back)
            self.assertEqual(float(back["step_ms"]), round(row["step_ms"], 4))


@unittest.skipUnless(HAS_TORCH, "torch is not installed")
class Torch(unittest.TestCase):
    def smoke(self, key, drafter_key, out):
        args = [sys.executable, str(KIT / "measure.py"), "--model", key, "--device", "cpu",
                "--models-csv", str(HERE / "tiny_models.csv"), "--drafters-csv", str(HERE / "tiny_drafters.csv"),
                "--batches", "1,2", "--widths", "1,2", "--contexts", "100,300", "--out", out]
        subprocess.run(args, check=True, capture_output=True)
        with open(Path(out) / f"cpu-{drafter_key}.csv", encoding="utf-8") as f:
            rows = list(csv.DictReader(line for line in f if line[0] != "#"))
        self.assertEqual(len(rows), 2 * 2 * 2)
        for r in rows:
            self.assertAlmostEqual(float(r["step_ms"]), float(r["verify_ms"]) + float(r["drafter_ms"]), places=3)
            self.assertGreater(float(r["experts_touched"]), 0)
            self.assertGreater(float(r["draft_forward_ms"]), 0)
        return args

    def test_a_routing_touches_the_expected_number_of_experts(self):
        import torch
        from stepkit import moe
        self.assertEqual(moe.expected_touched(1, 64, 4), 4)
        self.assertAlmostEqual(moe.expected_touched(10_000, 64, 4), 64)
        for n in (1, 3, 8, 40, 300):
            generator = torch.Generator().manual_seed(n)
            routing = moe.route(n, 64, 4, generator, "cpu", torch.float32)
            self.assertEqual(routing.touched, round(moe.expected_touched(n, 64, 4)), n)
            self.assertEqual(sum(t - s for _, s, t in routing.segments), n * 4)

    def test_cpu_smoke_run_writes_the_files(self):
        with tempfile.TemporaryDirectory() as d:
            args = self.smoke("tiny-moe", "tiny-moe-eagle3", d)
            again = subprocess.run(args, capture_output=True, text=True)
            self.assertNotEqual(again.returncode, 0)
            self.assertIn("--force", again.stderr)

    def test_cpu_smoke_runs_of_latent_and_hybrid_attention_with_mtp_heads(self):
        with tempfile.TemporaryDirectory() as d:
            self.smoke("tiny-mla", "tiny-mla-mtp", d)
            self.smoke("tiny-hybrid", "tiny-hybrid-mtp", d)
            with open(Path(d) / "cpu-tiny-hybrid-layers.csv", encoding="utf-8") as f:
                types = {r["layer_type"] for r in csv.DictReader(line for line in f if line[0] != "#")}
            self.assertEqual(types, {"moe", "moe-linear"})

    def test_latent_attention_through_pytorch_matches_the_reference(self):
        import torch

        from stepkit.attention import LATENT_TORCH, attend_latent_torch, attend_reference
        torch.manual_seed(0)
        for b, m, length in [(2, 32, 300), (1, 24, 700)]:
            cache = torch.randn(b + 1, 1, length + 140, 576)  # a cache with more sequences and room than used
            table = torch.arange(shapes.blocks(length), dtype=torch.int32)[None]
            q = torch.randn(b, 1, m, 576)
            ref = attend_reference(q, cache, cache[..., :512], table, length, 1)
            for impl in LATENT_TORCH:
                out = attend_latent_torch(q, cache, length, 64, impl)
                self.assertLess(float((out - ref).norm() / ref.norm()), 1e-4, (impl, b, m, length))

    @unittest.skipUnless(importlib.util.find_spec("triton") is not None, "triton is not installed")
    def test_attention_kernel_in_the_interpreter(self):
        # Triton's interpreter mishandles bf16 dots, so the kernel's indexing is checked in float32 here;
        # check.py holds the bf16 kernel to the reference on the GPU.
        code = (
            "import torch; from stepkit.attention import attend, attend_reference; from stepkit import shapes\n"
            "torch.manual_seed(0)\n"
            "for b, h, m, length, sparse in [(2, 2, 12, 300, False), (1, 1, 150, 1000, False),"
            " (2, 4, 16, 700, True), (11, 8, 1, 1000, False)]:\n"
            "    k = torch.randn(b, h, length + 140, 128); v = torch.randn_like(k); nb = shapes.blocks(length)\n"
            "    r, per = (b * 3, 3) if sparse else (b, 1)\n"
            "    q = torch.randn(r, h, m, 128)\n"
            "    t = (torch.stack([torch.randperm(nb)[:3] for _ in range(r)]) if sparse"
            " else torch.arange(nb)[None]).to(torch.int32)\n"
            "    o, ref = attend(q, k, v, t, length, per), attend_reference(q, k, v, t, length, per)\n"
            "    assert ((o - ref).norm() / ref.norm()) < 1e-4, (b, h, m, length)\n"
        )
        self.interpret(code)

    @unittest.skipUnless(importlib.util.find_spec("triton") is not None, "triton is not installed")
    def test_latent_attention_and_gated_delta_kernels_in_the_interpreter(self):
        code = (
            "import torch; from stepkit.attention import attend_latent, attend_reference; from stepkit import shapes\n"
            "from stepkit.linear import gated_delta, gated_delta_reference\n"
            "torch.manual_seed(0)\n"
            "for b, m, length in [(2, 32, 300), (1, 24, 700)]:\n"
            "    c = torch.randn(b, 1, length + 140, 576); t = torch.arange(shapes.blocks(length), dtype=torch.int32)[None]\n"
            "    q = torch.randn(b, 1, m, 576)\n"
            "    o, ref = attend_latent(q, c, length, t, 64), attend_reference(q, c, c[..., :512], t, length, 1)\n"
            "    assert ((o - ref).norm() / ref.norm()) < 1e-4, (b, m, length)\n"
            "for b, w, hk, hv in [(2, 3, 2, 4), (3, 1, 1, 2)]:\n"
            "    qk = torch.randn(b, w, 2, hk, 128); v = torch.randn(b, w, hv, 128); ab = torch.randn(b, w, 2, hv)\n"
            "    g, beta = -torch.nn.functional.softplus(ab[:, :, 0]), ab[:, :, 1].sigmoid()\n"
            "    s = torch.randn(b + 1, hv, 128, 128); s_ref = s.clone()\n"
            "    o = gated_delta(qk[:, :, 0], qk[:, :, 1], v, g, beta, s)\n"
            "    ref = gated_delta_reference(qk[:, :, 0], qk[:, :, 1], v, g, beta, s_ref)\n"
            "    assert ((o - ref).norm() / ref.norm()) < 1e-4 and ((s - s_ref).norm() / s_ref.norm()) < 1e-5, (b, w)\n"
        )
        self.interpret(code)

    def interpret(self, code):
        env = dict(os.environ, TRITON_INTERPRET="1", PYTHONPATH=str(KIT))
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr[-2000:])


if __name__ == "__main__":
    unittest.main()

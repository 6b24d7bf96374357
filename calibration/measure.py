#!/usr/bin/env python3
"""Measure decode and verify step cost of a model-shaped stack on this GPU, for `alsim calibrate`.

    python3 calibration/measure.py --model minimax-m3 --out calibration/measured

builds a few layers of each layer type of the profile's model at full width with random bf16 weights, times one
step's pieces for every concurrency B × tokens per sequence w = k + 1 × context, scales them to the whole model by
layer count, and writes one CSV per drafter (calibration/README.md says what is and is not modelled).
"""

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch

from stepkit import moe, shapes
from stepkit.output import COLUMNS, LAYER_COLUMNS, step_row, write_csv
from stepkit.stack import DTYPE, Config, Head, Layer, drafter
from stepkit.timing import Timer, ceilings

PROFILES = Path(__file__).resolve().parent.parent / "profiles"
KNOWN_GPUS = ("h100", "h200", "h20", "b200", "b300", "gb200", "mi300x", "mi325x", "mi355x")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="model profile key or alias")
    p.add_argument("--models-csv", default=str(PROFILES / "models.csv"), help="model profiles (alsim's columns)")
    p.add_argument("--drafters-csv", default=str(PROFILES / "drafters.csv"), help="drafter profiles")
    p.add_argument("--drafter", action="append", help="drafter key (repeatable; default: every one for the model)")
    p.add_argument("--batches", default="1,2,4,8,16,32,64,128,256", help="concurrencies B")
    p.add_argument("--widths", default="1-9", help="tokens per sequence w = k + 1")
    p.add_argument("--contexts", default="1024,8192", help="context lengths in tokens")
    p.add_argument("--layers-per-type", type=int, default=2, help="layers built of each layer type")
    p.add_argument("--moe", choices=["auto", "loop", "grouped"], default="auto", help="routed-expert kernel")
    p.add_argument("--routing-seed", type=int, default=0,
                   help="another set of expert routings (0: the kit's own); a repeat with a new seed shows how far "
                        "the measured best k moves with the draw")
    p.add_argument("--hardware", help="alsim hardware key written in the CSV (default: from the GPU's name)")
    p.add_argument("--device", default="cuda", help="cuda or cpu (cpu: smoke test of the harness only)")
    p.add_argument("--out", default="calibration/measured", help="output folder")
    p.add_argument("--force", action="store_true", help="overwrite existing output files")
    return p.parse_args(argv)


def environment(device):
    """Header lines naming the GPU, driver and library versions, the date and the command."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = "python3 " + " ".join([os.path.relpath(sys.argv[0])] + sys.argv[1:])
    if device.type != "cuda":
        return [f"device: cpu (smoke test, timings meaningless), PyTorch {torch.__version__}", f"date: {now}",
                f"command: {command}"]
    props = torch.cuda.get_device_properties(device)
    driver = "unknown"
    if shutil.which("nvidia-smi"):
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, check=False)
        driver = out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else driver
    try:
        import triton
        triton_version = triton.__version__
    except ImportError:
        triton_version = "absent"
    return [
        f"gpu: {props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.1f} GiB; "
        f"driver {driver}; CUDA {torch.version.cuda}; PyTorch {torch.__version__}; Triton {triton_version}",
        f"date: {now}",
        f"command: {command}",
    ]


def hardware_key(args, device):
    if args.hardware:
        return args.hardware
    if device.type != "cuda":
        return "cpu"
    name = torch.cuda.get_device_name(device).lower().replace(" ", "")
    for key in KNOWN_GPUS:
        if key in name:
            return key
    sys.exit(f"measure: cannot tell the alsim hardware key from '{name}': pass --hardware")


class Bench:
    """The built stack plus static inputs, and the timing of every piece of one grid point."""

    def __init__(self, shape, drafters, batches, widths, contexts, per_type, impls, device, routing_seed=0):
        self.shape, self.device, self.impls, self.routing_seed = shape, device, impls, routing_seed
        n_max = max(batches) * max(widths)
        cache = (max(batches), shapes.blocks(max(contexts) + max(widths) + 1) * shapes.PAGE)
        self.layers = {t.name: [Layer(shape, t, cache, device, n_max) for _ in range(min(t.count, per_type))]
                       for t in shape.types}
        self.head = Head(shape.hidden, shape.vocab, device)
        self.drafters = {d.key: drafter(shape, d, self.head, cache, device, max(batches)) for d in drafters}
        h = shape.hidden
        randn = lambda *s: torch.randn(*s, device=device, dtype=DTYPE)  # noqa: E731
        self.x = randn(n_max, h)
        self.aux = randn(max(batches), 3 * h)
        self.tokens = torch.randint(0, shape.vocab, (n_max,), device=device)
        self.timer = Timer(device)

    def route(self, cfg, layers=None):
        layers = [l for ls in self.layers.values() for l in ls] if layers is None else layers
        for i, layer in enumerate(l for l in layers if l.kind.moe):
            point = (i, cfg.batch, cfg.width, cfg.context)
            # Seed 0 hashes the point alone, as before the flag existed, so the kit's files stay reproducible.
            seed = hash((self.routing_seed, *point) if self.routing_seed else point) & 0xFFFFFFFF
            gen = torch.Generator().manual_seed(seed)
            layer.routing = moe.route(cfg.tokens, self.shape.experts, self.shape.top_k, gen, self.device, DTYPE)

    def point(self, cfg):
        """Times every piece of grid point `cfg`; returns (point dict for step_row, layer rows)."""
        n, t = cfg.tokens, self.timer
        x = self.x[:n]
        self.route(cfg)
        types, layer_rows = {}, []
        for kind in self.shape.types:
            built = self.layers[kind.name]
            first = built[0]
            piece = {"dense_ms": t(lambda: first.dense_part(x))}
            row = {"experts_loop_ms": "", "experts_grouped_ms": "", "experts_touched": "",
                   "attention_triton_ms": "", "attention_sdpa_ms": "", "attention_matmul_ms": ""}
            piece["attention_ms"], impl = self.best_attention(built, lambda: first.attn.timed_core(cfg), cfg, row)
            if kind.moe:
                timed = {}
                for name in list(self.impls):
                    first.experts_impl = moe.IMPLEMENTATIONS[name]
                    try:
                        timed[name] = t(lambda: first.experts_part(x))
                    except RuntimeError as e:  # e.g. no grouped GEMM for this GPU: time the others
                        print(f"note: the {name} experts fail here and are dropped: {e}", flush=True)
                        self.impls.remove(name)
                        continue
                    row[f"experts_{name}_ms"] = timed[name]
                best = min(timed, key=timed.get)
                for layer in built:
                    layer.experts_impl = moe.IMPLEMENTATIONS[best]
                touched = sum(layer.routing.touched for layer in built) / len(built)
                piece.update(experts_ms=timed[best], touched=touched, impl=best)
                row["experts_touched"] = touched
            piece["attention_impl"] = impl
            piece["layer_ms"] = t(lambda: self.run_layers(built, x, cfg)) / len(built)
            types[kind.name] = piece
            layer_rows.append({
                "context": cfg.context, "concurrency": cfg.batch, "w": cfg.width, "layer_type": kind.name,
                "count": kind.count, "built": len(built), "layer_ms": piece["layer_ms"],
                "dense_ms": piece["dense_ms"], "attention_ms": piece["attention_ms"], **row,
            })
        point = {
            "batch": cfg.batch, "width": cfg.width, "context": cfg.context, "types": types,
            "head_ms": t(lambda: self.head.logits(self.head.embed(self.tokens[:n]) + x)),
            "lm_head_ms": t(lambda: torch.nn.functional.linear(x, self.head.weight)),
        }
        return point, layer_rows

    def best_attention(self, modules, fn, cfg, row=None):
        """Times `fn` with each attention kernel (one, where MSA's sparse path, MLA, linear attention or the
        CPU leaves no choice), keeps the faster in every module's attention, and returns (ms, kernel)."""
        attns = [m.attn for m in modules]
        choices = attns[0].choices(cfg) if self.timer.cuda else ["triton"]
        timed = {}
        for impl in choices:
            for a in attns:
                a.impl = impl
            timed[impl] = self.timer(fn)
            if row is not None:
                row[f"attention_{impl}_ms"] = timed[impl]
        best = min(timed, key=timed.get)
        for a in attns:
            a.impl = best
        return timed[best], best

    @staticmethod
    def run_layers(layers, x, cfg):
        for layer in layers:
            x = layer.forward(x, cfg)
        return x

    def draft_forward(self, key, batch, context):
        d = self.drafters[key]
        cfg = Config(batch, 1, context)
        aux = self.aux[:batch, : d.aux_width]
        self.route(cfg, d.layers)
        run = lambda: d.forward(aux, self.tokens[:batch], cfg)  # noqa: E731
        if not d.layers:
            return self.best_attention([d], run, cfg)[0]
        # An MTP head's MoE layer: both expert kernels, the faster kept, as for the target's layers.
        timed = {}
        for name in self.impls:
            d.layers[0].experts_impl = moe.IMPLEMENTATIONS[name]
            timed[name] = self.best_attention([d], run, cfg)[0]
        d.layers[0].experts_impl = moe.IMPLEMENTATIONS[min(timed, key=timed.get)]
        return min(timed.values())


def main(argv=None):
    args = parse_args(argv)
    try:
        shape = shapes.model_shape(shapes.find(shapes.read_rows(args.models_csv), args.model, "model"))
        drafter_rows = [r for r in shapes.read_rows(args.drafters_csv) if r.get("target") == shape.key]
        if args.drafter:
            drafters = [shapes.drafter_shape(shapes.find(drafter_rows, name, f"{shape.key} drafter"), shape)
                        for name in args.drafter]
        else:
            drafters = []
            for row in drafter_rows:
                try:
                    drafters.append(shapes.drafter_shape(row, shape))
                except shapes.ProfileError as e:
                    print(f"note: skipping drafter {row['key']}: {e}", file=sys.stderr)
        batches = shapes.parse_list(args.batches, "--batches")
        widths = shapes.parse_list(args.widths, "--widths")
        contexts = shapes.parse_list(args.contexts, "--contexts")
    except (shapes.ProfileError, OSError) as e:
        sys.exit(f"measure: {e}")
    device = torch.device(args.device)
    hardware = hardware_key(args, device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = {d.key: out / f"{hardware}-{d.key}.csv" for d in drafters} or {None: out / f"{hardware}-{shape.key}.csv"}
    layers_path = out / f"{hardware}-{shape.key}-layers.csv"
    for path in [*names.values(), layers_path]:
        if path.exists() and not args.force:
            sys.exit(f"measure: {path} exists; pass --force to overwrite it")
    impls = ["loop", "grouped"] if args.moe == "auto" and device.type == "cuda" else [
        "loop" if args.moe == "auto" else args.moe]

    torch.manual_seed(0)
    started = time.time()
    bench = Bench(shape, drafters, batches, widths, contexts, args.layers_per_type, impls, device, args.routing_seed)
    env = environment(device)
    if device.type == "cuda":
        copy, matmul = ceilings(device, bench.timer)
        env.append(f"ceilings measured before the grid: device copy {copy:.2f} TB/s (read + write), "
                   f"bf16 matmul 8192^3 {matmul:.0f} TFLOP/s")
    header = env + [
        f"model: {shape.key}: {shape.describe()}",
        f"built: {args.layers_per_type} layer(s) of each type at full width, random bf16 weights; step = "
        "sum over layer types of count x per-layer time + embedding/final norm/LM head/argmax + k x one draft "
        "forward (B tokens); tp 1, no communication; parts scaled by layer count like the step",
        "al = k + 1: every verified token is kept (no rollback); step_ms does not depend on it",
        "routing: uniform random top-k per token (no expert skew), redrawn per point until it touches the expected "
        "number of distinct experts (rounded); experts_touched = distinct experts per MoE layer",
    ]
    points, layer_rows, draft = [], [], {}
    for context in contexts:
        for batch in batches:
            for d in drafters:
                draft[(d.key, batch, context)] = bench.draft_forward(d.key, batch, context)
            for width in widths:
                point, rows = bench.point(Config(batch, width, context))
                points.append(point)
                layer_rows += rows
                print(f"[{time.time() - started:6.1f} s] context {context:6d} B {batch:4d} w {width}: verify "
                      f"{step_row(shape, hardware, None, point, 0.0)['verify_ms']:9.3f} ms", flush=True)
        # Written after every context, so a run stopped part-way keeps what it measured.
        for key, path in names.items():
            d_line = [f"drafter: {next(d.describe() for d in drafters if d.key == key)}"] if key else []
            rows = [step_row(shape, hardware, key, p, draft.get((key, p["batch"], p["context"]), 0.0))
                    for p in points]
            write_csv(path, header + d_line, COLUMNS, rows)
        write_csv(layers_path, header + ["per-layer timings of each built layer type (ms, one layer)"],
                  LAYER_COLUMNS, layer_rows)
    print("wrote " + ", ".join(str(p) for p in [*names.values(), layers_path]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Time the expert-parallel token exchange of a MoE layer across N GPUs, for `alsim calibrate`.

    python3 calibration/exchange.py --out calibration/measured

For N = 2, 4, 8 (those this machine has), every MoE model of the profiles (its hidden size, top-k and expert
count) and tokens per GPU 1…512, it times the dispatch of each token to the GPUs holding its experts and the
combine that brings them back (NCCL all-to-all through PyTorch, one process per GPU), and writes
`<gpu>-ep-exchange.csv` (calibration/README.md says what is and is not modelled). NVLink multicast stays off.
"""

import argparse
import dataclasses
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.multiprocessing as mp

from epkit import plan
from epkit.run import DTYPES, worker
from measure import environment, hardware_key
from stepkit import shapes
from stepkit.output import write_csv

PROFILES = Path(__file__).resolve().parent.parent / "profiles"

# NVLink multicast can put a host's shared GPUs out of service: kept off in NCCL, PyTorch's symmetric memory
# and NVSHMEM, whatever the caller's environment says.
NO_MULTICAST = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", help="model profile key or alias (repeatable; default: every MoE model)")
    p.add_argument("--models-csv", default=str(PROFILES / "models.csv"), help="model profiles (alsim's columns)")
    p.add_argument("--gpus", help="numbers of GPUs N (default: 2,4,8 as this machine has them)")
    p.add_argument("--tokens", default="1,2,4,8,16,32,64,128,256,512", help="tokens per GPU")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16", help="element type of the tokens sent")
    p.add_argument("--warmup", type=int, default=10, help="untimed runs of each collective first")
    p.add_argument("--repeats", type=int, default=50, help="timed repeats of each collective (median kept)")
    p.add_argument("--hardware", help="alsim hardware key written in the CSV (default: from the GPU's name)")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda", help="cpu: a test of the harness only")
    p.add_argument("--backend", choices=["nccl", "gloo"], help="default: nccl on cuda, gloo on cpu")
    p.add_argument("--out", default="calibration/measured", help="output folder")
    p.add_argument("--force", action="store_true", help="overwrite an existing output file")
    return p.parse_args(argv)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    args = parse_args(argv)
    try:
        models = plan.moe_shapes(shapes.read_rows(args.models_csv), args.model)
        tokens = shapes.parse_list(args.tokens, "--tokens")
        if args.warmup < 0 or args.repeats < 1:
            raise shapes.ProfileError("--warmup must be ≥ 0 and --repeats ≥ 1")
        if args.device == "cuda":
            available = torch.cuda.device_count()
            gpus = shapes.parse_list(args.gpus, "--gpus") if args.gpus else [n for n in (2, 4, 8) if n <= available]
            if not gpus or max(gpus) > available:
                raise shapes.ProfileError(f"--gpus: this machine has {available} GPU(s); the exchange needs 2 or more")
        else:
            gpus = shapes.parse_list(args.gpus or "2", "--gpus")
        if 1 in gpus:
            raise shapes.ProfileError("--gpus: one GPU exchanges nothing")
        for n in gpus:
            for model in models:
                plan.check_placement(model, n)
    except (shapes.ProfileError, OSError) as e:
        sys.exit(f"exchange: {e}")
    backend = args.backend or ("nccl" if args.device == "cuda" else "gloo")
    device = torch.device(args.device)
    hardware = hardware_key(args, device)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{hardware}-ep-exchange.csv"
    if path.exists() and not args.force:
        sys.exit(f"exchange: {path} exists; pass --force to overwrite it")

    os.environ.update(NO_MULTICAST)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    env = environment(device)
    if device.type == "cuda":
        nccl = torch.cuda.nccl.version()  # a tuple in recent PyTorch, an int (2.18.3 as 21803) before
        nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
        env.append(f"NCCL {nccl}; backend {backend}; "
                   + ", ".join(f"{k}={v}" for k, v in NO_MULTICAST.items()))
    else:
        env.append(f"backend {backend} on the CPU: a test of the harness, not a GPU figure")
    header = plan.header(env, args.warmup, args.repeats)
    job = {"device": args.device, "backend": backend, "hardware": hardware, "dtype": args.dtype,
           "warmup": args.warmup, "repeats": args.repeats, "tokens": tokens,
           "models": [dataclasses.asdict(m) for m in models]}
    rows = []
    started = time.time()
    with tempfile.TemporaryDirectory() as scratch:
        for n in gpus:
            print(f"[{time.time() - started:6.1f} s] {n} {'GPUs' if args.device == 'cuda' else 'ranks'}", flush=True)
            part = Path(scratch) / f"{n}.json"
            os.environ["MASTER_PORT"] = str(free_port())
            mp.spawn(worker, args=(n, job, str(part)), nprocs=n, join=True)
            rows += json.loads(part.read_text(encoding="utf-8"))
            # Written after every N, so a run stopped part-way keeps what it measured.
            write_csv(path, header, plan.COLUMNS, rows)
    print(f"wrote {path} ({len(rows)} rows in {time.time() - started:.1f} s)")


if __name__ == "__main__":
    main()

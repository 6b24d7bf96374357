"""What the exchange harness sends, and the rows it writes (no torch here: testable anywhere).

A MoE layer under expert parallelism over N GPUs holds E / N experts per GPU (expert e on GPU e // (E / N), the
contiguous placement vLLM and SGLang use). Each GPU's tokens pick top-k distinct experts uniformly; a token goes
once to every GPU that holds one of its experts (its own GPU included: that copy stays local), and comes back
from each of them in the combine. Dispatch and combine therefore move the same bytes, in opposite directions.
"""

import random
from dataclasses import dataclass

from stepkit import shapes

COLUMNS = [
    "hardware", "gpus", "model", "hidden", "top_k", "experts", "tokens_per_gpu", "dtype", "copies_per_token",
    "link_bytes", "max_link_bytes", "counts_ms", "dispatch_ms", "combine_ms", "dispatch_max_ms", "combine_max_ms",
    "repeats",
]
TIMES = ["counts_ms", "dispatch_ms", "combine_ms", "dispatch_max_ms", "combine_max_ms"]

DTYPE_BYTES = {"bf16": 2, "fp32": 4}


@dataclass(frozen=True)
class MoeShape:
    """What the exchange of one model's MoE layer depends on."""

    key: str
    hidden: int
    top_k: int
    experts: int


def moe_shapes(rows, names=None):
    """The MoE models of profile `rows` (those with MoE layers), or the ones `names` lists (key or alias)."""
    chosen = [shapes.find(rows, name, "model") for name in names] if names else rows
    out = []
    for row in chosen:
        if shapes._num(row, "moe_layers", int) == 0:
            if names:
                raise shapes.ProfileError(f"{row['_origin']}: {row['key']} has no MoE layers: nothing to exchange")
            continue
        out.append(MoeShape(row["key"], *(shapes._num(row, c, int, 1) for c in ("hidden", "top_k", "experts"))))
    if not out:
        raise shapes.ProfileError("no MoE model among the profiles")
    return out


def check_placement(model, gpus):
    """Refuses a model whose experts do not split evenly over `gpus`, or whose top-k exceeds its experts."""
    if model.experts % gpus:
        raise shapes.ProfileError(f"{model.key}: {model.experts} experts do not split evenly over {gpus} GPUs")
    if model.top_k > model.experts:
        raise shapes.ProfileError(f"{model.key}: top_k {model.top_k} exceeds its {model.experts} experts")


def route(model, tokens, gpus):
    """counts[s][d]: the tokens GPU s sends GPU d in the dispatch, for `tokens` tokens per GPU.

    Drawn from a seed of the model, the tokens and the GPUs, so every process draws the same routing and knows
    every GPU's counts without exchanging them.
    """
    check_placement(model, gpus)
    per_gpu = model.experts // gpus
    rng = random.Random(f"{model.key}:{tokens}:{gpus}")
    counts = []
    for _ in range(gpus):
        row = [0] * gpus
        for _ in range(tokens):
            for d in {e // per_gpu for e in rng.sample(range(model.experts), model.top_k)}:
                row[d] += 1
        counts.append(row)
    return counts


def link_bytes(counts, hidden, dtype):
    """(mean, max) bytes one GPU moves over its links in one direction of the exchange: the mean of what each
    sends to other GPUs, and the largest of any GPU's sent or received bytes (the slowest GPU's share)."""
    size = hidden * DTYPE_BYTES[dtype]
    n = len(counts)
    sent = [sum(c for d, c in enumerate(row) if d != s) * size for s, row in enumerate(counts)]
    received = [sum(counts[s][d] for s in range(n) if s != d) * size for d in range(n)]
    return sum(sent) / n, max(sent + received)


def row(hardware, model, tokens, dtype, counts, times, repeats):
    """One CSV row (a dict over COLUMNS); `times`: a dict over TIMES."""
    mean, most = link_bytes(counts, model.hidden, dtype)
    return {
        "hardware": hardware,
        "gpus": len(counts),
        "model": model.key,
        "hidden": model.hidden,
        "top_k": model.top_k,
        "experts": model.experts,
        "tokens_per_gpu": tokens,
        "dtype": dtype,
        "copies_per_token": sum(map(sum, counts)) / (len(counts) * tokens),
        "link_bytes": int(round(mean)),
        "max_link_bytes": most,
        **{k: float(times[k]) for k in TIMES},
        "repeats": repeats,
    }


def header(environment, warmup, repeats):
    """The `#` lines after the environment's: what was sent and how it was timed."""
    return environment + [
        "routing: each GPU's tokens pick top_k distinct experts uniformly (seeded per model, tokens and GPUs); "
        "experts placed contiguously, experts / gpus per GPU; one copy per token and destination GPU, its own GPU "
        "included (a local copy)",
        "link_bytes: mean over GPUs of the bytes one GPU sends to the other GPUs in one direction (dispatch and "
        "combine move the same); max_link_bytes: the largest sent or received by any GPU; copies_per_token: "
        "copies per token, local ones included",
        f"timing: {warmup} warm-up runs, then {repeats} repeats of each collective alone, each after a barrier; "
        "CUDA events around the collective on each GPU (wall clock on the CPU), no CUDA graph, no compute "
        "overlapped; dispatch_ms, combine_ms: per repeat the shortest GPU's time (the GPU that left the barrier "
        "last waited for no one), median over repeats; *_max_ms: the longest (adds the GPUs' start skew)",
        "counts_ms: the all-to-all of the per-destination token counts (an engine's dispatch starts with it); "
        "dispatch, combine: the payload all-to-alls (torch.distributed.all_to_all_single)",
    ]

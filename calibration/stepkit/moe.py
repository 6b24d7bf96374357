"""Routed experts over only the experts the tokens touch.

Routing is drawn on the host per configuration (each token picks top_k distinct experts uniformly, weights from a
softmax; redrawn until it touches the expected number of experts), so the graph captured for it loops over exactly
the touched experts — as a serving engine's MoE kernel reads only those experts' weights. The router's own matmul
and top-k still run inside the layer (their cost counts); their result is not used for dispatch, since a CUDA graph
cannot follow data-dependent shapes.

Two implementations, timed against each other per configuration (the faster is used in the layer):
- `loop`: one GEMM pair per touched expert over its slice of the expert-sorted tokens;
- `grouped`: `torch._grouped_mm` over all experts, each group padded to 16 rows (as torchtitan does); faster once
  a few dozen tokens are routed, slower at a handful.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

GROUP_ALIGN = 16


@dataclass
class Routing:
    """One configuration's dispatch: tokens sorted by expert, per-expert segments, and the padded variant."""

    n: int
    touched: int
    token: torch.Tensor  # (n·top_k,) token of each sorted slot
    weight: torch.Tensor  # (n·top_k,) routing weight of each sorted slot
    segments: list  # [(expert, start, end)] over the sorted slots, touched experts only
    pad_token: torch.Tensor  # (P,) as token, groups padded to GROUP_ALIGN (pads point at token 0)
    pad_weight: torch.Tensor  # (P,) zero on pads
    offsets: torch.Tensor  # (experts,) int32 cumulative padded group ends


# Draws tried for a routing that touches the expected number of experts; past them the nearest count drawn is kept.
MAX_DRAWS = 256


def expected_touched(n, experts, top_k):
    """The expected number of distinct experts `n` tokens touch when each picks `top_k` of `experts` uniformly."""
    return experts * (1 - (1 - top_k / experts) ** n)


def route(n, experts, top_k, generator, device, dtype):
    """Draws a uniform top-k routing for `n` tokens (seeded by `generator`) that touches the expected number of
    experts, rounded: redrawn until it does. A serving run's step time averages many steps' routings; one free draw
    per configuration, multiplied by a model's depth from the one or two layers built, moved the measured step
    between neighbouring draft lengths by chance, and the measured best draft length with it (calibration/README.md,
    "Re-measured with the expected expert count")."""
    target = round(expected_touched(n, experts, top_k))
    best = None
    for _ in range(MAX_DRAWS):
        drawn = torch.rand(n, experts, generator=generator).topk(top_k, dim=1).indices  # (n, top_k)
        miss = abs(drawn.unique().numel() - target)
        if best is None or miss < best[0]:
            best = (miss, drawn)
        if miss == 0:
            break
    choice = best[1]
    gate = torch.rand(n, top_k, generator=generator).softmax(dim=1)
    flat = choice.reshape(-1)
    order = torch.argsort(flat, stable=True)
    token = order // top_k
    weight = gate.reshape(-1)[order]
    counts = torch.bincount(flat, minlength=experts).tolist()
    segments, pad_token, pad_weight, offsets = [], [], [], []
    start = 0
    for e, c in enumerate(counts):
        if c:
            segments.append((e, start, start + c))
            padded = -(-c // GROUP_ALIGN) * GROUP_ALIGN
            pad_token += token[start : start + c].tolist() + [0] * (padded - c)
            pad_weight += weight[start : start + c].tolist() + [0.0] * (padded - c)
            start += c
        offsets.append(len(pad_token))
    return Routing(
        n=n,
        touched=len(segments),
        token=token.to(device),
        weight=weight.to(device=device, dtype=dtype),
        segments=segments,
        pad_token=torch.tensor(pad_token, device=device),
        pad_weight=torch.tensor(pad_weight, device=device, dtype=dtype),
        offsets=torch.tensor(offsets, device=device, dtype=torch.int32),
    )


def swiglu(h):
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


def experts_loop(x, w13, w2, routing):
    """x (n, hidden); w13 (E, 2I, hidden); w2 (E, hidden, I). Returns the routed-expert output (n, hidden)."""
    xs = x.index_select(0, routing.token)
    out = torch.empty_like(xs)
    for e, s, t in routing.segments:
        torch.mm(swiglu(F.linear(xs[s:t], w13[e])), w2[e].t(), out=out[s:t])
    out.mul_(routing.weight[:, None])
    return torch.zeros_like(x).index_add_(0, routing.token, out)


def experts_grouped(x, w13, w2, routing):
    """As `experts_loop`, through `torch._grouped_mm` over padded groups."""
    xs = x.index_select(0, routing.pad_token)
    h = torch._grouped_mm(xs, w13.transpose(1, 2), offs=routing.offsets)
    out = torch._grouped_mm(swiglu(h), w2.transpose(1, 2), offs=routing.offsets)
    out.mul_(routing.pad_weight[:, None])
    return torch.zeros_like(x).index_add_(0, routing.pad_token, out)


IMPLEMENTATIONS = {"loop": experts_loop, "grouped": experts_grouped}


def reference(x, w13, w2, routing):
    """Float32 per-slot computation, the check both implementations are held to."""
    out = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    for e, s, t in routing.segments:
        tok = routing.token[s:t]
        h = x[tok].float() @ w13[e].float().t()
        y = swiglu(h) @ w2[e].float().t()
        out.index_add_(0, tok, y * routing.weight[s:t, None].float())
    return out

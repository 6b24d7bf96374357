#!/usr/bin/env python3
"""Checks the harness on this GPU before trusting its timings: the machine's two ceilings; the attention kernel
(GQA, sparse, and latent MLA), the Gated DeltaNet recurrence and both routed-expert implementations against
float32 references on fresh random inputs; an absorbed MLA layer against the same layer computed un-absorbed in
float32; the EAGLE3 draft-to-target token map; the attention and expert kernels against the alternatives; and the
assembled step (pieces timed apart, scaled) against one graph of the whole built stack.

    python3 calibration/check.py [--model minimax-m3 ...] [--models-csv FILE] [--device cuda]
"""

import argparse
import sys

import torch
import torch.nn.functional as F

from measure import PROFILES, Bench
from stepkit import moe, shapes
from stepkit.attention import LATENT_TORCH, attend, attend_latent, attend_latent_torch, attend_reference
from stepkit.linear import gated_delta, gated_delta_reference
from stepkit.stack import DTYPE, Config, Drafter, Head, LatentAttention
from stepkit.timing import Timer, ceilings

FAILED = []


def rel(out, ref):
    err = (out.float() - ref.float()).norm() / ref.float().norm()
    return float("nan") if not torch.isfinite(out.float()).all() else float(err)


def verdict(name, err, limit):
    ok = err <= limit  # NaN fails
    if not ok:
        FAILED.append(name)
    print(f"{'ok  ' if ok else 'FAIL'} {name}: rel. error {err:.2e} (limit {limit:.0e})", flush=True)


def attention_checks(dev):
    gen = torch.Generator(device=dev).manual_seed(1)
    cases = [  # (name, sequences, kv heads, query rows per head, context, sparse)
        ("dense GQA, w=3 x 16 heads", 3, 4, 48, 1000, False),
        ("dense GQA, w=9 x 8 heads", 2, 8, 72, 3000, False),
        ("drafter MHA, one query", 5, 64, 1, 700, False),
        ("sparse per token, 16 heads", 6, 4, 16, 4000, True),
    ]
    for name, seqs, heads, rows, length, sparse in cases:
        d = 128
        k = torch.randn(seqs, heads, length + 200, d, device=dev, dtype=DTYPE, generator=gen)
        v = torch.randn_like(k)
        nb = shapes.blocks(length)
        if sparse:
            w = 3
            q = torch.randn(seqs * w, heads, rows, d, device=dev, dtype=DTYPE, generator=gen)
            table = torch.stack([torch.randperm(nb, device=dev, generator=gen)[:17] for _ in range(seqs * w)])
            table = table.to(torch.int32)
            per = w
        else:
            q = torch.randn(seqs, heads, rows, d, device=dev, dtype=DTYPE, generator=gen)
            table, per = torch.arange(nb, device=dev, dtype=torch.int32)[None, :], 1
        verdict(f"attention {name}", rel(attend(q, k, v, table, length, per),
                                          attend_reference(q, k, v, table, length, per)), 2e-2)


def latent_checks(dev):
    """The MLA kernel against the reference, then a whole absorbed MLA layer (DeepSeek widths) against the same
    weights used un-absorbed in float32: per-head keys W_UK·c and values W_UV·c expanded from the latent."""
    gen = torch.Generator(device=dev).manual_seed(2)
    for seqs, w, heads, length in ((3, 2, 128, 1000), (2, 9, 16, 3000), (5, 1, 128, 700)):
        cache = torch.randn(seqs, 1, length + 200, 576, device=dev, dtype=DTYPE, generator=gen)
        q = torch.randn(seqs, 1, w * heads, 576, device=dev, dtype=DTYPE, generator=gen)
        table = torch.arange(shapes.blocks(length), device=dev, dtype=torch.int32)[None, :]
        ref = attend_reference(q, cache, cache[..., :512], table, length, 1)
        verdict(f"latent attention (MLA), w={w} x {heads} heads", rel(attend_latent(q, cache, length, table, 64), ref),
                2e-2)
        for impl in LATENT_TORCH:
            verdict(f"latent attention (MLA) through {impl}, w={w} x {heads} heads",
                    rel(attend_latent_torch(q, cache, length, 64, impl), ref), 2e-2)
    shape = shapes.model_shape(shapes.find(shapes.read_rows(PROFILES / "models.csv"), "dsr1", "model"))
    b, w, context = 2, 3, 500
    cfg = Config(b, w, context)
    attn = LatentAttention(shape, (b, shapes.blocks(context + w) * shapes.PAGE), dev, b * w)
    for weight in (attn.wq_a, attn.wq_b, attn.wkv_a, attn.w_uk, attn.w_uv, attn.wo):
        weight.normal_(0, weight.shape[-1] ** -0.5)  # unit-scale activations: a relative error that means something
    h = torch.randn(b * w, shape.hidden, device=dev, dtype=DTYPE, generator=gen)
    outs = {}
    for impl in attn.choices(cfg):  # the forward writes the same latents each time
        attn.impl = impl
        outs[impl] = attn.forward(h, cfg)
    f = lambda t: t.float()  # noqa: E731
    n, heads, lat, nope = b * w, attn.heads, shapes.MLA_LATENT, shapes.MLA_NOPE
    q = F.linear(F.rms_norm(h.float() @ f(attn.wq_a).t(), (shapes.MLA_Q_LORA,)), f(attn.wq_b)).view(n, heads, -1)
    kv = h.float() @ f(attn.wkv_a).t()
    cache = f(attn.cache[:b, 0, : cfg.seq_len]).clone()  # (b, L, 576): the forward wrote the new latents
    cache[:, context:] = torch.cat([F.rms_norm(kv[:, :lat], (lat,)), kv[:, lat:]], 1).view(b, w, -1)
    keys = torch.einsum("blc,hdc->bhld", cache[..., :lat], f(attn.w_uk))  # (b, heads, L, nope)
    values = torch.einsum("blc,hcv->bhlv", cache[..., :lat], f(attn.w_uv))
    qb = q.view(b, w, heads, -1).transpose(1, 2)  # (b, heads, w, nope + rope)
    scores = (torch.einsum("bhwd,bhld->bhwl", qb[..., :nope], keys)
              + torch.einsum("bhwr,blr->bhwl", qb[..., nope:], cache[..., lat:])) / (lat + shapes.MLA_ROPE) ** 0.5
    o = torch.einsum("bhwl,bhlv->bwhv", scores.softmax(-1), values).reshape(n, -1)
    for impl, out in outs.items():
        verdict(f"MLA layer absorbed (bf16, {impl}) vs un-absorbed (float32), DeepSeek-R1 widths",
                rel(out, o @ f(attn.wo).t()), 3e-2)


def linear_checks(dev):
    """The Gated DeltaNet kernel against the float32 recurrence: outputs and the state it leaves."""
    gen = torch.Generator(device=dev).manual_seed(3)
    for b, w, hk, hv in ((3, 1, 16, 64), (2, 9, 16, 64), (5, 4, 4, 8)):
        qk = torch.randn(b, w, 2, hk, 128, device=dev, dtype=DTYPE, generator=gen)
        v = torch.randn(b, w, hv, 128, device=dev, dtype=DTYPE, generator=gen)
        ab = torch.randn(b, w, 2, hv, device=dev, generator=gen)
        g, beta = -F.softplus(ab[:, :, 0]), ab[:, :, 1].sigmoid()
        state = torch.randn(b + 1, hv, 128, 128, device=dev, generator=gen)
        ref_state = state.clone()
        out = gated_delta(qk[:, :, 0], qk[:, :, 1], v, g, beta, state)
        ref = gated_delta_reference(qk[:, :, 0], qk[:, :, 1], v, g, beta, ref_state)
        verdict(f"Gated DeltaNet w={w}, {hk}/{hv} heads: output", rel(out, ref), 2e-2)
        verdict(f"Gated DeltaNet w={w}, {hk}/{hv} heads: state", rel(state, ref_state), 1e-4)


def draft_map_check(dev):
    """EAGLE3's d2t: the drafter's argmax over its draft vocabulary, shifted into the target's vocabulary."""
    row = shapes.find(shapes.read_rows(PROFILES / "drafters.csv"), "qwen3-235b-a22b-eagle3", "drafter")
    target = shapes.model_shape(shapes.find(shapes.read_rows(PROFILES / "models.csv"), "qwen3-235b-a22b", "model"))
    shape = shapes.drafter_shape(row, target)
    b = 64
    d = Drafter(shape, Head(target.hidden, target.vocab, dev), (b, 2 * shapes.PAGE), dev, b)
    draft_ids = torch.randint(0, shape.vocab, (b,), device=dev)
    d2t = d.d2t.tolist()
    expected = [i + d2t[i] for i in draft_ids.tolist()]
    mapped = d.to_target(draft_ids).tolist()
    wrong = sum(m != e or not 0 <= m < target.vocab for m, e in zip(mapped, expected))
    verdict(f"EAGLE3 d2t map ({d.head.weight.shape[0]} -> {target.vocab} ids), ids wrong of {b}", wrong, 0)


def moe_checks(dev, impls):
    h, inter, experts = 512, 256, 16
    w13 = torch.randn(experts, 2 * inter, h, device=dev, dtype=DTYPE) * 0.05
    w2 = torch.randn(experts, h, inter, device=dev, dtype=DTYPE) * 0.05
    for n in (1, 7, 64, 300):
        x = torch.randn(n, h, device=dev, dtype=DTYPE)
        routing = moe.route(n, experts, 4, torch.Generator().manual_seed(n), dev, DTYPE)
        ref = moe.reference(x, w13, w2, routing)
        for name in impls:
            verdict(f"experts {name}, {n} tokens", rel(moe.IMPLEMENTATIONS[name](x, w13, w2, routing), ref), 2e-2)


def alternatives(dev, timer, impls):
    """Our kernels against what PyTorch offers, at MiniMax-M3 widths (context 8192)."""
    b, heads, g, length, d = 32, 4, 16, 8192, 128
    k = torch.randn(b, heads, length + 256, d, device=dev, dtype=DTYPE)
    v = torch.randn_like(k)
    table = torch.arange(shapes.blocks(length), device=dev, dtype=torch.int32)[None, :]
    kv_bytes = 2 * b * heads * length * d * 2
    for w in (1, 2, 4, 9):
        q = torch.randn(b, heads, w * g, d, device=dev, dtype=DTYPE)
        ours = timer(lambda: attend(q, k, v, table, length, 1))
        folded = timer(lambda: F.scaled_dot_product_attention(q, k[:, :, :length], v[:, :, :length]))
        qh = q.view(b, heads, w, g, d).transpose(1, 2).reshape(b, w, heads * g, d).transpose(1, 2)
        gqa = timer(lambda: F.scaled_dot_product_attention(qh, k[:, :, :length], v[:, :, :length], enable_gqa=True))
        print(f"attention B={b} w={w}: triton {ours:.3f} ms ({kv_bytes / ours / 1e9:.2f} TB/s of KV), "
              f"sdpa folded {folded:.3f} ms, sdpa enable_gqa {gqa:.3f} ms")
    h, inter, experts = 6144, 3072, 128
    w13 = torch.randn(experts, 2 * inter, h, device=dev, dtype=DTYPE)
    w2 = torch.randn(experts, h, inter, device=dev, dtype=DTYPE)
    for n in (1, 4, 16, 48, 128, 512, 1152):
        x = torch.randn(n, h, device=dev, dtype=DTYPE)
        routing = moe.route(n, experts, 4, torch.Generator().manual_seed(n), dev, DTYPE)
        gb = routing.touched * 3 * h * inter * 2 / 1e9
        line = ", ".join(f"{name} {(ms := timer(lambda: moe.IMPLEMENTATIONS[name](x, w13, w2, routing))):.3f} ms "
                         f"({gb / ms:.2f} TB/s)" for name in impls)
        print(f"experts {n} tokens ({routing.touched} touched, {gb:.2f} GB): {line}")


def assembled(model, rows, per_type, dev, impls):
    """Pieces timed apart and summed against one graph of the whole built stack."""
    shape = shapes.model_shape(shapes.find(rows, model, "model"))
    bench = Bench(shape, [], [128], [9], [8192], per_type, impls, dev)
    for b, w, ctx in ((1, 1, 8192), (16, 4, 8192), (128, 9, 8192), (8, 2, 1024)):
        cfg = Config(b, w, ctx)
        point, _ = bench.point(cfg)
        n = cfg.tokens
        summed = sum(len(bench.layers[name]) * p["layer_ms"] for name, p in point["types"].items())
        summed += point["head_ms"]

        def whole():
            x = bench.head.embed(bench.tokens[:n])
            for built in bench.layers.values():
                x = bench.run_layers(built, x, cfg)
            bench.head.logits(x)

        one = bench.timer(whole)
        parts = {name: {k: round(v, 3) for k, v in p.items() if k.endswith("_ms")} for name, p in point["types"].items()}
        print(f"{model} built stack B={b} w={w} ctx={ctx}: one graph {one:.3f} ms, assembled {summed:.3f} ms "
              f"({(summed / one - 1) * 100:+.1f}%); per layer {parts}; head {point['head_ms']:.3f}")
    del bench


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", action="append", help="models whose assembled step to check")
    p.add_argument("--models-csv", action="append", default=[str(PROFILES / "models.csv")],
                   help="more model profiles to find --model in (repeatable)")
    p.add_argument("--layers-per-type", type=int, default=2, help="layers built of each type for the assembled step")
    p.add_argument("--device", default="cuda")
    args = p.parse_args()
    dev = torch.device(args.device)
    timer = Timer(dev)
    impls = ["loop", "grouped"] if dev.type == "cuda" else ["loop"]
    if dev.type == "cuda":
        print(torch.cuda.get_device_name(dev), torch.__version__, torch.version.cuda, flush=True)
        copy, matmul = ceilings(dev, timer)
        print(f"ceilings: device copy {copy:.2f} TB/s (read + write), bf16 matmul 8192^3 {matmul:.0f} TFLOP/s")
    attention_checks(dev)
    latent_checks(dev)
    linear_checks(dev)
    draft_map_check(dev)
    moe_checks(dev, impls)
    if dev.type == "cuda":
        alternatives(dev, timer, impls)
        rows = [row for path in args.models_csv for row in shapes.read_rows(path)]
        for model in args.model or []:
            assembled(model, rows, args.layers_per_type, dev, impls)
            torch.cuda.empty_cache()
    print("checks failed: " + ", ".join(FAILED) if FAILED else "all checks passed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()

"""Gated DeltaNet's recurrent step for w tokens per sequence: the linear-attention layers of Qwen3-Next/Qwen3.5.

Per value head the layer keeps a DK × DV float32 state S per sequence. Each token (q, k L2-normalised; g a log
decay; β an update rate) does

    S ← S·exp(g);   v' = β·(v − Sᵀk);   S ← S + k v'ᵀ;   o = Sᵀq / √DK

as the fused recurrent kernels serving engines run (flash-linear-attention's fused_recurrent_gated_delta_rule):
the state is read once, kept on chip over the w tokens and written back once. A key head serves
value_heads / key_heads value heads. `gated_delta` runs the Triton kernel on the GPU (or in Triton's interpreter)
and `gated_delta_reference` the same in plain float32 torch: the CPU path, and the check the kernel is held to.

Layout: q, k (B, w, Hk, DK); v (B, w, Hv, DV); g, beta (B, w, Hv) float32; state (Bc ≥ B, Hv, DK, DV) float32,
updated in place; returns o (B, w, Hv, DV) in v's dtype. Speculative engines also keep each verified token's
state for rollback; this kernel writes only the last (the extra writes are not timed).
"""

import math

import torch

from .attention import INTERPRET, triton

if triton is not None:
    import triton.language as tl

    @triton.jit
    def _recurrent_kernel(
        Q, K, V, G, BETA, S, O,
        sq_b, sq_t, sq_h,
        sv_b, sv_t, sv_h,
        sg_b, sg_t,
        ss_b, ss_h, ss_k,
        so_b, so_t, so_h,
        W, group, scale,
        DK: tl.constexpr, BV: tl.constexpr,
    ):
        b = tl.program_id(0).to(tl.int64)
        hv = tl.program_id(1)
        hk = hv // group
        offs_k = tl.arange(0, DK)
        offs_v = tl.program_id(2) * BV + tl.arange(0, BV)
        state = S + b * ss_b + hv * ss_h + offs_k[:, None] * ss_k + offs_v[None, :]
        s = tl.load(state)
        for t in range(0, W):
            q = tl.load(Q + b * sq_b + t * sq_t + hk * sq_h + offs_k).to(tl.float32)
            k = tl.load(K + b * sq_b + t * sq_t + hk * sq_h + offs_k).to(tl.float32)
            v = tl.load(V + b * sv_b + t * sv_t + hv * sv_h + offs_v).to(tl.float32)
            g = tl.load(G + b * sg_b + t * sg_t + hv)
            beta = tl.load(BETA + b * sg_b + t * sg_t + hv)
            q = q / tl.sqrt(tl.sum(q * q, 0) + 1e-6) * scale
            k = k / tl.sqrt(tl.sum(k * k, 0) + 1e-6)
            s = s * tl.exp(g)
            v = (v - tl.sum(s * k[:, None], 0)) * beta
            s = s + k[:, None] * v[None, :]
            o = tl.sum(s * q[:, None], 0)
            tl.store(O + b * so_b + t * so_t + hv * so_h + offs_v, o.to(O.dtype.element_ty))
        tl.store(state, s)


def gated_delta_reference(q, k, v, g, beta, state):
    """The recurrence in float32 torch (see the module docs); updates `state` in place."""
    b, w, hk, dk = q.shape
    hv = v.shape[2]
    group = hv // hk
    s = state[:b].float()
    def unit(x):
        x = x.float()
        return (x / (x * x).sum(-1, keepdim=True).add(1e-6).sqrt()).repeat_interleave(group, dim=2)

    qf, kf = unit(q) / math.sqrt(dk), unit(k)
    out = torch.empty(v.shape, dtype=torch.float32, device=v.device)
    for t in range(w):
        s = s * g[:, t, :, None, None].float().exp()
        vt = (v[:, t].float() - torch.einsum("bhkv,bhk->bhv", s, kf[:, t])) * beta[:, t, :, None].float()
        s = s + kf[:, t, :, :, None] * vt[:, :, None, :]
        out[:, t] = torch.einsum("bhkv,bhk->bhv", s, qf[:, t])
    state[:b] = s.to(state.dtype)
    return out.to(v.dtype)


def gated_delta(q, k, v, g, beta, state):
    """The fused recurrent kernel (module docs); the reference without Triton or off the GPU."""
    if triton is None or not (q.is_cuda or INTERPRET):
        return gated_delta_reference(q, k, v, g, beta, state)
    b, w, hk, dk = q.shape
    hv, dv = v.shape[2], v.shape[3]
    assert k.stride() == q.stride() and beta.stride() == g.stride()
    out = torch.empty_like(v)
    bv = 32
    _recurrent_kernel[(b, hv, dv // bv)](
        q, k, v, g, beta, state, out,
        q.stride(0), q.stride(1), q.stride(2),
        v.stride(0), v.stride(1), v.stride(2),
        g.stride(0), g.stride(1),
        state.stride(0), state.stride(1), state.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        w, hv // hk, 1.0 / math.sqrt(dk),
        DK=dk, BV=bv, num_warps=4,
    )
    return out

"""Decode/verify attention over a KV cache: w query tokens per sequence, keys read by 128-token blocks.

Why a kernel of our own: on PyTorch 2.11 `scaled_dot_product_attention(..., enable_gqa=True)` falls to a slow
kernel once a sequence has more than one query (20-25x at q = 2), and expanding KV heads copies the cache. Serving
engines use split-KV flash-decoding kernels that pack a KV head's query heads (and, for verify, its w tokens) into
one tile and read each key block once; `attend` is such a kernel in Triton. `attend_reference` computes the same in
plain torch (the CPU path, and the check the GPU kernel is held to).

Layout: q (R, H, M, D) — R query groups, H KV heads, M query rows per head (w·group for dense attention, group
for one token of sparse attention); K/V caches (Bc, H, Lmax, D); table (R or 1, nb) int32 block ids; row r reads
cache sequence r // rows_per_seq. Within the verified window no causal mask is applied: it changes no byte or
FLOP that matters for timing (w ≤ 9 keys of thousands).

Latent attention (MLA, absorbed) is the same kernel with one KV head whose key is wider than its value: q and the
cache are (…, D + rope) wide, scores use all of it, values are the cache's first D columns (the latent), so each
cached latent is read once for both (`attend_latent`).
"""

import math
import os

import torch

from .shapes import PAGE

try:
    import triton
    import triton.language as tl
except ImportError:  # CPU smoke tests run without Triton
    triton = None

SMS_TARGET = 264  # two waves' worth of programs on a 132-SM H200
_STAGES = {}  # pipeline stages that fit, per (value width, rope width)
# TRITON_INTERPRET=1 runs the kernel on the CPU (slowly): how the tests check it without a GPU.
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"


def _loop_bounds_from_one_element_arrays():
    """Triton 3.6's interpreter hands a kernel its int arguments as one-element arrays and makes a loop bound of
    one (`range(0, per_split)`) with `int(array)`, which NumPy 2.4 refuses ("only 0-dimensional arrays can be
    converted to Python scalars", triton-lang/triton#9171). Under the interpreter only, take the element with
    `.item()`, as the fix proposed there does; a compiled kernel never reaches this."""
    from triton.runtime import interpreter

    patch = getattr(interpreter, "_patch_lang_tensor", None)
    if patch is None or getattr(patch, "item_index", False):
        return

    def index(self):
        return self.handle.data.item()

    def patched(tensor, *scope):
        patch(tensor, *scope)
        if scope:  # 3.6 records what it patches in a scope that restores it after the launch
            scope[0].set_attr(tensor, "__index__", index)
        else:
            tensor.__index__ = index

    patched.item_index = True
    interpreter._patch_lang_tensor = patched


def attend_reference(q, k_cache, v_cache, table, seq_len, rows_per_seq):
    """Plain-torch attention with the layout of the module docs (fp32 softmax); v_cache may be narrower than
    q and k_cache (MLA: the values are the latent, the keys add the rope part)."""
    r, h, m, d = q.shape
    tab = table.expand(r, -1).long()
    pos = (tab[:, :, None] * PAGE + torch.arange(PAGE, device=q.device)).reshape(r, -1)
    valid = pos < seq_len
    pos = pos.clamp(max=k_cache.shape[2] - 1)
    seq = torch.arange(r, device=q.device) // rows_per_seq
    kg = k_cache.permute(0, 2, 1, 3)[seq[:, None], pos].permute(0, 2, 1, 3).float()  # (R, H, P, D)
    vg = v_cache.permute(0, 2, 1, 3)[seq[:, None], pos].permute(0, 2, 1, 3).float()
    s = torch.einsum("rhmd,rhpd->rhmp", q.float(), kg) / math.sqrt(d)
    s = s.masked_fill(~valid[:, None, None, :], float("-inf"))
    return torch.einsum("rhmp,rhpd->rhmd", s.softmax(-1), vg).to(q.dtype)


if triton is not None:
    if INTERPRET:
        _loop_bounds_from_one_element_arrays()

    @triton.jit
    def _split_kernel(
        Q, K, V, T, O, LSE, QR, KR,
        sq_r, sq_h, sq_m,
        sk_b, sk_h, sk_l,
        sv_b, sv_h, sv_l,
        st_r, st_j,
        so_r, so_h, so_s, so_m,
        sl_r, sl_h, sl_s,
        seq_len, n_blocks, per_split, rows_per_seq, M, m_tiles, scale,
        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr, PG: tl.constexpr, DR: tl.constexpr,
    ):
        r = tl.program_id(0)
        h = tl.program_id(1) // m_tiles
        mt = tl.program_id(1) % m_tiles
        s = tl.program_id(2)
        # 64-bit offsets: a drafter's MHA cache at B = 128 and 8k context holds more than 2^31 elements.
        b = (r // rows_per_seq).to(tl.int64)
        h = h.to(tl.int64)
        offs_m = mt * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_d = tl.arange(0, D)
        offs_n = tl.arange(0, BLOCK_N)
        q = tl.load(Q + r.to(tl.int64) * sq_r + h * sq_h + offs_m[:, None] * sq_m + offs_d[None, :],
                    mask=offs_m[:, None] < M, other=0.0)
        # MLA: a rope part of DR columns after the D-wide latent, in scores only (QR, KR point at column D).
        if DR > 0:
            offs_r = tl.arange(0, DR)
            qr = tl.load(QR + r.to(tl.int64) * sq_r + h * sq_h + offs_m[:, None] * sq_m + offs_r[None, :],
                         mask=offs_m[:, None] < M, other=0.0)
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
        acc = tl.zeros([BLOCK_M, D], tl.float32)
        for jj in range(0, per_split):
            j = s * per_split + jj
            # The last split may hold fewer blocks: its extra iterations read nothing (all keys invalid).
            blk = tl.load(T + r * st_r + j * st_j, mask=j < n_blocks, other=0)
            for n0 in tl.static_range(0, PG, BLOCK_N):
                pos = blk * PG + n0 + offs_n
                valid = (pos < seq_len) & (j < n_blocks)
                k = tl.load(K + b * sk_b + h * sk_h + pos[:, None] * sk_l + offs_d[None, :],
                            mask=valid[:, None], other=0.0)
                qk = tl.dot(q, tl.trans(k))
                if DR > 0:
                    kr = tl.load(KR + b * sk_b + h * sk_h + pos[:, None] * sk_l + offs_r[None, :],
                                 mask=valid[:, None], other=0.0)
                    qk += tl.dot(qr, tl.trans(kr))
                qk = qk * scale
                qk = tl.where(valid[None, :], qk, float("-inf"))
                m_new = tl.maximum(m_i, tl.max(qk, 1))
                p = tl.exp(qk - m_new[:, None])
                alpha = tl.exp(m_i - m_new)
                l_i = l_i * alpha + tl.sum(p, 1)
                if DR > 0:
                    v = k  # MLA: the values are the latent the keys were read from
                else:
                    v = tl.load(V + b * sv_b + h * sv_h + pos[:, None] * sv_l + offs_d[None, :],
                                mask=valid[:, None], other=0.0)
                acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
                m_i = m_new
        acc = acc / l_i[:, None]
        tl.store(O + r * so_r + h * so_h + s * so_s + offs_m[:, None] * so_m + offs_d[None, :], acc,
                 mask=offs_m[:, None] < M)
        tl.store(LSE + r * sl_r + h * sl_h + s * sl_s + offs_m, m_i + tl.log(l_i), mask=offs_m < M)


def attend(q, k_cache, v_cache, table, seq_len, rows_per_seq):
    """Split-KV flash-decoding in Triton (see the module docs); falls back to the reference without Triton
    or off the GPU."""
    if triton is None or not (q.is_cuda or INTERPRET):
        return attend_reference(q, k_cache, v_cache, table, seq_len, rows_per_seq)
    return _launch(q, k_cache, v_cache, table, seq_len, rows_per_seq, q.shape[-1], 0)


def attend_latent(q, cache, seq_len, table, rope):
    """Absorbed MLA over a latent cache (Bc, 1, Lmax, D + rope): q (B, 1, M, D + rope) with M = w·heads rows per
    sequence; returns (B, 1, M, D), the attention-weighted latent."""
    d = q.shape[-1] - rope
    if triton is None or not (q.is_cuda or INTERPRET):
        return attend_reference(q, cache, cache[..., :d], table, seq_len, 1)
    return _launch(q, cache, cache, table, seq_len, 1, d, rope)


LATENT_TORCH = ("sdpa", "matmul")


def attend_latent_torch(q, cache, seq_len, rope, impl):
    """The same as `attend_latent` through PyTorch: "sdpa" is `scaled_dot_product_attention` (keys D + rope wide,
    values the latent; no flash kernel takes 576-wide heads, so PyTorch picks its memory-efficient or math one);
    "matmul" writes the scores out and runs both products in cuBLAS (bf16, fp32 accumulation), the way a
    compute-bound verify of w·heads rows per sequence reaches the tensor cores without a custom kernel."""
    d = q.shape[-1] - rope
    keys = cache[: q.shape[0], :, :seq_len]
    if impl == "sdpa":
        return torch.nn.functional.scaled_dot_product_attention(q, keys, keys[..., :d])
    scores = torch.matmul(q, keys.transpose(-1, -2)).mul_(q.shape[-1] ** -0.5)
    return torch.matmul(scores.softmax(-1), keys[..., :d])


def _launch(q, k_cache, v_cache, table, seq_len, rows_per_seq, d, rope):
    r, h, m, _ = q.shape
    n_blocks = table.shape[1]
    wide = d >= 256  # the latent's 512 columns: a narrower key tile and more warps keep the tile in registers
    block_m = min(64, max(16, triton.next_power_of_2(m)))
    m_tiles = triton.cdiv(m, block_m)
    # Split the key blocks so the grid fills the chip; every split gets at least one block.
    want = max(1, SMS_TARGET // (r * h * m_tiles))
    per_split = triton.cdiv(n_blocks, min(want, n_blocks))
    splits = triton.cdiv(n_blocks, per_split)
    out = torch.empty((r, h, splits, m, d), device=q.device, dtype=torch.float32)
    lse = torch.empty((r, h, splits, m), device=q.device, dtype=torch.float32)
    args = (
        q, k_cache, v_cache, table, out, lse, q[..., d:] if rope else q, k_cache[..., d:] if rope else k_cache,
        q.stride(0), q.stride(1), q.stride(2),
        k_cache.stride(0), k_cache.stride(1), k_cache.stride(2),
        v_cache.stride(0), v_cache.stride(1), v_cache.stride(2),
        table.stride(0) if table.shape[0] > 1 else 0, table.stride(1),
        out.stride(0), out.stride(1), out.stride(2), out.stride(3),
        lse.stride(0), lse.stride(1), lse.stride(2),
        seq_len, n_blocks, per_split, rows_per_seq, m, m_tiles, 1.0 / math.sqrt(d + rope),
    )
    grid = (r, h * m_tiles, splits)
    key = (d, rope)
    for stages in (_STAGES.get(key, 2), 1):
        try:
            _split_kernel[grid](*args, BLOCK_M=block_m, BLOCK_N=32 if wide else 64, D=d, PG=PAGE, DR=rope,
                                num_warps=8 if wide else 4, num_stages=stages)
            _STAGES[key] = stages
            break
        except triton.runtime.errors.OutOfResources:
            # The latent's wide tiles may not fit two pipeline stages of shared memory: one stage then.
            if stages == 1:
                raise
    if splits == 1:
        return out[:, :, 0].to(q.dtype)
    weight = torch.softmax(lse, dim=2)  # each split's share of the softmax mass
    return (out * weight[..., None]).sum(2).to(q.dtype)

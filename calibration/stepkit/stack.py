"""A model-shaped stack with random bf16 weights: a few decoder layers of each layer type at full width, the
embedding/final-norm/LM-head, and a drafter (a one-layer EAGLE3-style head or an MTP head) — each piece a
callable the timer captures.

Every piece runs on static buffers sized for the largest batch and context, so one set of weights and caches
serves the whole grid; `Config` selects the batch B, tokens per sequence w and context for one measurement.
Each attention kind (`Attention`: GQA/MHA with optional MSA, `LatentAttention`: MLA, `LinearAttention`: Gated
DeltaNet) offers the same four calls: `forward` (the whole sub-block), `projections` (its weight matmuls alone),
`timed_core` (cache or state traffic and the attention kernel alone, on static inputs) and `choices` (the kernels
to time against each other).
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import moe
from .attention import LATENT_TORCH, attend, attend_latent, attend_latent_torch
from .linear import gated_delta
from .shapes import (GDN_CONV, GDN_HEAD, GDN_KEY_HEADS, INDEX_Q_HEADS, MLA_LATENT, MLA_NOPE, MLA_Q_LORA, MLA_ROPE,
                     MLA_V, PAGE, blocks)

DTYPE = torch.bfloat16
SCALE = 0.02  # weight scale: keeps activations finite through the stack (values do not change timing)


def rand(*shape, device):
    # Never zeros: matrix units run measurably faster on zeros than on random data. In place: no temporary.
    return torch.empty(*shape, device=device, dtype=DTYPE).normal_(0.0, SCALE)


@dataclass
class Config:
    """One grid point: B sequences, w tokens each (w = k + 1), `context` tokens already cached."""

    batch: int
    width: int
    context: int

    @property
    def tokens(self):
        return self.batch * self.width

    @property
    def seq_len(self):
        return self.context + self.width


def randn(*shape, device, dtype=DTYPE):
    return torch.randn(*shape, device=device, dtype=dtype)


class Attention:
    """Attention projections, KV cache (and for sparse layers MSA's indexer and index-key cache); with `gated`, an
    output gate as wide as the queries (the hybrid models' full-attention layers)."""

    def __init__(self, shape, in_dim, q_heads, kv_heads, head_dim, sparse_keys, index_dim, cache, device, n_max,
                 gated=False):
        self.q_heads, self.kv_heads, self.head_dim = q_heads, kv_heads, head_dim
        self.group = q_heads // kv_heads
        self.q_end, self.k_end = q_heads * head_dim, (q_heads + kv_heads) * head_dim
        self.v_end = self.k_end + kv_heads * head_dim
        self.gated = gated
        self.wqkv = rand(self.v_end + (self.q_end if gated else 0), in_dim, device=device)
        self.wo = rand(shape.hidden, q_heads * head_dim, device=device)
        self.k = randn(cache[0], kv_heads, cache[1], head_dim, device=device)
        self.v = torch.randn_like(self.k)
        self.sparse_keys = sparse_keys
        self.impl = "triton"  # dense attention kernel: "triton" (split-KV) or "sdpa" (flash on folded queries)
        if sparse_keys:
            self.widx = rand(INDEX_Q_HEADS * index_dim + index_dim, shape.hidden, device=device)
            self.index = randn(cache[0], cache[1], index_dim, device=device)
            self.index_dim = index_dim
        self.dense_table = torch.arange(blocks(cache[1]), device=device, dtype=torch.int32)[None, :]
        self.static_qkv = randn(n_max, self.v_end, device=device)
        self.static_x = randn(n_max, shape.hidden, device=device) if sparse_keys else None
        self.static_a = randn(n_max, self.q_end, device=device)

    def projections(self, x):
        """The dense matmuls alone: QKV (and gate) and output (the indexer's projection counts with attention)."""
        return F.linear(x, self.wqkv), F.linear(self.static_a[: x.shape[0]], self.wo)

    def sparse(self, cfg):
        """Whether MSA's block selection applies (the context is longer than the key cap)."""
        return bool(self.sparse_keys) and blocks(cfg.seq_len) > -(-self.sparse_keys // PAGE)

    def choices(self, cfg):
        return ["triton"] if self.sparse(cfg) else ["triton", "sdpa"]

    def timed_core(self, cfg):
        n = cfg.tokens
        return self.core(self.static_qkv[:n], None if self.static_x is None else self.static_x[:n], cfg)

    def forward(self, h, cfg):
        qkv = F.linear(h, self.wqkv)
        a = self.core(qkv, h, cfg)
        if self.gated:
            a = a * torch.sigmoid(qkv[:, self.v_end :])
        return F.linear(a, self.wo)

    def core(self, qkv, x, cfg):
        """KV write, (sparse) block selection and attention; returns (tokens, q_heads·head_dim)."""
        b, w, hd, kvh = cfg.batch, cfg.width, self.head_dim, self.kv_heads
        q_end, k_end = self.q_end, self.k_end
        self.k[:b, :, cfg.context : cfg.seq_len] = qkv[:, q_end:k_end].view(b, w, kvh, hd).transpose(1, 2)
        self.v[:b, :, cfg.context : cfg.seq_len] = qkv[:, k_end : self.v_end].view(b, w, kvh, hd).transpose(1, 2)
        nb = blocks(cfg.seq_len)
        if self.sparse(cfg):
            select = -(-self.sparse_keys // PAGE)
            # MSA: every query token scores all index keys, max-pools them per 128-key block and attends its own
            # top blocks plus the local one — so sparse reads grow with w, dense reads do not.
            idx = F.linear(x, self.widx)
            iq = idx[:, : INDEX_Q_HEADS * self.index_dim].reshape(b, w * INDEX_Q_HEADS, self.index_dim)
            self.index[:b, cfg.context : cfg.seq_len] = idx[:, INDEX_Q_HEADS * self.index_dim :].view(b, w, -1)
            scores = torch.bmm(iq, self.index[:b, : nb * PAGE].transpose(1, 2))
            best = scores.view(b, w, INDEX_Q_HEADS, nb, PAGE).amax(dim=(2, 4))
            best[:, :, nb - 1] = float("inf")
            table = best.topk(select, dim=-1).indices.to(torch.int32).view(b * w, select)
            q = qkv[:, :q_end].view(b * w, kvh, self.group, hd)
            return attend(q, self.k, self.v, table, cfg.seq_len, w).reshape(b * w, q_end)
        q = qkv[:, :q_end].view(b, w, kvh, self.group, hd).permute(0, 2, 1, 3, 4).reshape(b, kvh, -1, hd)
        if self.impl == "sdpa":
            # The w tokens' query heads folded into one query axis per KV head: a flash kernel, no KV expansion.
            o = F.scaled_dot_product_attention(q, self.k[:b, :, : cfg.seq_len], self.v[:b, :, : cfg.seq_len])
        else:
            o = attend(q, self.k, self.v, self.dense_table[:, :nb], cfg.seq_len, 1)
        return o.reshape(b, kvh, w, self.group, hd).permute(0, 2, 1, 3, 4).reshape(b * w, q_end)


class LatentAttention:
    """DeepSeek's MLA as decode runs it, absorbed: the query's no-rope part is taken into the latent space through
    W_UK, all heads attend over one cached 576-wide latent per token (512 latent + 64 rope key; the values are the
    latent), and W_UV brings each head's result back before the output projection."""

    def __init__(self, shape, cache, device, n_max):
        h, heads = shape.hidden, shape.q_heads
        self.hidden, self.heads = h, heads
        width = MLA_LATENT + MLA_ROPE
        self.wq_a = rand(MLA_Q_LORA, h, device=device)
        self.wq_b = rand(heads * (MLA_NOPE + MLA_ROPE), MLA_Q_LORA, device=device)
        self.wkv_a = rand(width, h, device=device)
        self.w_uk = rand(heads, MLA_NOPE, MLA_LATENT, device=device)
        self.w_uv = rand(heads, MLA_LATENT, MLA_V, device=device)
        self.wo = rand(h, heads * MLA_V, device=device)
        self.norms = (torch.ones(MLA_Q_LORA, device=device, dtype=DTYPE),
                      torch.ones(MLA_LATENT, device=device, dtype=DTYPE))
        self.cache = randn(cache[0], 1, cache[1], width, device=device)
        self.table = torch.arange(blocks(cache[1]), device=device, dtype=torch.int32)[None, :]
        self.impl = "triton"  # "triton" (attend_latent) or one of attend_latent_torch's
        self.static_q = randn(n_max, heads, width, device=device)
        self.static_latent = randn(n_max, width, device=device)
        self.static_nope = randn(heads, n_max, MLA_NOPE, device=device)
        self.static_o = randn(heads, n_max, MLA_LATENT, device=device)
        self.static_a = randn(n_max, heads * MLA_V, device=device)

    def choices(self, cfg):
        return ["triton", *LATENT_TORCH]

    def projections(self, x):
        """Every weight matmul: q down and up, KV down, the two absorbed per-head products, the output."""
        n = x.shape[0]
        F.linear(F.linear(x, self.wq_a), self.wq_b)
        F.linear(x, self.wkv_a)
        torch.bmm(self.static_nope[:, :n], self.w_uk)
        torch.bmm(self.static_o[:, :n], self.w_uv)
        return F.linear(self.static_a[:n], self.wo)

    def timed_core(self, cfg):
        return self.core(self.static_q[: cfg.tokens], self.static_latent[: cfg.tokens], cfg)

    def core(self, q, latent, cfg):
        """Latent write and attention: q (n, heads, 576), latent (n, 576); returns (n, heads, 512)."""
        b, w = cfg.batch, cfg.width
        self.cache[:b, 0, cfg.context : cfg.seq_len] = latent.view(b, w, -1)
        # The w tokens' heads as one query axis over the one latent "head"; keys 576 wide, values the latent.
        q = q.reshape(b, 1, w * self.heads, -1)
        if self.impl in LATENT_TORCH:
            o = attend_latent_torch(q, self.cache, cfg.seq_len, MLA_ROPE, self.impl)
        else:
            o = attend_latent(q, self.cache, cfg.seq_len, self.table[:, : blocks(cfg.seq_len)], MLA_ROPE)
        return o.reshape(b * w, self.heads, MLA_LATENT)

    def forward(self, h, cfg):
        n = h.shape[0]
        q = F.linear(F.rms_norm(F.linear(h, self.wq_a), (MLA_Q_LORA,), self.norms[0]), self.wq_b)
        q = q.view(n, self.heads, MLA_NOPE + MLA_ROPE)
        kv = F.linear(h, self.wkv_a)
        latent = torch.cat([F.rms_norm(kv[:, :MLA_LATENT], (MLA_LATENT,), self.norms[1]), kv[:, MLA_LATENT:]], 1)
        q_latent = torch.bmm(q[..., :MLA_NOPE].transpose(0, 1), self.w_uk).transpose(0, 1)
        o = self.core(torch.cat([q_latent, q[..., MLA_NOPE:]], -1), latent, cfg)
        o = torch.bmm(o.transpose(0, 1), self.w_uv).transpose(0, 1).reshape(n, self.heads * MLA_V)
        return F.linear(o, self.wo)


class LinearAttention:
    """A Gated DeltaNet layer (Qwen3-Next/Qwen3.5): q, k, v and the output gate z in one projection, per-head
    decay and update rates, a causal depthwise conv over q, k, v with a 3-token conv state per sequence, the
    recurrent state update (`linear.gated_delta`), a gated RMS norm and the output projection."""

    def __init__(self, shape, cache, device, n_max):
        h, heads = shape.hidden, shape.gdn_value_heads
        self.heads = heads
        self.key_dim, self.value_dim = GDN_KEY_HEADS * GDN_HEAD, heads * GDN_HEAD
        self.conv_dim = 2 * self.key_dim + self.value_dim
        self.w_qkvz = rand(self.conv_dim + self.value_dim, h, device=device)
        self.w_ba = rand(2 * heads, h, device=device)
        self.conv = rand(self.conv_dim, 1, GDN_CONV, device=device)
        self.a_log = torch.rand(heads, device=device)
        self.dt_bias = torch.rand(heads, device=device)
        self.norm = torch.ones(GDN_HEAD, device=device, dtype=DTYPE)
        self.wo = rand(h, self.value_dim, device=device)
        self.conv_state = randn(cache[0], self.conv_dim, GDN_CONV - 1, device=device)
        self.state = randn(cache[0], heads, GDN_HEAD, GDN_HEAD, device=device, dtype=torch.float32).mul_(0.01)
        self.static_qkv = randn(n_max, self.conv_dim, device=device)
        self.static_ba = randn(n_max, 2 * heads, device=device)
        self.static_a = randn(n_max, self.value_dim, device=device)

    def choices(self, cfg):
        return ["triton"]

    def projections(self, x):
        F.linear(x, self.w_qkvz)
        F.linear(x, self.w_ba)
        return F.linear(self.static_a[: x.shape[0]], self.wo)

    def timed_core(self, cfg):
        return self.core(self.static_qkv[: cfg.tokens], self.static_ba[: cfg.tokens], cfg)

    def core(self, qkv, ba, cfg):
        """Conv (state read and written), decay and update rates, the recurrence; returns (B, w, heads, 128)."""
        b, w, kd = cfg.batch, cfg.width, self.key_dim
        xs = torch.cat([self.conv_state[:b], qkv.view(b, w, -1).transpose(1, 2)], 2)
        self.conv_state[:b] = xs[:, :, -(GDN_CONV - 1) :]
        mixed = F.silu(F.conv1d(xs, self.conv, groups=self.conv_dim)).transpose(1, 2).contiguous()
        q = mixed[..., :kd].view(b, w, GDN_KEY_HEADS, GDN_HEAD)
        k = mixed[..., kd : 2 * kd].view(b, w, GDN_KEY_HEADS, GDN_HEAD)
        v = mixed[..., 2 * kd :].view(b, w, self.heads, GDN_HEAD)
        g = (-self.a_log.exp() * F.softplus(ba[:, : self.heads].float() + self.dt_bias)).view(b, w, self.heads)
        beta = ba[:, self.heads :].float().sigmoid().view(b, w, self.heads)
        return gated_delta(q, k, v, g, beta, self.state)

    def forward(self, h, cfg):
        n = h.shape[0]
        qkvz = F.linear(h, self.w_qkvz)
        o = self.core(qkvz[:, : self.conv_dim], F.linear(h, self.w_ba), cfg)
        z = qkvz[:, self.conv_dim :].view(cfg.batch, cfg.width, self.heads, GDN_HEAD)
        o = F.rms_norm(o, (GDN_HEAD,), self.norm) * F.silu(z)
        return F.linear(o.reshape(n, self.value_dim), self.wo)


def attention_of(shape, kind, cache, device, n_max):
    """The attention module of a target layer of type `kind`."""
    if kind.linear:
        return LinearAttention(shape, cache, device, n_max)
    if shape.mla:
        return LatentAttention(shape, cache, device, n_max)
    return Attention(shape, shape.hidden, shape.q_heads, shape.kv_heads, shape.head_dim,
                     shape.sparse_keys if kind.sparse else 0, shape.index_dim, cache, device, n_max, shape.gated)


class Layer:
    """One decoder layer: norm, attention, norm, dense MLP or (router + shared expert + routed experts)."""

    def __init__(self, shape, kind, cache, device, n_max):
        h = shape.hidden
        self.kind = kind
        self.hidden = h
        self.norms = torch.ones(2, h, device=device, dtype=DTYPE)
        self.attn = attention_of(shape, kind, cache, device, n_max)
        inter = shape.shared_inter if kind.moe else shape.dense_inter
        self.w13 = rand(2 * inter, h, device=device) if inter else None
        self.w2 = rand(h, inter, device=device) if inter else None
        self.static_mid = randn(n_max, inter, device=device) if inter else None
        if kind.moe:
            self.router = rand(shape.experts, h, device=device)
            self.e13 = rand(shape.experts, 2 * shape.moe_inter, h, device=device)
            self.e2 = rand(shape.experts, h, shape.moe_inter, device=device)
            self.top_k = shape.top_k
        self.routing = None
        self.experts_impl = moe.experts_loop

    def mlp(self, x):
        out = torch.zeros_like(x) if self.w13 is None else F.linear(moe.swiglu(F.linear(x, self.w13)), self.w2)
        if self.kind.moe:
            torch.sigmoid(F.linear(x, self.router)).topk(self.top_k, dim=-1)
            out = out + self.experts_impl(x, self.e13, self.e2, self.routing)
        return out

    def forward(self, x, cfg):
        x = x + self.attn.forward(F.rms_norm(x, (self.hidden,), self.norms[0]), cfg)
        return x + self.mlp(F.rms_norm(x, (self.hidden,), self.norms[1]))

    def dense_part(self, x):
        """All dense projections of the layer (attention's, the MLP's or shared expert's, the router's) on
        static inputs: x (n, hidden)."""
        self.attn.projections(x)
        if self.w13 is not None:
            F.linear(x, self.w13)
            F.linear(self.static_mid[: x.shape[0]], self.w2)
        if self.kind.moe:
            F.linear(x, self.router)

    def experts_part(self, x):
        return self.experts_impl(x, self.e13, self.e2, self.routing)


class Head:
    """Embedding lookup (tied to the LM head's matrix: same bytes read per token), final norm, LM head, greedy
    argmax over the vocabulary (what verification compares against the draft)."""

    def __init__(self, hidden, vocab, device):
        self.hidden = hidden
        self.weight = rand(vocab, hidden, device=device)
        self.norm = torch.ones(hidden, device=device, dtype=DTYPE)

    def embed(self, tokens):
        return F.embedding(tokens, self.weight)

    def logits(self, x):
        return F.linear(F.rms_norm(x, (self.hidden,), self.norm), self.weight).argmax(dim=-1)


class Drafter:
    """EAGLE3-style: fc over three target hidden states, [embedding; fc] into one decoder layer, its LM head; with
    a draft vocabulary smaller than the target's, the drafted ids go through EAGLE3's d2t map (target id = draft
    id + d2t[draft id])."""

    def __init__(self, shape, target_head, cache, device, n_max):
        h = shape.hidden
        self.hidden = h
        self.fc = rand(h, 3 * h, device=device)
        self.norms = torch.ones(4, h, device=device, dtype=DTYPE)
        self.attn = Attention(shape, 2 * h, shape.q_heads, shape.kv_heads, shape.head_dim, 0, 0, cache, device,
                              n_max)
        self.w13 = rand(2 * shape.inter, h, device=device)
        self.w2 = rand(h, shape.inter, device=device)
        own = shape.vocab != target_head.weight.shape[0]
        self.head = Head(h, shape.vocab, device) if own else target_head
        self.embedding = target_head  # EAGLE3 embeds with the target's table even with a pruned draft vocabulary
        self.d2t = (torch.randint(0, target_head.weight.shape[0] - shape.vocab, (shape.vocab,), device=device)
                    if shape.vocab < target_head.weight.shape[0] else None)
        self.aux_width = 3 * h  # the fc reads three of the target's hidden states
        self.layers = []  # no MoE layer to route

    def forward(self, aux, tokens, cfg):
        """One draft forward: one token per sequence (cfg.width is 1); returns target token ids."""
        f = F.linear(aux, self.fc)
        e = self.embedding.embed(tokens)
        x = torch.cat([F.rms_norm(e, (self.hidden,), self.norms[0]), F.rms_norm(f, (self.hidden,), self.norms[1])], 1)
        f = f + self.attn.forward(x, cfg)
        f = f + F.linear(moe.swiglu(F.linear(F.rms_norm(f, (self.hidden,), self.norms[2]), self.w13)), self.w2)
        return self.to_target(self.head.logits(f))

    def to_target(self, ids):
        return ids if self.d2t is None else ids + self.d2t[ids]


class MTPDrafter:
    """An MTP head (DeepSeek-V3, Qwen3.5): the drafted token's embedding and the previous hidden state, each
    normed, through eh_proj into one target-shaped full-attention layer with its own KV cache, then the target's
    final norm and LM head. One token per sequence per draft forward, like EAGLE3's chain."""

    def __init__(self, model, shape, target_head, cache, device, n_max):
        h = model.hidden
        self.hidden = h
        self.norms = torch.ones(2, h, device=device, dtype=DTYPE)
        self.eh_proj = rand(h, 2 * h, device=device)
        self.layer = Layer(model, model.full_type(shape.moe), cache, device, n_max)
        self.attn = self.layer.attn
        self.head = target_head
        self.aux_width = h  # the target's last hidden state
        self.layers = [self.layer]

    def forward(self, hidden, tokens, cfg):
        e = F.rms_norm(self.head.embed(tokens), (self.hidden,), self.norms[0])
        x = F.linear(torch.cat([e, F.rms_norm(hidden, (self.hidden,), self.norms[1])], 1), self.eh_proj)
        return self.head.logits(self.layer.forward(x, cfg))


def drafter(model, shape, target_head, cache, device, n_max):
    """The drafter of profile `shape` for target `model`."""
    if shape.mtp:
        return MTPDrafter(model, shape, target_head, cache, device, n_max)
    return Drafter(shape, target_head, cache, device, n_max)

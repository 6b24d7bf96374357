"""A model-shaped stack with random bf16 weights: a few decoder layers of each layer type at full width, the
embedding/final-norm/LM-head, and a one-layer EAGLE3-style drafter — each piece a callable the timer captures.

Every piece runs on static buffers sized for the largest batch and context, so one set of weights and caches
serves the whole grid; `Config` selects the batch B, tokens per sequence w and context for one measurement.
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from . import moe
from .attention import attend
from .shapes import INDEX_Q_HEADS, PAGE, blocks

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


class Attention:
    """Attention projections, KV cache (and for sparse layers MSA's indexer and index-key cache)."""

    def __init__(self, shape, in_dim, q_heads, kv_heads, head_dim, sparse_keys, index_dim, cache, device):
        self.q_heads, self.kv_heads, self.head_dim = q_heads, kv_heads, head_dim
        self.group = q_heads // kv_heads
        self.wqkv = rand((q_heads + 2 * kv_heads) * head_dim, in_dim, device=device)
        self.wo = rand(shape.hidden, q_heads * head_dim, device=device)
        self.k = torch.randn(cache[0], kv_heads, cache[1], head_dim, device=device, dtype=DTYPE)
        self.v = torch.randn_like(self.k)
        self.sparse_keys = sparse_keys
        self.impl = "triton"  # dense attention kernel: "triton" (split-KV) or "sdpa" (flash on folded queries)
        if sparse_keys:
            self.widx = rand(INDEX_Q_HEADS * index_dim + index_dim, shape.hidden, device=device)
            self.index = torch.randn(cache[0], cache[1], index_dim, device=device, dtype=DTYPE)
            self.index_dim = index_dim
        self.dense_table = torch.arange(blocks(cache[1]), device=device, dtype=torch.int32)[None, :]

    def projections(self, x, a):
        """The dense matmuls alone: QKV and output (the indexer's projection counts with attention)."""
        return F.linear(x, self.wqkv), F.linear(a, self.wo)

    def sparse(self, cfg):
        """Whether MSA's block selection applies (the context is longer than the key cap)."""
        return bool(self.sparse_keys) and blocks(cfg.seq_len) > -(-self.sparse_keys // PAGE)

    def core(self, qkv, x, cfg):
        """KV write, (sparse) block selection and attention; returns (tokens, q_heads·head_dim)."""
        b, w, hd, kvh = cfg.batch, cfg.width, self.head_dim, self.kv_heads
        q_end, k_end = self.q_heads * hd, (self.q_heads + kvh) * hd
        self.k[:b, :, cfg.context : cfg.seq_len] = qkv[:, q_end:k_end].view(b, w, kvh, hd).transpose(1, 2)
        self.v[:b, :, cfg.context : cfg.seq_len] = qkv[:, k_end:].view(b, w, kvh, hd).transpose(1, 2)
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


class Layer:
    """One decoder layer: norm, attention, norm, dense MLP or (router + shared expert + routed experts)."""

    def __init__(self, shape, kind, cache, device):
        h = shape.hidden
        self.kind = kind
        self.hidden = h
        self.norms = torch.ones(2, h, device=device, dtype=DTYPE)
        self.attn = Attention(
            shape, h, shape.q_heads, shape.kv_heads, shape.head_dim,
            shape.sparse_keys if kind.sparse else 0, shape.index_dim, cache, device,
        )
        inter = shape.shared_inter if kind.moe else shape.dense_inter
        self.w13 = rand(2 * inter, h, device=device) if inter else None
        self.w2 = rand(h, inter, device=device) if inter else None
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
        h1 = F.rms_norm(x, (self.hidden,), self.norms[0])
        a = self.attn.core(F.linear(h1, self.attn.wqkv), h1, cfg)
        x = x + F.linear(a, self.attn.wo)
        return x + self.mlp(F.rms_norm(x, (self.hidden,), self.norms[1]))

    def dense_part(self, x, a, mid):
        """All dense projections of the layer (attention's, the MLP's or shared expert's, the router's) on
        static inputs: x (n, hidden), a (n, q_heads·head_dim), mid a flat buffer of ≥ n·MLP-width elements."""
        self.attn.projections(x, a)
        if self.w13 is not None:
            F.linear(x, self.w13)
            inter = self.w2.shape[1]
            F.linear(mid[: x.shape[0] * inter].view(-1, inter), self.w2)
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
    """EAGLE3-style: fc over three target hidden states, [embedding; fc] into one decoder layer, its LM head."""

    def __init__(self, shape, target_head, cache, device):
        h = shape.hidden
        self.hidden = h
        self.fc = rand(h, 3 * h, device=device)
        self.norms = torch.ones(4, h, device=device, dtype=DTYPE)
        self.attn = Attention(shape, 2 * h, shape.q_heads, shape.kv_heads, shape.head_dim, 0, 0, cache, device)
        self.w13 = rand(2 * shape.inter, h, device=device)
        self.w2 = rand(h, shape.inter, device=device)
        own = shape.vocab != target_head.weight.shape[0]
        self.head = Head(h, shape.vocab, device) if own else target_head
        self.embedding = target_head  # EAGLE3 embeds with the target's table even with a pruned draft vocabulary

    def forward(self, aux, tokens, cfg):
        """One draft forward: one token per sequence (cfg.width is 1)."""
        f = F.linear(aux, self.fc)
        e = self.embedding.embed(tokens)
        x = torch.cat([F.rms_norm(e, (self.hidden,), self.norms[0]), F.rms_norm(f, (self.hidden,), self.norms[1])], 1)
        a = self.attn.core(F.linear(x, self.attn.wqkv), None, cfg)
        f = f + F.linear(a, self.attn.wo)
        f = f + F.linear(moe.swiglu(F.linear(F.rms_norm(f, (self.hidden,), self.norms[2]), self.w13)), self.w2)
        return self.head.logits(f)

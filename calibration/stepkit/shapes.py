"""Model and drafter shapes derived from alsim profile rows (profiles/models.csv, profiles/drafters.csv).

No torch here: the derivation is testable anywhere. A profile row gives totals (base parameters, one routed
expert's parameters, KV elements per token); the harness needs matrix shapes, so the dense-MLP and shared-expert
widths are derived from what the row leaves over once attention and routers are counted (see `ModelShape`).
"""

import csv
import math
import re
from dataclasses import dataclass, field

# MiniMax Sparse Attention's lightning indexer: 4 index query heads over one 128-wide index key per token.
INDEX_Q_HEADS = 4
# Keys are grouped in blocks of this many tokens (MSA's key blocks; vLLM serves M3 with --block-size 128).
PAGE = 128
# GEMM-friendly rounding of derived widths.
ROUND = 128


class ProfileError(ValueError):
    """A profile row the harness cannot use; the message names the file, key and column."""


def read_rows(path):
    """The data rows of an alsim profile CSV (`#` comment lines skipped) as dicts, with their line numbers."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise ProfileError(f"{path}: no header line")
    reader = csv.reader([line for _, line in lines])
    header = [h.strip().lower() for h in next(reader)]
    rows = []
    for (number, _), cells in zip(lines[1:], reader):
        if len(cells) != len(header):
            raise ProfileError(f"{path}:{number}: {len(cells)} cells, but the header has {len(header)} columns")
        row = {h: c.strip() for h, c in zip(header, cells)}
        row["_origin"] = f"{path}:{number}"
        rows.append(row)
    return rows


def _norm(name):
    return re.sub(r"[^a-z0-9.]", "", name.lower())


def find(rows, name, what):
    """The row whose key or one of whose aliases is `name` (case and punctuation ignored)."""
    want = _norm(name)
    for row in rows:
        names = [row.get("key", "")] + [a for a in row.get("aliases", "").split(";") if a.strip()]
        if any(_norm(n) == want for n in names):
            return row
    known = ", ".join(r.get("key", "?") for r in rows)
    raise ProfileError(f"no {what} profile '{name}'; known: {known}")


def _num(row, column, kind=float, minimum=0):
    text = row.get(column, "")
    try:
        value = kind(text)
    except ValueError:
        raise ProfileError(f"{row['_origin']}: column '{column}': '{text}' is not a number") from None
    if value < minimum:
        raise ProfileError(f"{row['_origin']}: column '{column}': {value} must be ≥ {minimum}")
    return value


def _round(x):
    return max(ROUND, int(round(x / ROUND)) * ROUND)


@dataclass
class LayerType:
    """Layers of one kind: attention dense or sparse (MSA), MLP dense or MoE; `count` of them in the model."""

    sparse: bool
    moe: bool
    count: int

    @property
    def name(self):
        return ("moe" if self.moe else "dense") + ("-sparse" if self.sparse else "")


@dataclass
class ModelShape:
    """The matrix shapes of a target model.

    Dense-MLP and shared-expert widths are not profile columns. What `base_params_b` leaves once attention
    (hidden × (2·q_heads + 2·kv_heads)·head_dim per layer) and routers (hidden × experts per MoE layer) are
    taken out is split so: each MoE layer gets one shared expert the size of a routed expert (MiniMax-M3,
    DeepSeek, GLM, Kimi all have one), the rest is spread over the dense-MLP layers; a model without MoE layers
    puts it all in its MLPs. For MiniMax-M3 this gives the config's widths (shared 3072, dense 12288).
    """

    key: str
    layers: int
    hidden: int
    vocab: int
    q_heads: int
    kv_heads: int
    head_dim: int
    experts: int
    top_k: int
    moe_inter: int
    shared_inter: int
    dense_inter: int
    sparse_keys: int
    index_dim: int
    types: list = field(default_factory=list)

    @property
    def group(self):
        return self.q_heads // self.kv_heads

    def describe(self):
        parts = [
            f"{self.layers} layers ({', '.join(f'{t.count} {t.name}' for t in self.types)})",
            f"hidden {self.hidden}",
            f"vocab {self.vocab}",
            f"attention {self.q_heads}/{self.kv_heads} heads x {self.head_dim}",
        ]
        if self.dense_inter:
            parts.append(f"dense MLP {self.dense_inter}")
        if self.experts:
            parts.append(f"{self.experts} experts top-{self.top_k} x {self.moe_inter}, shared {self.shared_inter}")
        if self.sparse_keys:
            parts.append(f"sparse layers <= {self.sparse_keys} keys, indexer {INDEX_Q_HEADS} x {self.index_dim}")
        return "; ".join(parts)


@dataclass
class DrafterShape:
    """A one-layer EAGLE3-style drafter: fc over three target hidden states, one decoder layer whose QKV reads
    [embedding; fc output] (2·hidden wide), its own LM head or the target's. The MLP width is what `params_b`
    leaves after the fc and attention."""

    key: str
    hidden: int
    q_heads: int
    kv_heads: int
    head_dim: int
    inter: int
    vocab: int

    def describe(self):
        return (
            f"{self.key}: 1 layer, attention {self.q_heads}/{self.kv_heads} heads x {self.head_dim}, "
            f"MLP {self.inter}, LM head {self.vocab} x {self.hidden}"
        )


def model_shape(row):
    """Derives a `ModelShape` from a models.csv row; refuses attention kinds the harness does not build."""
    o = row["_origin"]
    layers = _num(row, "layers", int, 1)
    moe_layers = _num(row, "moe_layers", int)
    hidden = _num(row, "hidden", int, 1)
    q_heads = _num(row, "q_heads", int, 1)
    kv_heads = _num(row, "kv_heads", int, 1)
    head_dim = _num(row, "head_dim", int, 1)
    attn_layers = _num(row, "attn_layers", int)
    kv_elems = _num(row, "kv_elems_per_token_layer", int)
    sparse_layers = _num(row, "sparse_layers", int)
    experts = _num(row, "experts", int)
    top_k = _num(row, "top_k", int)
    if kv_elems != 2 * kv_heads * head_dim:
        raise ProfileError(
            f"{o}: kv_elems_per_token_layer {kv_elems} is not 2 x kv_heads x head_dim: latent (MLA) attention "
            "is not built by this harness (GQA/MHA only)"
        )
    if attn_layers != layers or _num(row, "state_elems_per_seq") > 0:
        raise ProfileError(f"{o}: linear-attention layers are not built by this harness (GQA/MHA only)")
    if q_heads % kv_heads:
        raise ProfileError(f"{o}: q_heads {q_heads} is not a multiple of kv_heads {kv_heads}")
    if moe_layers > layers or sparse_layers > layers:
        raise ProfileError(f"{o}: moe_layers and sparse_layers must not exceed layers")
    if moe_layers and not (experts and top_k):
        raise ProfileError(f"{o}: MoE layers need experts and top_k")
    attn = hidden * (2 * q_heads + 2 * kv_heads) * head_dim
    expert = _num(row, "expert_params_m") * 1e6
    left = _num(row, "base_params_b") * 1e9 - layers * attn - moe_layers * hidden * experts
    dense_layers = layers - moe_layers
    shared = expert if moe_layers and dense_layers else (left / moe_layers if moe_layers else 0.0)
    dense = (left - moe_layers * shared) / dense_layers if dense_layers else 0.0
    if dense_layers and dense <= 0 or moe_layers and shared < 0:
        raise ProfileError(f"{o}: base_params_b leaves nothing for the MLPs once attention is counted")
    index_elems = _num(row, "index_elems_per_token", int)
    counts = {}
    for i in range(layers):
        kind = (i >= layers - sparse_layers, i >= layers - moe_layers)
        counts[kind] = counts.get(kind, 0) + 1
    return ModelShape(
        key=row["key"],
        layers=layers,
        hidden=hidden,
        vocab=_num(row, "vocab", int, 1),
        q_heads=q_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        experts=experts if moe_layers else 0,
        top_k=top_k if moe_layers else 0,
        moe_inter=_round(expert / (3 * hidden)) if moe_layers else 0,
        shared_inter=_round(shared / (3 * hidden)) if shared > 0 else 0,
        dense_inter=_round(dense / (3 * hidden)) if dense_layers else 0,
        sparse_keys=_num(row, "sparse_keys", int) if sparse_layers else 0,
        index_dim=index_elems // sparse_layers if sparse_layers else 0,
        types=[LayerType(sparse, moe, n) for (sparse, moe), n in sorted(counts.items())],
    )


def drafter_shape(row, model):
    """Derives a `DrafterShape` for `model` from a drafters.csv row (EAGLE3-style one-layer drafters only)."""
    o = row["_origin"]
    if row.get("target") != model.key:
        raise ProfileError(f"{o}: drafter {row.get('key')} is for {row.get('target')}, not {model.key}")
    if _num(row, "layers", int) != 1 or _num(row, "moe_layers", int) != 0 or row.get("block", "false") == "true":
        raise ProfileError(f"{o}: only one-layer dense chain drafters (EAGLE3-style) are built by this harness")
    h = _num(row, "hidden", int, 1)
    if h != model.hidden:
        raise ProfileError(f"{o}: hidden {h} differs from the target's {model.hidden}; EAGLE3's fc reads the target's")
    q_heads, kv_heads, head_dim = (_num(row, c, int, 1) for c in ("q_heads", "kv_heads", "head_dim"))
    if q_heads % kv_heads:
        raise ProfileError(f"{o}: q_heads {q_heads} is not a multiple of kv_heads {kv_heads}")
    if _num(row, "kv_elems_per_token", int) != 2 * kv_heads * head_dim:
        raise ProfileError(f"{o}: kv_elems_per_token is not 2 x kv_heads x head_dim for one layer")
    fc = 3 * h * h
    attn = 2 * h * (q_heads + 2 * kv_heads) * head_dim + q_heads * head_dim * h
    mlp = _num(row, "params_b") * 1e9 - fc - attn
    if mlp <= 0:
        raise ProfileError(f"{o}: params_b is smaller than the drafter's fc and attention")
    return DrafterShape(
        key=row["key"],
        hidden=h,
        q_heads=q_heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        inter=_round(mlp / (3 * h)),
        vocab=_num(row, "vocab", int) or model.vocab,
    )


def parse_list(text, what):
    """'1,2,4' or '1-9' or a mix: a sorted list of distinct positive integers."""
    out = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            raise ProfileError(f"{what}: '{part}' is not a number or range")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if lo < 1 or hi < lo:
            raise ProfileError(f"{what}: '{part}' must be positive and ascending")
        out.update(range(lo, hi + 1))
    return sorted(out)


def blocks(tokens):
    """Key blocks holding `tokens` keys."""
    return math.ceil(tokens / PAGE)

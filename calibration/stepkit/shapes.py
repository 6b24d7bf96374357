"""Model and drafter shapes derived from alsim profile rows (profiles/models.csv, profiles/drafters.csv).

No torch here: the derivation is testable anywhere. A profile row gives totals (base parameters, one routed
expert's parameters, KV elements per token); the harness needs matrix shapes, so the dense-MLP and shared-expert
widths are derived from what the row leaves over once attention and routers are counted (see `ModelShape`).

Three attention kinds are built: GQA/MHA (optionally MSA-sparse), latent attention (MLA: a profile whose one KV
"head" is the 576-wide latent, `kv_elems_per_token_layer` = `head_dim`), and hybrid models whose layers beyond
`attn_layers` are Gated DeltaNet linear attention with `state_elems_per_seq` of recurrent state.
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

# MLA's widths that no profile column carries, as DeepSeek-V3/R1 (config.json: q_lora_rank 1536, kv_lora_rank 512,
# qk_rope_head_dim 64, qk_nope_head_dim 128, v_head_dim 128) and Kimi-K2 (the same MLA) have them. The latent
# (512) plus the rope key (64) is the profile's head_dim 576.
MLA_Q_LORA = 1536
MLA_LATENT = 512
MLA_ROPE = 64
MLA_NOPE = 128
MLA_V = 128

# Gated DeltaNet's widths (Qwen3-Next and Qwen3.5: linear_key_head_dim = linear_value_head_dim 128,
# linear_num_key_heads 16, linear_conv_kernel_dim 4; the value heads follow from the profile's state, 64 for
# Qwen3.5-397B-A17B as Megatron-LM's examples/mimo Qwen3.5 language config has it). Their full-attention layers
# carry an output gate as wide as the queries (attention_output_gate).
GDN_HEAD = 128
GDN_KEY_HEADS = 16
GDN_CONV = 4


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
    """Layers of one kind: attention full, sparse (MSA) or linear (Gated DeltaNet), MLP dense or MoE; `count`
    of them in the model."""

    sparse: bool
    moe: bool
    count: int
    linear: bool = False

    @property
    def name(self):
        return ("moe" if self.moe else "dense") + ("-sparse" if self.sparse else "") + ("-linear" if self.linear else "")


@dataclass
class ModelShape:
    """The matrix shapes of a target model.

    Dense-MLP and shared-expert widths are not profile columns. What `base_params_b` leaves once attention
    (hidden × (2·q_heads + 2·kv_heads)·head_dim per layer) and routers (hidden × experts per MoE layer) are
    taken out is split so: each MoE layer gets one shared expert the size of a routed expert (MiniMax-M3,
    DeepSeek, GLM, Kimi all have one), the rest is spread over the dense-MLP layers; a model without MoE layers
    puts it all in its MLPs, one whose every layer is MoE in a shared expert per layer (none where nothing is
    left). For MiniMax-M3 this gives the config's widths (shared 3072, dense 12288), for DeepSeek-R1 too (2048,
    18432). Attention is counted per kind: GQA (with the hybrid models' output gate), MLA (`mla_params`), Gated
    DeltaNet (`gdn_params`).
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
    mla: bool = False
    gdn_value_heads: int = 0

    @property
    def group(self):
        return self.q_heads // self.kv_heads

    @property
    def gated(self):
        """Full-attention layers with an output gate (the hybrid models' gated attention)."""
        return self.gdn_value_heads > 0

    def full_type(self, moe):
        """The type of a full-attention layer with (or without) experts: what an MTP head is built as."""
        return LayerType(False, moe, 1)

    def describe(self):
        parts = [
            f"{self.layers} layers ({', '.join(f'{t.count} {t.name}' for t in self.types)})",
            f"hidden {self.hidden}",
            f"vocab {self.vocab}",
            f"attention {self.q_heads}/{self.kv_heads} heads x {self.head_dim}"
            + (f" (MLA: q_lora {MLA_Q_LORA}, latent {MLA_LATENT} + rope {MLA_ROPE}, absorbed)" if self.mla else "")
            + (" with output gate" if self.gated else ""),
        ]
        if self.gdn_value_heads:
            parts.append(f"Gated DeltaNet {GDN_KEY_HEADS} key / {self.gdn_value_heads} value heads x {GDN_HEAD}, "
                         f"conv {GDN_CONV}, fp32 state")
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
    # An MTP head instead (DeepSeek-V3's num_nextn_predict_layers, Qwen3.5's mtp_num_hidden_layers): the token's
    # embedding and the target's last hidden state, each normed, through eh_proj (2·hidden → hidden) into one
    # target-shaped full-attention layer (its own KV cache; MoE where `moe`), the target's LM head.
    mtp: bool = False
    moe: bool = False
    target_vocab: int = 0

    def describe(self):
        if self.mtp:
            return (f"{self.key}: MTP head, eh_proj {2 * self.hidden} -> {self.hidden} and one target-shaped "
                    f"{'MoE' if self.moe else 'dense'} layer with its own KV cache, the target's LM head")
        d2t = (f" over a draft vocabulary mapped to the target's {self.target_vocab} (d2t)"
               if self.vocab < self.target_vocab else "")
        return (
            f"{self.key}: 1 layer, attention {self.q_heads}/{self.kv_heads} heads x {self.head_dim}, "
            f"MLP {self.inter}, LM head {self.vocab} x {self.hidden}{d2t}"
        )


def mla_params(hidden, q_heads):
    """One MLA layer's weights: q down/up, KV down (latent + rope key), the latent's key/value up-projections
    (absorbed into the query and the output at decode, still read once per step) and the output."""
    return (hidden * MLA_Q_LORA + MLA_Q_LORA * q_heads * (MLA_NOPE + MLA_ROPE) + hidden * (MLA_LATENT + MLA_ROPE)
            + MLA_LATENT * q_heads * (MLA_NOPE + MLA_V) + q_heads * MLA_V * hidden)


def gdn_params(hidden, value_heads):
    """One Gated DeltaNet layer's weights: q, k, v and the output gate z in one projection, the per-head decay
    and update rates (a, b), the output projection (the depthwise conv's few weights are left out)."""
    return hidden * (2 * GDN_KEY_HEADS * GDN_HEAD + 2 * value_heads * GDN_HEAD) + hidden * 2 * value_heads \
        + value_heads * GDN_HEAD * hidden


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
    state = _num(row, "state_elems_per_seq", int)
    mla = kv_heads == 1 and kv_elems == head_dim
    if mla and head_dim != MLA_LATENT + MLA_ROPE:
        raise ProfileError(f"{o}: a latent (MLA) KV of {head_dim} elements; the harness builds DeepSeek's "
                           f"{MLA_LATENT} + {MLA_ROPE}")
    if not mla and kv_elems != 2 * kv_heads * head_dim:
        raise ProfileError(
            f"{o}: kv_elems_per_token_layer {kv_elems} is neither 2 x kv_heads x head_dim (GQA/MHA) nor head_dim "
            "with one KV head (latent attention, MLA)"
        )
    linear_layers = layers - attn_layers
    if linear_layers < 0 or (linear_layers > 0) != (state > 0):
        raise ProfileError(f"{o}: attn_layers {attn_layers} of {layers} and state_elems_per_seq {state} disagree: "
                           "linear-attention layers (the rest) need recurrent state and the other way round")
    per_head_state = GDN_HEAD * GDN_HEAD
    value_heads = state // (linear_layers * per_head_state) if linear_layers else 0
    if linear_layers and (value_heads * linear_layers * per_head_state != state or value_heads % GDN_KEY_HEADS):
        raise ProfileError(f"{o}: state_elems_per_seq {state} is not {linear_layers} Gated DeltaNet layers of "
                           f"value heads ({GDN_KEY_HEADS} key heads, a multiple of them) x {GDN_HEAD} x {GDN_HEAD}")
    if mla and sparse_layers:
        raise ProfileError(f"{o}: latent (MLA) attention with sparse (DSA) layers is not built")
    if linear_layers and (mla or sparse_layers):
        raise ProfileError(f"{o}: linear-attention layers beside MLA or sparse attention are not built")
    if q_heads % kv_heads:
        raise ProfileError(f"{o}: q_heads {q_heads} is not a multiple of kv_heads {kv_heads}")
    if moe_layers > layers or sparse_layers > attn_layers:
        raise ProfileError(f"{o}: moe_layers must not exceed layers, nor sparse_layers attn_layers")
    if moe_layers and not (experts and top_k):
        raise ProfileError(f"{o}: MoE layers need experts and top_k")
    if mla:
        attn = mla_params(hidden, q_heads)
    else:
        attn = hidden * (2 * q_heads + 2 * kv_heads) * head_dim + (hidden * q_heads * head_dim if linear_layers else 0)
    expert = _num(row, "expert_params_m") * 1e6
    left = (_num(row, "base_params_b") * 1e9 - attn_layers * attn - linear_layers * gdn_params(hidden, value_heads)
            - moe_layers * hidden * experts)
    dense_layers = layers - moe_layers
    shared = expert if moe_layers and dense_layers else (left / moe_layers if moe_layers else 0.0)
    if moe_layers and not dense_layers and abs(shared) < 3 * hidden * ROUND / 2:
        shared = 0.0  # nothing left for a shared expert: the model has none (Qwen3-235B-A22B)
    dense = (left - moe_layers * shared) / dense_layers if dense_layers else 0.0
    if dense_layers and dense <= 0 or moe_layers and shared < 0:
        raise ProfileError(f"{o}: base_params_b leaves nothing for the MLPs once attention is counted")
    index_elems = _num(row, "index_elems_per_token", int)
    counts = {}
    for i in range(layers):
        # Which layers are sparse, linear or MoE does not change a step's time, only how many there are.
        kind = (i >= layers - sparse_layers, i >= layers - moe_layers, i < linear_layers)
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
        types=[LayerType(sparse, moe, n, linear) for (sparse, moe, linear), n in sorted(counts.items())],
        mla=mla,
        gdn_value_heads=value_heads,
    )


def drafter_shape(row, model):
    """Derives a `DrafterShape` for `model` from a drafters.csv row: an EAGLE3-style one-layer drafter or an MTP
    head."""
    o = row["_origin"]
    if row.get("target") != model.key:
        raise ProfileError(f"{o}: drafter {row.get('key')} is for {row.get('target')}, not {model.key}")
    if row.get("method") == "mtp":
        return mtp_shape(row, model)
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
        target_vocab=model.vocab,
    )


def mtp_shape(row, model):
    """An MTP head's shape: one layer of the target's own full-attention kind, so the row's attention columns must
    be the target's."""
    o = row["_origin"]
    if _num(row, "layers", int) != 1 or _num(row, "moe_layers", int) > 1 or row.get("block", "false") == "true":
        raise ProfileError(f"{o}: an MTP head of one layer (moe_layers 0 or 1) is built; this row has more")
    dims = tuple(_num(row, c, int, 1) for c in ("hidden", "q_heads", "kv_heads", "head_dim"))
    if dims != (model.hidden, model.q_heads, model.kv_heads, model.head_dim):
        raise ProfileError(f"{o}: hidden, q_heads, kv_heads, head_dim {dims} are not the target's; an MTP head "
                           "is one target-shaped layer")
    moe = _num(row, "moe_layers", int) == 1
    if moe and not model.experts:
        raise ProfileError(f"{o}: an MoE MTP head for {model.key}, which has no experts")
    if _num(row, "vocab", int) not in (0, model.vocab):
        raise ProfileError(f"{o}: an MTP head shares the target's LM head (vocab 0 or {model.vocab})")
    return DrafterShape(key=row["key"], hidden=model.hidden, q_heads=model.q_heads, kv_heads=model.kv_heads,
                        head_dim=model.head_dim, inter=0, vocab=model.vocab, mtp=True, moe=moe,
                        target_vocab=model.vocab)


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

//! A target model's shape, as the cost model needs it (`profiles/models.csv` documents each column).

use serde::Serialize;

use super::Precision;
use crate::error::{Error, Result};
use crate::perf::csv::CsvRow;

/// Expert novelty for a model row that does not state it: chosen on whole-step serving data. On the
/// DeepSeek-R1 MTP-versus-off pairs (`../shared/data/serving/`, `notebooks/serving_defaults.py`) the median
/// speedup error is 4.9 % at 0, 4.2 % at 0.25, 3.7 % at 0.5, 4.2 % at 0.75 and 5.1 % at 1 (independent
/// routing, an isolated layer's E(n)), with the trend over concurrency right in 15, 15, 16, 12 and 11 of 17
/// groups; spec-off steps do not depend on it. A harness routing tokens uniformly at random measures 1 (the
/// H200 kit's `experts_touched`: `alsim calibrate` fits the routing locality to its k = 0 rows and sets the
/// novelty to the same value).
pub const DEFAULT_EXPERT_NOVELTY: f64 = 0.5;

/// Largest routing locality: above 1 tokens avoid each other's experts (load balancing); twice the uniform
/// spread is beyond any router.
pub const MAX_ROUTING_LOCALITY: f64 = 2.0;

/// A target model's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelProfile {
    /// Lookup key (`minimax-m3`).
    pub key: String,
    /// Other accepted names, including the golden curves' model keys.
    pub aliases: Vec<String>,
    /// Display name.
    pub name: String,
    /// Transformer layers (each has two TP all-reduces).
    pub layers: usize,
    /// Layers with routed experts.
    pub moe_layers: usize,
    /// Hidden size.
    pub hidden: usize,
    /// Vocabulary size (LM head = hidden × vocab, BF16).
    pub vocab: usize,
    /// Routed experts per MoE layer (0 for a dense model).
    pub experts: usize,
    /// Experts each token is routed to.
    pub top_k: usize,
    /// Parameters of one routed expert, millions.
    pub expert_params_m: f64,
    /// Share of the expert choices of a sequence's further tokens in one forward (verify and draft-extend
    /// tokens, prefill) that are new — not already made by the sequence's first token. 1 = independent
    /// routing, the uniform E(n) of an isolated MoE layer; whole-step serving data put it near 0.5
    /// ([`DEFAULT_EXPERT_NOVELTY`]).
    pub expert_novelty: f64,
    /// Routing locality λ: the sequences' first tokens wake the experts that λ·S uniformly routed tokens would
    /// (1 = uniform routing; below 1, sequences share experts). Fitted by `alsim calibrate` where step rows at
    /// k = 0 measure `experts_touched`, which then sets the novelty to the same λ (the rows show no more).
    pub routing_locality: f64,
    /// Parameters read once per forward whatever the batch (no routed experts, embeddings or LM head), billions.
    pub base_params_b: f64,
    /// Query heads (must divide by TP).
    pub q_heads: usize,
    /// KV heads (1 for MLA's shared latent).
    pub kv_heads: usize,
    /// Query-key width per head for attention FLOPs.
    pub head_dim: usize,
    /// Layers with a per-token KV cache.
    pub attn_layers: usize,
    /// KV elements per token per attention layer.
    pub kv_elems_per_token_layer: usize,
    /// Attention layers whose keys per query are capped (sparse or sliding-window attention).
    pub sparse_layers: usize,
    /// The cap on keys per query in those layers.
    pub sparse_keys: usize,
    /// Sparse-attention index-key elements per token over all layers.
    pub index_elems_per_token: usize,
    /// Linear-attention recurrent state per sequence (FP32 elements).
    pub state_elems_per_seq: usize,
    /// Precision of the checkpoint the golden curves were measured with.
    pub default_precision: Precision,
    /// Precision the checkpoint keeps its non-expert weights in when experts are quantised below it
    /// (gpt-oss: BF16 attention beside MXFP4 experts); `None` = the weights' precision throughout.
    pub dense_precision: Option<Precision>,
    /// Where the shape comes from.
    pub source: String,
    /// How firmly it is confirmed.
    pub confidence: String,
}

impl ModelProfile {
    /// LM head parameters (hidden × vocab).
    pub fn lm_head_params(&self) -> f64 {
        (self.hidden * self.vocab) as f64
    }

    /// Routed-expert parameters over all MoE layers.
    pub fn expert_params(&self) -> f64 {
        (self.moe_layers * self.experts) as f64 * self.expert_params_m * 1e6
    }

    /// Total parameters including every expert, the embedding and the LM head.
    pub fn total_params(&self) -> f64 {
        self.base_params_b * 1e9 + self.expert_params() + 2.0 * self.lm_head_params()
    }

    /// Parameters a single token activates, excluding embedding and LM head.
    pub fn active_params(&self) -> f64 {
        self.base_params_b * 1e9 + (self.moe_layers * self.top_k) as f64 * self.expert_params_m * 1e6
    }

    /// Bytes per non-expert weight when the experts are stored in `precision`.
    pub fn dense_bytes(&self, precision: Precision) -> f64 {
        self.dense_precision.map_or(precision.bytes(), |d| d.bytes().max(precision.bytes()))
    }

    pub(super) fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let precision = |column: &str| -> Result<Option<Precision>> {
            row.opt_str(column)
                .map(|p| p.parse::<Precision>().map_err(|e: Error| row.error(column, &e.to_string())))
                .transpose()
        };
        let profile = ModelProfile {
            key: row.str("key")?.to_string(),
            aliases: super::aliases(row),
            name: row.str("name")?.to_string(),
            layers: row.count("layers", true)?,
            moe_layers: row.count("moe_layers", false)?,
            hidden: row.count("hidden", true)?,
            vocab: row.count("vocab", true)?,
            experts: row.count("experts", false)?,
            top_k: row.count("top_k", false)?,
            expert_params_m: row.non_negative("expert_params_m", false)?,
            expert_novelty: row.opt_f64("expert_novelty")?.unwrap_or(DEFAULT_EXPERT_NOVELTY),
            routing_locality: row.opt_f64("routing_locality")?.unwrap_or(1.0),
            base_params_b: row.non_negative("base_params_b", true)?,
            q_heads: row.count("q_heads", true)?,
            kv_heads: row.count("kv_heads", true)?,
            head_dim: row.count("head_dim", true)?,
            attn_layers: row.count("attn_layers", false)?,
            kv_elems_per_token_layer: row.count("kv_elems_per_token_layer", false)?,
            sparse_layers: row.count("sparse_layers", false)?,
            sparse_keys: row.count("sparse_keys", false)?,
            index_elems_per_token: row.count("index_elems_per_token", false)?,
            state_elems_per_seq: row.count("state_elems_per_seq", false)?,
            default_precision: precision("default_precision")?
                .ok_or_else(|| row.error("default_precision", "is empty"))?,
            dense_precision: precision("dense_precision")?,
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        };
        let bad = |column: &str, message: String| Err(row.error(column, &message));
        if !(0.0..=1.0).contains(&profile.expert_novelty) {
            return bad("expert_novelty", format!("{} must lie in [0, 1]", profile.expert_novelty));
        }
        if !(profile.routing_locality > 0.0 && profile.routing_locality <= MAX_ROUTING_LOCALITY) {
            return bad(
                "routing_locality",
                format!("{} must lie in (0, {MAX_ROUTING_LOCALITY}]", profile.routing_locality),
            );
        }
        if profile.moe_layers > profile.layers {
            return bad("moe_layers", format!("{} exceeds layers {}", profile.moe_layers, profile.layers));
        }
        if profile.attn_layers > profile.layers {
            return bad("attn_layers", format!("{} exceeds layers {}", profile.attn_layers, profile.layers));
        }
        if profile.sparse_layers > profile.attn_layers {
            return bad(
                "sparse_layers",
                format!("{} exceeds attn_layers {}", profile.sparse_layers, profile.attn_layers),
            );
        }
        if profile.moe_layers > 0 && (profile.experts == 0 || profile.top_k == 0 || profile.top_k > profile.experts) {
            return bad(
                "top_k",
                format!("MoE needs 1 ≤ top_k ≤ experts, got {} of {}", profile.top_k, profile.experts),
            );
        }
        Ok(profile)
    }
}

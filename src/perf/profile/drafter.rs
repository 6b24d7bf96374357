//! A drafter's shape (`profiles/drafters.csv` documents each column): what one draft forward reads and
//! computes — its layers, its own attention over the whole context, and its LM head over the full or a
//! pruned draft vocabulary.

use serde::Serialize;

use crate::error::Result;
use crate::perf::csv::CsvRow;

/// A drafter's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterProfile {
    /// Lookup key.
    pub key: String,
    /// Other accepted names, including the drafter named in golden-file headers.
    pub aliases: Vec<String>,
    /// The target model's profile key.
    pub target: String,
    /// Speculative method (`eagle3`, `mtp`, `dspark`, `draft-model`).
    pub method: String,
    /// One forward drafts all k tokens.
    pub block: bool,
    /// Drafter layers (each has two TP all-reduces).
    pub layers: usize,
    /// Drafter hidden size (its LM head is hidden × vocab).
    pub hidden: usize,
    /// Drafter weights per forward excluding the LM head and routed experts, billions.
    pub params_b: f64,
    /// Target-shaped MoE layers in the drafter (MTP heads), whose routed experts are read like the target's.
    pub moe_layers: usize,
    /// Query heads of the drafter's attention (its math).
    pub q_heads: usize,
    /// KV heads (TP split of its cache).
    pub kv_heads: usize,
    /// Query-key width per head.
    pub head_dim: usize,
    /// KV elements per token over all drafter layers (read over the whole context at every draft step).
    pub kv_elems_per_token: usize,
    /// Vocabulary of its LM head: a pruned draft vocabulary, or 0 for the target's full vocabulary.
    pub vocab: usize,
    /// Where the figures come from.
    pub source: String,
    /// How firmly they are confirmed.
    pub confidence: String,
}

impl DrafterProfile {
    pub(super) fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let block = match row.str("block")?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => true,
            "false" | "no" | "0" => false,
            other => return Err(row.error("block", &format!("'{other}' is not true or false"))),
        };
        let profile = DrafterProfile {
            key: row.str("key")?.to_string(),
            aliases: super::aliases(row),
            target: row.str("target")?.to_string(),
            method: row.str("method")?.to_ascii_lowercase(),
            block,
            layers: row.count("layers", true)?,
            hidden: row.count("hidden", true)?,
            params_b: row.non_negative("params_b", true)?,
            moe_layers: row.count("moe_layers", false)?,
            q_heads: row.count("q_heads", true)?,
            kv_heads: row.count("kv_heads", true)?,
            head_dim: row.count("head_dim", true)?,
            kv_elems_per_token: row.count("kv_elems_per_token", false)?,
            vocab: row.count("vocab", false)?,
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        };
        if profile.moe_layers > profile.layers {
            return Err(row.error("moe_layers", &format!("{} exceeds layers {}", profile.moe_layers, profile.layers)));
        }
        Ok(profile)
    }
}

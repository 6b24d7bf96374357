//! Hardware, target-model and drafter profiles: data files in `profiles/` (embedded in the binary, like the
//! golden curves), each row stating its source and how firmly it is confirmed. A calibrated hardware file
//! written by `alsim calibrate` has the same columns as `profiles/hardware.csv` and replaces the embedded row
//! of the same key.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::Serialize;

use super::csv::{CsvRow, CsvTable};
use crate::curve::registry::normalize;
use crate::error::{Error, Result};

const HARDWARE_CSV: &str = include_str!("../../profiles/hardware.csv");
const MODELS_CSV: &str = include_str!("../../profiles/models.csv");
const DRAFTERS_CSV: &str = include_str!("../../profiles/drafters.csv");

/// Weight precision: bytes per parameter and which peak throughput column applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 16-bit weights.
    Bf16,
    /// 8-bit floating point (block scales negligible).
    Fp8,
    /// MXFP4/NVFP4: 4-bit values plus one 8-bit scale per 32 weights (0.53125 bytes per weight).
    Fp4,
}

impl Precision {
    /// Bytes read per weight.
    pub fn bytes(self) -> f64 {
        match self {
            Precision::Bf16 => 2.0,
            Precision::Fp8 => 1.0,
            Precision::Fp4 => 0.5 + 1.0 / 32.0,
        }
    }

    /// The flag spelling.
    pub fn name(self) -> &'static str {
        match self {
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
            Precision::Fp4 => "fp4",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match normalize(s).as_str() {
            "bf16" | "fp16" | "bfloat16" => Ok(Precision::Bf16),
            "fp8" | "mxfp8" | "e4m3" => Ok(Precision::Fp8),
            "fp4" | "mxfp4" | "nvfp4" | "int4" => Ok(Precision::Fp4),
            _ => Err(Error::invalid("precision", format!("unknown precision '{s}'; expected bf16, fp8 or fp4"))),
        }
    }
}

/// One GPU's peak figures and the efficiencies that turn peaks into step times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HardwareProfile {
    /// Lookup key (`mi355x`).
    pub key: String,
    /// Other accepted names.
    pub aliases: Vec<String>,
    /// Display name.
    pub name: String,
    /// HBM capacity, GB.
    pub hbm_gb: f64,
    /// HBM bandwidth, TB/s.
    pub hbm_tb_s: f64,
    /// Dense BF16 peak, TFLOP/s.
    pub bf16_tflops: f64,
    /// Dense FP8 peak, TFLOP/s.
    pub fp8_tflops: f64,
    /// Dense FP4 peak, TFLOP/s (0 = no native FP4: FP8 rate used).
    pub fp4_tflops: f64,
    /// Per-GPU scale-up bandwidth for all-reduce, GB/s.
    pub link_gb_s: f64,
    /// Latency of one all-reduce, µs.
    pub allreduce_us: f64,
    /// Achieved fraction of HBM bandwidth.
    pub bw_eff: f64,
    /// Achieved fraction of peak FLOP/s.
    pub flops_eff: f64,
    /// Fixed time per target forward, µs.
    pub t_fixed_us: f64,
    /// Fixed time per draft forward (the drafter overhead), µs.
    pub draft_fixed_us: f64,
    /// Where the figures come from.
    pub source: String,
    /// How firmly they are confirmed.
    pub confidence: String,
}

impl HardwareProfile {
    /// Peak FLOP/s for weights of `precision` (FP4 falls back to the FP8 rate where there is no FP4 unit).
    pub fn peak_flops(&self, precision: Precision) -> f64 {
        let tflops = match precision {
            Precision::Bf16 => self.bf16_tflops,
            Precision::Fp8 => self.fp8_tflops,
            Precision::Fp4 if self.fp4_tflops > 0.0 => self.fp4_tflops,
            Precision::Fp4 => self.fp8_tflops,
        };
        tflops * 1e12
    }

    /// Checks that every figure is in range, naming the field.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a non-positive peak or bandwidth, an efficiency outside (0, 1], or a negative time.
    pub fn validate(&self) -> Result<()> {
        let field = |name: &str| format!("hardware {}.{name}", self.key);
        for (name, value) in [
            ("hbm_gb", self.hbm_gb),
            ("hbm_tb_s", self.hbm_tb_s),
            ("bf16_tflops", self.bf16_tflops),
            ("fp8_tflops", self.fp8_tflops),
            ("link_gb_s", self.link_gb_s),
        ] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(Error::invalid(field(name), format!("{value} must be a positive number")));
            }
        }
        for (name, value) in [("bw_eff", self.bw_eff), ("flops_eff", self.flops_eff)] {
            if !(value > 0.0 && value <= 1.0) {
                return Err(Error::invalid(field(name), format!("efficiency {value} must lie in (0, 1]")));
            }
        }
        for (name, value) in [
            ("fp4_tflops", self.fp4_tflops),
            ("allreduce_us", self.allreduce_us),
            ("t_fixed_us", self.t_fixed_us),
            ("draft_fixed_us", self.draft_fixed_us),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(Error::invalid(field(name), format!("{value} must be ≥ 0")));
            }
        }
        Ok(())
    }

    fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let profile = HardwareProfile {
            key: row.str("key")?.to_string(),
            aliases: aliases(row),
            name: row.str("name")?.to_string(),
            hbm_gb: row.non_negative("hbm_gb", true)?,
            hbm_tb_s: row.non_negative("hbm_tb_s", true)?,
            bf16_tflops: row.non_negative("bf16_tflops", true)?,
            fp8_tflops: row.non_negative("fp8_tflops", true)?,
            fp4_tflops: row.non_negative("fp4_tflops", false)?,
            link_gb_s: row.non_negative("link_gb_s", true)?,
            allreduce_us: row.non_negative("allreduce_us", false)?,
            bw_eff: row.non_negative("bw_eff", true)?,
            flops_eff: row.non_negative("flops_eff", true)?,
            t_fixed_us: row.non_negative("t_fixed_us", false)?,
            draft_fixed_us: row.non_negative("draft_fixed_us", false)?,
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        };
        profile.validate().map_err(|e| row.error("bw_eff/flops_eff", &e.to_string()))?;
        Ok(profile)
    }

    /// The CSV header line of hardware files.
    pub const CSV_HEADER: &'static str = "key,aliases,name,hbm_gb,hbm_tb_s,bf16_tflops,fp8_tflops,fp4_tflops,link_gb_s,allreduce_us,bw_eff,flops_eff,t_fixed_us,draft_fixed_us,source,confidence";

    /// This profile as one CSV row under [`HardwareProfile::CSV_HEADER`].
    pub fn csv_row(&self) -> String {
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        format!(
            "{},{},{},{},{},{},{},{},{},{:.4},{:.6},{:.6},{:.3},{:.3},{},{}",
            self.key,
            quote(&self.aliases.join(";")),
            quote(&self.name),
            self.hbm_gb,
            self.hbm_tb_s,
            self.bf16_tflops,
            self.fp8_tflops,
            self.fp4_tflops,
            self.link_gb_s,
            self.allreduce_us,
            self.bw_eff,
            self.flops_eff,
            self.t_fixed_us,
            self.draft_fixed_us,
            quote(&self.source),
            quote(&self.confidence)
        )
    }
}

/// A target model's shape, as the cost model needs it (see `profiles/models.csv` for each column's meaning).
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
    /// Attention layers whose keys per query are capped.
    pub sparse_layers: usize,
    /// The cap on keys per query in those layers.
    pub sparse_keys: usize,
    /// Sparse-attention index-key elements per token over all layers.
    pub index_elems_per_token: usize,
    /// Linear-attention recurrent state per sequence (FP32 elements).
    pub state_elems_per_seq: usize,
    /// Precision of the checkpoint the golden curves were measured with.
    pub default_precision: Precision,
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

    /// Total parameters including every expert, the embedding and the LM head.
    pub fn total_params(&self) -> f64 {
        self.base_params_b * 1e9
            + (self.moe_layers * self.experts) as f64 * self.expert_params_m * 1e6
            + 2.0 * self.lm_head_params()
    }

    /// Parameters a single token activates, excluding embedding and LM head.
    pub fn active_params(&self) -> f64 {
        self.base_params_b * 1e9 + (self.moe_layers * self.top_k) as f64 * self.expert_params_m * 1e6
    }

    fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let profile = ModelProfile {
            key: row.str("key")?.to_string(),
            aliases: aliases(row),
            name: row.str("name")?.to_string(),
            layers: row.count("layers", true)?,
            moe_layers: row.count("moe_layers", false)?,
            hidden: row.count("hidden", true)?,
            vocab: row.count("vocab", true)?,
            experts: row.count("experts", false)?,
            top_k: row.count("top_k", false)?,
            expert_params_m: row.non_negative("expert_params_m", false)?,
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
            default_precision: row
                .str("default_precision")?
                .parse()
                .map_err(|e: Error| row.error("default_precision", &e.to_string()))?,
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        };
        let bad = |column: &str, message: String| Err(row.error(column, &message));
        if profile.moe_layers > profile.layers {
            return bad("moe_layers", format!("{} exceeds layers {}", profile.moe_layers, profile.layers));
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

/// A drafter's per-forward cost (see `profiles/drafters.csv`).
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
    /// Drafter weights per forward excluding the LM head and routed experts, billions.
    pub params_b: f64,
    /// Target-shaped MoE layers in the drafter (MTP heads).
    pub moe_layers: usize,
    /// Own LM head, billions; 0 = shares the target's.
    pub lm_head_params_b: f64,
    /// KV heads of the drafter (TP split of its cache).
    pub kv_heads: usize,
    /// KV elements per token over all drafter layers.
    pub kv_elems_per_token: usize,
    /// Where the figures come from.
    pub source: String,
    /// How firmly they are confirmed.
    pub confidence: String,
}

impl DrafterProfile {
    fn from_row(row: &CsvRow<'_>) -> Result<Self> {
        let block = match row.str("block")?.to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => true,
            "false" | "no" | "0" => false,
            other => return Err(row.error("block", &format!("'{other}' is not true or false"))),
        };
        Ok(DrafterProfile {
            key: row.str("key")?.to_string(),
            aliases: aliases(row),
            target: row.str("target")?.to_string(),
            method: row.str("method")?.to_ascii_lowercase(),
            block,
            layers: row.count("layers", true)?,
            params_b: row.non_negative("params_b", true)?,
            moe_layers: row.count("moe_layers", false)?,
            lm_head_params_b: row.non_negative("lm_head_params_b", false)?,
            kv_heads: row.count("kv_heads", true)?,
            kv_elems_per_token: row.count("kv_elems_per_token", false)?,
            source: row.opt_str("source").unwrap_or_default().to_string(),
            confidence: row.opt_str("confidence").unwrap_or_default().to_string(),
        })
    }
}

fn aliases(row: &CsvRow<'_>) -> Vec<String> {
    row.opt_str("aliases")
        .map(|a| a.split(';').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Every profile alsim knows: the embedded files, optionally overridden by calibrated hardware files.
#[derive(Debug, Clone)]
pub struct Profiles {
    /// Hardware profiles, in file order.
    pub hardware: Vec<HardwareProfile>,
    /// Target-model profiles.
    pub models: Vec<ModelProfile>,
    /// Drafter profiles.
    pub drafters: Vec<DrafterProfile>,
}

impl Profiles {
    /// The profiles compiled into alsim (`profiles/*.csv`).
    pub fn embedded() -> Profiles {
        Profiles {
            hardware: read_hardware(HARDWARE_CSV, "<embedded>/profiles/hardware.csv")
                .expect("embedded hardware profiles are validated by the test suite"),
            models: parse_rows(MODELS_CSV, "<embedded>/profiles/models.csv", ModelProfile::from_row)
                .expect("embedded model profiles are validated by the test suite"),
            drafters: parse_rows(DRAFTERS_CSV, "<embedded>/profiles/drafters.csv", DrafterProfile::from_row)
                .expect("embedded drafter profiles are validated by the test suite"),
        }
    }

    /// Replaces (or adds) hardware rows from a hardware CSV file such as one `alsim calibrate` wrote.
    /// Returns the keys read.
    ///
    /// # Errors
    /// [`Error::Io`] when unreadable; [`Error::Parse`] naming line and column for bad rows.
    pub fn load_hardware_file(&mut self, path: &Path) -> Result<Vec<String>> {
        let text = crate::input::read_text(path, crate::input::SMALL_FILE_LIMIT)?;
        let rows = read_hardware(&text, &path.display().to_string())?;
        if rows.is_empty() {
            return Err(Error::parse(path.display().to_string(), None, "the profile holds no hardware rows"));
        }
        let keys = rows.iter().map(|h| h.key.clone()).collect();
        for row in rows {
            match self.hardware.iter_mut().find(|h| h.key == row.key) {
                Some(existing) => *existing = row,
                None => self.hardware.push(row),
            }
        }
        Ok(keys)
    }

    /// The hardware profile named `name` (key or alias, any case or punctuation).
    ///
    /// # Errors
    /// [`Error::Lookup`] listing the known hardware.
    pub fn hardware(&self, name: &str) -> Result<&HardwareProfile> {
        find(self.hardware.iter(), name, |h| (&h.key, &h.aliases)).ok_or_else(|| {
            Error::Lookup(format!(
                "unknown hardware '{name}'; known: {}",
                self.hardware.iter().map(|h| h.key.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// The model profile named `name`; a golden-curve key such as `kimi-k2.5-nvfp4` finds `kimi-k2.5`.
    ///
    /// # Errors
    /// [`Error::Lookup`] listing the known models.
    pub fn model(&self, name: &str) -> Result<&ModelProfile> {
        find(self.models.iter(), name, |m| (&m.key, &m.aliases)).ok_or_else(|| {
            Error::Lookup(format!(
                "no model profile for '{name}'; known: {}",
                self.models.iter().map(|m| m.key.as_str()).collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// The drafter named `name` for `model`, or — without a name — the model's only drafter of `method`.
    ///
    /// # Errors
    /// [`Error::Lookup`] when none or several match, listing the model's drafters.
    pub fn drafter(&self, model: &ModelProfile, name: Option<&str>, method: Option<&str>) -> Result<&DrafterProfile> {
        let own: Vec<&DrafterProfile> = self.drafters.iter().filter(|d| d.target == model.key).collect();
        let listing = || own.iter().map(|d| format!("{} ({})", d.key, d.method)).collect::<Vec<_>>().join(", ");
        if let Some(name) = name {
            return find(own.iter().copied(), name, |d| (&d.key, &d.aliases)).ok_or_else(|| {
                Error::Lookup(format!("no drafter profile '{name}' for {}; known: {}", model.key, listing()))
            });
        }
        let matching: Vec<&DrafterProfile> =
            own.iter().copied().filter(|d| method.is_none_or(|m| normalize(m) == normalize(&d.method))).collect();
        match matching.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::Lookup(format!("no drafter profile for {}; known: {}", model.key, listing()))),
            _ => Err(Error::Lookup(format!(
                "{} has several drafters ({}); choose one with --drafter or --method",
                model.key,
                listing()
            ))),
        }
    }
}

fn read_hardware(text: &str, origin: &str) -> Result<Vec<HardwareProfile>> {
    parse_rows(text, origin, HardwareProfile::from_row)
}

fn parse_rows<T>(text: &str, origin: &str, parse: fn(&CsvRow<'_>) -> Result<T>) -> Result<Vec<T>> {
    let table = CsvTable::parse(text, origin)?;
    table.require(&["key"])?;
    table.rows().map(|row| parse(&row)).collect()
}

/// Finds an item whose key or alias equals `name` (normalised); failing that, the single item with a name
/// that is a prefix of `name` or that `name` is a prefix of, preferring the longest name.
fn find<'a, T>(
    items: impl Iterator<Item = &'a T> + Clone,
    name: &str,
    names: impl Fn(&T) -> (&String, &Vec<String>),
) -> Option<&'a T> {
    let wanted = normalize(name);
    if wanted.is_empty() {
        return None;
    }
    let all_names = |item: &T| {
        let (key, aliases) = names(item);
        std::iter::once(normalize(key)).chain(aliases.iter().map(|a| normalize(a))).collect::<Vec<_>>()
    };
    if let Some(exact) = items.clone().find(|item| all_names(item).contains(&wanted)) {
        return Some(exact);
    }
    let mut best: Option<(&T, usize)> = None;
    let mut tie = false;
    for item in items {
        let score = all_names(item)
            .iter()
            .filter(|n| wanted.starts_with(n.as_str()) || n.starts_with(&wanted))
            .map(|n| n.len().min(wanted.len()))
            .max();
        if let Some(score) = score {
            match best {
                Some((_, s)) if s == score => tie = true,
                Some((_, s)) if s > score => {}
                _ => {
                    best = Some((item, score));
                    tie = false;
                }
            }
        }
    }
    if tie { None } else { best.map(|(item, _)| item) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_profiles_parse_and_resolve() {
        let p = Profiles::embedded();
        assert_eq!(p.hardware.len(), 7);
        for h in &p.hardware {
            h.validate().unwrap();
        }
        assert_eq!(p.hardware("MI355X").unwrap().key, "mi355x");
        let m3 = p.model("minimax-m3").unwrap();
        // 428B total, ~23B active (minimax_m3_architecture.csv).
        assert!((m3.total_params() / 1e9 - 427.0).abs() < 3.0, "{}", m3.total_params());
        assert!((m3.active_params() / 1e9 - 23.3).abs() < 0.5, "{}", m3.active_params());
        assert_eq!(p.model("kimi-k2.5-nvfp4").unwrap().key, "kimi-k2.5");
        assert_eq!(p.model("glm-5.2-fp8").unwrap().key, "glm-5.2");
        assert_eq!(p.model("qwen3.5-397b-a17b-nvfp4").unwrap().key, "qwen3.5-397b-a17b");
        assert_eq!(p.model("deepseek-v4-pro-0813").unwrap().key, "deepseek-v4-pro");
        let d = p.drafter(m3, Some("Inferact/MiniMax-M3-EAGLE3-GQA"), None).unwrap();
        assert_eq!(d.key, "inferact-minimax-m3-eagle3-gqa");
        let d = p.drafter(m3, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        assert_eq!(d.key, "inferact-minimax-m3-eagle3");
        let glm = p.model("glm-5.2").unwrap();
        assert_eq!(p.drafter(glm, Some("glm-5.2 (built-in MTP head)"), None).unwrap().method, "mtp");
        assert_eq!(p.drafter(glm, None, None).unwrap().key, "glm-5.2-mtp");
        // Published totals the derived shapes must reproduce (±10%).
        for (key, total_b, active_b) in [
            ("deepseek-v4-pro", 1600.0, 49.0),
            ("glm-5.2", 744.0, 40.0),
            ("kimi-k2.5", 1040.0, 32.0),
            ("kimi-k3", 2800.0, 104.0),
            ("qwen3.5-397b-a17b", 397.0, 17.0),
        ] {
            let m = p.model(key).unwrap();
            let total = m.total_params() / 1e9;
            let active = (m.active_params() + 2.0 * m.lm_head_params()) / 1e9;
            assert!((total / total_b - 1.0).abs() < 0.1, "{key} total {total}");
            assert!((active / active_b - 1.0).abs() < 0.1, "{key} active {active}");
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let p = Profiles::embedded();
        let err = p.hardware("tpu-v7").unwrap_err().to_string();
        assert!(err.contains("tpu-v7") && err.contains("mi355x"), "{err}");
        let err = p.model("llama-9").unwrap_err().to_string();
        assert!(err.contains("minimax-m3"), "{err}");
        let m3 = p.model("minimax-m3").unwrap();
        let err = p.drafter(m3, None, None).unwrap_err().to_string();
        assert!(err.contains("several drafters"), "{err}");
        assert!("fp6".parse::<Precision>().is_err());
    }

    #[test]
    fn calibrated_rows_round_trip() {
        let p = Profiles::embedded();
        let mut h = p.hardware("h100").unwrap().clone();
        h.bw_eff = 0.77;
        h.source = "calibrated, \"quoted\"".into();
        let text = format!("{}\n{}\n", HardwareProfile::CSV_HEADER, h.csv_row());
        let back = read_hardware(&text, "x").unwrap();
        assert_eq!(back[0], h);
    }
}

//! The roofline cost model of model.md §6: the time of one decode step for B concurrent requests at draft
//! length k, per GPU under tensor parallelism.
//!
//! One forward over n tokens for S sequences at context L:
//!   T(n) = max(Bytes(n) / (BW · bw_eff), FLOPs(n) / (F · flops_eff)) + T_comm(n) + T_fixed
//! - Bytes: base weights once; routed experts by the expected number touched, E(n) = N_e·(1 − (1 − k_e/N_e)^n)
//!   per MoE layer; the BF16 LM head; each sequence's KV once per forward (sparse layers read at most their
//!   key cap, sparse indexers scan every index key); KV written per token; linear-attention state read and
//!   written per sequence.
//! - FLOPs: 2·(active params + LM head)·n plus attention 4·heads·head_dim per (query, key) pair.
//! - T_comm: two all-reduces per layer under TP, each latency + 2(TP−1)/TP · n · hidden · 2 bytes / link.
//!
//! A speculative step is T_SD = k·T_draft(B) + T_verify(B(k+1)) (one draft forward of B·k tokens for block
//! drafters); spec off is T_AR = T_verify(B). Agentic workloads add each request's prefill of its uncached
//! input, amortised over the steps that request decodes: + B · T_prefill · AL / OSL per step.

use serde::Serialize;

use super::profile::{DrafterProfile, HardwareProfile, ModelProfile, Precision};
use crate::error::{Error, Result};

/// Bytes per element of linear-attention recurrent state (FP32 accumulators).
const STATE_BYTES: f64 = 4.0;
/// Bytes per activation element in TP all-reduces (BF16).
const ACTIVATION_BYTES: f64 = 2.0;
/// LM heads are kept in BF16 by every quantised checkpoint alsim profiles.
const LM_HEAD_BYTES: f64 = 2.0;
/// Fraction of HBM usable for weights and KV (the rest: activations, graphs, fragmentation).
const USABLE_HBM: f64 = 0.9;

/// What the requests look like: a fixed decode context, or turns of input and output with prefill.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Workload {
    /// Pure decode at a fixed context length (tokens already in the KV cache).
    Decode {
        /// Context length in tokens.
        context: f64,
    },
    /// Each request prefills `isl` input tokens (a fraction `prefix_hit` from the prefix cache) and decodes
    /// `osl` output tokens; decode runs at the mean context isl + osl/2.
    Turns {
        /// Input tokens per turn.
        isl: f64,
        /// Output tokens per turn.
        osl: f64,
        /// Fraction of input found in the prefix cache, in [0, 1].
        prefix_hit: f64,
    },
}

impl Workload {
    /// Checks the ranges, naming the flag.
    ///
    /// # Errors
    /// [`Error::Invalid`] for a negative or non-finite length, zero output, or a hit rate outside [0, 1].
    pub fn validate(&self) -> Result<()> {
        match *self {
            Workload::Decode { context } if !(context >= 0.0 && context.is_finite()) => {
                Err(Error::invalid("--context", format!("{context} must be a token count ≥ 0")))
            }
            Workload::Turns { isl, .. } if !(isl >= 0.0 && isl.is_finite()) => {
                Err(Error::invalid("--isl", format!("{isl} must be a token count ≥ 0")))
            }
            Workload::Turns { osl, .. } if !(osl >= 1.0 && osl.is_finite()) => {
                Err(Error::invalid("--osl", format!("{osl} must be at least 1 output token")))
            }
            Workload::Turns { prefix_hit, .. } if !(0.0..=1.0).contains(&prefix_hit) => {
                Err(Error::invalid("--prefix-hit", format!("{prefix_hit} must lie in [0, 1]")))
            }
            _ => Ok(()),
        }
    }

    /// The mean context length during decode.
    pub fn decode_context(&self) -> f64 {
        match *self {
            Workload::Decode { context } => context,
            Workload::Turns { isl, osl, .. } => isl + osl / 2.0,
        }
    }

    /// The longest context a request reaches (what the KV cache must hold).
    pub fn peak_context(&self) -> f64 {
        match *self {
            Workload::Decode { context } => context,
            Workload::Turns { isl, osl, .. } => isl + osl,
        }
    }
}

/// The pieces of one step's time, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepTime {
    /// Effective time per step including amortised prefill.
    pub total: f64,
    /// The target's verification (or plain decode) forward.
    pub verify: f64,
    /// All draft forwards of the step.
    pub draft: f64,
    /// Amortised prefill per step.
    pub prefill: f64,
    /// Whether the verify forward is limited by memory (true) or compute.
    pub memory_bound: bool,
}

/// Which efficiency terms one forward's time depends on, for calibration: time = a·x + b·y + c·fixed + comm,
/// with a = 1/bw_eff, b = 1/flops_eff, c = the fixed time of that forward; x or y is zero depending on the
/// regime.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Terms {
    /// Seconds at full bandwidth (bytes / peak bandwidth), when memory-bound.
    pub x: f64,
    /// Seconds at full compute (FLOPs / peak), when compute-bound.
    pub y: f64,
    /// Number of fixed overheads (target forwards).
    pub target_fixed: f64,
    /// Number of draft forwards.
    pub draft_fixed: f64,
    /// Communication seconds (no free parameter).
    pub comm: f64,
}

impl Terms {
    fn add(&mut self, other: Terms, weight: f64) {
        self.x += weight * other.x;
        self.y += weight * other.y;
        self.target_fixed += weight * other.target_fixed;
        self.draft_fixed += weight * other.draft_fixed;
        self.comm += weight * other.comm;
    }
}

/// Per-forward shape: what a target or drafter forward reads and computes.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    base_params: f64,
    moe_layers: f64,
    experts: f64,
    top_k: f64,
    expert_params: f64,
    lm_head_params: f64,
    kv_dense_per_token: f64,
    kv_sparse_per_token: f64,
    sparse_cap: f64,
    index_per_token: f64,
    kv_write_per_token: f64,
    kv_split: f64,
    state_elems: f64,
    attn_flops_dense: f64,
    attn_flops_sparse: f64,
    layers: f64,
    hidden: f64,
}

impl Shape {
    fn expected_experts(&self, n: f64) -> f64 {
        if self.experts == 0.0 {
            return 0.0;
        }
        self.experts * (1.0 - (1.0 - self.top_k / self.experts).powf(n))
    }
}

/// A deployment: hardware, model, drafter, TP and precisions, with the step-time model bound to them.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    hardware: HardwareProfile,
    model: ModelProfile,
    drafter: Option<DrafterProfile>,
    tp: usize,
    precision: Precision,
    kv_precision: Precision,
    target: Shape,
    draft: Option<Shape>,
}

impl CostModel {
    /// Binds the profiles into a cost model.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `--tp` when TP is 0, does not divide the query heads, or splits the KV heads
    /// unevenly (neither KV heads % TP nor TP % KV heads is 0; when TP exceeds the KV heads they are
    /// replicated, as vLLM and SGLang do); `--kv-dtype` for an FP4 KV cache; and when the weights do not fit
    /// the GPUs' memory.
    pub fn new(
        hardware: &HardwareProfile,
        model: &ModelProfile,
        drafter: Option<&DrafterProfile>,
        tp: usize,
        precision: Precision,
        kv_precision: Precision,
    ) -> Result<CostModel> {
        hardware.validate()?;
        if tp == 0 {
            return Err(Error::invalid("--tp", "tensor parallelism must be at least 1"));
        }
        if !model.q_heads.is_multiple_of(tp) {
            return Err(Error::invalid(
                "--tp",
                format!("{} has {} query heads, which TP {tp} does not divide", model.key, model.q_heads),
            ));
        }
        if kv_precision == Precision::Fp4 {
            return Err(Error::invalid("--kv-dtype", "KV caches are bf16 or fp8"));
        }
        let target_split = kv_split(model.kv_heads, tp, &model.key)?;
        let attn_per_key = 4.0 * (model.q_heads * model.head_dim) as f64;
        let target = Shape {
            base_params: model.base_params_b * 1e9,
            moe_layers: model.moe_layers as f64,
            experts: model.experts as f64,
            top_k: model.top_k as f64,
            expert_params: model.expert_params_m * 1e6,
            lm_head_params: model.lm_head_params(),
            kv_dense_per_token: ((model.attn_layers - model.sparse_layers) * model.kv_elems_per_token_layer) as f64,
            kv_sparse_per_token: (model.sparse_layers * model.kv_elems_per_token_layer) as f64,
            sparse_cap: model.sparse_keys as f64,
            index_per_token: model.index_elems_per_token as f64,
            kv_write_per_token: (model.attn_layers * model.kv_elems_per_token_layer) as f64,
            kv_split: target_split,
            state_elems: model.state_elems_per_seq as f64,
            attn_flops_dense: attn_per_key * (model.attn_layers - model.sparse_layers) as f64,
            attn_flops_sparse: attn_per_key * model.sparse_layers as f64,
            layers: model.layers as f64,
            hidden: model.hidden as f64,
        };
        let draft = match drafter {
            None => None,
            Some(d) if d.target != model.key => {
                return Err(Error::invalid(
                    "--drafter",
                    format!("drafter {} is for {}, not {}", d.key, d.target, model.key),
                ));
            }
            Some(d) => Some(Shape {
                base_params: d.params_b * 1e9,
                moe_layers: d.moe_layers as f64,
                experts: target.experts,
                top_k: target.top_k,
                expert_params: target.expert_params,
                lm_head_params: if d.lm_head_params_b > 0.0 { d.lm_head_params_b * 1e9 } else { target.lm_head_params },
                kv_dense_per_token: d.kv_elems_per_token as f64,
                kv_sparse_per_token: 0.0,
                sparse_cap: 0.0,
                index_per_token: 0.0,
                kv_write_per_token: d.kv_elems_per_token as f64,
                kv_split: kv_split(d.kv_heads, tp, &d.key)?,
                state_elems: 0.0,
                // QK and PV products over each cached element: 2 FLOPs each (exact for MHA drafters).
                attn_flops_dense: 2.0 * d.kv_elems_per_token as f64,
                attn_flops_sparse: 0.0,
                layers: d.layers as f64,
                hidden: target.hidden,
            }),
        };
        let cost = CostModel {
            hardware: hardware.clone(),
            model: model.clone(),
            drafter: drafter.cloned(),
            tp,
            precision,
            kv_precision,
            target,
            draft,
        };
        let weights = cost.weight_bytes_per_gpu();
        let usable = hardware.hbm_gb * 1e9 * USABLE_HBM;
        if weights > usable {
            return Err(Error::invalid(
                "--tp",
                format!(
                    "{} in {precision} needs {:.0} GB of weights per GPU at TP {tp}, more than {:.0}% of the {} GB of a {}; raise --tp or lower --precision",
                    model.key,
                    weights / 1e9,
                    USABLE_HBM * 100.0,
                    hardware.hbm_gb,
                    hardware.name
                ),
            ));
        }
        Ok(cost)
    }

    /// The hardware profile.
    pub fn hardware(&self) -> &HardwareProfile {
        &self.hardware
    }

    /// The hardware profile, for calibration to adjust efficiencies in place.
    pub fn hardware_mut(&mut self) -> &mut HardwareProfile {
        &mut self.hardware
    }

    /// The model profile.
    pub fn model(&self) -> &ModelProfile {
        &self.model
    }

    /// The drafter profile, if any.
    pub fn drafter(&self) -> Option<&DrafterProfile> {
        self.drafter.as_ref()
    }

    /// Tensor parallelism = GPUs per replica.
    pub fn tp(&self) -> usize {
        self.tp
    }

    /// Weight precision.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// KV-cache precision.
    pub fn kv_precision(&self) -> Precision {
        self.kv_precision
    }

    /// Weights held per GPU (target and drafter), bytes.
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        let model = &self.model;
        let mut bytes = (model.total_params() - 2.0 * model.lm_head_params()) * self.precision.bytes()
            + 2.0 * model.lm_head_params() * LM_HEAD_BYTES;
        if let Some(d) = &self.drafter {
            bytes += d.params_b * 1e9 * self.precision.bytes() + d.lm_head_params_b * 1e9 * LM_HEAD_BYTES;
        }
        bytes / self.tp as f64
    }

    /// Whether `batch` requests at the workload's peak context fit in the GPUs' memory beside the weights.
    pub fn kv_fits(&self, batch: usize, workload: &Workload) -> bool {
        let kv_bytes = self.kv_precision.bytes();
        let per_seq_target = workload.peak_context()
            * (self.target.kv_write_per_token / self.target.kv_split + self.target.index_per_token)
            * kv_bytes
            + self.target.state_elems * STATE_BYTES / self.tp as f64;
        let per_seq_draft =
            self.draft.as_ref().map_or(0.0, |d| workload.peak_context() * d.kv_write_per_token / d.kv_split * kv_bytes);
        let needed = self.weight_bytes_per_gpu() + batch as f64 * (per_seq_target + per_seq_draft);
        needed <= self.hardware.hbm_gb * 1e9 * USABLE_HBM
    }

    /// The calibration terms of one forward over `n` tokens for `seqs` sequences at context `context`.
    fn terms(&self, shape: &Shape, n: f64, seqs: f64, context: f64, draft: bool) -> Terms {
        let tp = self.tp as f64;
        let wb = self.precision.bytes();
        let kvb = self.kv_precision.bytes();
        let sparse_keys = context.min(shape.sparse_cap);
        let weight_bytes = (shape.base_params * wb
            + shape.moe_layers * shape.expected_experts(n) * shape.expert_params * wb
            + shape.lm_head_params * LM_HEAD_BYTES)
            / tp;
        let kv_read = seqs
            * kvb
            * ((shape.kv_dense_per_token * context + shape.kv_sparse_per_token * sparse_keys) / shape.kv_split
                + shape.index_per_token * context);
        let kv_write = n * kvb * shape.kv_write_per_token / shape.kv_split;
        let state = seqs * shape.state_elems * STATE_BYTES * 2.0 / tp;
        let bytes = weight_bytes + kv_read + kv_write + state;
        let active = shape.base_params + shape.moe_layers * shape.top_k * shape.expert_params + shape.lm_head_params;
        let flops =
            (2.0 * n * active + n * (shape.attn_flops_dense * context + shape.attn_flops_sparse * sparse_keys)) / tp;
        let memory_s = bytes / (self.hardware.hbm_tb_s * 1e12);
        let compute_s = flops / self.hardware.peak_flops(self.precision);
        let memory_bound = memory_s / self.hardware.bw_eff >= compute_s / self.hardware.flops_eff;
        let comm = if self.tp > 1 {
            2.0 * shape.layers
                * (self.hardware.allreduce_us * 1e-6
                    + 2.0 * (tp - 1.0) / tp * n * shape.hidden * ACTIVATION_BYTES / (self.hardware.link_gb_s * 1e9))
        } else {
            0.0
        };
        Terms {
            x: if memory_bound { memory_s } else { 0.0 },
            y: if memory_bound { 0.0 } else { compute_s },
            target_fixed: if draft { 0.0 } else { 1.0 },
            draft_fixed: if draft { 1.0 } else { 0.0 },
            comm,
        }
    }

    fn seconds(&self, t: &Terms) -> f64 {
        t.x / self.hardware.bw_eff
            + t.y / self.hardware.flops_eff
            + t.target_fixed * self.hardware.t_fixed_us * 1e-6
            + t.draft_fixed * self.hardware.draft_fixed_us * 1e-6
            + t.comm
    }

    /// The calibration terms of one whole step (verify, drafts, amortised prefill), plus the verify terms.
    ///
    /// # Errors
    /// [`Error::Invalid`] when `k` > 0 without a drafter, or `batch` is 0.
    pub fn step_terms(&self, batch: usize, k: usize, al: f64, workload: &Workload) -> Result<(Terms, Terms, Terms)> {
        if batch == 0 {
            return Err(Error::invalid("--concurrency", "concurrency must be at least 1"));
        }
        let b = batch as f64;
        let context = workload.decode_context();
        let verify = self.terms(&self.target, b * (k as f64 + 1.0), b, context, false);
        let mut draft = Terms::default();
        if k > 0 {
            let shape = self
                .draft
                .as_ref()
                .ok_or_else(|| Error::invalid("--drafter", format!("draft length k = {k} needs a drafter profile")))?;
            let block = self.drafter.as_ref().is_some_and(|d| d.block);
            if block {
                draft.add(self.terms(shape, b * k as f64, b, context, true), 1.0);
            } else {
                draft.add(self.terms(shape, b, b, context, true), k as f64);
            }
        }
        let mut prefill = Terms::default();
        if let Workload::Turns { isl, osl, prefix_hit } = *workload {
            let uncached = isl * (1.0 - prefix_hit);
            if uncached > 0.0 {
                prefill.add(self.terms(&self.target, uncached, 1.0, isl, false), b * al / osl);
            }
        }
        Ok((verify, draft, prefill))
    }

    /// The time of one step for `batch` requests at draft length `k` with acceptance length `al`.
    ///
    /// # Errors
    /// As [`CostModel::step_terms`].
    pub fn step_time(&self, batch: usize, k: usize, al: f64, workload: &Workload) -> Result<StepTime> {
        let (verify, draft, prefill) = self.step_terms(batch, k, al, workload)?;
        let verify_s = self.seconds(&verify);
        let draft_s = self.seconds(&draft);
        let prefill_s = self.seconds(&prefill);
        Ok(StepTime {
            total: verify_s + draft_s + prefill_s,
            verify: verify_s,
            draft: draft_s,
            prefill: prefill_s,
            memory_bound: verify.x > 0.0,
        })
    }
}

/// How many ways the KV cache is split across `tp` GPUs: by KV head when the heads divide evenly, replicated
/// when TP is a multiple of the heads (each GPU holds whole heads).
fn kv_split(kv_heads: usize, tp: usize, owner: &str) -> Result<f64> {
    if kv_heads >= tp && kv_heads.is_multiple_of(tp) {
        Ok(tp as f64)
    } else if kv_heads < tp && tp.is_multiple_of(kv_heads) {
        Ok(kv_heads as f64)
    } else {
        Err(Error::invalid(
            "--tp",
            format!(
                "{owner} has {kv_heads} KV heads: TP {tp} neither divides them nor is a multiple of them, so the KV cache cannot be split evenly"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::profile::Profiles;

    fn seed() -> CostModel {
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        CostModel::new(p.hardware("mi355x").unwrap(), m, Some(d), 4, Precision::Fp4, Precision::Bf16).unwrap()
    }

    #[test]
    fn expected_experts_match_model_md() {
        let c = seed();
        assert!((c.target.expected_experts(1.0) - 4.0).abs() < 1e-9);
        assert!((c.target.expected_experts(4.0) - 15.3).abs() < 0.05);
        assert!(c.target.expected_experts(10_000.0) <= 128.0);
    }

    #[test]
    fn speculation_costs_more_per_step_and_prefill_is_amortised() {
        let c = seed();
        let w = Workload::Decode { context: 2048.0 };
        let ar = c.step_time(8, 0, 1.0, &w).unwrap();
        let sd = c.step_time(8, 3, 2.83, &w).unwrap();
        assert!(sd.total > ar.total && sd.draft > 0.0 && ar.draft == 0.0);
        let turns = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
        let cached = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 1.0 };
        assert!(c.step_time(8, 0, 1.0, &turns).unwrap().prefill > 0.0);
        assert_eq!(c.step_time(8, 0, 1.0, &cached).unwrap().prefill, 0.0);
    }

    #[test]
    fn inconsistent_tp_is_a_clear_error() {
        let p = Profiles::embedded();
        let hw = p.hardware("mi355x").unwrap();
        let m3 = p.model("minimax-m3").unwrap();
        let err = CostModel::new(hw, m3, None, 3, Precision::Fp4, Precision::Bf16).unwrap_err().to_string();
        assert!(err.contains("query heads"), "{err}");
        let mut odd = m3.clone();
        odd.kv_heads = 6;
        let err = CostModel::new(hw, &odd, None, 4, Precision::Fp4, Precision::Bf16).unwrap_err().to_string();
        assert!(err.contains("6 KV heads"), "{err}");
        // TP 8 over 4 KV heads replicates each head on two GPUs.
        assert!(CostModel::new(hw, m3, None, 8, Precision::Fp4, Precision::Bf16).is_ok());
        let err = CostModel::new(p.hardware("h100").unwrap(), m3, None, 1, Precision::Bf16, Precision::Bf16)
            .unwrap_err()
            .to_string();
        assert!(err.contains("GB of weights"), "{err}");
        assert!(Workload::Turns { isl: 10.0, osl: 0.0, prefix_hit: 0.0 }.validate().is_err());
        assert!(Workload::Turns { isl: 10.0, osl: 5.0, prefix_hit: 1.5 }.validate().is_err());
        assert!(Workload::Decode { context: -1.0 }.validate().is_err());
    }
}

//! The deployment: hardware, model, drafter, parallelism and precisions bound together, pricing one decode
//! step as [`StepTerms`] (docs/model.md §6; the parts and their evidence are in [`super::terms`]).
//!
//! One forward over n tokens of S sequences at context L, per GPU under tensor parallelism TP:
//! - dense weights: every non-expert weight once, `dense_params · bytes / TP`; their GEMMs `2·n·dense_params / TP`
//!   FLOPs at the weights' precision;
//! - routed experts: E(n') = N·(1 − (1 − k/N)^n') experts touched per MoE layer, each read once, where
//!   n' = λ·S + ν·(n − S) counts the sequences' first tokens at the model's routing locality λ (1 for uniform
//!   routing; [`ModelProfile::routing_locality`]) and their further tokens at its expert novelty ν (the share
//!   of their routing not already woken by the sequence's first token; see [`ModelProfile::expert_novelty`]); the
//!   active experts' GEMMs `2·n·top_k·expert_params` per MoE layer;
//! - attention: each sequence's KV cache once per forward (layers with a key cap read at most the cap, sparse
//!   indexers scan every index key), KV written per token, recurrent state read and written per sequence; the
//!   math `4·heads·head_dim` FLOPs per (query, key) pair at the KV cache's precision. MLA's one latent per
//!   token is replicated on every GPU under TP; with DP attention each GPU holds its own sequences' caches;
//! - LM head: BF16, read once per forward, `2·hidden·vocab` FLOPs per token whose logits are needed;
//! - communication: two all-reduces per layer under TP, latency + 2(TP−1)/TP · n · hidden · 2 bytes / link;
//! - expert parallelism (EP > 1): every routed token of a decode forward (verify, plain decode, drafts) at every
//!   MoE layer it passes, priced per token ([`super::terms::Efficiencies::moe_token_us`]); prefill is not
//!   counted, and without EP (experts split by TP like every other weight) nothing is.
//!
//! A speculative step at draft length k with acceptance length AL:
//!   T_SD = verify(B·(k+1) tokens) + draft-extend(B·AL tokens) + (k−1) drafts(B tokens) + speculation overhead
//! for a chain drafter (EAGLE3, MTP, a draft model: one forward per draft token, the first one also
//! re-reading the accepted tokens); a block drafter drafts all k tokens in one forward of B·k tokens. Spec
//! off is T_AR = verify(B tokens). Each draft forward reads the drafter's own KV cache over the whole context
//! — an MHA drafter as much per layer as the target's widest layer. Turns (`--isl/--osl`) add each request's
//! prefill of its uncached input, amortised over the steps it decodes: + B · T_prefill · AL / OSL per step.

use serde::Serialize;

pub use super::workload::Workload;

use super::profile::{DrafterProfile, HardwareProfile, ModelProfile, Precision};
use super::terms::{Efficiencies, ForwardTerms, Roof, StepTerms, StepTime};
use crate::error::{Error, Result};

/// Bytes per element of linear-attention recurrent state (FP32 accumulators).
const STATE_BYTES: f64 = 4.0;
/// Bytes per activation element in TP all-reduces (BF16).
const ACTIVATION_BYTES: f64 = 2.0;
/// LM heads are kept in BF16 by every quantised checkpoint alsim profiles.
const LM_HEAD: Precision = Precision::Bf16;
/// Fraction of HBM usable for weights and KV (the rest: activations, graphs, fragmentation).
const USABLE_HBM: f64 = 0.9;

/// How the model is spread over GPUs and in which number formats.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Deployment {
    /// Tensor parallelism = GPUs per replica.
    pub tp: usize,
    /// Weight precision (experts; dense weights may be kept wider, see [`ModelProfile::dense_precision`]).
    pub precision: Precision,
    /// KV-cache precision, which is also the attention math's.
    pub kv_precision: Precision,
    /// Data-parallel attention: each GPU holds its own sequences' KV caches (no replication).
    pub dp_attention: bool,
    /// Expert parallelism: how many GPUs of the replica the routed experts are spread over, whole (1: none,
    /// every expert split by TP). Above 1 the routed tokens of each decode forward pay the EP cost per MoE
    /// layer.
    pub ep: usize,
}

impl Deployment {
    /// TP `tp` at `precision` with a `kv_precision` cache, attention split by heads, no expert parallelism.
    pub fn new(tp: usize, precision: Precision, kv_precision: Precision) -> Deployment {
        Deployment { tp, precision, kv_precision, dp_attention: false, ep: 1 }
    }
}

/// Per-forward shape: what a target or drafter forward reads and computes.
#[derive(Debug, Clone, PartialEq)]
struct Shape {
    dense_params: f64,
    dense_bytes: f64,
    dense_peak: Precision,
    moe_layers: f64,
    experts: f64,
    top_k: f64,
    expert_params: f64,
    expert_novelty: f64,
    routing_locality: f64,
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
    /// The share of the target's vocabulary this forward's logits span: the per-token overhead (sampling,
    /// top-k and bookkeeping over the logits) scales with it, so a drafter with a pruned vocabulary pays less.
    vocab_share: f64,
    draft: bool,
}

impl Shape {
    fn expected_experts(&self, n: f64) -> f64 {
        expected_experts(self.experts, self.top_k, n)
    }
}

/// Distinct experts `n` independently routed tokens wake in one MoE layer of `experts` experts, `top_k` each:
/// E(n) = N·(1 − (1 − k/N)^n).
pub fn expected_experts(experts: f64, top_k: f64, n: f64) -> f64 {
    if experts == 0.0 {
        return 0.0;
    }
    experts * (1.0 - (1.0 - top_k / experts).powf(n))
}

/// A deployment: hardware, model, drafter, parallelism and precisions, with the step-time model bound to them.
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    hardware: HardwareProfile,
    model: ModelProfile,
    drafter: Option<DrafterProfile>,
    deployment: Deployment,
    target: Shape,
    draft: Option<Shape>,
}

impl CostModel {
    /// Binds the profiles into a cost model.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `tp` when TP is 0, does not divide the query heads, or splits the KV heads
    /// unevenly (neither KV heads % TP nor TP % KV heads is 0; when TP exceeds the KV heads they are
    /// replicated, as vLLM and SGLang do), or when the weights do not fit the GPUs' memory; `ep` when EP is
    /// 0 or does not divide TP; `kv_dtype` for an FP4 KV cache; `drafter` for another model's drafter.
    pub fn new(
        hardware: &HardwareProfile,
        model: &ModelProfile,
        drafter: Option<&DrafterProfile>,
        deployment: &Deployment,
    ) -> Result<CostModel> {
        Self::for_measurements(hardware, model, drafter, deployment)?.check_capacity()
    }

    /// Binds the profiles without asking whether the weights fit: what measured steps are priced with — a
    /// harness that times a few full-width layers of a model larger than its GPU and scales them by layer
    /// count still measures steps (capacity limits a deployment, not a step's time).
    ///
    /// # Errors
    /// As [`CostModel::new`], except for memory.
    pub fn for_measurements(
        hardware: &HardwareProfile,
        model: &ModelProfile,
        drafter: Option<&DrafterProfile>,
        deployment: &Deployment,
    ) -> Result<CostModel> {
        hardware.validate()?;
        let tp = deployment.tp;
        if tp == 0 {
            return Err(Error::parameter("tp", "tensor parallelism must be at least 1"));
        }
        if deployment.ep == 0 || !tp.is_multiple_of(deployment.ep) {
            return Err(Error::parameter(
                "ep",
                format!("expert parallelism {} must be at least 1 and divide TP {tp}", deployment.ep),
            ));
        }
        if !model.q_heads.is_multiple_of(tp) {
            return Err(Error::parameter(
                "tp",
                format!("{} has {} query heads, which TP {tp} does not divide", model.key, model.q_heads),
            ));
        }
        if deployment.kv_precision == Precision::Fp4 {
            return Err(Error::parameter("kv_dtype", "KV caches are bf16 or fp8"));
        }
        let split = |kv_heads: usize, owner: &str| -> Result<f64> {
            if deployment.dp_attention { Ok(tp as f64) } else { kv_split(kv_heads, tp, owner) }
        };
        let attn_per_key = 4.0 * (model.q_heads * model.head_dim) as f64;
        let target = Shape {
            dense_params: model.base_params_b * 1e9,
            dense_bytes: model.dense_bytes(deployment.precision),
            dense_peak: model.dense_precision.map_or(deployment.precision, |d| d.max(deployment.precision)),
            moe_layers: model.moe_layers as f64,
            experts: model.experts as f64,
            top_k: model.top_k as f64,
            expert_params: model.expert_params_m * 1e6,
            expert_novelty: model.expert_novelty,
            routing_locality: model.routing_locality,
            lm_head_params: model.lm_head_params(),
            kv_dense_per_token: ((model.attn_layers - model.sparse_layers) * model.kv_elems_per_token_layer) as f64,
            kv_sparse_per_token: (model.sparse_layers * model.kv_elems_per_token_layer) as f64,
            sparse_cap: model.sparse_keys as f64,
            index_per_token: model.index_elems_per_token as f64,
            kv_write_per_token: (model.attn_layers * model.kv_elems_per_token_layer) as f64,
            kv_split: split(model.kv_heads, &model.key)?,
            state_elems: model.state_elems_per_seq as f64,
            attn_flops_dense: attn_per_key * (model.attn_layers - model.sparse_layers) as f64,
            attn_flops_sparse: attn_per_key * model.sparse_layers as f64,
            layers: model.layers as f64,
            hidden: model.hidden as f64,
            vocab_share: 1.0,
            draft: false,
        };
        let draft = match drafter {
            None => None,
            Some(d) if d.target != model.key => {
                return Err(Error::parameter(
                    "drafter",
                    format!("drafter {} is for {}, not {}", d.key, d.target, model.key),
                ));
            }
            // MTP heads ship quantised with the target; EAGLE3 heads and draft models ship in BF16.
            Some(d) => {
                let precision = if d.method == "mtp" { target.dense_peak } else { Precision::Bf16 };
                Some(Shape {
                    dense_params: d.params_b * 1e9,
                    dense_bytes: precision.bytes(),
                    dense_peak: precision,
                    moe_layers: d.moe_layers as f64,
                    lm_head_params: (d.hidden * if d.vocab > 0 { d.vocab } else { model.vocab }) as f64,
                    kv_dense_per_token: d.kv_elems_per_token as f64,
                    kv_sparse_per_token: 0.0,
                    sparse_cap: 0.0,
                    index_per_token: 0.0,
                    kv_write_per_token: d.kv_elems_per_token as f64,
                    kv_split: split(d.kv_heads, &d.key)?,
                    state_elems: 0.0,
                    attn_flops_dense: 4.0 * (d.q_heads * d.head_dim * d.layers) as f64,
                    attn_flops_sparse: 0.0,
                    layers: d.layers as f64,
                    hidden: d.hidden as f64,
                    vocab_share: if d.vocab > 0 { d.vocab as f64 / model.vocab as f64 } else { 1.0 },
                    draft: true,
                    ..target.clone()
                })
            }
        };
        Ok(CostModel {
            hardware: hardware.clone(),
            model: model.clone(),
            drafter: drafter.cloned(),
            deployment: *deployment,
            target,
            draft,
        })
    }

    fn check_capacity(self) -> Result<CostModel> {
        let weights = self.weight_bytes_per_gpu();
        let usable = self.hardware.hbm_gb * 1e9 * USABLE_HBM;
        if weights > usable {
            return Err(Error::parameter(
                "tp",
                format!(
                    "{} in {} needs {:.0} GB of weights per GPU at TP {}, more than {:.0}% of the {} GB of a {}; raise it or lower the precision",
                    self.model.key,
                    self.deployment.precision,
                    weights / 1e9,
                    self.tp(),
                    USABLE_HBM * 100.0,
                    self.hardware.hbm_gb,
                    self.hardware.name
                ),
            ));
        }
        Ok(self)
    }

    /// The hardware profile.
    pub fn hardware(&self) -> &HardwareProfile {
        &self.hardware
    }

    /// The same deployment under other efficiencies (what calibration tries).
    pub fn with_efficiency(&self, efficiency: Efficiencies) -> CostModel {
        let mut cost = self.clone();
        cost.hardware.efficiency = efficiency;
        cost
    }

    /// The model profile.
    pub fn model(&self) -> &ModelProfile {
        &self.model
    }

    /// The drafter profile, if any.
    pub fn drafter(&self) -> Option<&DrafterProfile> {
        self.drafter.as_ref()
    }

    /// Parallelism and precisions.
    pub fn deployment(&self) -> &Deployment {
        &self.deployment
    }

    /// Tensor parallelism = GPUs per replica.
    pub fn tp(&self) -> usize {
        self.deployment.tp
    }

    /// Weights held per GPU (target and drafter), bytes.
    pub fn weight_bytes_per_gpu(&self) -> f64 {
        let model = &self.model;
        let t = &self.target;
        let mut bytes = t.dense_params * t.dense_bytes
            + model.expert_params() * self.deployment.precision.bytes()
            + 2.0 * t.lm_head_params * LM_HEAD.bytes();
        if let (Some(d), Some(shape)) = (&self.drafter, &self.draft) {
            bytes += shape.dense_params * shape.dense_bytes
                + (d.moe_layers * model.experts) as f64 * t.expert_params * self.deployment.precision.bytes();
            if d.vocab > 0 {
                bytes += shape.lm_head_params * LM_HEAD.bytes();
            }
        }
        bytes / self.tp() as f64
    }

    /// Whether `batch` requests at the workload's peak context fit in the GPUs' memory beside the weights.
    pub fn kv_fits(&self, batch: usize, workload: &Workload) -> bool {
        let kv_bytes = self.deployment.kv_precision.bytes();
        let tp = self.tp() as f64;
        let context = workload.peak_context();
        let t = &self.target;
        let per_seq_target = context * (t.kv_write_per_token / t.kv_split + t.index_per_token) * kv_bytes
            + t.state_elems * STATE_BYTES / tp;
        let per_seq_draft = self.draft.as_ref().map_or(0.0, |d| context * d.kv_write_per_token / d.kv_split * kv_bytes);
        let needed = self.weight_bytes_per_gpu() + batch as f64 * (per_seq_target + per_seq_draft);
        needed <= self.hardware.hbm_gb * 1e9 * USABLE_HBM
    }

    /// One forward of `shape` taking `n_in` tokens of `seqs` sequences at mean context `context`, computing
    /// logits for `n_out` of them.
    fn forward(&self, shape: &Shape, n_in: f64, n_out: f64, seqs: f64, context: f64) -> ForwardTerms {
        // A sequence's further tokens route partly to experts its first token already woke.
        let n_experts = shape.routing_locality * seqs + shape.expert_novelty * (n_in - seqs).max(0.0);
        let hw = &self.hardware;
        let tp = self.tp() as f64;
        let bw = hw.bandwidth();
        let weight_peak = hw.peak_flops(self.deployment.precision);
        let kv_precision = self.deployment.kv_precision;
        let kvb = kv_precision.bytes();
        // Capped layers pick keys per query: a sequence's w queries together read up to w times the cap.
        let sparse_keys = context.min(shape.sparse_cap);
        let sparse_read = context.min(shape.sparse_cap * n_in / seqs.max(1.0));
        let kv_read = seqs
            * kvb
            * ((shape.kv_dense_per_token * context + shape.kv_sparse_per_token * sparse_read) / shape.kv_split
                + shape.index_per_token * context);
        let kv_write = n_in * kvb * shape.kv_write_per_token / shape.kv_split;
        let state = seqs * shape.state_elems * STATE_BYTES * 2.0 / tp;
        let comm = if self.tp() > 1 {
            2.0 * shape.layers
                * (hw.allreduce_us * 1e-6
                    + 2.0 * (tp - 1.0) / tp * n_in * shape.hidden * ACTIVATION_BYTES / (hw.link_gb_s * 1e9))
        } else {
            0.0
        };
        let expert_bytes = self.deployment.precision.bytes();
        ForwardTerms {
            dense: Roof {
                memory_s: shape.dense_params * shape.dense_bytes / tp / bw,
                compute_s: 2.0 * n_in * shape.dense_params / tp / hw.peak_flops(shape.dense_peak),
            },
            experts: Roof {
                memory_s: shape.moe_layers * shape.expected_experts(n_experts) * shape.expert_params * expert_bytes
                    / tp
                    / bw,
                compute_s: 2.0 * n_in * shape.moe_layers * shape.top_k * shape.expert_params / tp / weight_peak,
            },
            attention: Roof {
                memory_s: (kv_read + kv_write + state) / bw,
                compute_s: n_in * (shape.attn_flops_dense * context + shape.attn_flops_sparse * sparse_keys)
                    / tp
                    / hw.peak_flops(kv_precision),
            },
            lm_head: Roof {
                memory_s: shape.lm_head_params * LM_HEAD.bytes() / tp / bw,
                compute_s: 2.0 * n_out * shape.lm_head_params / tp / hw.peak_flops(LM_HEAD),
            },
            comm_s: comm,
            target_forwards: if shape.draft { 0.0 } else { 1.0 },
            // A drafter's forward overhead is paid per layer: a draft model's layers run outside the target's
            // fused graph (one EAGLE3 or MTP layer pays it once per forward).
            draft_forwards: if shape.draft { shape.layers } else { 0.0 },
            layers: shape.layers,
            moe_layers: shape.moe_layers,
            tokens: n_out * shape.vocab_share,
            // Only expert parallelism sends tokens to other GPUs' experts: split by TP, every GPU holds a slice
            // of every expert and the all-reduce above is the whole exchange. Under TP attention every GPU
            // holds every token and sends them all; with DP attention each GPU sends its own sequences' tokens.
            moe_tokens: if self.deployment.ep > 1 {
                n_in * shape.moe_layers / if self.deployment.dp_attention { tp } else { 1.0 }
            } else {
                0.0
            },
        }
    }

    /// The terms of one whole step (verify, drafts, amortised prefill, speculation counts) for `batch`
    /// requests at draft length `k` with acceptance length `al`.
    ///
    /// # Errors
    /// [`Error::Parameter`] naming `drafter` when `k` > 0 without one, `concurrency` when `batch` is 0.
    pub fn step_terms(&self, batch: usize, k: usize, al: f64, workload: &Workload) -> Result<StepTerms> {
        if batch == 0 {
            return Err(Error::parameter("concurrency", "concurrency must be at least 1"));
        }
        let b = batch as f64;
        let context = workload.decode_context();
        let w = b * (k as f64 + 1.0);
        let verify = self.forward(&self.target, w, w, b, context);
        let mut draft = ForwardTerms::default();
        if k > 0 {
            let shape = self
                .draft
                .as_ref()
                .ok_or_else(|| Error::parameter("drafter", format!("draft length k = {k} needs a drafter profile")))?;
            if self.drafter.as_ref().is_some_and(|d| d.block) {
                draft.add(&self.forward(shape, b * k as f64, b * k as f64, b, context), 1.0);
            } else {
                draft.add(&self.forward(shape, b * al.max(1.0), b, b, context), 1.0);
                draft.add(&self.forward(shape, b, b, b, context), k as f64 - 1.0);
            }
        }
        let mut prefill = ForwardTerms::default();
        if let Workload::Turns { isl, osl, prefix_hit } = *workload {
            let uncached = isl * (1.0 - prefix_hit);
            if uncached > 0.0 {
                let mean_context = isl - uncached / 2.0;
                let mut forward = self.forward(&self.target, uncached, 1.0, 1.0, mean_context);
                // A prefill's thousands of tokens go through the EP exchange in bulk, bandwidth-bound, not
                // at a decode token's cost each (priced per token, an 8k-token prefill of DeepSeek-R1 would
                // take over half a second more than its GEMMs).
                forward.moe_tokens = 0.0;
                prefill.add(&forward, b * al / osl);
            }
        }
        let spec = k > 0;
        Ok(StepTerms { verify, draft, prefill, spec_steps: if spec { 1.0 } else { 0.0 }, draft_tokens: b * k as f64 })
    }

    /// The time of one step under the hardware profile's efficiencies.
    ///
    /// # Errors
    /// As [`CostModel::step_terms`].
    pub fn step_time(&self, batch: usize, k: usize, al: f64, workload: &Workload) -> Result<StepTime> {
        Ok(self.step_terms(batch, k, al, workload)?.time(&self.hardware.efficiency))
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
        Err(Error::parameter(
            "tp",
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
    use proptest::prelude::*;

    fn deployment(tp: usize, precision: Precision) -> Deployment {
        Deployment::new(tp, precision, Precision::Bf16)
    }

    fn seed(drafter: &str) -> CostModel {
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some(drafter), None).unwrap();
        CostModel::new(p.hardware("mi355x").unwrap(), m, Some(d), &deployment(4, Precision::Fp4)).unwrap()
    }

    #[test]
    fn expected_experts_match_model_md() {
        let c = seed("Inferact/MiniMax-M3-EAGLE3");
        assert!((c.target.expected_experts(1.0) - 4.0).abs() < 1e-9);
        assert!((c.target.expected_experts(4.0) - 15.3).abs() < 0.05);
        assert!(c.target.expected_experts(10_000.0) <= 128.0);
    }

    #[test]
    fn expected_experts_match_a_seeded_monte_carlo_of_top_k_routing() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(23);
        let trials = 4000;
        for (experts, top_k, tokens) in [(128, 4, 1), (128, 4, 9), (128, 4, 64), (256, 8, 16), (256, 8, 128), (8, 2, 5)]
        {
            let mut counts = Vec::with_capacity(trials);
            let mut order: Vec<usize> = (0..experts).collect();
            for _ in 0..trials {
                let mut woken = vec![false; experts];
                for _ in 0..tokens {
                    // One token's top-k: k distinct experts, uniformly (a partial Fisher–Yates shuffle, which
                    // any starting order serves).
                    for i in 0..top_k {
                        let j = rng.random_range(i..experts);
                        order.swap(i, j);
                        woken[order[i]] = true;
                    }
                }
                counts.push(woken.iter().filter(|w| **w).count() as f64);
            }
            let mean = counts.iter().sum::<f64>() / trials as f64;
            let sd = (counts.iter().map(|c| (c - mean).powi(2)).sum::<f64>() / (trials - 1) as f64).sqrt();
            let expected = expected_experts(experts as f64, top_k as f64, tokens as f64);
            // Four standard errors, and never looser than a hundredth of an expert where the count is certain.
            let tolerance = (4.0 * sd / (trials as f64).sqrt()).max(0.01);
            assert!(
                (mean - expected).abs() <= tolerance,
                "{tokens} tokens, top-{top_k} of {experts}: Monte Carlo {mean:.3} ± {tolerance:.3}, formula {expected:.3}"
            );
        }
    }

    #[test]
    fn speculation_costs_more_per_step_and_prefill_is_amortised() {
        let c = seed("Inferact/MiniMax-M3-EAGLE3");
        let w = Workload::Decode { context: 2048.0 };
        let ar = c.step_time(8, 0, 1.0, &w).unwrap();
        let sd = c.step_time(8, 3, 2.83, &w).unwrap();
        assert!(sd.total > ar.total && sd.draft > 0.0 && ar.draft == 0.0 && sd.speculation > 0.0);
        let turns = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
        let cached = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 1.0 };
        assert!(c.step_time(8, 0, 1.0, &turns).unwrap().prefill > 0.0);
        assert_eq!(c.step_time(8, 0, 1.0, &cached).unwrap().prefill, 0.0);
    }

    #[test]
    fn an_mha_drafter_reads_its_cache_many_times_over_a_gqa_one_at_long_context() {
        let mha = seed("Inferact/MiniMax-M3-EAGLE3");
        let gqa = seed("Inferact/MiniMax-M3-EAGLE3-GQA");
        let w = Workload::Decode { context: 131_072.0 };
        let eff = &mha.hardware().efficiency;
        let attention = |c: &CostModel, b| c.step_terms(b, 3, 2.8, &w).unwrap().part("drafter_attention", eff).unwrap();
        // 64 KV heads against 4: a 16-fold cache at the same query heads.
        let ratio = attention(&mha, 64) / attention(&gqa, 64);
        assert!(ratio > 5.0, "{ratio}");
        let drafter = |c: &CostModel, b| c.step_time(b, 3, 2.8, &w).unwrap().draft;
        assert!(drafter(&mha, 64) > 3.0 * drafter(&gqa, 64));
        // At short context and batch 1 the two cost about the same.
        let short = Workload::Decode { context: 512.0 };
        let t = |c: &CostModel| c.step_time(1, 3, 2.8, &short).unwrap().draft;
        assert!((t(&mha) / t(&gqa) - 1.0).abs() < 0.1);
    }

    #[test]
    fn a_draft_model_pays_the_draft_forward_overhead_per_layer() {
        let p = Profiles::embedded();
        let m = p.model("llama-3.3-70b").unwrap();
        let w = Workload::Decode { context: 1024.0 };
        let passes = |name: &str, k: usize| {
            let d = p.drafter(m, Some(name), None).unwrap();
            let c =
                CostModel::for_measurements(p.hardware("b200").unwrap(), m, Some(d), &deployment(1, Precision::Bf16));
            (d.layers as f64, c.unwrap().step_terms(32, k, 2.0, &w).unwrap().draft.draft_forwards)
        };
        // A chain drafter runs k forwards (the draft-extend and k − 1 drafts), each over all its layers.
        for (name, k) in [("llama-3.2-1b", 3), ("llama-3.3-70b-eagle3", 3), ("llama-3.2-1b", 5)] {
            let (layers, counted) = passes(name, k);
            assert_eq!(counted, layers * k as f64, "{name} at k = {k}");
        }
    }

    #[test]
    fn only_expert_parallel_decode_tokens_pay_the_ep_exchange_per_moe_layer() {
        let p = Profiles::embedded();
        let m = p.model("dsr1").unwrap();
        let d = p.drafter(m, None, Some("mtp")).unwrap();
        let hw = p.hardware("b200").unwrap();
        let w = Workload::Decode { context: 1024.0 };
        let at = |ep: usize, dp_attention: bool, k: usize, workload: &Workload| {
            let dep = Deployment { dp_attention, ep, ..deployment(8, Precision::Fp8) };
            CostModel::new(hw, m, Some(d), &dep).unwrap().step_terms(32, k, 2.5, workload).unwrap()
        };
        let (tp, ep, dp) = (at(1, false, 3, &w), at(8, false, 3, &w), at(8, true, 3, &w));
        // Experts split by TP exchange nothing beyond the all-reduce; spread by EP, every verified token of
        // every sequence crosses at each MoE layer, and under DP attention each GPU sends its own share.
        assert_eq!(tp.verify.moe_tokens + tp.draft.moe_tokens, 0.0);
        assert_eq!(ep.verify.moe_tokens, 32.0 * 4.0 * m.moe_layers as f64);
        assert_eq!(dp.verify.moe_tokens, ep.verify.moe_tokens / 8.0);
        // The MTP head's one MoE layer sends its forwards' tokens too; a dense model has none to send.
        assert!(ep.draft.moe_tokens > 0.0);
        let dense = p.model("llama-3.3-70b").unwrap();
        let c = CostModel::new(hw, dense, None, &Deployment { ep: 8, ..deployment(8, Precision::Bf16) }).unwrap();
        assert_eq!(c.step_terms(32, 0, 1.0, &w).unwrap().verify.moe_tokens, 0.0);
        // It grows with the tokens verified, and the prefill's tokens do not pay it.
        let tokens = |k| at(8, false, k, &w).verify.moe_tokens;
        assert!((0..8).all(|k| tokens(k + 1) > tokens(k)));
        let turns = Workload::Turns { isl: 8192.0, osl: 1024.0, prefix_hit: 0.0 };
        let with_prefill = at(8, false, 3, &turns);
        assert!(with_prefill.prefill.experts.memory_s > 0.0);
        assert_eq!(with_prefill.prefill.moe_tokens, 0.0);
        // Each token pass costs moe_token_us, nothing else does.
        let none = Efficiencies { moe_token_us: 0.0, ..hw.efficiency };
        let one = Efficiencies { moe_token_us: 1.0, ..hw.efficiency };
        let extra = ep.time(&one).total - ep.time(&none).total;
        let passes = ep.verify.moe_tokens + ep.draft.moe_tokens;
        assert!((extra - passes * 1e-6).abs() < 1e-12, "{extra} vs {passes}");
        assert_eq!(tp.time(&one).total, tp.time(&none).total);
        for bad in [0, 3] {
            let dep = Deployment { ep: bad, ..deployment(8, Precision::Fp8) };
            let err = CostModel::new(hw, m, Some(d), &dep).unwrap_err().to_string();
            assert!(err.contains("ep") && err.contains("divide TP 8"), "{err}");
        }
    }

    #[test]
    fn a_pruned_draft_vocabulary_pays_its_share_of_the_per_token_overhead() {
        let p = Profiles::embedded();
        let m = p.model("llama-3.3-70b").unwrap();
        let pruned = p.drafter(m, Some("llama-3.3-70b-eagle3"), None).unwrap();
        let mut full = pruned.clone();
        full.vocab = 0;
        let w = Workload::Decode { context: 1024.0 };
        let tokens = |d: &DrafterProfile| {
            let c =
                CostModel::for_measurements(p.hardware("b200").unwrap(), m, Some(d), &deployment(1, Precision::Bf16));
            c.unwrap().step_terms(32, 3, 2.5, &w).unwrap().draft.tokens
        };
        let share = pruned.vocab as f64 / m.vocab as f64;
        assert!((tokens(pruned) - share * tokens(&full)).abs() < 1e-9 * tokens(&full), "{share}");
    }

    #[test]
    fn attention_math_runs_at_the_cache_precision_not_the_weights() {
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let hw = p.hardware("b300").unwrap();
        let w = Workload::Decode { context: 32_768.0 };
        let math = |kv| {
            let c = CostModel::new(hw, m, None, &Deployment::new(4, Precision::Fp4, kv)).unwrap();
            c.step_terms(16, 0, 1.0, &w).unwrap().verify.attention.compute_s
        };
        // FP4 weights do not make attention run at the FP4 peak: BF16 attention at the BF16 peak.
        let bf16 = math(Precision::Bf16);
        let fp8 = math(Precision::Fp8);
        assert!((bf16 / fp8 - hw.fp8_tflops / hw.bf16_tflops).abs() < 1e-9, "{bf16} {fp8}");
    }

    #[test]
    fn inconsistent_tp_is_a_clear_error() {
        let p = Profiles::embedded();
        let hw = p.hardware("mi355x").unwrap();
        let m3 = p.model("minimax-m3").unwrap();
        let err = CostModel::new(hw, m3, None, &deployment(3, Precision::Fp4)).unwrap_err().to_string();
        assert!(err.contains("query heads"), "{err}");
        let mut odd = m3.clone();
        odd.kv_heads = 6;
        let err = CostModel::new(hw, &odd, None, &deployment(4, Precision::Fp4)).unwrap_err().to_string();
        assert!(err.contains("6 KV heads"), "{err}");
        // TP 8 over 4 KV heads replicates each head on two GPUs.
        assert!(CostModel::new(hw, m3, None, &deployment(8, Precision::Fp4)).is_ok());
        let err = CostModel::new(p.hardware("h100").unwrap(), m3, None, &deployment(1, Precision::Bf16))
            .unwrap_err()
            .to_string();
        assert!(err.contains("GB of weights"), "{err}");
        let other = p.drafter(p.model("glm-5.2").unwrap(), None, None).unwrap();
        let err = CostModel::new(hw, m3, Some(other), &deployment(4, Precision::Fp4)).unwrap_err().to_string();
        assert!(err.contains("is for glm-5.2"), "{err}");
        assert!(Workload::Turns { isl: 10.0, osl: 0.0, prefix_hit: 0.0 }.validate().is_err());
        assert!(Workload::Turns { isl: 10.0, osl: 5.0, prefix_hit: 1.5 }.validate().is_err());
        assert!(Workload::Decode { context: -1.0 }.validate().is_err());
    }

    proptest! {
        #[test]
        fn verify_cost_grows_with_tokens_and_drafter_cost_with_batch(
            b in 1usize..256, k in 1usize..8, context in 0.0f64..100_000.0
        ) {
            let c = seed("Inferact/MiniMax-M3-EAGLE3-GQA");
            let w = Workload::Decode { context };
            let t = |b, k| c.step_time(b, k, 1.0 + k as f64 * 0.5, &w).unwrap();
            prop_assert!(t(b, k + 1).verify > t(b, k).verify);
            prop_assert!(t(b + 1, k).draft > t(b, k).draft);
            prop_assert!(t(b, k).total > t(b, 0).total);
        }

        #[test]
        fn bandwidth_never_slows(b in 1usize..256, k in 0usize..=8, context in 0.0f64..200_000.0, scale in 1.0f64..4.0) {
            let p = Profiles::embedded();
            let m = p.model("minimax-m3").unwrap();
            let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3-GQA"), None).unwrap();
            let hw = p.hardware("b200").unwrap();
            let mut faster = hw.clone();
            faster.hbm_tb_s *= scale;
            let w = Workload::Decode { context };
            let al = 1.0 + k as f64 * 0.5;
            let dep = Deployment::new(4, Precision::Fp4, Precision::Fp8);
            let slow = CostModel::new(hw, m, Some(d), &dep).unwrap().step_time(b, k, al, &w).unwrap().total;
            let quick = CostModel::new(&faster, m, Some(d), &dep).unwrap().step_time(b, k, al, &w).unwrap().total;
            prop_assert!(quick <= slow * (1.0 + 1e-12));
        }
    }
}

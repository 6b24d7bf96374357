//! The parts of one decode step's time and the efficiencies that turn them into seconds (docs/model.md §6).
//!
//! Every part is first priced at the hardware's peak — memory traffic at peak HBM bandwidth, math at the peak
//! of its own precision — and then divided by its own efficiency; the parts are **summed**. A roofline that
//! takes `max(bytes/bandwidth, FLOPs/compute)` over a whole forward makes extra verify tokens free while the
//! step is memory-bound, which measured steps contradict: SPEED-Bench Table 10 (Llama-3.3-70B, B200, batch 16)
//! measures t_sd − t_ar = 6.3 ms for k = 3 on a model whose weight read alone takes 17.6 ms at peak bandwidth.
//! Within one part, memory and math combine as the p-norm `(mᵖ + cᵖ)^(1/p)` with the profile's `overlap` p:
//! 1 (the default) adds them, which served whole steps want (median speedup error 3.7 % at 1 against 4.0–4.3 %
//! at 2–3, trend right in 16 of 17 groups against 13–14); a bare GPU's kernels overlap them — the H200 kit's
//! Llama-3.3-70B spec-off steps fit to 0.8 % at p ≈ 3 against 6.1 % at 1 — and `alsim calibrate` fits p on
//! step times (not on serving pairs, whose spec side contradicts the spec-off side's pull). The routed experts
//! are the exception: their memory and math always add (p = 1, `PartKind::Experts`). A grouped GEMM whose
//! experts take a few tokens each does not hide its math under its weights: at B = 256 the H100 kit wakes every
//! expert of Qwen3-235B-A22B at every k, so the bytes stay fixed, yet its experts column grows 12–14 ms per draft
//! position at context 1024, the position's GEMMs at ~0.7 of the measured matmul rate, added; at the fitted p = 4 the model
//! priced each position near zero, and each extra draft position too cheaply (held-out choice of k over the
//! kit 373 → 387 of 516 cells with the experts additive; served steps keep p = 1, where nothing moves).
//!
//! | part | priced as | efficiency |
//! |---|---|---|
//! | dense weights | non-expert weights read once per forward; their GEMMs, 2 FLOPs per weight per token | `bw_eff`, `flops_eff` |
//! | routed experts | E(n) = N·(1 − (1 − k/N)^n) experts read per MoE layer; the active experts' GEMMs, added to the reads | `bw_eff`, `flops_eff` |
//! | attention | KV cache read per sequence and written per token; QK and PV math at the **KV cache's** precision | `bw_eff`, `attn_eff` |
//! | LM head | BF16 head read per forward, its GEMM per token | `bw_eff`, `flops_eff` |
//! | communication | two all-reduces per layer under TP: latency + volume over the scale-up link | none (link figures) |
//! | per forward | scheduling, sampling launch, synchronisation of each target forward | `t_fixed_us` |
//! | per layer | launches and small kernels (norms, activations, rotary) of each layer pass, target or drafter | `layer_us` |
//! | per MoE layer | routing, permutation and grouped-GEMM launches of each MoE layer pass, on top | `moe_layer_us` |
//! | per token | sampling and bookkeeping of every token a forward emits logits for | `token_us` |
//! | per draft layer pass | launch and scheduling of each layer of each draft forward (a one-layer EAGLE3 or MTP head pays it once per forward) | `draft_fixed_us` |
//! | per speculative step | draft-extend launch, rejection, KV rollback | `spec_fixed_us` |
//! | per draft token | rejection sampling and bookkeeping per draft token verified | `spec_token_us` |
//! | per routed token under EP | the expert-parallel exchange of each decode token at each MoE layer it passes, only where EP > 1 (every GPU sends every token under TP attention, its own under DP attention; prefill not counted) | `moe_token_us` |
//!
//! Why these parts, from measured whole steps (`alsim calibrate ../shared/data/serving/…`, and
//! `notebooks/serving_defaults.py` for the choices): spec-off TPOT of DeepSeek-R1 on B200/B300 rises
//! concavely with concurrency, which the expert term fits to a median 1.7 % (a prototype of the same terms
//! reading every expert at every batch fitted it to ~20 %); the fitted fixed time is 3–11 ms per forward on
//! that 61-layer MoE (milliseconds, not microseconds) — per layer, as the H200 kit measures (80–120 µs of
//! launch and small-kernel latency per layer even inside one CUDA graph), so a one-layer drafter pays a
//! layer's share, not the target's; the measured speedup falls with concurrency in 15 of the
//! 17 groups with three or more concurrencies, which only costs growing with the tokens verified reproduce
//! (GEMM math, attention math with w queries, per-token overheads) — constant per-step speculation costs push
//! the predicted speedup *up* with batch, so their defaults stay small (the data are indifferent up to a few
//! hundred µs and worse beyond); and the expert count of the verify tokens is only half what independent
//! routing gives (expert novelty 0.5: median speedup error 3.7 %, against 5.1 % for an isolated layer's E(n)
//! and 4.9 % for no expert tax at all) — real routing repeats experts within a sequence, the H200 kit's
//! uniform random routing does not (fitted novelty 1.00, E(n) within 1 % of the experts it counted). A per-draft-token overhead is not supported by these data (best at 0)
//! and stays a calibratable term. The draft-forward overhead is paid per drafter layer: SPEED-Bench (Table 1,
//! B200, batch 32, k = 3, `tests/data/speedbench_level.csv`) measures a vanilla draft model against an EAGLE3
//! head on the same target at the same AL (Llama-3.3-70B with Llama-3.2-1B, TensorRT-LLM: 1.60× against 1.90×
//! at AL 2.44; Qwen3-235B-A22B with Qwen3-0.6B, SGLang), which puts each extra draft-model layer pass at
//! 100–190 µs — a draft model's layers run outside the target's fused graph — and Table 10 (batch 16) the same;
//! paid once per forward, the vanilla rows came out 10–23 points more optimistic than the EAGLE3 rows of the
//! same target (Llama-3.3-70B −13 / +2 % against −25 / −21 %, Qwen3-235B-A22B +46 / +48 % against +36 / +38 %);
//! per layer −19 / −5 % and +13 / +14 %. One-layer heads
//! (every EAGLE3 and MTP head profiled, the serving pairs, the H200 kit) are unchanged. SPEED-Bench Table 10 (a 70B dense model) puts the attention math of
//! 4-query verify near a quarter of the BF16 peak — the default `attn_eff`.
//!
//! A cost per decode token per MoE layer under expert parallelism (`moe_token_us`, 1.25 µs) is what
//! SPEED-Bench's expert-parallel rows ask for (DeepSeek-R1 TP8 EP4, Qwen3-235B-A22B TP8 EP8: verifying 4 × 32
//! tokens costs them 1.7–2.1× a plain step where the other terms give 1.2–1.5×). Chosen with each of the four
//! deployments held out (`notebooks/serving_defaults.py --level`: 1.25 µs on three folds, 1.0 on the fourth),
//! it scores the held-out deployments' level to a median 6.2 % (18.9 % without it;
//! `tests/data/b200_without_ep_cost.csv`). Where it applies is what the data decide: paid by every MoE
//! deployment, it turned the trend of the near-flat serving group TensorRT-LLM FP4 TP8 **EP1** (1.59, 1.39,
//! 1.62 at 4, 8, 128) and widened the spec-off fits to 2.4 %; paid in prefill too, an 8k-token prefill of
//! DeepSeek-R1 took over half a second more (spec-off fits 1.8 % against 1.6 %). Where EP > 1 and in decode only,
//! the serving pairs keep their median speedup error (3.6 %) and trend (16 of 17), spec-off 1.5 → 1.6 %, and
//! gpt-oss-120b on one GPU (EP 1) is untouched (+6 % at T = 0). It is not the exchange's bytes: top-k ×
//! hidden × 2 bytes there and back over the scale-up link is 0.07–0.13 µs per token, a tenth of it. Its
//! order is that of a latency-bound exchange: DeepEP's README measures its low-latency dispatch and combine
//! at 77 + 114 µs for 128 tokens per GPU at EP 8 (7168 hidden, top-8, H800 over RDMA), 1.5 µs per token per
//! layer. Which part of that the B200 rows pay (kernel latency, load imbalance across the EP ranks) is still
//! open. Calibration scales it with the compute group, so a fitted profile carries it scaled.
//!
//! The step time is linear in the eleven coefficients of [`Efficiencies::coefficients`] at a given overlap, which
//! is what calibration fits: `T = comm + Σ cᵢ·fᵢ` with the features fᵢ of [`StepTerms::features`].

use serde::Serialize;

use crate::error::{Error, Result};

/// Seconds one part takes at the hardware's peak: memory traffic at peak HBM bandwidth, math at the peak
/// of the precision it runs in.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Roof {
    /// Bytes moved / peak HBM bandwidth.
    pub memory_s: f64,
    /// FLOPs / peak FLOP/s of the part's precision.
    pub compute_s: f64,
}

impl Roof {
    fn add(&mut self, other: Roof, weight: f64) {
        self.memory_s += weight * other.memory_s;
        self.compute_s += weight * other.compute_s;
    }

    /// Seconds at reciprocal efficiencies `inv_bw`, `inv_flops` and overlap `p`, with the share of them each
    /// coefficient carries: the part time is 1-homogeneous in the two, so `time = inv_bw·m' + inv_flops·c'`
    /// exactly, with (m', c') the returned features.
    fn split(&self, inv_bw: f64, inv_flops: f64, p: f64) -> (f64, f64, f64) {
        let (a, b) = (self.memory_s * inv_bw, self.compute_s * inv_flops);
        if p == 1.0 {
            return (a + b, self.memory_s, self.compute_s);
        }
        let t = (a.powf(p) + b.powf(p)).powf(1.0 / p);
        if t == 0.0 {
            return (0.0, 0.0, 0.0);
        }
        (t, self.memory_s * (a / t).powf(p - 1.0), self.compute_s * (b / t).powf(p - 1.0))
    }
}

/// One forward (or a weighted sum of forwards) split by part, with the counts the overheads multiply.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct ForwardTerms {
    /// Non-expert weights (attention projections, dense MLPs, shared experts, routers) and their GEMMs.
    pub dense: Roof,
    /// Routed experts touched and the active experts' GEMMs.
    pub experts: Roof,
    /// KV cache traffic and the attention math.
    pub attention: Roof,
    /// The LM head.
    pub lm_head: Roof,
    /// All-reduce time, seconds (no efficiency: latency and link bandwidth are profile figures).
    pub comm_s: f64,
    /// Target forwards.
    pub target_forwards: f64,
    /// Draft layer passes: each draft forward counts its drafter's layers.
    pub draft_forwards: f64,
    /// Layer passes.
    pub layers: f64,
    /// MoE layer passes.
    pub moe_layers: f64,
    /// Tokens whose logits are computed (sampled or verified), each weighted by the share of the target's
    /// vocabulary its logits span (a pruned draft vocabulary samples faster).
    pub tokens: f64,
    /// Decode tokens times the MoE layers they pass under expert parallelism (0 where EP is 1 and in
    /// prefill).
    pub moe_tokens: f64,
}

impl ForwardTerms {
    /// Adds `weight` times `other`.
    pub fn add(&mut self, other: &ForwardTerms, weight: f64) {
        self.dense.add(other.dense, weight);
        self.experts.add(other.experts, weight);
        self.attention.add(other.attention, weight);
        self.lm_head.add(other.lm_head, weight);
        self.comm_s += weight * other.comm_s;
        self.target_forwards += weight * other.target_forwards;
        self.draft_forwards += weight * other.draft_forwards;
        self.layers += weight * other.layers;
        self.moe_layers += weight * other.moe_layers;
        self.tokens += weight * other.tokens;
        self.moe_tokens += weight * other.moe_tokens;
    }

    /// The features of [`StepTerms::features`] for this forward alone (speculation counts zero).
    fn features(&self, eff: &Efficiencies) -> [f64; PARAMETERS] {
        let c = eff.coefficients();
        let mut f = [
            0.0,
            0.0,
            0.0,
            self.target_forwards,
            self.layers,
            self.moe_layers,
            self.tokens,
            self.draft_forwards,
            0.0,
            0.0,
            self.moe_tokens,
        ];
        for (_, part, kind) in self.parts() {
            let math = kind.math();
            let (_, memory, compute) = part.split(c[0], c[math], kind.overlap(eff));
            f[0] += memory;
            f[math] += compute;
        }
        f
    }

    /// Seconds under `eff`.
    pub fn seconds(&self, eff: &Efficiencies) -> f64 {
        dot(&self.features(eff), &eff.coefficients()) + self.comm_s
    }

    /// The priced parts, each named as its measured `<name>_ms` column and with the kind that says how its
    /// memory and math combine: the one place a part is given its kind. The fit's features sum them in this
    /// order, so it is kept: another order moves predictions in their last digits.
    fn parts(&self) -> [(&'static str, Roof, PartKind); 4] {
        [
            ("dense", self.dense, PartKind::Gemm),
            ("experts", self.experts, PartKind::Experts),
            ("lm_head", self.lm_head, PartKind::Gemm),
            ("attention", self.attention, PartKind::Attention),
        ]
    }

    /// Seconds of the part called `name` under `eff` (its memory and math; overheads are not parts).
    fn part_seconds(&self, name: &str, eff: &Efficiencies) -> Option<f64> {
        let (_, part, kind) = self.parts().into_iter().find(|(n, ..)| *n == name)?;
        Some(kind.seconds(part, eff))
    }
}

/// What a part's math is and how it meets its memory traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PartKind {
    /// Dense GEMMs (non-expert weights, LM head): math at `flops_eff`, overlapped with the weight stream at
    /// the profile's `overlap`.
    Gemm,
    /// The routed experts' grouped GEMMs: math at `flops_eff`, **added** to their weight stream at any
    /// `overlap` (see the module docs).
    Experts,
    /// Attention: math at `attn_eff`, overlapped with the KV traffic at the profile's `overlap`.
    Attention,
}

impl PartKind {
    /// The coefficient (in [`Efficiencies::coefficients`] order) its math runs at.
    fn math(self) -> usize {
        if self == PartKind::Attention { 2 } else { 1 }
    }

    /// Seconds of `part` of this kind under `eff` (its memory and math).
    fn seconds(self, part: Roof, eff: &Efficiencies) -> f64 {
        let c = eff.coefficients();
        part.split(c[0], c[self.math()], self.overlap(eff)).0
    }

    /// The p-norm exponent its memory and math combine at.
    fn overlap(self, eff: &Efficiencies) -> f64 {
        if self == PartKind::Experts { 1.0 } else { eff.overlap }
    }
}

/// Number of calibrated coefficients.
pub const PARAMETERS: usize = 11;

/// Number of profile columns: the coefficients and the overlap.
pub const COLUMN_COUNT: usize = PARAMETERS + 1;

/// Largest overlap exponent (beyond it the p-norm is a plain max for any practical purpose).
pub const MAX_OVERLAP: f64 = 8.0;

/// The profile columns, in [`Efficiencies::values`] order: the coefficients' quantities in
/// [`Efficiencies::coefficients`] order, then the overlap.
pub const COLUMNS: [&str; COLUMN_COUNT] = [
    "bw_eff",
    "flops_eff",
    "attn_eff",
    "t_fixed_us",
    "layer_us",
    "moe_layer_us",
    "token_us",
    "draft_fixed_us",
    "spec_fixed_us",
    "spec_token_us",
    "moe_token_us",
    "overlap",
];

/// The efficiencies and overheads that turn [`StepTerms`] into seconds: one hardware profile's defaults, or
/// what calibration fitted for a deployment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Efficiencies {
    /// Achieved fraction of peak HBM bandwidth (weights, experts, KV cache, LM head).
    pub bw_eff: f64,
    /// Achieved fraction of the weights' peak FLOP/s in GEMMs.
    pub flops_eff: f64,
    /// Achieved fraction of the attention precision's peak FLOP/s in attention math.
    pub attn_eff: f64,
    /// Fixed time per target forward, µs.
    pub t_fixed_us: f64,
    /// Fixed time per layer pass (target or drafter), µs.
    pub layer_us: f64,
    /// Fixed time per MoE layer pass on top of `layer_us`, µs.
    pub moe_layer_us: f64,
    /// Time per token whose logits a forward computes, µs.
    pub token_us: f64,
    /// Fixed time per layer of each draft forward, µs (once per forward for a one-layer head).
    pub draft_fixed_us: f64,
    /// Fixed time per speculative step, µs.
    pub spec_fixed_us: f64,
    /// Time per draft token verified, µs.
    pub spec_token_us: f64,
    /// Time per decode token per MoE layer pass under expert parallelism (the exchange that sends it to
    /// the GPUs holding its experts and back), µs; nothing where EP is 1 or in prefill.
    pub moe_token_us: f64,
    /// How a part's memory traffic and math combine: the p-norm `(mᵖ + cᵖ)^(1/p)` of the two times — 1 adds
    /// them (the default: what served whole steps show), larger values let them overlap towards a roofline
    /// per part (what a bare GPU's kernels show; `alsim calibrate` fits it from step times).
    pub overlap: f64,
}

impl Efficiencies {
    /// The coefficients of the step time in seconds, in [`COLUMNS`] order: the reciprocal
    /// efficiencies, then the overheads in seconds.
    pub fn coefficients(&self) -> [f64; PARAMETERS] {
        [
            1.0 / self.bw_eff,
            1.0 / self.flops_eff,
            1.0 / self.attn_eff,
            self.t_fixed_us * 1e-6,
            self.layer_us * 1e-6,
            self.moe_layer_us * 1e-6,
            self.token_us * 1e-6,
            self.draft_fixed_us * 1e-6,
            self.spec_fixed_us * 1e-6,
            self.spec_token_us * 1e-6,
            self.moe_token_us * 1e-6,
        ]
    }

    /// The inverse of [`Efficiencies::coefficients`], at `overlap`.
    pub fn from_coefficients(c: &[f64; PARAMETERS], overlap: f64) -> Efficiencies {
        Efficiencies {
            bw_eff: 1.0 / c[0],
            flops_eff: 1.0 / c[1],
            attn_eff: 1.0 / c[2],
            t_fixed_us: c[3] * 1e6,
            layer_us: c[4] * 1e6,
            moe_layer_us: c[5] * 1e6,
            token_us: c[6] * 1e6,
            draft_fixed_us: c[7] * 1e6,
            spec_fixed_us: c[8] * 1e6,
            spec_token_us: c[9] * 1e6,
            moe_token_us: c[10] * 1e6,
            overlap,
        }
    }

    /// The values in [`COLUMNS`] order, in the profile's units.
    pub fn values(&self) -> [f64; COLUMN_COUNT] {
        [
            self.bw_eff,
            self.flops_eff,
            self.attn_eff,
            self.t_fixed_us,
            self.layer_us,
            self.moe_layer_us,
            self.token_us,
            self.draft_fixed_us,
            self.spec_fixed_us,
            self.spec_token_us,
            self.moe_token_us,
            self.overlap,
        ]
    }

    /// The inverse of [`Efficiencies::values`].
    pub fn from_values(v: [f64; COLUMN_COUNT]) -> Efficiencies {
        Efficiencies {
            bw_eff: v[0],
            flops_eff: v[1],
            attn_eff: v[2],
            t_fixed_us: v[3],
            layer_us: v[4],
            moe_layer_us: v[5],
            token_us: v[6],
            draft_fixed_us: v[7],
            spec_fixed_us: v[8],
            spec_token_us: v[9],
            moe_token_us: v[10],
            overlap: v[11],
        }
    }

    /// Checks the ranges, naming `owner.field`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an efficiency outside (0, 1] or a negative or non-finite overhead.
    pub fn validate(&self, owner: &str) -> Result<()> {
        for (name, value) in COLUMNS.iter().zip(self.values()) {
            let (ok, want) = if name.ends_with("_eff") {
                (value > 0.0 && value <= 1.0, "an efficiency in (0, 1]".to_string())
            } else if *name == "overlap" {
                ((1.0..=MAX_OVERLAP).contains(&value), format!("an exponent in [1, {MAX_OVERLAP}]"))
            } else {
                (value >= 0.0 && value.is_finite(), "a time ≥ 0".to_string())
            };
            if !ok {
                return Err(Error::invalid(format!("{owner}.{name}"), format!("{value} must be {want}")));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Efficiencies {
    /// `bw_eff 0.800, flops_eff 0.400, …, overlap 1.00`: every value under its profile column name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (name, value)) in COLUMNS.iter().zip(self.values()).enumerate() {
            let digits = if name.ends_with("_eff") {
                3
            } else if *name == "overlap" || *name == "moe_token_us" {
                2
            } else {
                1
            };
            write!(f, "{}{name} {value:.digits$}", if i > 0 { ", " } else { "" })?;
        }
        Ok(())
    }
}

/// One decode step's terms: the verify (or plain decode) forward, all draft forwards, the prefill amortised
/// per step, and the speculation counts.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct StepTerms {
    /// The target forward over B·(k+1) tokens (B for spec off).
    pub verify: ForwardTerms,
    /// Every draft forward of the step.
    pub draft: ForwardTerms,
    /// Prefill of the uncached input, amortised over the steps each request decodes.
    pub prefill: ForwardTerms,
    /// 1 for a speculative step, 0 for spec off.
    pub spec_steps: f64,
    /// Draft tokens verified in the step (B·k).
    pub draft_tokens: f64,
}

impl StepTerms {
    /// The features fᵢ the coefficients multiply at `eff`, in [`COLUMNS`] order: the step time under
    /// `eff` is exactly `comm + Σ cᵢ·fᵢ`; where a part's memory and math overlap, the features shift between
    /// them as the efficiencies change (calibration iterates).
    pub fn features(&self, eff: &Efficiencies) -> [f64; PARAMETERS] {
        let mut f = [0.0; PARAMETERS];
        for forward in [&self.verify, &self.draft, &self.prefill] {
            for (a, b) in f.iter_mut().zip(forward.features(eff)) {
                *a += b;
            }
        }
        f[8] = self.spec_steps;
        f[9] = self.draft_tokens;
        f
    }

    /// Communication seconds (no coefficient).
    pub fn comm_s(&self) -> f64 {
        self.verify.comm_s + self.draft.comm_s + self.prefill.comm_s
    }

    /// The step's time and its breakdown under `eff`.
    pub fn time(&self, eff: &Efficiencies) -> StepTime {
        let c = eff.coefficients();
        let speculation = self.spec_steps * c[8] + self.draft_tokens * c[9];
        let verify = self.verify.seconds(eff);
        let draft = self.draft.seconds(eff);
        let prefill = self.prefill.seconds(eff);
        let overheads = [
            ("fixed", self.verify.target_forwards * c[3] + self.verify.layers * c[4] + self.verify.moe_layers * c[5]),
            ("tokens", self.verify.tokens * c[6] + self.verify.moe_tokens * c[10]),
            ("communication", self.verify.comm_s),
        ];
        let parts = self.verify.parts().map(|(name, part, kind)| (name, kind.seconds(part, eff)));
        let dominant = parts
            .iter()
            .chain(&overheads)
            .chain(&[("drafter", draft), ("prefill", prefill), ("speculation", speculation)])
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or("", |p| p.0);
        StepTime { total: verify + draft + prefill + speculation, verify, draft, prefill, speculation, dominant }
    }

    /// The time of a named part under `eff`, for comparison with a measured `<part>_ms` column; `None` for a
    /// name the model does not price separately.
    pub fn part(&self, name: &str, eff: &Efficiencies) -> Option<f64> {
        let v = &self.verify;
        let d = &self.draft;
        match name {
            "communication" | "comm" => Some(v.comm_s),
            "verify" => Some(v.seconds(eff)),
            "drafter" | "draft" => Some(d.seconds(eff)),
            _ => match name.strip_prefix("drafter_") {
                Some(part) => d.part_seconds(part, eff),
                None => v.part_seconds(name, eff),
            },
        }
    }
}

/// One step's time, seconds, and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StepTime {
    /// Verify + drafts + amortised prefill + speculation overhead.
    pub total: f64,
    /// The target's verify (or plain decode) forward, overheads included.
    pub verify: f64,
    /// All draft forwards.
    pub draft: f64,
    /// Amortised prefill.
    pub prefill: f64,
    /// Per-step and per-draft-token speculation overhead.
    pub speculation: f64,
    /// The largest single part of the step (`dense`, `experts`, `attention`, `lm_head`, `fixed`, `tokens`,
    /// `communication`, `drafter`, `prefill` or `speculation`).
    pub dominant: &'static str,
}

fn dot(a: &[f64; PARAMETERS], b: &[f64; PARAMETERS]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eff() -> Efficiencies {
        Efficiencies {
            bw_eff: 0.8,
            flops_eff: 0.4,
            attn_eff: 0.25,
            t_fixed_us: 1000.0,
            layer_us: 50.0,
            moe_layer_us: 80.0,
            token_us: 10.0,
            draft_fixed_us: 150.0,
            spec_fixed_us: 100.0,
            spec_token_us: 10.0,
            moe_token_us: 0.5,
            overlap: 1.0,
        }
    }

    #[test]
    fn time_is_linear_in_the_coefficients_and_parts_add_up() {
        let forward = ForwardTerms {
            dense: Roof { memory_s: 1e-3, compute_s: 2e-4 },
            experts: Roof { memory_s: 3e-3, compute_s: 1e-4 },
            attention: Roof { memory_s: 5e-4, compute_s: 4e-4 },
            lm_head: Roof { memory_s: 2e-4, compute_s: 1e-5 },
            comm_s: 3e-4,
            target_forwards: 1.0,
            draft_forwards: 0.0,
            layers: 61.0,
            moe_layers: 58.0,
            tokens: 64.0,
            moe_tokens: 64.0 * 58.0,
        };
        let mut draft = ForwardTerms::default();
        draft.add(&ForwardTerms { target_forwards: 0.0, draft_forwards: 1.0, tokens: 16.0, ..forward }, 3.0);
        let step =
            StepTerms { verify: forward, draft, prefill: ForwardTerms::default(), spec_steps: 1.0, draft_tokens: 48.0 };
        let e = eff();
        let t = step.time(&e);
        let linear: f64 =
            step.features(&e).iter().zip(e.coefficients()).map(|(f, c)| f * c).sum::<f64>() + step.comm_s();
        assert!((t.total - linear).abs() < 1e-12, "{t:?} vs {linear}");
        assert!((t.total - t.verify - t.draft - t.prefill - t.speculation).abs() < 1e-12);
        assert_eq!(t.dominant, "drafter");
        let parts: f64 = ["dense", "experts", "attention", "lm_head"].iter().map(|p| step.part(p, &e).unwrap()).sum();
        let overheads = 1e-3 + 61.0 * 50e-6 + 58.0 * 80e-6 + 64.0 * 10e-6 + 64.0 * 58.0 * 0.5e-6 + 3e-4;
        assert!((parts + overheads - t.verify).abs() < 1e-12);
        assert_eq!(step.part("scheduler", &e), None);
        assert!(
            e.to_string().starts_with("bw_eff 0.800, flops_eff 0.400")
                && e.to_string().ends_with("spec_token_us 10.0, moe_token_us 0.50, overlap 1.00")
        );
        let back = Efficiencies::from_coefficients(&e.coefficients(), e.overlap);
        for (a, b) in back.values().iter().zip(e.values()) {
            assert!((a - b).abs() < 1e-9 * b.max(1.0));
        }
    }

    #[test]
    fn the_experts_math_adds_to_their_weight_stream_at_any_overlap() {
        // Every expert woken (the weight stream fixed), one more verify position adds its grouped GEMMs' math
        // in full: Δt = Δcompute / flops_eff, at overlap 1 and 4 alike. A dense GEMM overlapped at p = 4 hides
        // most of it under its stream, (m⁴ + c⁴)^¼ − m.
        let (stream, math, more) = (0.18, 0.01, 0.01);
        for overlap in [1.0, 4.0] {
            let e = Efficiencies { overlap, ..eff() };
            // The same roof priced as the experts and as the dense GEMMs.
            let at = |compute_s, name| {
                let roof = Roof { memory_s: stream, compute_s };
                ForwardTerms { experts: roof, dense: roof, ..ForwardTerms::default() }.part_seconds(name, &e).unwrap()
            };
            let step = at(math + more, "experts") - at(math, "experts");
            assert!((step - more / e.flops_eff).abs() < 1e-12, "overlap {overlap}: {step}");
            let (m, c) = (stream / e.bw_eff, |x: f64| x / e.flops_eff);
            let dense = at(math + more, "dense") - at(math, "dense");
            let p_norm = |x: f64| (m.powf(overlap) + c(x).powf(overlap)).powf(1.0 / overlap);
            assert!((dense - (p_norm(math + more) - p_norm(math))).abs() < 1e-12, "overlap {overlap}: {dense}");
        }
        // The fit sees the same split: the features carry the experts' math whole.
        let forward = ForwardTerms { experts: Roof { memory_s: stream, compute_s: math }, ..ForwardTerms::default() };
        let e = Efficiencies { overlap: 4.0, ..eff() };
        let f = forward.features(&e);
        assert!((f[0] - stream).abs() < 1e-15 && (f[1] - math).abs() < 1e-15, "{f:?}");
    }

    #[test]
    fn out_of_range_efficiencies_name_the_field() {
        let mut e = eff();
        e.attn_eff = 1.5;
        let err = e.validate("hardware b200").unwrap_err().to_string();
        assert!(err.contains("hardware b200.attn_eff") && err.contains("(0, 1]"), "{err}");
        let mut e = eff();
        e.token_us = -1.0;
        assert!(e.validate("x").unwrap_err().to_string().contains("x.token_us"));
        eff().validate("x").unwrap();
    }
}

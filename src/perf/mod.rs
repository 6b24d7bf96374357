//! Throughput per concurrency for every draft length, and the choice of k (model.md §6).
//!
//! This module owns the hardware, model and drafter profiles ([`profile`], data in `profiles/*.csv`, embedded
//! in the binary), the roofline step-time model ([`cost::CostModel`]), the sweep over concurrency × k with the
//! best k per concurrency ([`Sweep`]), and the least-squares calibration of the model's efficiencies from
//! measured runs ([`calibrate`]).
//!
//! Per step with B concurrent requests (model.md §6):
//!   throughput/GPU = B·AL(k) / T_SD / GPUs,   per-user speed = AL(k) / T_SD,   speedup = AL(k)·T_AR / T_SD,
//!   k* = argmax_k throughput (k = 0 is spec off), optionally subject to per-user speed ≥ a floor.
//! At a fixed concurrency throughput and per-user speed rank the k's identically, so the floor decides
//! feasibility per concurrency and, across concurrencies, the best operating point.
//! Sources: SPEED-Bench (arXiv:2604.09557, Appendix H) validates the speedup proxy t_ar·AL/t_sd within ±0.02×;
//! the best-k rule is the one SmartSpec/TurboSpec and vLLM's per-batch-size k table apply at run time.
//!
//! ```
//! use alsim::perf::{AcceptanceSource, Sweep, cost::{CostModel, Workload}, profile::{Precision, Profiles}};
//!
//! let p = Profiles::embedded();
//! let model = p.model("minimax-m3")?;
//! let drafter = p.drafter(model, Some("Inferact/MiniMax-M3-EAGLE3"), None)?;
//! let cost = CostModel::new(p.hardware("mi355x")?, model, Some(drafter), 4, Precision::Fp4, Precision::Bf16)?;
//! let al = AcceptanceSource::explicit(&[1.78, 2.38, 2.83])?;
//! let sweep = Sweep::run(&cost, &al, &[1, 16], &Workload::Decode { context: 2048.0 }, None)?;
//! assert_eq!(sweep.predictions.len(), 2 * 4); // k = 0..=3 at two concurrencies
//! assert!(sweep.best[0].best_k.unwrap() > 0); // speculation pays at B = 1
//! # Ok::<(), alsim::Error>(())
//! ```

pub mod calibrate;
pub mod cost;
pub mod csv;
pub mod profile;

use serde::Serialize;

use std::collections::BTreeMap;

use crate::accept::fit::{FitKind, fit};
use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::units::{check_al, check_draft_len};
use cost::{CostModel, Workload};

/// The largest draft length the sweep covers by default (the golden curves stop at 8).
pub const DEFAULT_MAX_K: usize = 8;

/// Acceptance length per draft length: AL(0) = 1 (spec off), AL(1..=K) from a golden curve, a chain fitted to
/// a curve or to measured points, real-verification evidence, or given explicitly. Evidence that counts only
/// accepted tokens measures AL at its own k alone; the k it does not cover are `None` and left out of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcceptanceSource {
    /// Where the values come from (a golden curve field, a fit, evidence, or "explicit").
    pub description: String,
    /// AL(k) for k = 0..=K; `None` where the source says nothing about that k.
    pub al: Vec<Option<f64>>,
}

impl AcceptanceSource {
    /// AL(1..=`max_k`) from a golden curve.
    ///
    /// # Errors
    /// [`Error::Lookup`] when the curve lacks a k; [`Error::Invalid`] when `max_k` is out of range or a value
    /// is outside [1, k+1].
    pub fn from_curve(curve: &Curve, origin: &str, max_k: usize) -> Result<Self> {
        check_draft_len(max_k, "--max-k")?;
        let mut al = vec![Some(1.0)];
        for k in 1..=max_k {
            al.push(Some(curve.al(k)?));
        }
        Ok(AcceptanceSource { description: format!("{origin} {} {}", curve.model(), curve.mode()), al })
    }

    /// AL(1..=`max_k`) from a chain of kind `kind` fitted to `curve`'s points — which fills k the points skip and
    /// extends past the last one (model.md §2). `origin` says where the points came from.
    ///
    /// # Errors
    /// [`Error::Invalid`] when the curve has too few points for the fit or `max_k` is out of range.
    pub fn fitted(curve: &Curve, kind: FitKind, origin: &str, max_k: usize) -> Result<Self> {
        check_draft_len(max_k, "--max-k")?;
        // The fit names the points by a curve key; the user knows them by where they came from.
        let model = match fit(curve, kind) {
            Ok(fitted) => fitted.model,
            Err(Error::Invalid { message, .. }) => return Err(Error::invalid("--fit", format!("{origin}: {message}"))),
            Err(other) => return Err(other),
        };
        let al = (0..=max_k).map(|k| Some(model.acceptance_length(k))).collect();
        Ok(AcceptanceSource { description: format!("{origin}, {kind} fit"), al })
    }

    /// The measured points up to `max_k`, as they are (e.g. [`crate::evidence::measured_al`]).
    ///
    /// # Errors
    /// [`Error::Invalid`] when no point is at or below `max_k`, or a value is outside [1, k+1].
    pub fn measured(points: &BTreeMap<usize, f64>, description: impl Into<String>, max_k: usize) -> Result<Self> {
        check_draft_len(max_k, "--max-k")?;
        let description = description.into();
        let mut al = vec![None; max_k + 1];
        al[0] = Some(1.0);
        for (&k, &v) in points.range(1..=max_k) {
            check_al(v, k, &description)?;
            al[k] = Some(v);
        }
        if al.iter().skip(1).all(Option::is_none) {
            let ks: Vec<String> = points.keys().map(usize::to_string).collect();
            return Err(Error::invalid(
                "--max-k",
                format!("{description} measures k = {} only, above --max-k {max_k}", ks.join(", ")),
            ));
        }
        Ok(AcceptanceSource { description, al })
    }

    /// Explicit AL(1), AL(2), … (`--al`).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming `--al` when empty or a value is outside [1, k+1].
    pub fn explicit(values: &[f64]) -> Result<Self> {
        if values.is_empty() {
            return Err(Error::invalid("--al", "give at least AL(1)"));
        }
        let mut al = vec![Some(1.0)];
        for (i, &v) in values.iter().enumerate() {
            check_al(v, i + 1, "--al")?;
            al.push(Some(v));
        }
        Ok(AcceptanceSource { description: "explicit --al".into(), al })
    }

    /// The largest k covered.
    pub fn max_k(&self) -> usize {
        self.al.len() - 1
    }

    /// The (k, AL) pairs the source gives, k = 0 first.
    pub fn points(&self) -> impl Iterator<Item = (usize, f64)> + '_ {
        self.al.iter().enumerate().filter_map(|(k, al)| al.map(|al| (k, al)))
    }
}

/// The prediction for one (concurrency, k).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prediction {
    /// Concurrent requests B.
    pub concurrency: usize,
    /// Draft length (0 = spec off).
    pub k: usize,
    /// Acceptance length used.
    pub al: f64,
    /// Effective step time, ms (verify + drafts + amortised prefill).
    pub step_ms: f64,
    /// Verify (or plain decode) forward, ms.
    pub verify_ms: f64,
    /// All draft forwards, ms.
    pub draft_ms: f64,
    /// Amortised prefill, ms.
    pub prefill_ms: f64,
    /// Output tokens per second per GPU.
    pub throughput_per_gpu: f64,
    /// Output tokens per second per request.
    pub per_user_tps: f64,
    /// Throughput over spec off at the same concurrency.
    pub speedup: f64,
    /// Whether the verify forward is memory-bound.
    pub memory_bound: bool,
    /// Whether weights plus the KV cache of all requests fit in GPU memory.
    pub fits_memory: bool,
}

impl Prediction {
    /// Throughput per GPU, per-user speed and speedup from step times (model.md §6): B·AL/T/GPUs, AL/T,
    /// AL·T_AR/T. Time in seconds.
    ///
    /// ```
    /// // SPEED-Bench Table 10, EAGLE3 low entropy 1k: t_ar 19.6 ms, t_sd 25.9 ms, AL 2.93 -> 2.22x.
    /// let (_, _, s) = alsim::perf::Prediction::rates(16, 2.93, 0.0259, 0.0196, 1);
    /// assert!((s - 2.22).abs() < 0.01);
    /// ```
    pub fn rates(concurrency: usize, al: f64, step_s: f64, ar_step_s: f64, gpus: usize) -> (f64, f64, f64) {
        let per_user = al / step_s;
        (concurrency as f64 * per_user / gpus as f64, per_user, al * ar_step_s / step_s)
    }
}

/// The best k at one concurrency, with the runner-up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BestK {
    /// Concurrent requests B.
    pub concurrency: usize,
    /// The k with the highest throughput meeting the per-user floor; `None` when no k meets it.
    pub best_k: Option<usize>,
    /// The next best k (also meeting the floor).
    pub runner_up: Option<usize>,
    /// Throughput of the best over the runner-up, minus 1, in percent.
    pub margin_pct: Option<f64>,
    /// Speedup of the best k over spec off.
    pub speedup: Option<f64>,
}

/// All predictions for one deployment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    /// Hardware key.
    pub hardware: String,
    /// Hardware display name.
    pub hardware_name: String,
    /// Model key.
    pub model: String,
    /// Drafter key (None when only k = 0 is predicted).
    pub drafter: Option<String>,
    /// Tensor parallelism (GPUs per replica).
    pub tp: usize,
    /// Weight precision.
    pub precision: String,
    /// KV-cache precision.
    pub kv_precision: String,
    /// Efficiencies in force: HBM bandwidth fraction.
    pub bw_eff: f64,
    /// Efficiencies in force: compute fraction.
    pub flops_eff: f64,
    /// Fixed time per target forward, µs.
    pub t_fixed_us: f64,
    /// Fixed time per draft forward, µs.
    pub draft_fixed_us: f64,
    /// One row per (concurrency, k), concurrency-major.
    pub predictions: Vec<Prediction>,
    /// The best k per concurrency.
    pub best: Vec<BestK>,
    /// The (concurrency, k) with the highest throughput per GPU meeting the floor.
    pub operating_point: Option<(usize, usize)>,
}

impl Sweep {
    /// Predicts every (concurrency, k) for the k that `acceptance` gives, and picks the best k per concurrency
    /// subject to `min_user_tps`.
    ///
    /// # Errors
    /// [`Error::Invalid`] for an empty or zero concurrency, a non-positive floor, or k > 0 without a drafter.
    pub fn run(
        cost: &CostModel,
        acceptance: &AcceptanceSource,
        concurrency: &[usize],
        workload: &Workload,
        min_user_tps: Option<f64>,
    ) -> Result<Sweep> {
        workload.validate()?;
        if concurrency.is_empty() {
            return Err(Error::invalid("--concurrency", "give at least one concurrency"));
        }
        if let Some(floor) = min_user_tps.filter(|f| !(*f > 0.0 && f.is_finite())) {
            return Err(Error::invalid("--min-user-tps", format!("{floor} must be a positive speed")));
        }
        let gpus = cost.tp();
        let mut predictions = Vec::with_capacity(concurrency.len() * acceptance.al.len());
        let mut best = Vec::with_capacity(concurrency.len());
        for &b in concurrency {
            let fits = cost.kv_fits(b, workload);
            let ar = cost.step_time(b, 0, 1.0, workload)?;
            let start = predictions.len();
            for (k, al) in acceptance.points() {
                let t = if k == 0 { ar } else { cost.step_time(b, k, al, workload)? };
                let (throughput_per_gpu, per_user_tps, speedup) = Prediction::rates(b, al, t.total, ar.total, gpus);
                predictions.push(Prediction {
                    concurrency: b,
                    k,
                    al,
                    step_ms: t.total * 1e3,
                    verify_ms: t.verify * 1e3,
                    draft_ms: t.draft * 1e3,
                    prefill_ms: t.prefill * 1e3,
                    throughput_per_gpu,
                    per_user_tps,
                    speedup,
                    memory_bound: t.memory_bound,
                    fits_memory: fits,
                });
            }
            best.push(pick_best(&predictions[start..], b, min_user_tps));
        }
        let operating_point = predictions
            .iter()
            .filter(|p| min_user_tps.is_none_or(|f| p.per_user_tps >= f) && p.fits_memory)
            .max_by(|a, b| a.throughput_per_gpu.total_cmp(&b.throughput_per_gpu))
            .map(|p| (p.concurrency, p.k));
        let hw = cost.hardware();
        Ok(Sweep {
            hardware: hw.key.clone(),
            hardware_name: hw.name.clone(),
            model: cost.model().key.clone(),
            drafter: cost.drafter().map(|d| d.key.clone()),
            tp: cost.tp(),
            precision: cost.precision().to_string(),
            kv_precision: cost.kv_precision().to_string(),
            bw_eff: hw.bw_eff,
            flops_eff: hw.flops_eff,
            t_fixed_us: hw.t_fixed_us,
            draft_fixed_us: hw.draft_fixed_us,
            predictions,
            best,
            operating_point,
        })
    }
}

/// What `alsim predict` prints: the setup and one [`Sweep`] per hardware.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictReport {
    /// Model profile key and display name.
    pub model: String,
    /// Where AL(k) came from and its values for k = 0..=K.
    pub acceptance: AcceptanceSource,
    /// The request shape.
    pub workload: Workload,
    /// Per-user speed floor, tok/s.
    pub min_user_tps: Option<f64>,
    /// One sweep per hardware profile.
    pub sweeps: Vec<Sweep>,
    /// Remarks: profile figures still unconfirmed, memory limits, inputs not yet supported.
    pub notes: Vec<String>,
}

/// Ranks one concurrency's predictions by throughput (ties keep the smaller k: less drafting for nothing).
fn pick_best(rows: &[Prediction], concurrency: usize, floor: Option<f64>) -> BestK {
    let mut ranked: Vec<&Prediction> = rows.iter().filter(|p| floor.is_none_or(|f| p.per_user_tps >= f)).collect();
    ranked.sort_by(|a, b| b.throughput_per_gpu.total_cmp(&a.throughput_per_gpu).then(a.k.cmp(&b.k)));
    let first = ranked.first();
    let second = ranked.get(1);
    BestK {
        concurrency,
        best_k: first.map(|p| p.k),
        runner_up: second.map(|p| p.k),
        margin_pct: first.zip(second).map(|(a, b)| (a.throughput_per_gpu / b.throughput_per_gpu - 1.0) * 100.0),
        speedup: first.map(|p| p.speedup),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{CurveQuery, CurveSet, ThinkingMode};
    use crate::perf::profile::{Precision, Profiles};
    use proptest::prelude::*;

    fn seed_sweep(concurrency: &[usize]) -> Sweep {
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        let cost =
            CostModel::new(p.hardware("mi355x").unwrap(), m, Some(d), 4, Precision::Fp4, Precision::Bf16).unwrap();
        let set = CurveSet::embedded();
        let found = set
            .lookup(&CurveQuery {
                model: "minimax-m3".into(),
                drafter: Some("Inferact/MiniMax-M3-EAGLE3".into()),
                mode: Some(ThinkingMode::On),
                ..Default::default()
            })
            .unwrap();
        let al = AcceptanceSource::from_curve(found.curve, &found.file.origin, 8).unwrap();
        let w = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
        Sweep::run(&cost, &al, concurrency, &w, None).unwrap()
    }

    #[test]
    fn moe_pays_an_expert_tax_at_small_batch_and_best_k_falls_at_large_batch() {
        let sweep = seed_sweep(&[1, 8, 64, 128, 256, 512]);
        let speedup = |b: usize| sweep.best.iter().find(|x| x.concurrency == b).unwrap().speedup.unwrap();
        let best = |b: usize| sweep.best.iter().find(|x| x.concurrency == b).unwrap().best_k.unwrap();
        // Expert tax: at B = 8 the verify tokens wake experts that spec off leaves idle, so speculation pays
        // less than at B = 1 — and more again at B = 64, once spec off already touches most experts.
        assert!(speedup(8) < speedup(1) && speedup(8) < speedup(64), "{:?}", sweep.best);
        // Past that the step turns compute-bound and the best k falls as the batch grows.
        let large: Vec<usize> = [64, 128, 256, 512].iter().map(|&b| best(b)).collect();
        assert!(large.windows(2).all(|w| w[1] <= w[0]) && large[3] < large[0], "{large:?}");
        let first = &sweep.best[0];
        assert!(first.runner_up.is_some() && first.margin_pct.unwrap() >= 0.0);
        assert_eq!(sweep.predictions[0].speedup, 1.0);
    }

    #[test]
    fn dense_best_k_never_rises_with_batch() {
        let p = Profiles::embedded();
        let m = p.model("llama-3.3-70b").unwrap();
        let d = p.drafter(m, Some("EAGLE3"), None).unwrap();
        let cost =
            CostModel::new(p.hardware("b200").unwrap(), m, Some(d), 1, Precision::Bf16, Precision::Bf16).unwrap();
        let al = AcceptanceSource::explicit(&[2.0, 2.4, 2.7, 2.9, 3.0, 3.1, 3.15, 3.2]).unwrap();
        let w = Workload::Decode { context: 2048.0 };
        let sweep = Sweep::run(&cost, &al, &[1, 4, 16, 64, 128, 256], &w, None).unwrap();
        let ks: Vec<usize> = sweep.best.iter().map(|b| b.best_k.unwrap()).collect();
        assert!(ks.windows(2).all(|w| w[1] <= w[0]) && ks[5] < ks[0], "{ks:?}");
    }

    #[test]
    fn spec_off_step_at_batch_one_is_a_plausible_decode_speed() {
        // No B = 1 decode speed of MiniMax-M3 is published yet. The same default efficiencies reproduce the one
        // published serving figure of its family within 25% (MiniMax-M2.5 on 4x H100, next test); single-stream
        // decode of 10-40B-active MoEs on current GPUs runs at roughly 50-500 tok/s without speculation, i.e. a
        // step of 2-20 ms. The model gives 2.8 ms (~360 tok/s) on MI355X TP4 — fast, as MXFP4 at B = 1 reads only
        // ~3.3 GB per GPU, but inside the range.
        let sweep = seed_sweep(&[1]);
        let off = sweep.predictions[0];
        assert!((2.0..20.0).contains(&off.verify_ms), "{}", off.verify_ms);
    }

    #[test]
    fn sibling_model_matches_a_published_serving_measurement() {
        // Lambda's MiniMax-M2.5 page: SGLang, 32 concurrent requests, 8192 in / 1024 out: inter-token latency
        // 27 ms on 4x H100 and 36 ms on "2x Blackwell" (taken as B200). The uncalibrated roofline lands within
        // 25% of the H100 figure; on Blackwell it predicts 21 ms — the run is slower than the roofline (kernels
        // further from peak), which a roofline may only ever underestimate.
        let p = Profiles::embedded();
        let m = p.model("minimax-m2.5").unwrap();
        let w = Workload::Turns { isl: 8192.0, osl: 1024.0, prefix_hit: 0.0 };
        let itl_ms = |hardware: &str, tp: usize| {
            let cost =
                CostModel::new(p.hardware(hardware).unwrap(), m, None, tp, Precision::Fp8, Precision::Bf16).unwrap();
            cost.step_time(32, 0, 1.0, &w).unwrap().total * 1e3
        };
        let h100 = itl_ms("h100", 4);
        assert!((h100 / 27.0 - 1.0).abs() < 0.25, "{h100}");
        let b200 = itl_ms("b200", 2);
        assert!(b200 < 36.0 && b200 > 36.0 / 2.0, "{b200}");
    }

    #[test]
    fn floor_restricts_the_choice() {
        let sweep = seed_sweep(&[1, 64]);
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        let cost =
            CostModel::new(p.hardware("mi355x").unwrap(), m, Some(d), 4, Precision::Fp4, Precision::Bf16).unwrap();
        let al = AcceptanceSource::explicit(&[1.78, 2.38, 2.83]).unwrap();
        let fast_b1 =
            sweep.predictions.iter().filter(|p| p.concurrency == 1).map(|p| p.per_user_tps).fold(0.0, f64::max);
        let w = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
        let floored = Sweep::run(&cost, &al, &[64], &w, Some(fast_b1 * 10.0)).unwrap();
        assert_eq!(floored.best[0].best_k, None);
        assert_eq!(floored.operating_point, None);
        assert!(Sweep::run(&cost, &al, &[64], &w, Some(-1.0)).is_err());
        assert!(Sweep::run(&cost, &al, &[], &w, None).is_err());
        assert!(AcceptanceSource::explicit(&[2.5]).is_err());
    }

    proptest! {
        #[test]
        fn throughput_is_non_negative_and_bandwidth_never_slows(
            b in 1usize..256, k in 0usize..=8, context in 0.0f64..200_000.0, scale in 1.0f64..4.0
        ) {
            let p = Profiles::embedded();
            let m = p.model("minimax-m3").unwrap();
            let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3-GQA"), None).unwrap();
            let hw = p.hardware("b200").unwrap();
            let mut faster = hw.clone();
            faster.hbm_tb_s *= scale;
            let w = Workload::Decode { context };
            let al = 1.0 + k as f64 * 0.5;
            let slow = CostModel::new(hw, m, Some(d), 4, Precision::Fp4, Precision::Fp8).unwrap();
            let quick = CostModel::new(&faster, m, Some(d), 4, Precision::Fp4, Precision::Fp8).unwrap();
            let t_slow = slow.step_time(b, k, al, &w).unwrap().total;
            let t_quick = quick.step_time(b, k, al, &w).unwrap().total;
            prop_assert!(t_quick <= t_slow * (1.0 + 1e-12));
            let (tput, user, _) = Prediction::rates(b, al, t_slow, t_slow, 4);
            prop_assert!(tput >= 0.0 && user >= 0.0);
        }

        #[test]
        fn at_a_fixed_step_time_higher_al_never_lowers_throughput(
            b in 1usize..512, al in 1.0f64..9.0, extra in 0.0f64..3.0, step in 1e-4f64..1.0
        ) {
            let (low, _, s_low) = Prediction::rates(b, al, step, step, 8);
            let (high, _, s_high) = Prediction::rates(b, al + extra, step, step, 8);
            prop_assert!(high >= low && s_high >= s_low);
        }
    }
}

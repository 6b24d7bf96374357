//! The sweep over concurrency × k for one deployment and one request shape (docs/model.md §6):
//!   throughput/GPU = B·AL(k) / T_SD / GPUs,   per-user speed = AL(k) / T_SD,   speedup = AL(k)·T_AR / T_SD.

use serde::Serialize;

use super::acceptance::AcceptanceSource;
use super::choice::{Band, Choice, FrontierPoint, choose, frontier};
use super::cost::{CostModel, Workload};
use super::prediction::Marginal;
pub(crate) use super::prediction::Prediction;
use super::terms::{Efficiencies, StepTerms};
use crate::error::{Error, Result};

/// All predictions for one deployment, drafter and request shape.
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
    /// This drafter's AL(k) and where it came from.
    pub acceptance: AcceptanceSource,
    /// Tensor parallelism (GPUs per replica).
    pub tp: usize,
    /// Expert parallelism (1: none).
    pub ep: usize,
    /// Data-parallel attention.
    pub dp_attention: bool,
    /// Weight precision.
    pub precision: String,
    /// KV-cache (and attention) precision.
    pub kv_precision: String,
    /// The request shape.
    pub workload: Workload,
    /// Efficiencies and overheads in force.
    pub efficiency: Efficiencies,
    /// One row per (concurrency, k), concurrency-major.
    pub predictions: Vec<Prediction>,
    /// The choice of k per concurrency.
    pub best: Vec<Choice>,
    /// The Pareto frontier of throughput per GPU against per-user speed over all (concurrency, k).
    pub frontier: Vec<FrontierPoint>,
    /// The (concurrency, k) with the highest throughput per GPU meeting the floor.
    pub operating_point: Option<(usize, usize)>,
}

/// Highest per-request speed floor accepted, tokens/s: far above any decode (a typo is refused, not swept).
pub(crate) const MAX_USER_TPS: f64 = 1_000_000.0;

impl Sweep {
    /// Predicts every (concurrency, k) for the k that `acceptance` gives, and chooses k per concurrency
    /// subject to `min_user_tps`, in `band`.
    ///
    /// # Errors
    /// [`Error::Parameter`] for an empty or zero concurrency, a floor outside (0, `MAX_USER_TPS`], a model
    /// error outside (0, 1), or k > 0 without a drafter.
    pub fn run(
        cost: &CostModel,
        acceptance: &AcceptanceSource,
        concurrency: &[usize],
        workload: &Workload,
        min_user_tps: Option<f64>,
        band: Band,
    ) -> Result<Sweep> {
        let model_error = band.error;
        workload.validate()?;
        if concurrency.is_empty() {
            return Err(Error::parameter("concurrency", "give at least one concurrency"));
        }
        if let Some(floor) = min_user_tps.filter(|f| !(*f > 0.0 && *f <= MAX_USER_TPS)) {
            return Err(Error::parameter(
                "min_user_tps",
                format!("{floor} is out of range: a per-request speed must lie in (0, {MAX_USER_TPS}] tokens/s"),
            ));
        }
        if !(model_error > 0.0 && model_error < 1.0) {
            return Err(Error::parameter("model_error", format!("{} % must lie in (0, 100)", model_error * 100.0)));
        }
        let gpus = cost.tp();
        let mut predictions = Vec::with_capacity(concurrency.len() * acceptance.al.len());
        let mut best = Vec::with_capacity(concurrency.len());
        for &b in concurrency {
            let fits = cost.kv_fits(b, workload);
            let ar = cost.step_time(b, 0, 1.0, workload)?;
            let start = predictions.len();
            let eff = &cost.hardware().efficiency;
            let mut previous: Option<(usize, StepTerms, f64)> = None;
            for (k, al) in acceptance.points() {
                let terms = cost.step_terms(b, k, al, workload)?;
                let t = if k == 0 { ar } else { terms.time(eff) };
                let marginal = previous
                    .filter(|p| p.0 + 1 == k)
                    .map(|(_, before, al_before)| Marginal::between((&before, al_before), (&terms, al), eff));
                previous = Some((k, terms, al));
                let (throughput_per_gpu, per_user_tps, speedup) = Prediction::rates(b, al, t.total, ar.total, gpus);
                predictions.push(Prediction {
                    concurrency: b,
                    k,
                    al,
                    step_ms: t.total * 1e3,
                    verify_ms: t.verify * 1e3,
                    draft_ms: t.draft * 1e3,
                    prefill_ms: t.prefill * 1e3,
                    speculation_ms: t.speculation * 1e3,
                    throughput_per_gpu,
                    per_user_tps,
                    speedup,
                    dominant: t.dominant,
                    fits_memory: fits,
                    marginal,
                });
            }
            best.push(choose(&predictions[start..], b, min_user_tps, band));
        }
        let operating_point = predictions
            .iter()
            .filter(|p| min_user_tps.is_none_or(|f| p.per_user_tps >= f) && p.fits_memory)
            .max_by(|a, b| a.throughput_per_gpu.total_cmp(&b.throughput_per_gpu))
            .map(|p| (p.concurrency, p.k));
        let hw = cost.hardware();
        let deployment = cost.deployment();
        Ok(Sweep {
            hardware: hw.key.clone(),
            hardware_name: hw.name.clone(),
            model: cost.model().key.clone(),
            drafter: cost.drafter().map(|d| d.key.clone()),
            acceptance: acceptance.clone(),
            tp: deployment.tp,
            ep: deployment.ep,
            dp_attention: deployment.dp_attention,
            precision: deployment.precision.to_string(),
            kv_precision: deployment.kv_precision.to_string(),
            workload: *workload,
            efficiency: hw.efficiency,
            frontier: frontier(&predictions),
            predictions,
            best,
            operating_point,
        })
    }

    /// The prediction at (`concurrency`, `k`), if swept.
    pub fn prediction(&self, concurrency: usize, k: usize) -> Option<&Prediction> {
        self.predictions.iter().find(|p| p.concurrency == concurrency && p.k == k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::{CurveQuery, CurveSet, ThinkingMode};

    use crate::perf::cost::Deployment;
    use crate::perf::profile::{Precision, Profiles};

    fn seed_cost() -> CostModel {
        let p = Profiles::embedded();
        let m = p.model("minimax-m3").unwrap();
        let d = p.drafter(m, Some("Inferact/MiniMax-M3-EAGLE3"), None).unwrap();
        CostModel::new(p.hardware("mi355x").unwrap(), m, Some(d), &Deployment::new(4, Precision::Fp4, Precision::Bf16))
            .unwrap()
    }

    fn seed_sweep(concurrency: &[usize]) -> Sweep {
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
        Sweep::run(&seed_cost(), &al, concurrency, &w, None, Band::default()).unwrap()
    }

    /// The best k's speedup and the chosen k at each concurrency.
    fn shape(sweep: &Sweep) -> (Vec<f64>, Vec<usize>) {
        sweep.best.iter().map(|b| (b.speedup.unwrap(), b.best_k.unwrap())).unzip()
    }

    #[test]
    fn the_seeds_speedup_falls_with_concurrency_as_serving_runs_do() {
        // Every measured serving deployment (docs/model.md §6) loses speedup as concurrency grows; the chosen k
        // shortens with it.
        let sweep = seed_sweep(&[1, 8, 64, 128, 256, 512]);
        let (speedup, best) = shape(&sweep);
        assert!(speedup.windows(2).all(|w| w[1] < w[0]), "{speedup:?}");
        assert!(best.windows(2).all(|w| w[1] <= w[0]) && best[5] < best[0], "{best:?}");
        assert!(sweep.best.iter().all(|b| b.band.contains(&b.best_k.unwrap()) && b.top_k == b.best_k));
        assert_eq!(sweep.predictions[0].speedup, 1.0);
        // The frontier runs from the fastest per-user point to the highest throughput.
        let f = &sweep.frontier;
        assert!(
            f.windows(2)
                .all(|w| w[0].per_user_tps >= w[1].per_user_tps && w[0].throughput_per_gpu < w[1].throughput_per_gpu)
        );
        let top = sweep.predictions.iter().map(|p| p.throughput_per_gpu).fold(0.0, f64::max);
        assert_eq!(f.last().unwrap().throughput_per_gpu, top);
    }

    #[test]
    fn a_draft_position_pays_exactly_when_its_relative_gain_beats_its_relative_cost() {
        // B·AL(k)/T(k) > B·AL(k−1)/T(k−1) ⟺ AL(k)/AL(k−1) > T(k)/T(k−1): the marginal figures decide the choice
        // in closed form, and their parts add up to the cost.
        let sweep = seed_sweep(&[1, 8, 64, 512]);
        for p in &sweep.predictions {
            let Some(m) = p.marginal else {
                assert_eq!(p.k, 0);
                continue;
            };
            let before = sweep.prediction(p.concurrency, p.k - 1).unwrap();
            assert!(
                (m.cost_ms - (p.step_ms - before.step_ms)).abs() < 1e-9 && (m.gain - (p.al - before.al)).abs() < 1e-12
            );
            let q = m.parts;
            let sum = q.verify_dense_ms
                + q.experts_ms
                + q.attention_ms
                + q.lm_head_ms
                + q.verify_overheads_ms
                + q.drafter_attention_ms
                + q.drafter_lm_head_ms
                + q.drafter_other_ms
                + q.speculation_ms
                + q.prefill_ms;
            assert!((sum - m.cost_ms).abs() < 1e-9, "{m:?}");
            assert_eq!(p.throughput_per_gpu > before.throughput_per_gpu, m.gain_rel > m.cost_rel, "{p:?}");
        }
    }

    #[test]
    fn a_dense_models_best_k_never_rises_with_batch() {
        let p = Profiles::embedded();
        let m = p.model("llama-3.1-8b").unwrap();
        let d = p.drafter(m, None, Some("eagle3")).unwrap();
        let cost = CostModel::new(
            p.hardware("h200").unwrap(),
            m,
            Some(d),
            &Deployment::new(1, Precision::Bf16, Precision::Bf16),
        )
        .unwrap();
        let al = AcceptanceSource::explicit(&[2.0, 2.5, 2.9, 3.1, 3.3, 3.4, 3.5, 3.55]).unwrap();
        let w = Workload::Decode { context: 2048.0 };
        let sweep = Sweep::run(&cost, &al, &[1, 4, 16, 64, 128, 256], &w, None, Band::default()).unwrap();
        let (speedup, best) = shape(&sweep);
        assert!(best.windows(2).all(|w| w[1] <= w[0]) && best[5] < best[0], "{best:?}");
        assert!(speedup.windows(2).all(|w| w[1] < w[0]), "{speedup:?}");
    }

    #[test]
    fn spec_off_step_at_batch_one_is_a_plausible_decode_speed() {
        // No B = 1 decode speed of MiniMax-M3 is published yet; single-stream decode of 10–40B-active MoEs on
        // current GPUs runs at roughly 50–500 tok/s without speculation, a step of 2–20 ms. The fixed
        // overheads (per forward and per MoE layer) dominate at B = 1 on a 60-layer MoE.
        let sweep = seed_sweep(&[1]);
        let off = sweep.predictions[0];
        assert!((2.0..20.0).contains(&off.verify_ms), "{}", off.verify_ms);
    }

    #[test]
    fn sibling_model_matches_a_published_serving_measurement() {
        // Lambda's MiniMax-M2.5 page: SGLang, 32 concurrent requests, 8192 in / 1024 out: inter-token latency
        // 27 ms on 4x H100 and 36 ms on "2x Blackwell" (taken as B200). The uncalibrated model lands within
        // 25 % of both.
        let p = Profiles::embedded();
        let m = p.model("minimax-m2.5").unwrap();
        let w = Workload::Turns { isl: 8192.0, osl: 1024.0, prefix_hit: 0.0 };
        let itl_ms = |hardware: &str, tp: usize| {
            let cost = CostModel::new(
                p.hardware(hardware).unwrap(),
                m,
                None,
                &Deployment::new(tp, Precision::Fp8, Precision::Bf16),
            )
            .unwrap();
            cost.step_time(32, 0, 1.0, &w).unwrap().total * 1e3
        };
        let h100 = itl_ms("h100", 4);
        assert!((h100 / 27.0 - 1.0).abs() < 0.25, "{h100}");
        let b200 = itl_ms("b200", 2);
        assert!((b200 / 36.0 - 1.0).abs() < 0.25, "{b200}");
    }

    #[test]
    fn floor_and_bad_arguments() {
        let sweep = seed_sweep(&[1, 64]);
        let fast_b1 =
            sweep.predictions.iter().filter(|p| p.concurrency == 1).map(|p| p.per_user_tps).fold(0.0, f64::max);
        let al = AcceptanceSource::explicit(&[1.78, 2.38, 2.83]).unwrap();
        let w = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
        let cost = seed_cost();
        let floored = Sweep::run(&cost, &al, &[64], &w, Some(fast_b1 * 10.0), Band::default()).unwrap();
        assert_eq!(floored.best[0].best_k, None);
        assert_eq!(floored.operating_point, None);
        assert!(Sweep::run(&cost, &al, &[64], &w, Some(-1.0), Band::default()).is_err());
        assert!(Sweep::run(&cost, &al, &[], &w, None, Band::default()).is_err());
        assert!(Sweep::run(&cost, &al, &[4], &w, None, Band { error: 0.0, ..Band::default() }).is_err());
        assert!(AcceptanceSource::explicit(&[2.5]).is_err());
    }
}

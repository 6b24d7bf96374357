//! What the cost model predicts for one deployment at one (concurrency, k): step time and its parts,
//! throughput per GPU, per-user speed and speedup (docs/model.md §6).

use serde::Serialize;

use super::terms::{Efficiencies, StepTerms};

/// The prediction for one (concurrency, k).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prediction {
    /// Concurrent requests B.
    pub concurrency: usize,
    /// Draft length (0 = spec off).
    pub k: usize,
    /// Acceptance length used.
    pub al: f64,
    /// Effective step time, ms (verify + drafts + amortised prefill + speculation overhead).
    pub step_ms: f64,
    /// Verify (or plain decode) forward, ms.
    pub verify_ms: f64,
    /// All draft forwards, ms.
    pub draft_ms: f64,
    /// Amortised prefill, ms.
    pub prefill_ms: f64,
    /// Per-step and per-draft-token speculation overhead, ms.
    pub speculation_ms: f64,
    /// Output tokens per second per GPU.
    pub throughput_per_gpu: f64,
    /// Output tokens per second per request.
    pub per_user_tps: f64,
    /// Throughput over spec off at the same concurrency.
    pub speedup: f64,
    /// The largest part of the step.
    pub dominant: &'static str,
    /// Whether weights plus the KV cache of all requests fit in GPU memory.
    pub fits_memory: bool,
    /// What the k-th draft position adds over k − 1 and what it costs (none at k = 0 or where k − 1 was not
    /// swept).
    pub marginal: Option<Marginal>,
}

/// The k-th draft position against k − 1 at one concurrency: it pays when its relative gain in tokens per
/// step exceeds its relative cost in step time (throughput B·AL/T rises).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Marginal {
    /// AL(k) − AL(k − 1): tokens per step the position adds.
    pub gain: f64,
    /// That over AL(k − 1).
    pub gain_rel: f64,
    /// step(k) − step(k − 1), ms.
    pub cost_ms: f64,
    /// That over step(k − 1).
    pub cost_rel: f64,
    /// The cost split by what the hardware does, ms.
    pub parts: MarginalParts,
}

/// Where one more draft position's time goes, ms; the parts sum to [`Marginal::cost_ms`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MarginalParts {
    /// The extra verify tokens' dense GEMMs (and any dense weight traffic they add).
    pub verify_dense_ms: f64,
    /// Experts the extra verify tokens newly wake (their weights read) and their GEMMs.
    pub experts_ms: f64,
    /// The extra verify tokens' attention: their queries over the cache and their KV writes, rejected tokens
    /// included.
    pub attention_ms: f64,
    /// The LM head over the extra verify tokens.
    pub lm_head_ms: f64,
    /// Per-token overheads, the EP exchange and TP communication of the extra verify tokens.
    pub verify_overheads_ms: f64,
    /// One more drafter forward's attention: its own KV cache read over the whole context.
    pub drafter_attention_ms: f64,
    /// One more drafter forward's LM head over the draft vocabulary.
    pub drafter_lm_head_ms: f64,
    /// The rest of one more drafter forward: its weights, GEMMs and per-forward overhead.
    pub drafter_other_ms: f64,
    /// Speculation overheads (per draft token; at k = 1 the per-step one too).
    pub speculation_ms: f64,
    /// Amortised prefill (it follows the AL).
    pub prefill_ms: f64,
}

impl Marginal {
    /// Position k (`now`, with AL `al`) against k − 1 (`before`, with `al_before`), priced under `eff`.
    pub fn between(before: (&StepTerms, f64), now: (&StepTerms, f64), eff: &Efficiencies) -> Marginal {
        let ((b, al_before), (n, al)) = (before, now);
        let (tb, tn) = (b.time(eff), n.time(eff));
        let delta = |name: &str| n.part(name, eff).unwrap_or(0.0) - b.part(name, eff).unwrap_or(0.0);
        let ms = |s: f64| s * 1e3;
        let (dense, experts, attention, lm_head) =
            (delta("dense"), delta("experts"), delta("attention"), delta("lm_head"));
        let (drafter_attention, drafter_lm_head) = (delta("drafter_attention"), delta("drafter_lm_head"));
        let verify = tn.verify - tb.verify;
        let draft = tn.draft - tb.draft;
        Marginal {
            gain: al - al_before,
            gain_rel: al / al_before - 1.0,
            cost_ms: ms(tn.total - tb.total),
            cost_rel: tn.total / tb.total - 1.0,
            parts: MarginalParts {
                verify_dense_ms: ms(dense),
                experts_ms: ms(experts),
                attention_ms: ms(attention),
                lm_head_ms: ms(lm_head),
                verify_overheads_ms: ms(verify - dense - experts - attention - lm_head),
                drafter_attention_ms: ms(drafter_attention),
                drafter_lm_head_ms: ms(drafter_lm_head),
                drafter_other_ms: ms(draft - drafter_attention - drafter_lm_head),
                speculation_ms: ms(tn.speculation - tb.speculation),
                prefill_ms: ms(tn.prefill - tb.prefill),
            },
        }
    }

    /// The parts by name, largest first.
    pub fn ranked_parts(&self) -> Vec<(&'static str, f64)> {
        let p = &self.parts;
        let mut parts = vec![
            ("the extra verify tokens' dense GEMMs", p.verify_dense_ms),
            ("experts newly woken", p.experts_ms),
            ("the extra verify tokens' attention and KV writes", p.attention_ms),
            ("the LM head over the extra verify tokens", p.lm_head_ms),
            ("per-token overheads of the extra verify tokens", p.verify_overheads_ms),
            ("one more drafter forward's KV read", p.drafter_attention_ms),
            ("one more drafter forward's LM head", p.drafter_lm_head_ms),
            ("one more drafter forward's weights and overhead", p.drafter_other_ms),
            ("speculation overheads", p.speculation_ms),
            ("amortised prefill", p.prefill_ms),
        ];
        parts.sort_by(|a, b| b.1.total_cmp(&a.1));
        parts
    }
}

impl Prediction {
    /// Throughput per GPU, per-user speed and speedup from step times (docs/model.md §6): B·AL/T/GPUs, AL/T,
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

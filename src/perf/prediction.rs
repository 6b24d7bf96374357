//! What the cost model predicts for one deployment at one (concurrency, k): step time and its parts,
//! throughput per GPU, per-user speed and speedup (docs/model.md §6).

use serde::Serialize;

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

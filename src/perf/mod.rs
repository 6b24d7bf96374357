//! Throughput per concurrency for every draft length, and the choice of k (docs/model.md §6).
//!
//! One type per concern:
//! - [`profile`]: hardware, model and drafter profiles (data in `profiles/*.csv`, embedded; the user's files
//!   replace or extend them);
//! - [`terms`]: the parts of a step's time and the efficiencies that price them — the model, with the
//!   measured data that justify each term;
//! - [`workload`]: the request shape (decode context, or turns with prefill);
//! - [`cost`]: a deployment (hardware × model × drafter × parallelism × precisions) pricing one step;
//! - `sweep`: predictions over concurrency × k;
//! - `choice`: the best k with its runner-up and band, the Pareto frontier, drafters compared;
//! - `acceptance`: AL(k) from a golden curve, a fit, evidence or explicit values;
//! - [`calibrate`]: fitting the efficiencies to measured step times or serving pairs, and scoring the model.
//!
//! Per step with B concurrent requests (docs/model.md §6):
//!   throughput/GPU = B·AL(k) / T_SD / GPUs,   per-user speed = AL(k) / T_SD,   speedup = AL(k)·T_AR / T_SD,
//!   k* = argmax_k throughput (k = 0 is spec off), optionally subject to per-user speed ≥ a floor.
//! At a fixed concurrency throughput and per-user speed rank the k's identically, so the floor decides
//! feasibility per concurrency and, across concurrencies, the best operating point.
//! Sources: SPEED-Bench (arXiv:2604.09557, Appendix H) validates the speedup proxy t_ar·AL/t_sd within ±0.02×;
//! the best-k rule is the one SmartSpec/TurboSpec and vLLM's per-batch-size k table apply at run time.
//!
//! ```
//! use alsim::perf::{AcceptanceSource, Band, Sweep};
//! use alsim::perf::cost::{CostModel, Deployment, Workload};
//! use alsim::perf::profile::{Precision, Profiles};
//!
//! let p = Profiles::embedded();
//! let model = p.model("minimax-m3")?;
//! let drafter = p.drafter(model, Some("Inferact/MiniMax-M3-EAGLE3"), None)?;
//! let deployment = Deployment::new(4, Precision::Fp4, Precision::Bf16);
//! let cost = CostModel::new(p.hardware("mi355x")?, model, Some(drafter), &deployment)?;
//! let al = AcceptanceSource::explicit(&[1.78, 2.38, 2.83])?;
//! let sweep = Sweep::run(&cost, &al, &[1, 16], &Workload::Decode { context: 2048.0 }, None, Band::default())?;
//! assert_eq!(sweep.predictions.len(), 2 * 4); // k = 0..=3 at two concurrencies
//! assert!(sweep.best[0].best_k.unwrap() > 0); // speculation pays at B = 1
//! # Ok::<(), alsim::Error>(())
//! ```

pub(crate) mod acceptance;
pub mod calibrate;
pub(crate) mod choice;
pub mod cost;
// An internal reader, as the crate root's `input` and `yaml` are.
#[cfg(feature = "internals")]
pub mod csv;
#[cfg(not(feature = "internals"))]
pub(crate) mod csv;
pub(crate) mod prediction;
pub mod profile;
pub(crate) mod sweep;
pub mod terms;
pub mod versus;
pub mod workload;

use serde::Serialize;

pub use acceptance::AcceptanceSource;
pub use choice::{Band, Choice, DEFAULT_MODEL_ERROR, Objective};
pub use prediction::{Marginal, MarginalParts, Prediction};
pub use sweep::Sweep;
pub use versus::DrafterComparison;

use cost::Workload;

/// The largest draft length the sweep covers by default (the golden curves stop at 8).
pub const DEFAULT_MAX_K: usize = 8;

/// Largest concurrency accepted, from the command line or a measured file: far beyond any GPU's batch, so a
/// typo (1-1000000, 1e12) is refused rather than priced.
pub const MAX_CONCURRENCY: usize = 65_536;

/// What `alsim predict` prints: the setup and one [`Sweep`] per hardware × drafter × request shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictReport {
    /// Model profile key and display name.
    pub model: String,
    /// Where the first drafter's AL(k) came from and its values for k = 0..=K (each sweep carries its own).
    pub acceptance: AcceptanceSource,
    /// The request shapes swept.
    pub workloads: Vec<Workload>,
    /// Per-user speed floor, tok/s.
    pub min_user_tps: Option<f64>,
    /// Relative throughput error within which k's are not told apart (the band).
    pub model_error: f64,
    /// One sweep per hardware profile, drafter and request shape.
    pub sweeps: Vec<Sweep>,
    /// Drafters compared on the same hardware and request shape (with `--versus`).
    pub comparison: Vec<DrafterComparison>,
    /// Remarks: profile figures still unconfirmed, memory limits, inputs not yet supported.
    pub notes: Vec<String>,
}

//! # alsim — what a pinned speculative-decoding acceptance length means, whether it is honest, and which
//! draft length to run
//!
//! Throughput runs of speculative decoding pin a *synthetic acceptance length* (AL): the engine accepts
//! drafts at a committed rate instead of verifying them. The committed rates come from golden curves
//! (AL per model, thinking mode and draft length k, measured with real verification). alsim turns a curve
//! into the per-position acceptance it implies, compares it with each engine's synthetic schedule, checks
//! pins against evidence and against the curves, and predicts throughput per draft length.
//!
//! The seed's case — MiniMax-M3, EAGLE3 drafter, thinking on, k = 3, pinned at AL 2.83:
//!
//! ```
//! use alsim::accept::schedule::{ScheduleKind, SyntheticSchedule};
//! use alsim::curve::{CurveQuery, CurveSet, ThinkingMode};
//!
//! let curves = CurveSet::embedded();
//! let found = curves.lookup(&CurveQuery {
//!     model: "minimax-m3".into(),
//!     drafter: Some("Inferact/MiniMax-M3-EAGLE3".into()),
//!     mode: Some(ThinkingMode::On),
//!     ..Default::default()
//! })?;
//! let pin = found.curve.al(3)?;
//! assert_eq!(pin, 2.83);
//!
//! // What real verification does: p = 0.78, 0.60, 0.45 → P(a = 0..3) = 0.22, 0.18, 0.15, 0.45.
//! let real = found.curve.chain(3)?.distribution();
//! assert!((real.p_zero() - 0.22).abs() < 1e-9);
//!
//! // What a pinned vLLM/ATOM/TensorRT-LLM run does: 1 or 2 accepted drafts, never 0 or 3.
//! let pinned = SyntheticSchedule::new(ScheduleKind::MinVariance, pin, 3)?.distribution;
//! assert_eq!(pinned.p_zero(), 0.0);
//! assert!((real.variance() / pinned.variance() - 10.5).abs() < 0.1); // ten times the spread
//! # Ok::<(), alsim::Error>(())
//! ```
//!
//! Is the pin honest? A real-verification run's counters (here forty Prometheus scrapes of a vLLM server,
//! whose windows accept 1,800 or 1,860 drafts per 1,000 verify steps) estimated and judged against it:
//!
//! ```
//! use alsim::evidence::{self, PinUnderTest};
//! use alsim::{ReadOptions, Verdict};
//!
//! let mut page = String::new();
//! let (mut drafts, mut accepted) = (0, 0);
//! for scrape in 0..40 {
//!     drafts += 1000;
//!     accepted += if scrape % 2 == 0 { 1800 } else { 1860 };
//!     page += &format!("vllm:spec_decode_num_drafts_total {drafts}\nvllm:spec_decode_num_accepted_tokens_total {accepted}\n");
//! }
//! let runs = evidence::read(page.as_bytes(), "server.prom", &ReadOptions { k: Some(3), ..Default::default() })?;
//! let pin = PinUnderTest::new(2.83, 3, evidence::verdict::DEFAULT_TOLERANCE, 0.95, "golden")?;
//! assert_eq!(evidence::evaluate(&pin, &runs)?.overall, Verdict::Consistent);
//! # Ok::<(), alsim::Error>(())
//! ```
//!
//! Which draft length? The seed's deployment (MiniMax-M3 in FP4 on four MI355X, 1k/1k turns) predicted for
//! every k, and the k chosen per concurrency with the band of k the model cannot tell apart:
//!
//! ```
//! use alsim::{AcceptanceSource, Band, CostModel, Deployment, Precision, Profiles, Sweep, Workload};
//!
//! let profiles = Profiles::embedded();
//! let model = profiles.model("minimax-m3")?;
//! let drafter = profiles.drafter(model, Some("Inferact/MiniMax-M3-EAGLE3"), None)?;
//! let deployment = Deployment::new(4, Precision::Fp4, Precision::Bf16);
//! let cost = CostModel::new(profiles.hardware("mi355x")?, model, Some(drafter), &deployment)?;
//! let al = AcceptanceSource::explicit(&[1.78, 2.38, 2.83, 3.11])?; // AL(k), k = 1..4
//! let workload = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
//! let sweep = Sweep::run(&cost, &al, &[1, 64], &workload, None, Band::default())?;
//! let at_1 = &sweep.best[0];
//! assert!(at_1.band.contains(&at_1.best_k.unwrap()) && at_1.speedup.unwrap() > 2.0);
//! # Ok::<(), alsim::Error>(())
//! ```
//!
//! `examples/library.rs` runs the three in one program.
//!
//! Modules follow the data's path: [`curve`] → [`accept`] → the report ([`report`]); [`units`] converts
//! between the engines' spellings of one figure; [`stats`] holds the estimate shape every module uses.
//! [`sim`] runs requests through those laws: seeded Monte Carlo and the exact steps-to-N distribution.
//!
//! ## Features
//!
//! - `cli` (default): the `alsim` binary and what only it needs — argument parsing, terminal tables, SVG
//!   charts, progress bars, the allocator. Implies `pins`.
//! - `pins`: the pin check of a benchmark repository, the sweep over its matrix and `explain` (a bash
//!   parser).
//!
//! `alsim = { version = "0.1", default-features = false }` builds the library alone: curves, acceptance,
//! simulation, evidence and the cost model, with every report as JSON, CSV or Markdown (58 crates in its
//! normal dependency tree, where the default build has 147).

#![warn(missing_docs)]

pub mod accept;
#[cfg(feature = "pins")]
pub(crate) mod bash;
#[cfg(feature = "pins")]
pub mod config;
pub mod curve;
pub mod diagnostic;
pub mod engine;
pub(crate) mod error;
pub(crate) mod escape;
pub mod evidence;
#[cfg(feature = "pins")]
pub mod explain;
pub mod measured;
// The readers every input goes through (bounded files, YAML, CSV) are internal: the library's API takes
// paths and texts and returns its own types. The `internals` feature makes them reachable from outside for
// this crate's own tests, examples and fuzz targets alone; it carries no semver promise.
#[cfg(feature = "internals")]
pub mod input;
#[cfg(not(feature = "internals"))]
pub(crate) mod input;
#[cfg(feature = "pins")]
pub mod matrix;
mod names;
pub mod output;
pub mod perf;
#[cfg(feature = "pins")]
pub mod pins;
pub mod report;
pub mod sim;
pub mod stats;
pub mod units;
#[cfg(feature = "internals")]
pub mod yaml;
// Recipes and master configs, read as PyYAML reads them, are the pin check's alone.
#[cfg(not(feature = "internals"))]
#[cfg_attr(not(feature = "pins"), allow(dead_code))]
pub(crate) mod yaml;

pub use error::{Error, LookupKind, Result};

// The types of the three jobs, at the crate root: what a pin means (a curve, the chain it implies, the
// distribution of accepted drafts, an engine's forced schedule), whether it is honest (evidence read from a
// run, the pin under test, the report and its verdict), and which draft length to run (a deployment's cost
// model, the sweep over concurrency and k, its predictions and band).
pub use accept::schedule::{ScheduleKind, SyntheticSchedule};
pub use accept::{Acceptance, Distribution};
pub use curve::{Curve, CurveFile, CurveQuery, CurveSet, ThinkingMode};
pub use evidence::{EvalReport, Evidence, ReadOptions, Verdict};
pub use perf::cost::{CostModel, Deployment, Workload};
pub use perf::profile::{Precision, Profiles};
pub use perf::{AcceptanceSource, Band, Prediction, Sweep};

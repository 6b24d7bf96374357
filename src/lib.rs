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
pub mod curve;
pub mod engine;
pub mod error;
pub mod escape;
pub mod evidence;
#[cfg(feature = "pins")]
pub mod explain;
pub mod input;
#[cfg(feature = "pins")]
pub mod matrix;
pub mod perf;
#[cfg(feature = "pins")]
pub mod pins;
pub mod report;
pub mod sim;
pub mod stats;
pub mod units;
pub mod yaml;

pub use error::{Error, Result};

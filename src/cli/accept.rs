//! `alsim accept`: what a pin means.

use alsim::accept::fit::{FitKind, fit};
use alsim::accept::{Acceptance, PinAnalysis};
use alsim::report;
use anyhow::Context;

use super::common::{CurveArgs, NumberList, OutputArgs};
use super::{Outcome, emit};

/// Flags of `alsim accept`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    curve: CurveArgs,
    /// Draft length k (default 3, or the number of rates given).
    #[arg(long)]
    k: Option<usize>,
    /// Pinned acceptance length (default: the golden curve's value at k).
    #[arg(long)]
    al: Option<f64>,
    /// Use a chain fitted to the whole curve instead of the curve's raw increments (needed where the
    /// curve dips or rises, and for k beyond the curve).
    #[arg(long, value_enum)]
    fit: Option<FitKind>,
    /// Explicit real per-position unconditional rates p_1,…,p_k instead of the curve.
    #[arg(long, conflicts_with = "conditional")]
    rates: Option<NumberList>,
    /// Explicit real conditional rates c_1,…,c_k instead of the curve.
    #[arg(long)]
    conditional: Option<NumberList>,
    #[command(flatten)]
    output: OutputArgs,
}

/// The seed's draft length.
const DEFAULT_K: usize = 3;

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let (real, source, curve_al) = match (&args.rates, &args.conditional) {
        (Some(rates), _) => {
            (Acceptance::from_unconditional(rates.0.clone(), "--rates")?, "explicit --rates".to_string(), None)
        }
        (_, Some(rates)) => {
            (Acceptance::from_conditional(&rates.0, "--conditional")?, "explicit --conditional".to_string(), None)
        }
        _ => {
            let set = args.curve.curve_set()?;
            let found = set.lookup(&args.curve.query())?;
            let k = args.k.unwrap_or(DEFAULT_K);
            let (chain, how) = match args.fit {
                Some(kind) => (fit(found.curve, kind)?.chain(k)?, format!(", {kind} fit")),
                None => (
                    found.curve.chain(k).context("deriving per-position acceptance from the golden curve")?,
                    String::new(),
                ),
            };
            let source = format!("{} {}{how}", found.file.origin, found.curve.field(k));
            (chain, source, found.curve.points().get(&k).map(|_| found.curve.al(k)).transpose()?)
        }
    };
    if let Some(k) = args.k.filter(|&k| k != real.k()) {
        anyhow::bail!("--k {k} disagrees with the {} rates given", real.k());
    }
    let pin = args.al.or(curve_al).unwrap_or_else(|| real.acceptance_length());
    let analysis = PinAnalysis::new(&real, pin, source)?;
    emit(&report::render(&analysis, args.output.format))?;
    Ok(Outcome::Pass)
}

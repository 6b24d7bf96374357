//! `alsim accept`: what a pin means.

use alsim::accept::PinAnalysis;

use super::Outcome;
use super::common::{OutputArgs, RealAcceptanceArgs};

/// Flags of `alsim accept`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    real: RealAcceptanceArgs,
    /// Pinned acceptance length (default: the golden curve's value at k).
    #[arg(long, allow_negative_numbers = true)]
    al: Option<f64>,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.output.export.writes()?;
    let real = args.real.resolve()?;
    let pin = args.al.or(real.curve_al).unwrap_or_else(|| real.chain.acceptance_length());
    let analysis = PinAnalysis::new(&real.chain, pin, &real.rates_pin, real.source)?;
    args.output.emit(&mut writes, &analysis)?;
    Ok(Outcome::Pass)
}

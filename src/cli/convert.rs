//! `alsim convert`: one acceptance figure in every engine's spelling.

use alsim::accept::Acceptance;
use alsim::report;
use alsim::units::{Conversion, Spelling};

use super::common::{NumberList, OutputArgs};
use super::{Outcome, emit};

/// Flags of `alsim convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The value to convert (omit when giving --rates).
    #[arg(required_unless_present = "rates", allow_negative_numbers = true)]
    value: Option<f64>,
    /// The spelling of VALUE: al (2.83), accepted-drafts (TensorRT-LLM, 1.83), rate (ATOM, (AL−1)/k = 0.61),
    /// sglang-old-rate (AL/(k+1) = 0.7075).
    #[arg(long, default_value = "al", value_parser = parse_spelling)]
    from: Spelling,
    /// Per-position unconditional rates p_1,…,p_k instead of VALUE (k is their count).
    #[arg(long, conflicts_with = "value")]
    rates: Option<NumberList>,
    /// Draft length k.
    #[arg(long, required_unless_present = "rates")]
    k: Option<usize>,
    /// Print only the value in this spelling (for scripts).
    #[arg(long, value_parser = parse_spelling)]
    to: Option<Spelling>,
    #[command(flatten)]
    output: OutputArgs,
}

fn parse_spelling(text: &str) -> Result<Spelling, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let (al, k) = match (&args.rates, args.value) {
        (Some(rates), _) => {
            let chain = Acceptance::from_unconditional(rates.0.clone(), "--rates")?;
            if let Some(k) = args.k.filter(|&k| k != chain.k()) {
                anyhow::bail!("--k {k} disagrees with the {} rates given", chain.k());
            }
            (chain.acceptance_length(), chain.k())
        }
        (None, Some(value)) => {
            let k = args.k.expect("clap requires --k without --rates");
            (args.from.to_al(value, k, "VALUE")?, k)
        }
        (None, None) => unreachable!("clap requires VALUE or --rates"),
    };
    let conversion = Conversion::new(al, k)?;
    match args.to {
        Some(spelling) => emit(&format!("{}\n", round_trip_text(spelling.from_al(al, k, "VALUE")?)))?,
        None => emit(&report::render(&conversion, args.output.format))?,
    }
    Ok(Outcome::Pass)
}

/// Up to 6 decimals without trailing zeros: 1.83, not 1.8300000000000001.
fn round_trip_text(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

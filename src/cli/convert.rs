//! `alsim convert`: one acceptance figure in every engine's spelling, and as each pin shape's rates.

use alsim::accept::Acceptance;
use alsim::accept::Conversion;
use alsim::report;
use alsim::units::Spelling;

use super::Outcome;
use super::common::{NumberList, OutputArgs};

/// Flags of `alsim convert`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The value to convert (omit when giving --rates or --geometric).
    #[arg(required_unless_present_any = ["rates", "geometric"], allow_negative_numbers = true)]
    value: Option<f64>,
    /// The spelling of VALUE: al (2.83), accepted-drafts (TensorRT-LLM, 1.83), rate (ATOM, (AL−1)/k = 0.61),
    /// sglang-old-rate (AL/(k+1) = 0.7075).
    #[arg(long, default_value = "al", value_parser = parse_spelling)]
    from: Spelling,
    /// Per-position unconditional rates p_1,…,p_k instead of VALUE (k is their count): a rates pin, or a
    /// minimum-variance schedule such as 1,0.83,0.
    #[arg(long, conflicts_with_all = ["value", "geometric"], allow_negative_numbers = true)]
    rates: Option<NumberList>,
    /// A geometric (llama.cpp) schedule instead of VALUE: its constant conditional rate p, so p_i = p^i.
    #[arg(long, value_name = "P", conflicts_with = "value", allow_negative_numbers = true)]
    geometric: Option<f64>,
    /// Draft length k.
    #[arg(long, required_unless_present = "rates", allow_negative_numbers = true)]
    k: Option<usize>,
    /// Print only this (for scripts): a spelling (al, accepted-drafts, rate, sglang-old-rate), or the rates
    /// of a pin shape with the same mean: min-variance, geometric (llama.cpp's p^i), geometric-p (its p).
    #[arg(long, value_parser = parse_target)]
    to: Option<Target>,
    #[command(flatten)]
    output: OutputArgs,
}

/// What `--to` prints.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Spelling(Spelling),
    MinVariance,
    Geometric,
    GeometricP,
}

fn parse_spelling(text: &str) -> Result<Spelling, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

fn parse_target(text: &str) -> Result<Target, String> {
    match text.to_ascii_lowercase().replace('_', "-").as_str() {
        "min-variance" | "minimum-variance" => Ok(Target::MinVariance),
        "geometric" | "llamacpp" => Ok(Target::Geometric),
        "geometric-p" => Ok(Target::GeometricP),
        _ => parse_spelling(text)
            .map(Target::Spelling)
            .map_err(|e| format!("{e}; or one of min-variance, geometric, geometric-p")),
    }
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.output.export.writes()?;
    let conversion = match (&args.rates, args.geometric, args.value) {
        (Some(rates), _, _) => {
            let chain = Acceptance::from_unconditional(rates.0.clone(), "--rates")?;
            if let Some(k) = args.k.filter(|&k| k != chain.k()) {
                anyhow::bail!("--k {k} disagrees with the {} rates given", chain.k());
            }
            Conversion::from_rates(&chain)?
        }
        (None, Some(p), _) => {
            let k = args.k.expect("clap requires --k without --rates");
            let chain = Acceptance::from_conditional(&vec![p; k], "--geometric")?;
            Conversion::new(chain.acceptance_length(), k)?
        }
        (None, None, Some(value)) => {
            let k = args.k.expect("clap requires --k without --rates");
            Conversion::new(args.from.to_al(value, k, "VALUE")?, k)?
        }
        (None, None, None) => unreachable!("clap requires VALUE, --rates or --geometric"),
    };
    let (al, k) = (conversion.acceptance_length, conversion.k);
    let list = |rates: &[f64]| rates.iter().map(|r| round_trip_text(*r)).collect::<Vec<_>>().join(",");
    let text = match args.to {
        Some(Target::Spelling(spelling)) => format!("{}\n", round_trip_text(spelling.from_al(al, k, "VALUE")?)),
        Some(Target::MinVariance) => format!("{}\n", list(&conversion.forced_rates)),
        Some(Target::Geometric) => format!("{}\n", list(&conversion.geometric_rates)),
        Some(Target::GeometricP) => format!("{}\n", round_trip_text(conversion.geometric_p)),
        None => report::render(&conversion, args.output.format),
    };
    writes.emit(&text, &conversion)?;
    Ok(Outcome::Pass)
}

/// Up to 6 decimals without trailing zeros: 1.83, not 1.8300000000000001.
fn round_trip_text(value: f64) -> String {
    let text = format!("{value:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

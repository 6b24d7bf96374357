//! `alsim calibrate`: fit the cost model's efficiencies to measured runs and save a hardware profile.

use std::path::PathBuf;

use alsim::perf::calibrate::{calibrate, read_measurements, write_profile};
use alsim::perf::profile::Profiles;
use alsim::report;
use anyhow::Context;

use super::common::OutputArgs;
use super::{Outcome, emit};

/// Flags of `alsim calibrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Measured runs, CSV with columns hardware, model, tp, concurrency, k, al, context (or isl, osl,
    /// prefix_hit), and step_ms, tpot_ms or throughput_per_gpu; optional drafter, precision.
    #[arg(value_name = "MEASURED.csv")]
    measured: PathBuf,
    /// Drafter profile for spec rows (default: the file's drafter column, else the model's only drafter).
    #[arg(long)]
    drafter: Option<String>,
    /// Write the calibrated hardware profile here (read by `alsim predict --profile`).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Overwrite an existing --output file.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let origin = args.measured.display().to_string();
    let text = alsim::input::read_text(&args.measured, alsim::input::TABLE_FILE_LIMIT)?;
    let rows = read_measurements(&text, &origin)?;
    let mut calibration = calibrate(&Profiles::embedded(), &rows, &origin, args.drafter.as_deref())?;
    match &args.output {
        Some(path) => {
            write_profile(&calibration, path, args.force)
                .with_context(|| format!("writing the calibrated profile {}", path.display()))?;
            calibration
                .notes
                .push(format!("profile written to {}; use it with alsim predict --profile", path.display()));
        }
        None => {
            calibration.notes.push("pass --output FILE to save the calibrated profile for predict --profile".into())
        }
    }
    emit(&report::render(&calibration, args.format.format))?;
    Ok(Outcome::Pass)
}

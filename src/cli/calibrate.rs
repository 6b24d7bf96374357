//! `alsim calibrate`: fit the step-time model to measured step times or serving pairs, score it on what the
//! fit did not see, and optionally save the calibrated hardware profile; or score an existing profile on new
//! rows without refitting it.

use std::path::PathBuf;

use alsim::perf::calibrate::{self, write_profile};
use alsim::perf::profile::ProfileKind;
use alsim::report;
use anyhow::Context;

use super::Outcome;
use super::common::OutputArgs;
use super::predict::ProfileArgs;

/// Flags of `alsim calibrate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Measured runs, CSV: step times (hardware, model, tp, concurrency, k, context or isl+osl, and step_ms,
    /// tpot_ms or throughput_per_gpu; optional al, drafter, precision, kv_dtype, <part>_ms) or serving pairs
    /// in the columns of InferenceX's spec-versus-off comparisons (none_median_tpot, tput_ratio, conc, …).
    #[arg(value_name = "MEASURED.csv")]
    measured: PathBuf,
    /// Draft length for serving pairs whose k cell is blank.
    #[arg(long, allow_negative_numbers = true)]
    k: Option<usize>,
    /// Drafter profile for spec rows (default: the file's drafter column, else the model's drafter of the
    /// row's method).
    #[arg(long)]
    drafter: Option<String>,
    #[command(flatten)]
    profiles: ProfileArgs,
    /// Write the calibrated hardware profile here, one row per GPU (read by `alsim predict --profile`).
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Score this hardware profile file (the columns of profiles/hardware.csv, one row per GPU, e.g. what
    /// --output wrote) on the rows as it is: its prediction error per group and pooled, nothing refitted.
    /// Every row's GPU must be in it.
    #[arg(long, value_name = "PROFILE", conflicts_with_all = ["output", "profile"])]
    score: Option<PathBuf>,
    /// Also write every distinct row's measured and modelled figures here, as CSV (the report lists the
    /// largest residuals only).
    #[arg(long, value_name = "FILE.csv")]
    residuals: Option<PathBuf>,
    /// Overwrite an existing --output or --residuals file.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    format: OutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.format.export.writes()?;
    if let Some(k) = args.k {
        alsim::units::check_draft_len(k, "--k")?;
    }
    // Checked before any work, so a long run never ends in a refusal.
    if let Some(path) = &args.output {
        writes.add("output", path, args.force)?;
    }
    let residuals = args.residuals.as_deref().map(|path| writes.add("residuals", path, args.force)).transpose()?;
    let (mut profiles, _) = args.profiles.load()?;
    let origin = args.measured.display().to_string();
    let reader = alsim::input::open_limited(&args.measured, alsim::input::TABLE_FILE_LIMIT)?;
    let (measured, notes) = calibrate::read(reader, &origin, args.k)?;
    let drafter = args.drafter.as_deref();
    let mut calibration = match &args.score {
        Some(path) => {
            let hardware = profiles.load_file(ProfileKind::Hardware, path).context("--score")?;
            calibrate::score(&profiles, &measured, &origin, drafter, &hardware)?
        }
        None => calibrate::calibrate(&profiles, &measured, &origin, drafter)?,
    };
    calibration.notes.splice(0..0, notes);
    match &args.output {
        _ if args.score.is_some() => {}
        Some(path) => {
            // Its errors name --output and the file.
            write_profile(&calibration, path, args.force)?;
            calibration
                .notes
                .push(format!("profile written to {}; use it with alsim predict --profile", path.display()));
        }
        None => calibration.notes.push("pass --output FILE to save the pooled profile for predict --profile".into()),
    }
    if let (Some(slot), Some(path)) = (residuals, &args.residuals) {
        writes.write(slot, report::residuals_csv(&calibration).as_bytes())?;
        calibration.notes.push(format!("every row's residual written to {}", path.display()));
    }
    args.format.emit(&writes, &calibration)?;
    Ok(Outcome::Pass)
}

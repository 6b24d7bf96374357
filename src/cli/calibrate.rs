//! `alsim calibrate`: fit the step-time model to measured step times or serving pairs, score it on what the
//! fit did not see, and optionally save the calibrated hardware profile; or score an existing profile on new
//! rows without refitting it. An expert-parallel exchange file gets its own fit (latency and link bandwidth),
//! reported beside today's per-token charge. With `--choice-al`, also score the k it picks against the k the
//! measured rows pick — on one file, or on every step-time file of a directory in sample and leaving one file out.

use std::path::PathBuf;

use alsim::curve::ThinkingMode;
use alsim::perf::calibrate::choice_score::{ChoiceAl, fit_for_choice, read_kit, score_choice, score_kit};
use alsim::perf::calibrate::{self, Measured, write_profile};
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
    /// in the columns of InferenceX's spec-versus-off comparisons (none_median_tpot, tput_ratio, conc, …), or
    /// expert-parallel exchanges (calibration/exchange.py's: gpus, tokens_per_gpu, link_bytes, dispatch_ms, …).
    /// With --choice-al, a directory: every step-time CSV in it (a kit), each scored in sample and held out.
    #[arg(value_name = "MEASURED.csv")]
    measured: PathBuf,
    /// Score the choice of k on step-time rows that carry k, under this AL(k): golden (the embedded curve of
    /// the rows' model and drafter, at --mode), all (every embedded curve and mode of the rows' model, and
    /// α 0.6, 0.7 and 0.8), a curve file, a list AL1,AL2,… or alpha=0.7 (a constant-α chain). The rows' own
    /// al column is never read as an acceptance.
    #[arg(long, value_name = "SOURCE")]
    choice_al: Option<String>,
    /// Thinking mode of --choice-al golden or a curve file [default: every mode].
    #[arg(long, value_parser = super::common::parse_mode, requires = "choice_al")]
    mode: Option<ThinkingMode>,
    #[command(flatten)]
    band: super::common::BandArgs,
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
    let choice = args.choice_al.as_deref().map(|s| ChoiceAl::parse(s, args.mode)).transpose().context("--choice-al")?;
    if args.measured.is_dir() {
        let Some(choice) = choice else {
            anyhow::bail!("{origin} is a directory: calibrate reads one file, or a kit's files with --choice-al");
        };
        if args.output.is_some() || args.score.is_some() || args.residuals.is_some() {
            anyhow::bail!("--output, --score and --residuals take one measured file, not the directory {origin}");
        }
        let (files, notes) = read_kit(&args.measured)?;
        let mut kit = score_kit(&profiles, &origin, &files, &choice, args.band.band()?)?;
        kit.notes.splice(0..0, notes);
        args.format.emit(&mut writes, &kit)?;
        return Ok(Outcome::Pass);
    }
    let (measured, notes) = calibrate::read_file(&args.measured, args.k)?;
    let drafter = args.drafter.as_deref();
    let mut calibration = match &args.score {
        Some(path) => {
            let hardware = profiles.load_file(ProfileKind::Hardware, path).context("--score")?;
            calibrate::score(&profiles, &measured, &origin, drafter, &hardware)?
        }
        None => calibrate::calibrate(&profiles, &measured, &origin, drafter)?,
    };
    calibration.notes.splice(0..0, notes);
    if let Some(choice) = &choice {
        let Measured::Steps(rows) = &measured else {
            anyhow::bail!("--choice-al scores step-time rows that carry k; {origin} holds serving pairs");
        };
        let fitted = fit_for_choice(&profiles, rows, &origin)?;
        let score = score_choice(&fitted, rows, &origin, choice, args.band.band()?)?;
        calibration.summary.choice = Some(score.summary);
        calibration.choice = Some(score);
    }
    match &args.output {
        _ if args.score.is_some() => {}
        Some(path) => {
            // Its errors name --output and the file.
            write_profile(&calibration, path, args.force)?;
            calibration
                .notes
                .push(format!("profile written to {}; use it with alsim predict --profile", path.display()));
        }
        // An exchange fit has no profile column to go to (write_profile refuses it by name).
        None if calibration.exchange.is_some() => {}
        None => calibration.notes.push("pass --output FILE to save the pooled profile for predict --profile".into()),
    }
    if let (Some(slot), Some(path)) = (residuals, &args.residuals) {
        writes.write(slot, report::residuals_csv(&calibration).as_bytes())?;
        calibration.notes.push(format!("every row's residual written to {}", path.display()));
    }
    args.format.emit(&mut writes, &calibration)?;
    Ok(Outcome::Pass)
}

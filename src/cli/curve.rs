//! `alsim curve list|show|check|fit`: the golden curves.

use std::path::PathBuf;

use alsim::accept::CurveView;
use alsim::accept::fit::FitSummary;
use alsim::curve::check::{CurveReport, DEFAULT_RUN_SE, DEFAULT_Z, NoiseModel, check_files};
use alsim::curve::{CurveFile, CurveSet};
use alsim::report::curve::CurveListing;

use super::Outcome;
use super::common::{CheckOutputArgs, CurveArgs, OutputArgs};

/// Subcommands of `alsim curve`.
#[derive(Debug, clap::Subcommand)]
pub enum Args {
    /// List the curves: model key, drafter, method, draft sampling, modes, k range, provenance.
    List {
        /// Curve files or directories to list instead of the embedded curves.
        paths: Vec<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Show one curve: values, implied increments and conditional rates, problems, and every fit.
    Show {
        #[command(flatten)]
        curve: CurveArgs,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Validate curve files (InferenceX golden_al_distribution/*.yaml read unchanged); exit 1 on errors
    /// found in the curves, 2 (with each reason on stderr) when a file cannot be read or parsed.
    Check {
        /// Curve files or directories (default: the embedded curves).
        paths: Vec<PathBuf>,
        /// Standard error of one golden run's AL, against which dips and rises are judged.
        #[arg(long, default_value_t = DEFAULT_RUN_SE)]
        run_se: f64,
        /// Standard errors beyond which a dip or rise is an error rather than a warning.
        #[arg(long, default_value_t = DEFAULT_Z)]
        z: f64,
        /// Fail on warnings too.
        #[arg(long)]
        strict: bool,
        #[command(flatten)]
        output: CheckOutputArgs,
    },
    /// Fit every curve every way and report residuals and leave-one-k-out errors.
    Fit {
        /// Curve files or directories (default: the embedded curves).
        paths: Vec<PathBuf>,
        #[command(flatten)]
        output: OutputArgs,
    },
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    match args {
        Args::List { paths, output } => {
            let mut writes = output.export.writes()?;
            let files = load(&paths)?;
            let listing = CurveListing { curves: files.iter().flat_map(CurveFile::summaries).collect() };
            output.emit(&mut writes, &listing)?;
        }
        Args::Show { curve, output } => {
            let mut writes = output.export.writes()?;
            let set = curve.curve_set()?;
            let found = set.lookup(&curve.query(true))?;
            output.emit(&mut writes, &CurveView::new(found.file, found.curve))?;
        }
        Args::Check { paths, run_se, z, strict, output } => {
            if !(run_se > 0.0 && run_se.is_finite() && z > 0.0 && z.is_finite()) {
                anyhow::bail!("--run-se and --z must be positive numbers");
            }
            let mut writes = output.export.writes()?;
            let (files, unreadable) = read_each(&paths)?;
            let report = CurveReport::new(files.len(), check_files(&files, &NoiseModel { run_se, z }));
            if !files.is_empty() {
                output.emit(&mut writes, &report)?;
            }
            // An input error outranks what the readable curves show: the check did not see everything.
            if !unreadable.is_empty() {
                let reasons: Vec<String> = unreadable.iter().map(ToString::to_string).collect();
                anyhow::bail!(
                    "{} of {} curve file(s) could not be read: {}",
                    unreadable.len(),
                    files.len() + unreadable.len(),
                    reasons.join("; ")
                );
            }
            return Ok(report.status(strict).into());
        }
        Args::Fit { paths, output } => {
            let mut writes = output.export.writes()?;
            let files = load(&paths)?;
            output.emit(&mut writes, &FitSummary::new(&files))?;
        }
    }
    Ok(Outcome::Pass)
}

/// The files named (directories expanded), or the embedded set; the first unreadable file is an error.
fn load(paths: &[PathBuf]) -> anyhow::Result<Vec<CurveFile>> {
    let (files, mut unreadable) = read_each(paths)?;
    if !unreadable.is_empty() {
        return Err(unreadable.swap_remove(0).into());
    }
    Ok(files)
}

/// Reads each file, keeping the errors of unreadable ones so a check can name them all.
fn read_each(paths: &[PathBuf]) -> anyhow::Result<(Vec<CurveFile>, Vec<alsim::Error>)> {
    if paths.is_empty() {
        return Ok((CurveSet::embedded().files().to_vec(), Vec::new()));
    }
    let mut files = Vec::new();
    let mut unreadable = Vec::new();
    for path in expand(paths)? {
        match CurveFile::read(&path) {
            Ok(file) => files.push(file),
            Err(err) => unreadable.push(err),
        }
    }
    Ok((files, unreadable))
}

fn expand(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| alsim::Error::io(path, e))?;
        if meta.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| alsim::Error::io(path, e))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            inside.sort();
            if inside.is_empty() {
                anyhow::bail!("{}: no .yaml or .yml files in this directory", path.display());
            }
            out.extend(inside);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

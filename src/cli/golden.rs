//! `alsim golden collect|check`: golden curves from eval-only runs, and a committed curve retested against new runs.

use std::path::PathBuf;

use alsim::curve::{CurveFile, ThinkingMode};
use alsim::evidence::{self, Verdict};
use alsim::measured::collect::{self, ByK, DEFAULT_TARGET_SE, Identity, Run};
use alsim::measured::retest::retest;
use alsim::report;

use super::Outcome;
use super::common::{CheckOutputArgs, EvidenceFormatArgs, parse_mode};

const COLLECT_HELP: &str = "\
Each RUN is an evidence file `alsim eval` reads. Its draft length k is the one the evidence records (vLLM
per-position counters, ATOM, logs that state it); where it records none, give it as RUN@k=N (the text after
the last '@k=' is the k) or for every such run with --k N. Several runs of one k are pooled when Cochran's
test finds they agree.

Exit status:
  0  written; every k meets --target-se and the curve check finds no error
  1  written; the curve check finds an error, or some k's runs disagree beyond noise
  2  usage or input error (nothing written)
  3  written; some k need more verification steps (the report says how many)";

const CHECK_HELP: &str = "\
Per k, the curve's value is tested like an `alsim eval` pin: consistent when the whole interval of the runs'
AL lies within value ± tolerance, off when it lies entirely outside. Intervals are Bonferroni-corrected over
the k compared (each at 1 − (1 − confidence)/m), so the chance of calling an honest curve off is at most
1 − confidence. RUN@k=N and --k as for `golden collect`.

Exit status:
  0  consistent at every k measured
  1  the curve is off at some k (too high or too low)
  2  usage or input error
  3  undecided: the runs are too short to tell at some k (the report says how many more steps)";

/// Subcommands of `alsim golden`.
#[derive(Debug, clap::Subcommand)]
pub enum Args {
    /// Collect a golden curve (InferenceX golden_al_distribution layout) from eval-only runs at k = 1..8,
    /// with per-k steps, standard errors and intervals beside each value; check it and say which k need
    /// more steps.
    #[command(after_help = COLLECT_HELP)]
    Collect(CollectArgs),
    /// Is a committed golden curve still what new eval-only runs measure? Per k, the difference with its
    /// interval and a verdict, Bonferroni-corrected across k.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
}

/// Evidence files with their draft lengths.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Evidence files (any format `alsim eval` reads), each optionally RUN@k=N.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<String>,
    /// Draft length of runs whose evidence does not record it and that carry no @k=N.
    #[arg(long, allow_negative_numbers = true)]
    k: Option<usize>,
    #[command(flatten)]
    read: EvidenceFormatArgs,
    /// Confidence level of the intervals (for `check`, over all k together).
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    confidence: f64,
}

impl RunArgs {
    /// The runs' evidence grouped by k.
    fn read(&self) -> anyhow::Result<ByK> {
        let mut runs = Vec::new();
        for text in &self.runs {
            let (path, k) = split_k(text)?;
            let k = k.or(self.k);
            let options = self.read.options(k, None)?;
            runs.push(Run { evidence: evidence::read_path(&path, None, &options)?, k });
        }
        Ok(collect::group_by_k(runs)?)
    }
}

/// `RUN@k=N` → (RUN, Some(N)); anything else is a path as written.
fn split_k(text: &str) -> anyhow::Result<(PathBuf, Option<usize>)> {
    match text.rsplit_once("@k=") {
        Some((path, k)) => {
            let k: usize = k.parse().map_err(|_| {
                anyhow::anyhow!(
                    "{}: '@k={k}' is not a draft length; write RUN@k=N with N in 1..=8",
                    report::one_line(text)
                )
            })?;
            Ok((PathBuf::from(path), Some(k)))
        }
        None => Ok((PathBuf::from(text), None)),
    }
}

/// Flags of `alsim golden collect`.
#[derive(Debug, clap::Args)]
pub struct CollectArgs {
    #[command(flatten)]
    runs: RunArgs,
    /// Model key of the curve (as in the golden files, e.g. minimax-m3).
    #[arg(long)]
    model: String,
    /// Draft model, e.g. Inferact/MiniMax-M3-EAGLE3.
    #[arg(long)]
    drafter: String,
    /// Speculative method: eagle3, mtp, dspark.
    #[arg(long)]
    method: String,
    /// Draft sampling: greedy or probabilistic.
    #[arg(long)]
    draft_sampling: String,
    /// Thinking mode the runs were served in: thinking_on, thinking_off, or unspecified (a plain map).
    #[arg(long, value_parser = parse_mode)]
    mode: ThinkingMode,
    /// Hardware the runs were measured on (recorded in the header).
    #[arg(long)]
    hardware: Option<String>,
    /// The measuring run, e.g. a CI URL (recorded in the header).
    #[arg(long)]
    source_run: Option<String>,
    /// Standard error of AL wanted at every k; the report lists the k that need more steps.
    #[arg(long, default_value_t = DEFAULT_TARGET_SE, allow_negative_numbers = true)]
    target_se: f64,
    /// The golden file to write.
    #[arg(long, short = 'o', value_name = "FILE.yaml")]
    output: PathBuf,
    /// Overwrite an existing --output file.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    format: CheckOutputArgs,
}

/// Flags of `alsim golden check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The committed golden curve file.
    #[arg(value_name = "CURVE")]
    curve: PathBuf,
    #[command(flatten)]
    runs: RunArgs,
    /// Model key in CURVE (needed when it holds several).
    #[arg(long)]
    model: Option<String>,
    /// Thinking mode in CURVE (needed when it holds several).
    #[arg(long, value_parser = parse_mode)]
    mode: Option<ThinkingMode>,
    /// Tolerance on AL: a k is consistent when its whole interval lies within value ± tolerance.
    #[arg(long, default_value_t = evidence::verdict::DEFAULT_TOLERANCE, allow_negative_numbers = true)]
    tolerance: f64,
    #[command(flatten)]
    format: CheckOutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    match args {
        Args::Collect(args) => run_collect(args),
        Args::Check(args) => run_check(args),
    }
}

fn run_collect(args: CollectArgs) -> anyhow::Result<Outcome> {
    let mut writes = args.format.export.writes()?;
    let curve = writes.add("output", &args.output, args.force)?;
    let by_k = args.runs.read()?;
    let identity = Identity {
        model: args.model,
        mode: args.mode,
        drafter: args.drafter,
        method: args.method,
        draft_sampling: args.draft_sampling,
        hardware: args.hardware,
        source_run: args.source_run,
    };
    let output = args.output.display().to_string();
    let collection = collect::collect(identity, &by_k, args.runs.confidence, args.target_se, &output)?;
    // A run named as the output is found here, after reading and before anything is written.
    if collection.writes_curve() {
        writes.write(curve, collection.text.as_bytes())?;
    }
    args.format.emit(&mut writes, &collection)?;
    Ok(if collection.has_problem() {
        Outcome::Problem
    } else if collection.needs_more_steps() {
        Outcome::Undecided
    } else {
        Outcome::Pass
    })
}

fn run_check(args: CheckArgs) -> anyhow::Result<Outcome> {
    let mut writes = args.format.export.writes()?;
    let file = CurveFile::read(&args.curve)?;
    let candidates: Vec<_> = file
        .curves
        .iter()
        .filter(|c| args.model.as_deref().is_none_or(|m| c.model() == m))
        .filter(|c| args.mode.is_none_or(|m| c.mode() == m))
        .collect();
    let curve = match candidates.as_slice() {
        [one] => *one,
        found => anyhow::bail!(
            "{}: {} curves match (of {}); choose one with --model and --mode",
            file.origin,
            found.len(),
            file.curves.iter().map(|c| c.name()).collect::<Vec<_>>().join(", ")
        ),
    };
    let by_k = args.runs.read()?;
    let result = retest(curve, &file.origin, &by_k, args.tolerance, args.runs.confidence)?;
    args.format.emit(&mut writes, &result)?;
    Ok(match result.overall {
        Verdict::Consistent => Outcome::Pass,
        Verdict::Inconclusive => Outcome::Undecided,
        _ => Outcome::Problem,
    })
}

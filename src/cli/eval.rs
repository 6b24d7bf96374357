//! `alsim eval`: is a pinned acceptance length consistent with real-verification evidence?

use std::path::PathBuf;

use alsim::evidence::{self, EvalReport, PinUnderTest, Verdict};
use alsim::report::{self, Format};
use anyhow::Context;

use super::Outcome;
use super::common::{CurveArgs, EvidenceFormatArgs, ExportArgs};

/// Exit statuses of `alsim eval`.
pub const EXIT_STATUS_HELP: &str = "\
Exit status:
  0  the pin is consistent with the evidence (the whole interval lies within pin ± tolerance)
  1  the pin differs: pin too high or too low (the interval lies entirely outside the band)
  2  usage or input error (unreadable, malformed or inconsistent evidence, k mismatch, bad flags)
  3  inconclusive: more verification steps are needed (the report says how many)

The default tolerance of 0.05 AL is the golden value's own noise: golden ALs are rounded to 0.01 and come
from runs of 30-500 prompts with a standard error of a few hundredths; 0.05 AL at AL 2.8 moves throughput
by about 1.8%.";

/// Output formats of `alsim eval`: the common ones plus GitHub Actions annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalFormat {
    /// Aligned tables for a terminal.
    Table,
    /// JSON, one document.
    Json,
    /// Comma-separated values, one block per table.
    Csv,
    /// GitHub-flavoured Markdown.
    #[value(alias = "markdown")]
    Md,
    /// GitHub Actions annotations (::error / ::warning / ::notice with file and line).
    Github,
}

/// Flags of `alsim eval`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_STATUS_HELP)]
pub struct Args {
    /// Evidence files: Prometheus scrapes (one or several concatenated), ATOM /debug/mtp_stats JSON,
    /// TensorRT-LLM iteration-stats JSON, AIPerf server_metrics_export.json, or vLLM/SGLang/ATOM/llama.cpp server
    /// logs.
    #[arg(required = true, value_name = "EVIDENCE")]
    files: Vec<PathBuf>,
    /// Pinned acceptance length (bonus token counted) to check.
    #[arg(
        long,
        required_unless_present = "pin_from",
        conflicts_with = "pin_from",
        requires = "k",
        allow_negative_numbers = true
    )]
    pin: Option<f64>,
    /// Take the pin (and the golden chain for the per-position comparison) from the golden curve named by
    /// --model/--drafter/--mode/--curve/--golden at --k.
    #[arg(long)]
    pin_from: bool,
    /// Draft length k of the pin (default with --pin-from: 3).
    #[arg(long, allow_negative_numbers = true)]
    k: Option<usize>,
    #[command(flatten)]
    curve: CurveArgs,
    /// Tolerance on AL: the pin is consistent when the whole interval lies within pin ± tolerance.
    #[arg(long, default_value_t = evidence::verdict::DEFAULT_TOLERANCE, allow_negative_numbers = true)]
    tolerance: f64,
    /// Confidence level of the intervals.
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    confidence: f64,
    #[command(flatten)]
    read: EvidenceFormatArgs,
    /// An earlier Prometheus snapshot of the same server, one per evidence file in order: the counts are
    /// the deltas.
    #[arg(long, value_name = "FILE")]
    before: Vec<PathBuf>,
    /// Split Prometheus/AIPerf series by this label (engine, tp_rank, dp_rank…) instead of summing them.
    #[arg(long, value_name = "LABEL")]
    split: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = EvalFormat::Table)]
    format: EvalFormat,
    #[command(flatten)]
    export: ExportArgs,
}

/// The seed's draft length.
const DEFAULT_K: usize = 3;

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let writes = args.export.writes()?;
    if !args.before.is_empty() && args.before.len() != args.files.len() {
        anyhow::bail!(
            "--before: {} snapshots given for {} evidence files; give one earlier snapshot per file, in order",
            args.before.len(),
            args.files.len()
        );
    }
    let pin = match args.pin {
        Some(al) => PinUnderTest::new(al, args.k.unwrap_or(DEFAULT_K), args.tolerance, args.confidence, "--pin")?,
        None => {
            let set = args.curve.curve_set()?;
            let found = set.lookup(&args.curve.query(false))?;
            let k = args.k.unwrap_or(DEFAULT_K);
            let chain = found.curve.chain(k).context("deriving per-position acceptance from the golden curve")?;
            let source = format!("{} {}", found.file.origin, found.curve.field(k));
            PinUnderTest::new(found.curve.al(k)?, k, args.tolerance, args.confidence, source)?.with_golden(chain)?
        }
    };
    let options = args.read.options(Some(pin.k), args.split.clone())?;
    let mut all = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        let before = args.before.get(i).map(PathBuf::as_path);
        all.extend(evidence::read_path(path, before, &options)?);
    }
    let result: EvalReport = evidence::evaluate(&pin, &all)?;
    let text = match args.format {
        EvalFormat::Github => report::evidence::github_annotations(&result),
        EvalFormat::Table => report::render(&result, Format::Table),
        EvalFormat::Json => report::render(&result, Format::Json),
        EvalFormat::Csv => report::render(&result, Format::Csv),
        EvalFormat::Md => report::render(&result, Format::Md),
    };
    writes.emit(&text, &result)?;
    Ok(match result.overall {
        Verdict::Consistent => Outcome::Pass,
        Verdict::Inconclusive => Outcome::Undecided,
        _ => Outcome::Problem,
    })
}

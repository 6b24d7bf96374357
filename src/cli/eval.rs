//! `alsim eval`: is a pinned acceptance length consistent with real-verification evidence?

use std::path::{Path, PathBuf};

use alsim::evidence::artifact::{self, ArtifactReading, RunFacts};
use alsim::evidence::{self, EvalReport, PinUnderTest, Verdict};
use alsim::pins::{self, CheckOptions, CheckedPin, EntryRef};
use anyhow::Context;

use super::Outcome;
use super::common::{CheckedFormat, CurveArgs, EvidenceFormatArgs, ExportArgs};

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

/// Flags of `alsim eval`.
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_STATUS_HELP)]
pub struct Args {
    /// Evidence files (Prometheus scrapes, one or several concatenated; ATOM /debug/mtp_stats JSON;
    /// TensorRT-LLM iteration-stats JSON; AIPerf server_metrics_export.json; vLLM/SGLang/ATOM/llama.cpp server
    /// logs), or InferenceX artifacts as downloaded: a zip, a tarball or the folder it was unpacked into
    /// (alsim explain artifacts).
    #[arg(required = true, value_name = "EVIDENCE|ARTIFACT")]
    files: Vec<PathBuf>,
    /// Pinned acceptance length (bonus token counted) to check.
    #[arg(
        long,
        required_unless_present_any = ["pin_from", "repo"],
        conflicts_with_all = ["pin_from", "repo"],
        requires = "k",
        allow_negative_numbers = true
    )]
    pin: Option<f64>,
    /// Take the pin (and the golden chain for the per-position comparison) from the golden curve named by
    /// --model/--drafter/--mode/--curve/--golden at --k.
    #[arg(long, conflicts_with = "repo")]
    pin_from: bool,
    /// Take the pin from this benchmark repository: the master-config entry the artifacts' name and
    /// meta_env.json describe, and the pin its throughput runs use, resolved as `pins check` resolves it.
    #[arg(long, value_name = "PATH")]
    repo: Option<PathBuf>,
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
    #[arg(long, value_enum, default_value_t = CheckedFormat::Table)]
    format: CheckedFormat,
    #[command(flatten)]
    export: ExportArgs,
}

/// The seed's draft length.
const DEFAULT_K: usize = 3;

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.export.writes()?;
    if !args.before.is_empty() && args.before.len() != args.files.len() {
        anyhow::bail!(
            "--before: {} snapshots given for {} evidence files; give one earlier snapshot per file, in order",
            args.before.len(),
            args.files.len()
        );
    }
    if !args.before.is_empty() && args.files.iter().any(|f| f.is_dir()) {
        anyhow::bail!("--before: earlier snapshots pair with single scrape files, not with artifact folders");
    }
    let pin = match (args.pin, &args.repo) {
        (Some(al), _) => PinUnderTest::new(al, args.k.unwrap_or(DEFAULT_K), args.tolerance, args.confidence, "--pin")?,
        (None, Some(repo)) => repo_pin(repo, &args)?,
        (None, None) => {
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
    let mut artifacts = Vec::new();
    for (i, path) in args.files.iter().enumerate() {
        match args.before.get(i) {
            Some(before) => all.extend(evidence::read_path(path, Some(before), &options)?),
            None => {
                let reading = artifact::read_artifact(path, &options)?;
                all.extend(reading.evidence.iter().cloned());
                artifacts.push(reading);
            }
        }
    }
    if all.is_empty() {
        anyhow::bail!("no acceptance evidence in {}", nothing_read(&artifacts));
    }
    let mut result: EvalReport = evidence::evaluate(&pin, &all)?;
    // A plain evidence file is its own report row; only artifacts have members to account for.
    result.artifacts = artifacts.into_iter().filter(|a| a.container != artifact::Container::File).collect();
    writes.emit(&args.format.render(&result), &result)?;
    Ok(match result.overall {
        Verdict::Consistent => Outcome::Pass,
        Verdict::Inconclusive => Outcome::Undecided,
        _ => Outcome::Problem,
    })
}

/// What each artifact held instead of evidence, for the error that there is none.
fn nothing_read(artifacts: &[ArtifactReading]) -> String {
    artifacts
        .iter()
        .map(|a| {
            let skipped: Vec<String> = a.skipped.iter().map(|s| format!("{} ({})", s.path, s.reason)).collect();
            let skipped = if skipped.is_empty() { "no files".to_string() } else { skipped.join("; ") };
            format!("{}: skipped {skipped}", a.artifact)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The pin the artifacts' run uses, from the benchmark repository: the one master-config entry the facts
/// describe, and the pins its throughput runs use (not inert, not a prefill role's). Several pins of one k and
/// value are one pin; anything else asks for `--pin`.
fn repo_pin(repo: &Path, args: &Args) -> anyhow::Result<PinUnderTest> {
    let mut facts = RunFacts::default();
    for path in &args.files {
        let mut read = artifact::read_facts(path)?;
        read.from = read.from.into_iter().map(|from| format!("{} ({from})", path.display())).collect();
        facts.merge(read);
    }
    let said = if facts.words().is_empty() {
        "the artifacts state no facts of their run (no RESULT_FILENAME in their names, no meta_env.json)".to_string()
    } else {
        format!("facts read: {} (from {})", facts.words().join(", "), facts.from.join(", "))
    };
    let ask = "give the pin with --pin AL --k K";
    // The repository as `pins check` reads it: its root found upward, its configuration's golden folder and
    // excludes.
    let place = alsim::config::locate(repo).context("finding the repository root")?;
    let settings = alsim::config::Settings::find(&place).context("reading the configuration")?;
    let exclude = alsim::pins::walk::Excludes::new(&settings.exclude.value)
        .with_context(|| format!("{}", settings.exclude.origin))?;
    let repo = place.root.as_path();
    let inventory = pins::scan(repo, &exclude)?;
    let entries = pins::entries_for_run(&inventory, &facts);
    let (entry, recipes): (EntryRef, Vec<String>) = match entries.as_slice() {
        [one] => one.clone(),
        [] => anyhow::bail!("no master-config entry of {} matches the run; {said}; {ask}", repo.display()),
        many => anyhow::bail!(
            "{} master-config entries match the run ({}); {said}; {ask}",
            many.len(),
            many.iter().map(|(e, _)| format!("{} at {}", e.name, e.at)).collect::<Vec<_>>().join(", ")
        ),
    };
    let golden = pins::golden_curves(repo, settings.golden.value.as_deref())?;
    let report =
        pins::check_inventory(inventory, &golden.curves, golden.source, golden.own, repo, &CheckOptions::default());
    let runs = |p: &&CheckedPin| {
        p.pin.entries.iter().any(|e| e.name == entry.name)
            && !p.pin.inert()
            && p.pin.role != Some(pins::Role::Prefill)
            && args.k.is_none_or(|k| p.pin.k.value == Some(k))
    };
    let mut candidates: Vec<&CheckedPin> = report.pins.iter().filter(runs).collect();
    // Where the run's points name recipes (`CONFIG_FILE=recipes/…`, under the repository's recipe folder),
    // the pins written in them are the ones its throughput runs use.
    let in_recipe = |p: &&CheckedPin| {
        recipes.iter().any(|r| p.pin.location.file.ends_with(r.strip_prefix("recipes/").unwrap_or(r)))
    };
    if candidates.iter().any(in_recipe) {
        candidates.retain(in_recipe);
    }
    let describe = |p: &CheckedPin| {
        let golden = p.golden.as_ref().map_or("no golden value".to_string(), |g| {
            format!("golden {} ({} {})", pins::plain_number(g.expected_al, 3), g.file, g.key)
        });
        format!(
            "pin AL {} at k = {} at {} ({golden})",
            p.implied_al.map_or("?".to_string(), |al| pins::plain_number(al, 3)),
            p.pin.k.value.map_or("?".to_string(), |k| k.to_string()),
            p.pin.location
        )
    };
    let Some(first) = candidates.first() else {
        anyhow::bail!(
            "entry {} at {} runs no pin{} that `alsim pins check` finds (its runs verify for real, or its pin is unresolved); {said}; {ask}",
            entry.name,
            entry.at,
            args.k.map(|k| format!(" at k = {k}")).unwrap_or_default()
        );
    };
    let value = |p: &CheckedPin| (p.implied_al.map(|al| (al * 1000.0).round() as i64), p.pin.k.value);
    if candidates.iter().any(|p| value(p) != value(first)) {
        anyhow::bail!(
            "entry {} runs several pins: {}; give --k to choose, or {ask}",
            entry.name,
            candidates.iter().map(|p| describe(p)).collect::<Vec<_>>().join("; ")
        );
    }
    let (Some(al), Some(k)) = (first.implied_al, first.pin.k.value) else {
        anyhow::bail!("entry {}: {}: its value or k is unresolved; {ask}", entry.name, describe(first));
    };
    let source = format!("{}: entry {} at {}, {}", repo.display(), entry.name, entry.at, describe(first));
    Ok(PinUnderTest::new(al, k, args.tolerance, args.confidence, source)?)
}

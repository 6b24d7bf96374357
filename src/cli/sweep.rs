//! `alsim sweep [REPO]`: the benchmark matrix against the cost model — per master-config entry with
//! speculative decoding and per concurrency, the best k, its band and whether the entry's k lies in it.

use std::path::{Path, PathBuf};

use alsim::config::Settings;
use alsim::matrix::map::NameMap;
use alsim::matrix::{self, MatrixReport, Options};
use alsim::pins::walk::Excludes;
use alsim::report;
use anyhow::Context;

use super::Outcome;
use super::common::{BandArgs, CheckOutputArgs, Writes};
use super::predict::ProfileArgs;

const HELP: &str = "\
Runner labels and model names map to alsim's profiles through profiles/sweep_map.csv (embedded; --map rows
are tried first). A name no row matches is listed as unmapped, never guessed. The k an entry runs comes from
its pins (decode or aggregated roles); without one the row has no verdict.

A k outside its band is a warning until the choice of k holds up against measured sweeps (docs/model.md §6:
`alsim calibrate calibration/measured --choice-al all`); --strict makes it a failure. Every row says
whether its hardware's efficiencies are calibrated from measurements or datasheet defaults.

Exit status:
  0  every entry's k that is known lies in its band, or (without --strict) some lie outside: a warning
  1  with --strict, some entry's k lies outside its band
  2  usage or input error (unreadable repository, map, profile or golden directory)
  3  nothing could be predicted (every entry unmapped or missing what a prediction needs)";

/// Flags of `alsim sweep`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// The benchmark repository, or any folder or file in it (default: the current directory): the root is
    /// found upward (a .git, or golden_al_distribution/) and its whole matrix swept.
    #[arg(default_value = ".")]
    repo: PathBuf,
    /// Golden directory to use instead of the repository's golden_al_distribution/ (or the configuration's
    /// `golden`).
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
    /// Do not read paths matching GLOB, beside what .gitignore and .ignore files drop (as `alsim pins
    /// check --exclude`). Repeatable; replaces the configuration's `exclude`.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Mapping table (the columns of profiles/sweep_map.csv: kind, pattern, profile, source), tried before
    /// the embedded rows.
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    #[command(flatten)]
    profiles: ProfileArgs,
    #[command(flatten)]
    band: BandArgs,
    /// Fail (exit 1) when an entry's k lies outside its band; without it that is a warning (exit 0).
    #[arg(long)]
    strict: bool,
    /// Show every (entry, concurrency) row and every point not predicted, as tables, instead of the counts by
    /// verdict and the entries furthest from their best k (`--format json|csv` always hold every row).
    #[arg(long)]
    long: bool,
    /// Also draw each covered entry's chart (throughput per GPU against per-user speed, one panel per
    /// point) to DIR/ENTRY.svg; DIR is created when missing.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Overwrite existing charts in --plot DIR.
    #[arg(long, requires = "plot")]
    force: bool,
    #[command(flatten)]
    output: CheckOutputArgs,
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.output.export.writes()?;
    if let Some(dir) = &args.plot
        && dir.exists()
        && !dir.is_dir()
    {
        anyhow::bail!("--plot: {} is not a directory", dir.display());
    }
    let band = args.band.band()?;
    let (profiles, _) = args.profiles.load()?;
    let mut map = NameMap::embedded(&profiles).context("the embedded mapping table against the profiles given")?;
    if let Some(path) = &args.map {
        map = NameMap::read(path, &profiles).context("--map")?.before(map);
    }
    // The matrix is the root's master configs whatever part of the repository is named.
    let place = alsim::config::locate(&args.repo).context("finding the repository root")?;
    if place.found_upward() {
        let root = report::one_line(&place.root.display().to_string()).into_owned();
        eprintln!(
            "alsim: repository root {root} (it holds {}); sweeping its whole matrix",
            place.marker.unwrap_or_default()
        );
    }
    // The configuration `pins check` reads there: its golden folder and excludes, under the flags.
    let settings = Settings::find(&place).context("reading the configuration")?.with_flags(
        args.golden.clone(),
        None,
        &args.exclude,
        None,
    );
    let exclude = Excludes::new(&settings.exclude.value).with_context(|| format!("{}", settings.exclude.origin))?;
    let options = Options { golden: settings.golden.value, exclude, map, profiles, band, strict: args.strict };
    let report = matrix::sweep(&place.root, &options).context("sweeping the benchmark matrix")?;
    if let Some(dir) = &args.plot {
        plot(&report, dir, args.force, &mut writes)?;
    }
    args.output.emit_long(&mut writes, &report, args.long)?;
    Ok(report.status.into())
}

/// One chart per covered entry, named after it (characters a file name cannot hold become `_`); every
/// target is checked before any is written, so a refusal leaves nothing half done.
fn plot(report: &MatrixReport, dir: &Path, force: bool, writes: &mut Writes) -> anyhow::Result<()> {
    let mut taken = std::collections::BTreeSet::new();
    let mut targets = Vec::new();
    for entry in &report.plots {
        let stem: String = entry
            .entry
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
            .collect();
        let stem = stem.trim_start_matches('.').to_string();
        let mut name = format!("{stem}.svg");
        let mut n = 1;
        while !taken.insert(name.clone()) {
            n += 1;
            name = format!("{stem}-{n}.svg");
        }
        targets.push((dir.join(name), &entry.sweeps));
    }
    // The directory is made once the charts are known: in a new one, no chart can be refused.
    std::fs::create_dir_all(dir).with_context(|| format!("--plot: creating {}", dir.display()))?;
    let mut slots = Vec::new();
    for (path, sweeps) in targets {
        slots.push((writes.add("plot", &path, force)?, sweeps));
    }
    for (slot, sweeps) in slots {
        writes.write(slot, report::plot_sweeps_svg(sweeps, None)?.as_bytes())?;
    }
    Ok(())
}

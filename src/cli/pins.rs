//! `alsim pins check|list|fix [REPO]` and `alsim pin`: the CI check of pinned acceptance lengths, the
//! pin inventory, the repair of wrong literals, and the engine-native setting for a golden value.

use std::path::{Path, PathBuf};

use alsim::accept::{RatesPin, RatesSetting};
use alsim::config::{self, Origin, Place, Settings};
use alsim::engine::Engine;
use alsim::output::Output;
use alsim::pins::walk::Excludes;
use alsim::pins::{self, AllowList, CheckOptions};
use alsim::report::ci::{Checked, CiFormat, render_ci};
use alsim::report::{self, Format, Report};
use anyhow::Context;

use super::common::{CurveArgs, ExportArgs, OutputArgs, csv_note};
use super::{Outcome, emit};

const CHECK_HELP: &str = "\
Exit status:
  0  every pin matches its golden value and nothing else was found
  1  an error (classes 1-11 of docs/pins.md, a value no curve explains, or a candidate file that could not be
     read or parsed); with --strict, any warning (an assumed thinking mode, a duplicate YAML key)
  2  usage or input error (unreadable repository, golden directory or allow-list)
  3  no error, but some pins could not be resolved (see the 'unresolved' findings), or no candidate file
     was found under REPO

With --base REV, the check also runs on the tree of git revision REV (written into a temporary directory;
the repository's worktree, index and HEAD are only read) with the same --golden and allow-list, and each
finding is reported as new, fixed or unchanged (matched by class, file and message, not by line). A file
REV checked that the working tree still has but its ignore files, excludes or configuration drop is a new
'dropped-file' error. Then exit 1 means a new error (with --strict, a new warning), exit 3 a new
unresolved pin or no candidate file, and exit 2 also that REV is not a commit, REPO not in a git work
tree, or git not found.

REPO may be any folder of a repository, or one file: the root is found upward (a .git, or
golden_al_distribution/) and the findings located in REPO are reported as the root's check gives them.
Settings may come from alsim.toml (or [tool.alsim] in pyproject.toml); `alsim config` shows them.

`alsim explain CLASS` (wrong-k, 8, eval-leak…): what a class means, how to fix and allow it.";

const FIX_HELP: &str = "\
Prints a unified diff that sets each wrong literal (or a master config's injected value) to its golden
value, and lists the wrong pins it leaves alone with the reason (a computed value, a literal shared by
pins that want different values, another error on the line). Allowed findings are never changed.

With --write, every file is changed or none is: a file whose pinned line changed since the check, a
read-only file, or a link out of the repository is refused. Each file written is listed on stderr.

Exit status:
  0  nothing to fix and nothing left alone
  1  fixes printed (or written with --write), or wrong pins left alone (listed on stderr)
  2  usage or input error, or a file --write refused (named; nothing changed)";

/// Flags of `alsim pins`.
#[derive(Debug, clap::Args)]
pub struct PinsArgs {
    #[command(subcommand)]
    action: PinsAction,
}

#[derive(Debug, clap::Subcommand)]
enum PinsAction {
    /// Check every pinned synthetic acceptance value in a benchmark repository against the golden curves.
    #[command(after_help = CHECK_HELP)]
    Check(CheckArgs),
    /// List every pin site and branch with the facts resolved for it.
    List(ListArgs),
    /// Print (or, with --write, apply) a diff setting each wrong pin literal to its golden value.
    #[command(after_help = FIX_HELP)]
    Fix(FixArgs),
}

/// Output of `alsim pins check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum CheckFormat {
    /// Each finding as a block with how to mend it, then the summary, wrapped to the terminal.
    Human,
    /// Every pin and finding in tables, wrapped to the terminal.
    Table,
    /// JSON, one document.
    Json,
    /// Comma-separated values.
    Csv,
    /// GitHub-flavoured Markdown.
    Md,
    /// GitHub Actions annotations (`::error file=…,line=…::…`).
    Github,
    /// SARIF 2.1.0, for GitHub code scanning (every finding, allowed ones as suppressed; under --base each
    /// with its baseline state).
    Sarif,
    /// reviewdog's rdjson (`reviewdog -f=rdjson`).
    Rdjson,
}

#[derive(Debug, clap::Args)]
struct CheckArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    strict: StrictArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Human)]
    format: CheckFormat,
    /// Pull-request mode: compare with the findings at git revision REV (e.g. the PR's base) and fail only
    /// on new errors.
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    #[command(flatten)]
    export: ExportArgs,
}

/// Where golden values and sanctioned exceptions come from, and which files are read (shared by `check`,
/// `fix` and `alsim config`).
#[derive(Debug, clap::Args)]
pub(super) struct SourceArgs {
    /// The repository, a folder in it or one file (default: the current directory); the root is found
    /// upward.
    #[arg(default_value = ".")]
    repo: PathBuf,
    /// Golden directory to use instead of the repository's golden_al_distribution/.
    #[arg(long, value_name = "DIR")]
    golden: Option<PathBuf>,
    /// Allow-list of sanctioned exceptions: a YAML list of {file, line?, class, reason}; `file` may use `*`
    /// [default: REPO/.alsim-allow.yaml when it exists]. A `# alsim: allow CLASS -- REASON` comment in a
    /// file sanctions its own line (or, alone on its line, the next one).
    #[arg(long, value_name = "FILE")]
    allow: Option<PathBuf>,
    /// Do not read paths matching GLOB (matched against the path from the root or the name alone:
    /// 'scratch/**', '*.bak.sh'), beside what .gitignore and .ignore files drop. Repeatable; replaces the
    /// configuration's `exclude`.
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
}

/// `--strict` and `--no-strict`, over the configuration's `strict`; the last given wins.
#[derive(Debug, clap::Args)]
pub(super) struct StrictArgs {
    /// Fail on warnings too (e.g. a thinking mode only inferred from the model's default).
    #[arg(long, overrides_with = "no_strict")]
    strict: bool,
    /// Warnings do not fail, whatever the configuration's `strict` says.
    #[arg(long, overrides_with = "strict")]
    no_strict: bool,
}

impl StrictArgs {
    /// The strictness the flags set, if any.
    pub(super) fn flag(&self) -> Option<bool> {
        match (self.strict, self.no_strict) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

impl SourceArgs {
    /// The root found for REPO, said on stderr when it lies above REPO.
    pub(super) fn place(&self) -> anyhow::Result<Place> {
        let place = config::locate(&self.repo).context("finding the repository root")?;
        if place.found_upward() {
            let marker = place.marker.unwrap_or_default();
            let root = report::one_line(&place.root.display().to_string()).into_owned();
            eprintln!(
                "alsim: repository root {root} (it holds {marker}); reporting {}",
                place.within.as_deref().unwrap_or(".")
            );
        }
        Ok(place)
    }

    /// The settings in force at `place`: the flags over the configuration file over alsim's defaults.
    pub(super) fn settings(&self, place: &Place, strict: Option<bool>) -> anyhow::Result<Settings> {
        let found = Settings::find(place).context("reading the configuration")?;
        Ok(found.with_flags(self.golden.clone(), self.allow.clone(), &self.exclude, strict))
    }

    /// The check's options from `settings`; an allow-list the user did not name is said on stderr, so a run
    /// never sanctions findings silently.
    fn options(settings: &Settings) -> anyhow::Result<CheckOptions> {
        let allow = match &settings.allow.value {
            Some(path) => {
                if !matches!(settings.allow.origin, Origin::Flag(_)) {
                    eprintln!("alsim: using the allow-list {}", report::one_line(&path.display().to_string()));
                }
                Some(AllowList::read(path).context("reading the allow-list")?)
            }
            None => None,
        };
        let exclude = Excludes::new(&settings.exclude.value).with_context(|| format!("{}", settings.exclude.origin))?;
        Ok(CheckOptions { golden: settings.golden.value.clone(), allow, strict: settings.strict.value, exclude })
    }

    /// The check of the root, reported for the part named.
    fn check(&self, strict: Option<bool>) -> anyhow::Result<(Place, CheckOptions, pins::CheckReport)> {
        let place = self.place()?;
        let options = SourceArgs::options(&self.settings(&place, strict)?)?;
        let checked = pins::check(&place.root, &options).context("checking pins")?;
        let part = checked.within(place.within.as_deref());
        Ok((place, options, part))
    }
}

#[derive(Debug, clap::Args)]
struct FixArgs {
    #[command(flatten)]
    source: SourceArgs,
    /// Apply the changes to the files instead of printing the diff.
    #[arg(long)]
    write: bool,
    /// Output format of the plan (the default prints the diff, then the refusals on stderr).
    #[arg(long, value_enum)]
    format: Option<Format>,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    #[command(flatten)]
    source: SourceArgs,
    #[command(flatten)]
    output: OutputArgs,
}

pub fn run(args: PinsArgs) -> anyhow::Result<Outcome> {
    match args.action {
        PinsAction::Check(args) => check(args),
        PinsAction::List(args) => {
            let mut writes = args.output.export.writes()?;
            let place = args.source.place()?;
            let options = SourceArgs::options(&args.source.settings(&place, None)?)?;
            let golden = pins::golden_curves(&place.root, options.golden.as_deref())?;
            let inventory = pins::scan(&place.root, &options.exclude)
                .with_context(|| format!("scanning repository {}", place.root.display()))?
                .with_served_modes(&golden.curves);
            let nothing = !inventory.files.iter().any(|file| place.holds(file));
            args.output.emit(&mut writes, &inventory.within(place.within.as_deref()))?;
            Ok(if nothing { nothing_checked(&args.source.repo) } else { Outcome::Pass })
        }
        PinsAction::Fix(args) => fix(args),
    }
}

fn fix(args: FixArgs) -> anyhow::Result<Outcome> {
    let (place, _, checked) = args.source.check(None)?;
    if checked.files_read == 0 {
        return Ok(nothing_checked(&args.source.repo));
    }
    let plan = pins::plan_fixes(&checked, &place.root).context("planning fixes")?;
    match args.format {
        Some(format) => emit(&report::render(&plan, format))?,
        None => {
            if !args.write {
                emit(&plan.diff)?;
            }
            for r in &plan.refused {
                eprintln!("alsim: not fixed: {}", report::one_line(&format!("{}: {}", r.at, r.reason)));
            }
        }
    }
    if args.write && !plan.changes.is_empty() {
        let prepared = pins::fix::prepare(&plan, &place.root).context("writing fixes (nothing was changed)")?;
        let written = prepared.commit().context("writing fixes")?;
        for file in &written {
            let also = &file.names[1..];
            let also = if also.is_empty() { String::new() } else { format!(" (also reached as {})", also.join(", ")) };
            eprintln!("alsim: wrote {}{also}", file.names[0]);
            if let Some(what) = &file.not_kept {
                eprintln!("alsim: warning: {}: {what}", file.names[0]);
            }
        }
        let changes: usize = written.iter().map(|f| f.changes).sum();
        eprintln!("alsim: {changes} changes written to {} files", written.len());
    }
    Ok(if plan.changes.is_empty() && plan.refused.is_empty() { Outcome::Pass } else { Outcome::Problem })
}

fn check(args: CheckArgs) -> anyhow::Result<Outcome> {
    let mut writes = args.export.writes()?;
    let (place, options, checked) = args.source.check(args.strict.flag())?;
    if checked.files_read == 0 {
        nothing_checked(&args.source.repo);
    }
    // Annotations stop at 10 errors a step; the job summary GitHub renders on the run's page holds the whole
    // report.
    let summary_file = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|path| !path.is_empty());
    let summarize = args.format == CheckFormat::Github && summary_file.is_some();
    let (summary, status) = match &args.base {
        None => {
            let text = check_output(&checked, args.format, report::pins::github_annotations);
            writes.emit(&text, &checked)?;
            (summarize.then(|| report::render(&checked, Format::Md)), checked.status)
        }
        Some(rev) => {
            let tree = pins::diff::checkout(&place.root, rev)?;
            // The base's own ignore files, configuration and allow-list decide what it reads and sanctions
            // (an allow entry the change brings is then compared: `allow-changed`); golden values are the
            // working tree's.
            let at_base = Place { root: tree.root().to_path_buf(), ..place.clone() };
            let base_settings =
                Settings::find(&at_base).with_context(|| format!("reading the configuration at {rev}"))?;
            let base_settings = base_settings.with_flags(None, None, &args.source.exclude, None);
            let base_options = CheckOptions {
                exclude: Excludes::new(&base_settings.exclude.value)
                    .with_context(|| format!("{} at {rev}", base_settings.exclude.origin))?,
                allow: base_allow(
                    args.source.allow.as_deref(),
                    &place.root,
                    tree.root(),
                    base_settings.allow.value.as_deref(),
                )?,
                ..options.clone()
            };
            let base = pins::check(tree.root(), &base_options).with_context(|| format!("checking pins at {rev}"))?;
            let dropped = pins::diff::dropped_files(
                (&place.root, &options.exclude),
                (tree.root(), &base_options.exclude),
                rev,
                &options.allow.clone().unwrap_or_default(),
                |file| place.holds(file),
            )?;
            let mut compared = pins::diff::compare(checked, &base.within(place.within.as_deref()), rev, tree.commit());
            compared.add_new(dropped);
            let text = check_output(&compared, args.format, report::pins::github_annotations_against);
            writes.emit(&text, &compared)?;
            (summarize.then(|| report::render(&compared, Format::Md)), compared.status)
        }
    };
    // What the file already holds is kept, and a summary that cannot be written fails nothing: a FIFO with
    // no reader is found at once, not waited on.
    if let (Some(summary), Some(path)) = (summary, summary_file) {
        let appended =
            Output::new("step_summary", Path::new(&path), true).and_then(|out| out.append(summary.as_bytes()));
        if let Err(e) = appended {
            // The path is named in the message; the parameter's name is not a flag the user could give.
            let reason = match e {
                alsim::Error::Parameter { message, .. } => message,
                other => other.to_string(),
            };
            eprintln!("alsim: warning: the report was not appended to $GITHUB_STEP_SUMMARY: {reason}");
        }
    }
    Ok(status.into())
}

/// The allow-list of the base revision checked out at `base_root`: `flag` (`--allow`) read there when it
/// lies inside the repository at `root` (the file as the base has it), as it is when it lies outside, else
/// the base's own (`base`: its configuration's or its default file), so that an allow entry the change
/// brings or widens is compared (`allow-changed`), not applied to both sides.
fn base_allow(
    flag: Option<&Path>,
    root: &Path,
    base_root: &Path,
    base: Option<&Path>,
) -> anyhow::Result<Option<AllowList>> {
    let path = match flag {
        Some(path) => match (path.canonicalize(), root.canonicalize()) {
            (Ok(file), Ok(root)) => match file.strip_prefix(&root) {
                Ok(rel) => Some(base_root.join(rel)).filter(|p| p.is_file()),
                Err(_) => Some(path.to_path_buf()),
            },
            _ => Some(path.to_path_buf()),
        },
        None => base.map(Path::to_path_buf),
    };
    path.map(|p| AllowList::read(&p).context("reading the allow-list at the base")).transpose()
}

/// Says that a tree with no candidate file was not checked: exit 3, as `pins check` gives it.
fn nothing_checked(repo: &Path) -> Outcome {
    let shown = report::one_line(&repo.display().to_string()).into_owned();
    eprintln!("alsim: no candidate file (shell script, YAML, Markdown) under {shown}: nothing was checked");
    Outcome::Undecided
}

/// The check (or its comparison with a base) in `format`: findings as blocks by default, every table with
/// `table`.
fn check_output<R: Report + Checked>(checked: &R, format: CheckFormat, annotations: fn(&R) -> String) -> String {
    match format {
        CheckFormat::Sarif => render_ci(checked, CiFormat::Sarif),
        CheckFormat::Rdjson => render_ci(checked, CiFormat::Rdjson),
        CheckFormat::Github => annotations(checked),
        CheckFormat::Human => report::render(checked, Format::Table),
        CheckFormat::Table => report::tables_text(checked, report::layout::width()),
        CheckFormat::Json => report::render(checked, Format::Json),
        CheckFormat::Csv => {
            csv_note(checked);
            report::render(checked, Format::Csv)
        }
        CheckFormat::Md => report::render(checked, Format::Md),
    }
}

/// Output of `alsim pin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PinFormat {
    /// The bare setting, one flag or variable per line, for `$(alsim pin …)`.
    Text,
    /// A table with the golden source.
    Table,
    /// JSON.
    Json,
}

/// Flags of `alsim pin`.
#[derive(Debug, clap::Args)]
pub struct PinArgs {
    #[command(flatten)]
    curve: CurveArgs,
    /// Draft length k.
    #[arg(long)]
    k: usize,
    /// Engine: vllm, sglang, trtllm, atom or llamacpp.
    #[arg(long, value_parser = parse_engine)]
    engine: Engine,
    /// What the pin keeps: the golden mean only, or the real per-position shape too.
    #[arg(long, value_enum, default_value_t = Shape::Mean)]
    shape: Shape,
    /// ATOM only: write --spec-decode-acceptance-rate (AL−1)/k instead of the length.
    #[arg(long)]
    rate: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = PinFormat::Text)]
    format: PinFormat,
}

/// What `alsim pin` pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Shape {
    /// The golden mean as the engine's length knob (each engine then forces its own shape).
    Mean,
    /// The golden curve's per-position chain as a rates list (vLLM synthetic_acceptance_rates, llama.cpp
    /// --spec-synth-rates): same mean, and the real spread of tokens per step.
    Real,
}

fn parse_engine(text: &str) -> Result<Engine, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

pub fn run_pin(args: PinArgs) -> anyhow::Result<Outcome> {
    if args.rate && args.engine != Engine::Atom {
        anyhow::bail!("--rate: only ATOM has a rate knob (--spec-decode-acceptance-rate)");
    }
    if args.rate && args.shape == Shape::Real {
        anyhow::bail!(
            "--rate writes ATOM's mean rate knob; --shape real writes per-position rates, which ATOM does not take"
        );
    }
    let set = args.curve.curve_set()?;
    let found = set.lookup(&args.curve.query(false))?;
    let al = found.curve.al(args.k)?;
    let source = format!("{} {}", found.file.origin, found.curve.field(args.k));
    let text = match args.shape {
        Shape::Mean => {
            let setting = pins::native_setting(args.engine, al, args.k, args.rate, source)?;
            match args.format {
                PinFormat::Text => lines(&setting.lines),
                PinFormat::Table => report::render(&setting, Format::Table),
                PinFormat::Json => report::render(&setting, Format::Json),
            }
        }
        Shape::Real => {
            let pin = RatesPin::from_curve(found.curve, args.k)?;
            let setting = RatesSetting::new(pin, args.engine, al, source).context("--shape real")?;
            match args.format {
                PinFormat::Text => {
                    // The setting alone goes to stdout, for `$(alsim pin …)`; where the rates came from is
                    // for the person reading.
                    eprintln!("alsim: rates: {}", report::one_line(&setting.provenance));
                    lines(&setting.lines)
                }
                PinFormat::Table => report::render(&setting, Format::Table),
                PinFormat::Json => report::render(&setting, Format::Json),
            }
        }
    };
    emit(&text)?;
    Ok(Outcome::Pass)
}

fn lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

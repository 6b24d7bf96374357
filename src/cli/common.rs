//! Flags shared by several subcommands: which golden curve or real acceptance to use, how to read evidence,
//! and the output format and plot file.

use std::path::{Path, PathBuf};

use alsim::accept::fit::{FitKind, fit};
use alsim::accept::{Acceptance, RatesPin};
use alsim::curve::{CurveFile, CurveQuery, CurveSet, ThinkingMode};
use alsim::evidence::{self, InputFormat, ReadOptions};
use alsim::output::{Output, Outputs, Slot};
use alsim::report::ci::{Checked, CiFormat, render_ci};
use alsim::report::{self, Format, Report};
use anyhow::Context;

/// The seed's case, used when no model is named.
pub const DEFAULT_MODEL: &str = "minimax-m3";
/// The seed's drafter, used with the default model when no drafter is named.
pub const DEFAULT_DRAFTER: &str = "Inferact/MiniMax-M3-EAGLE3";

/// Which golden curve: the embedded ones unless `--curve` or `--golden` names files.
#[derive(Debug, Clone, clap::Args)]
pub struct CurveArgs {
    /// Model key as in the golden files (default: minimax-m3 with the Inferact/MiniMax-M3-EAGLE3 drafter).
    #[arg(long)]
    pub model: Option<String>,
    /// Draft model, e.g. Inferact/MiniMax-M3-EAGLE3-GQA (needed where drafters share a model key).
    #[arg(long)]
    pub drafter: Option<String>,
    /// Speculative method: eagle3, mtp, dspark.
    #[arg(long)]
    pub method: Option<String>,
    /// Draft sampling: greedy or probabilistic.
    #[arg(long)]
    pub draft_sampling: Option<String>,
    /// Thinking mode of the served model: thinking_on, thinking_off.
    #[arg(long, default_value = "thinking_on", value_parser = parse_mode)]
    pub mode: ThinkingMode,
    /// Golden curve file(s) to use instead of the embedded curves.
    #[arg(long = "curve", value_name = "FILE")]
    pub curve_files: Vec<PathBuf>,
    /// Directory of golden curve files (e.g. a benchmark repo's golden_al_distribution/).
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,
}

impl CurveArgs {
    /// The curve files to search: `--curve` files, a `--golden` directory, else the embedded set.
    pub fn curve_set(&self) -> anyhow::Result<CurveSet> {
        let mut files = Vec::new();
        for path in &self.curve_files {
            // The error names the file already.
            files.push(CurveFile::read(path)?);
        }
        if let Some(dir) = &self.golden {
            let set = CurveSet::read_dir(dir)?;
            files.extend(set.files().iter().cloned());
        }
        Ok(if files.is_empty() { CurveSet::embedded() } else { CurveSet::new(files) })
    }

    /// The lookup these flags describe. With no model named, the seed's model and drafter. A command that
    /// only explores (`exploring`: accept, simulate, predict, curve show) also takes the seed's drafter when
    /// the seed's model is named without one, and says so on stderr; one that judges or writes a pin (eval,
    /// pin) never picks between the two MiniMax-M3 drafters for the user.
    pub fn query(&self, exploring: bool) -> CurveQuery {
        let model = self.model.clone().unwrap_or_else(|| DEFAULT_MODEL.to_string());
        let embedded = self.method.is_none() && self.curve_files.is_empty() && self.golden.is_none();
        let drafter = self.drafter.clone().or_else(|| match &self.model {
            None => embedded.then(|| DEFAULT_DRAFTER.to_string()),
            Some(named) if exploring && embedded && named.eq_ignore_ascii_case(DEFAULT_MODEL) => {
                eprintln!(
                    "alsim: note: {DEFAULT_MODEL} has curves for two drafters; using {DEFAULT_DRAFTER} \
                     (--drafter {DEFAULT_DRAFTER}-GQA for the other)"
                );
                Some(DEFAULT_DRAFTER.to_string())
            }
            Some(_) => None,
        });
        CurveQuery {
            model,
            drafter,
            method: self.method.clone(),
            draft_sampling: self.draft_sampling.clone(),
            mode: Some(self.mode),
        }
    }
}

/// `--format` and the exports beside it.
#[derive(Debug, Clone, clap::Args)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    #[command(flatten)]
    pub export: ExportArgs,
}

impl OutputArgs {
    /// Prints `report` in the chosen format, then writes every export.
    pub fn emit<R: Report>(&self, writes: &mut Writes, report: &R) -> anyhow::Result<()> {
        self.emit_long(writes, report, false)
    }

    /// [`OutputArgs::emit`], the human format showing every table (`--long`) where `long` is set, rather than
    /// the report's one-screen answer.
    pub fn emit_long<R: Report>(&self, writes: &mut Writes, report: &R, long: bool) -> anyhow::Result<()> {
        let text = match self.format {
            Format::Table if long => report::tables_text(report, report::layout::width()),
            Format::Csv => {
                csv_note(report);
                report::render(report, Format::Csv)
            }
            format => report::render(report, format),
        };
        writes.emit(&text, report)
    }
}

/// Output formats of a command that checks (and can fail a build): the report's own, and its findings as
/// CI systems read them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckedFormat {
    /// Aligned tables for a terminal.
    Table,
    /// JSON, one document.
    Json,
    /// Comma-separated values.
    Csv,
    /// GitHub-flavoured Markdown.
    #[value(alias = "markdown")]
    Md,
    /// GitHub Actions annotations (::error / ::warning / ::notice with file and line).
    Github,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers (every finding, rules from docs/).
    Sarif,
    /// reviewdog's rdjson (`reviewdog -f=rdjson`).
    Rdjson,
}

impl CheckedFormat {
    /// `report` in this format.
    pub fn render<R: Report + Checked>(self, report: &R) -> String {
        match self {
            CheckedFormat::Table => report::render(report, Format::Table),
            CheckedFormat::Json => report::render(report, Format::Json),
            CheckedFormat::Csv => {
                csv_note(report);
                report::render(report, Format::Csv)
            }
            CheckedFormat::Md => report::render(report, Format::Md),
            CheckedFormat::Github => render_ci(report, CiFormat::Github),
            CheckedFormat::Sarif => render_ci(report, CiFormat::Sarif),
            CheckedFormat::Rdjson => render_ci(report, CiFormat::Rdjson),
        }
    }
}

/// `--format` of a command that checks, and the exports beside it.
#[derive(Debug, Clone, clap::Args)]
pub struct CheckOutputArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckedFormat::Table)]
    pub format: CheckedFormat,
    #[command(flatten)]
    pub export: ExportArgs,
}

impl CheckOutputArgs {
    /// Prints `report` in the chosen format, then writes every export.
    pub fn emit<R: Report + Checked>(&self, writes: &mut Writes, report: &R) -> anyhow::Result<()> {
        self.emit_long(writes, report, false)
    }

    /// [`CheckOutputArgs::emit`], the human format showing every table (`--long`) where `long` is set.
    pub fn emit_long<R: Report + Checked>(&self, writes: &mut Writes, report: &R, long: bool) -> anyhow::Result<()> {
        let text = match self.format {
            CheckedFormat::Table if long => report::tables_text(report, report::layout::width()),
            format => format.render(report),
        };
        writes.emit(&text, report)
    }
}

/// `--export-json`, `--export-md`, `--export-csv`: the same report in other formats, to files, from one run
/// (as hyperfine's exports), e.g. a table on the terminal and Markdown for a job summary.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ExportArgs {
    /// Also write the report as JSON to FILE (replaced if it exists; `-` for stdout, which then carries it
    /// alone; repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_json: Vec<PathBuf>,
    /// Also write the report as Markdown to FILE (replaced if it exists; `-` for stdout; repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_md: Vec<PathBuf>,
    /// Also write the report as CSV to FILE, raw numbers with their units in the header (replaced if it
    /// exists; `-` for stdout; repeatable).
    #[arg(long, value_name = "FILE")]
    pub export_csv: Vec<PathBuf>,
}

impl ExportArgs {
    /// Every output of a run that writes only these exports, resolved before any work ([`Writes`]).
    pub fn writes(&self) -> anyhow::Result<Writes> {
        let mut writes = Writes { outputs: Outputs::new(), exports: Vec::new() };
        let json = self.export_json.iter().map(|p| (Format::Json, "export_json", p));
        let md = self.export_md.iter().map(|p| (Format::Md, "export_md", p));
        for (format, parameter, path) in
            json.chain(md).chain(self.export_csv.iter().map(|p| (Format::Csv, "export_csv", p)))
        {
            let slot = writes.add(parameter, path, true)?;
            writes.exports.push((format, slot));
        }
        Ok(writes)
    }
}

/// Everything one run writes besides its own output: the exports and the files a command adds (`--output`,
/// `--plot`), resolved and checked against each other before any work, and against the files the run read
/// before any is written ([`alsim::output`]). Standard output carries the command's own output, unless an
/// export takes it (`--export-json -`): that output then goes to stderr.
#[derive(Debug)]
pub struct Writes {
    outputs: Outputs,
    exports: Vec<(Format, Slot)>,
}

/// Says on stderr which tables `--format csv` left out: stdout holds one table, the main one.
pub fn csv_note<R: Report>(report: &R) {
    let names: Vec<String> = report::csv_files(report).into_iter().filter_map(|(name, _)| name).collect();
    if !names.is_empty() {
        eprintln!(
            "alsim: note: the CSV is the main table; --export-csv FILE also writes the others beside FILE: {}",
            names.join(", ")
        );
    }
}

impl Writes {
    /// Adds the output `path` given by `parameter`; an existing file is replaced only when `replace` is set.
    pub fn add(&mut self, parameter: &'static str, path: &Path, replace: bool) -> anyhow::Result<Slot> {
        Ok(self.outputs.add(Output::new(parameter, path, replace)?)?)
    }

    /// Writes `bytes` as the whole of the output in `slot`.
    pub fn write(&self, slot: Slot, bytes: &[u8]) -> anyhow::Result<()> {
        Ok(self.outputs.write(slot, bytes)?)
    }

    /// Prints the command's own output `text`, then writes `report` to every export: a CSV export's main
    /// table to its file and each other table beside it, as the file's stem and the table's name
    /// (`p.csv`, `p.best-k-concurrency.csv`), each checked as every output is before anything is written.
    pub fn emit<R: Report>(&mut self, text: &str, report: &R) -> anyhow::Result<()> {
        // Every table as CSV text is only wanted where a CSV export takes it.
        let csv_wanted = self.exports.iter().any(|(format, _)| *format == Format::Csv);
        let csv = if csv_wanted { report::csv_files(report) } else { Vec::new() };
        let mut beside = Vec::new();
        for (format, slot) in self.exports.clone() {
            if format != Format::Csv || csv.len() < 2 {
                continue;
            }
            let given = self.outputs.get(slot).given().to_path_buf();
            if !self.outputs.get(slot).is_regular() {
                let names: Vec<&str> = csv.iter().filter_map(|(name, _)| name.as_deref()).collect();
                eprintln!(
                    "alsim: note: {} holds the main table; name a file to have the others ({}) written beside it",
                    report::one_line(&given.display().to_string()),
                    names.join(", ")
                );
                continue;
            }
            let stem = given.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            for (name, text) in csv.iter().skip(1) {
                let path = given.with_file_name(format!("{stem}.{}.csv", name.as_deref().unwrap_or_default()));
                beside.push((self.add("export_csv", &path, true)?, text));
            }
        }
        self.outputs.check_inputs()?;
        if self.outputs.take_stdout() {
            anstream::eprint!("{text}");
        } else {
            super::emit(text)?;
        }
        for (format, slot) in &self.exports {
            self.write(*slot, report::render(report, *format).as_bytes())?;
        }
        for (slot, text) in beside {
            self.write(slot, text.as_bytes())?;
        }
        Ok(())
    }
}

/// `--plot FILE.svg|FILE.png` and `--force`: where to draw, refusing to replace a file the user already has.
#[derive(Debug, Clone, clap::Args)]
pub struct PlotArgs {
    /// Also draw the report's chart to this file: SVG, or PNG where the name ends in .png.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Overwrite an existing --plot file.
    #[arg(long, requires = "plot")]
    pub force: bool,
}

impl PlotArgs {
    /// Adds the file to draw to, checked before any work is done so a long run never ends in a refusal: a
    /// name ending in another image type (`x.jpg`) is refused, as SVG written into it would not be that; a
    /// PNG where the system has no font for its text.
    pub fn add_to(&self, writes: &mut Writes) -> anyhow::Result<Option<Slot>> {
        let Some(path) = self.plot.as_deref() else { return Ok(None) };
        match self.extension().as_deref() {
            None | Some("svg") => {}
            Some("png") => report::png_ready()?,
            Some(ext) => anyhow::bail!(
                "--plot: {} ends in .{ext}, but alsim draws SVG or PNG: name the file .svg or .png",
                report::one_line(&path.display().to_string())
            ),
        }
        writes.add("plot", path, self.force).map(Some)
    }

    /// The chart `svg` as the file's type wants it: rasterised for a `.png`, else the SVG itself.
    pub fn image(&self, svg: String) -> anyhow::Result<Vec<u8>> {
        Ok(if self.extension().as_deref() == Some("png") { report::png(&svg)? } else { svg.into_bytes() })
    }

    fn extension(&self) -> Option<String> {
        self.plot.as_deref()?.extension().map(|e| e.to_string_lossy().to_ascii_lowercase())
    }
}

/// How to read evidence files: the format (detected unless given) and SGLang's log interval.
#[derive(Debug, Clone, clap::Args)]
pub struct EvidenceFormatArgs {
    /// Evidence format instead of detecting it: prometheus, atom-json, trtllm-json, aiperf-json, log.
    #[arg(long, value_parser = parse_format_in)]
    pub format_in: Option<InputFormat>,
    /// Decode steps per SGLang "Decode batch" log line (SGLang --decode-log-interval) [default: 40].
    #[arg(long, allow_negative_numbers = true)]
    pub decode_log_interval: Option<f64>,
}

impl EvidenceFormatArgs {
    /// Read options for evidence of draft length `k` (where the files do not state it), split by `split`.
    pub fn options(&self, k: Option<usize>, split: Option<String>) -> anyhow::Result<ReadOptions> {
        let interval = self.decode_log_interval.unwrap_or(evidence::SGLANG_DECODE_LOG_INTERVAL);
        if !(interval > 0.0 && interval <= MAX_DECODE_LOG_INTERVAL) {
            anyhow::bail!(
                "--decode-log-interval: {interval} is out of range: steps per log line must lie in (0, {MAX_DECODE_LOG_INTERVAL}]"
            );
        }
        Ok(ReadOptions { format: self.format_in, k, split, decode_log_interval: interval })
    }
}

/// Most decode steps per SGLang log line accepted (SGLang's default is 40): a typo is refused, not believed.
const MAX_DECODE_LOG_INTERVAL: f64 = 1_000_000.0;

fn parse_format_in(text: &str) -> Result<InputFormat, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

/// Parses a thinking mode flag value.
pub fn parse_mode(text: &str) -> Result<ThinkingMode, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

/// A comma-separated list of numbers on the command line (`0.78,0.60,0.45`).
#[derive(Debug, Clone, PartialEq)]
pub struct NumberList(pub Vec<f64>);

impl std::str::FromStr for NumberList {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        text.split(',')
            .map(|part| part.trim().parse::<f64>().map_err(|_| format!("'{}' is not a number", part.trim())))
            .collect::<Result<_, _>>()
            .map(NumberList)
    }
}

/// The seed's draft length.
pub const DEFAULT_K: usize = 3;

/// Where real acceptance comes from: the golden curve (raw or fitted) or explicit rates.
#[derive(Debug, Clone, clap::Args)]
pub struct RealAcceptanceArgs {
    #[command(flatten)]
    pub curve: CurveArgs,
    /// Draft length k (default 3, or the number of rates given).
    #[arg(long, allow_negative_numbers = true)]
    pub k: Option<usize>,
    /// Use a chain fitted to the whole curve instead of the curve's raw increments (needed where the
    /// curve dips or rises, and for k beyond the curve).
    #[arg(long, value_enum)]
    pub fit: Option<FitKind>,
    /// Explicit real per-position unconditional rates p_1,…,p_k instead of the curve.
    #[arg(long, conflicts_with = "conditional", allow_negative_numbers = true)]
    pub rates: Option<NumberList>,
    /// Explicit real conditional rates c_1,…,c_k instead of the curve.
    #[arg(long, allow_negative_numbers = true)]
    pub conditional: Option<NumberList>,
}

/// Real acceptance resolved from [`RealAcceptanceArgs`].
pub struct ResolvedReal {
    /// The chain.
    pub chain: Acceptance,
    /// Where it came from, for reports.
    pub source: String,
    /// The golden AL at k, when the chain came from a curve that has that k.
    pub curve_al: Option<f64>,
    /// The per-position rates a rates pin writes: the curve's own chain (raw or fitted through the golden
    /// AL), else the real chain itself.
    pub rates_pin: RatesPin,
}

impl RealAcceptanceArgs {
    /// Resolves the flags to a chain.
    pub fn resolve(&self) -> anyhow::Result<ResolvedReal> {
        if let Some(k) = self.k {
            alsim::units::check_draft_len(k, "--k")?;
        }
        let real = match (&self.rates, &self.conditional) {
            (Some(rates), _) => {
                let chain = Acceptance::from_unconditional(rates.0.clone(), "--rates")?;
                let rates_pin = RatesPin::given(&chain, "explicit --rates");
                ResolvedReal { chain, source: "explicit --rates".into(), curve_al: None, rates_pin }
            }
            (_, Some(rates)) => {
                let chain = Acceptance::from_conditional(&rates.0, "--conditional")?;
                let rates_pin = RatesPin::given(&chain, "explicit --conditional");
                ResolvedReal { chain, source: "explicit --conditional".into(), curve_al: None, rates_pin }
            }
            _ => {
                let set = self.curve.curve_set()?;
                let found = set.lookup(&self.curve.query(true))?;
                let k = self.k.unwrap_or(DEFAULT_K);
                let (chain, how) = match self.fit {
                    Some(kind) => (fit(found.curve, kind)?.chain(k)?, format!(", {kind} fit")),
                    None => (
                        found.curve.chain(k).context("deriving per-position acceptance from the golden curve")?,
                        String::new(),
                    ),
                };
                let source = format!("{} {}{how}", found.file.origin, found.curve.field(k));
                // Where the curve cannot shape a pin at k (no golden point there, nothing below it), the
                // rates pin writes the real chain the flags chose, and says so.
                let rates_pin = RatesPin::from_curve(found.curve, k)
                    .unwrap_or_else(|why| RatesPin::given(&chain, format!("{source} ({why})")));
                ResolvedReal {
                    chain,
                    source,
                    curve_al: found.curve.points().get(&k).map(|_| found.curve.al(k)).transpose()?,
                    rates_pin,
                }
            }
        };
        if let Some(k) = self.k.filter(|&k| k != real.chain.k()) {
            anyhow::bail!("--k {k} disagrees with the {} rates given", real.chain.k());
        }
        Ok(real)
    }
}

/// `--model-error` and `--objective`: the band of k the model cannot tell apart, and the choice in it.
#[derive(Debug, Clone, clap::Args)]
pub struct BandArgs {
    /// The model's relative error on throughput, percent: k within it of the top form the band, of which
    /// --objective chooses [default: 5, the median speedup error on the measured serving pairs].
    #[arg(long, value_name = "PCT", allow_negative_numbers = true)]
    model_error: Option<f64>,
    /// What the choice inside the band optimises: throughput (the default: the top predicted throughput, the
    /// objective with the least held-out regret on the calibration kit), smallest-k (the band's smallest k:
    /// drafts least, least waste when real acceptance falls below the pin) or per-user (the top per-user
    /// speed, the same k at one concurrency).
    #[arg(long, value_enum, default_value_t)]
    objective: alsim::perf::Objective,
}

impl BandArgs {
    /// The band these flags give.
    pub fn band(&self) -> anyhow::Result<alsim::perf::Band> {
        let error = match self.model_error {
            Some(pct) if !(pct > 0.0 && pct < 100.0) => {
                anyhow::bail!("--model-error: {pct} must be a percentage in (0, 100)")
            }
            Some(pct) => pct / 100.0,
            None => alsim::perf::DEFAULT_MODEL_ERROR,
        };
        Ok(alsim::perf::Band { error, objective: self.objective })
    }
}

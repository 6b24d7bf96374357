//! `alsim predict`: throughput per concurrency for every draft length, the best k with its band, the
//! Pareto frontier, and — with `--versus` — two drafters compared.

use std::collections::BTreeMap;
use std::path::PathBuf;

use alsim::accept::fit::FitKind;
use alsim::curve::Curve;
use alsim::evidence;
use alsim::perf::cost::{CostModel, Deployment, Workload};
use alsim::perf::profile::{Precision, ProfileKind, Profiles};
use alsim::perf::workload::{DEFAULT_ISL, DEFAULT_OSL};
use alsim::perf::{AcceptanceSource, DEFAULT_MAX_K, MAX_CONCURRENCY, PredictReport, Sweep, versus};
use alsim::report;
use alsim::units::check_draft_len;
use anyhow::Context;

use super::Outcome;
use super::common::{CurveArgs, DEFAULT_DRAFTER, DEFAULT_MODEL, EvidenceFormatArgs, NumberList, OutputArgs, PlotArgs};

/// Flags of `alsim predict`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    curve: CurveArgs,
    /// Compare with this drafter of the same model, on its own golden curve (e.g.
    /// Inferact/MiniMax-M3-EAGLE3-GQA against the seed's EAGLE3), per concurrency and context.
    #[arg(long, value_name = "DRAFTER", conflicts_with_all = ["al", "evidence"])]
    versus: Option<String>,
    /// Hardware profile(s), comma separated, or `all`: mi355x, mi325x, mi300x, b300, b200, h200, h100
    /// [default: mi355x, or the GPU of --profile].
    #[arg(long)]
    hardware: Option<String>,
    #[command(flatten)]
    profiles: ProfileArgs,
    /// Tensor parallelism (GPUs per replica).
    #[arg(long, default_value_t = 4, allow_negative_numbers = true)]
    tp: usize,
    /// Data-parallel attention: each GPU holds its own requests' KV caches.
    #[arg(long)]
    dp_attention: bool,
    /// Expert parallelism: GPUs of the replica the routed experts are spread over (1: experts split by TP);
    /// above 1 each decode token pays the EP exchange at every MoE layer. Must divide --tp.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true)]
    ep: usize,
    /// Weight precision: bf16, fp8, fp4 (default: the model profile's checkpoint precision).
    #[arg(long, value_parser = parse_precision)]
    precision: Option<Precision>,
    /// KV-cache precision, which attention math runs in: bf16 or fp8.
    #[arg(long, default_value = "bf16", value_parser = parse_precision)]
    kv_dtype: Precision,
    /// Fixed decode context(s) in tokens, comma separated (no prefill); instead of --isl/--osl.
    #[arg(long, conflicts_with_all = ["isl", "osl", "prefix_hit"], allow_negative_numbers = true)]
    context: Option<NumberList>,
    /// Input tokens per turn (prefill of the uncached part is charged to each request).
    #[arg(long, default_value_t = DEFAULT_ISL, allow_negative_numbers = true)]
    isl: f64,
    /// Output tokens per turn.
    #[arg(long, default_value_t = DEFAULT_OSL, allow_negative_numbers = true)]
    osl: f64,
    /// Fraction of each turn's input served from the prefix cache, in [0, 1].
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    prefix_hit: f64,
    /// Concurrencies: a list and/or ranges, e.g. 1,4,8,12,16 or 1-64.
    #[arg(long, default_value = "1,4,8,12,16", allow_negative_numbers = true)]
    concurrency: Concurrency,
    /// Largest draft length to sweep [default: 8; with --al, its length] (past the points' last k with --fit).
    #[arg(long, allow_negative_numbers = true)]
    max_k: Option<usize>,
    /// Explicit acceptance lengths AL(1),AL(2),… instead of the golden curve.
    #[arg(long, conflicts_with = "evidence", allow_negative_numbers = true)]
    al: Option<NumberList>,
    /// Real-verification evidence instead of the golden curve (any file `alsim eval` reads, several runs of one
    /// k are pooled): AL(1..k) where the engine counts positions, else AL at its k alone.
    #[arg(long, value_name = "FILE")]
    evidence: Vec<PathBuf>,
    /// Draft length of --evidence that does not state it.
    #[arg(long, requires = "evidence", allow_negative_numbers = true)]
    evidence_k: Option<usize>,
    #[command(flatten)]
    read: EvidenceFormatArgs,
    /// Fit a chain of this kind to the acceptance points (curve, --al or --evidence) and sweep its AL(k): fills
    /// the k the points lack and extends past them up to --max-k.
    #[arg(long, value_enum)]
    fit: Option<FitKind>,
    /// Say in a line per concurrency why k stops where it stops: what the next draft position adds against
    /// what it costs, and the parts that cost most (JSON carries each position's `marginal` regardless).
    #[arg(long)]
    why: bool,
    /// Show every (concurrency, k) prediction, the best-k table and the Pareto frontier instead of the grid
    /// of speedups (`--format json|csv|md` always hold them).
    #[arg(long)]
    long: bool,
    /// Pick the best k among those with at least this many tokens/s per request.
    #[arg(long, allow_negative_numbers = true)]
    min_user_tps: Option<f64>,
    #[command(flatten)]
    band: super::common::BandArgs,
    // Chart: throughput per GPU against per-user speed, one line per k, and the Pareto frontier.
    #[command(flatten)]
    plot: PlotArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// The seed's GPU.
const DEFAULT_HARDWARE: &str = "mi355x";

/// The user's profile files, each with the columns of the embedded `profiles/*.csv` and a source per row.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// Hardware profile file (the columns of profiles/hardware.csv, e.g. what `alsim calibrate --output`
    /// writes): replaces the embedded row of its GPU; predict uses it as --hardware when that is not given.
    #[arg(long, value_name = "FILE")]
    profile: Option<PathBuf>,
    /// Model profile file (the columns of profiles/models.csv): adds models or replaces embedded ones.
    #[arg(long, value_name = "FILE")]
    model_profile: Option<PathBuf>,
    /// Drafter profile file (the columns of profiles/drafters.csv).
    #[arg(long, value_name = "FILE")]
    drafter_profile: Option<PathBuf>,
}

impl ProfileArgs {
    /// The embedded profiles with the files read in; also the hardware keys of `--profile`.
    pub fn load(&self) -> anyhow::Result<(Profiles, Option<Vec<String>>)> {
        let mut profiles = Profiles::embedded();
        let mut read = |path: &Option<PathBuf>, kind, flag: &str| -> anyhow::Result<Option<Vec<String>>> {
            path.as_ref()
                // The error names the file already; the flag says which of the three it was.
                .map(|p| profiles.load_file(kind, p).with_context(|| flag.to_string()))
                .transpose()
        };
        read(&self.model_profile, ProfileKind::Model, "--model-profile")?;
        read(&self.drafter_profile, ProfileKind::Drafter, "--drafter-profile")?;
        let hardware = read(&self.profile, ProfileKind::Hardware, "--profile")?;
        Ok((profiles, hardware))
    }
}

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut writes = args.output.export.writes()?;
    let plot = args.plot.add_to(&mut writes)?;
    let (profiles, profile_keys) = args.profiles.load()?;
    let mut hardware_names = profile_keys.unwrap_or_else(|| vec![DEFAULT_HARDWARE.to_string()]);
    if let Some(list) = &args.hardware {
        hardware_names = list.split(',').map(|s| s.trim().to_string()).collect();
    }
    if hardware_names.iter().any(|h| h.eq_ignore_ascii_case("all")) {
        hardware_names = profiles.hardware.iter().map(|h| h.key.clone()).collect();
    }
    let model_name = args.curve.model.clone().unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let model = profiles.model(&model_name)?;
    let band = args.band.band()?;
    let model_error = band.error;

    let mut notes = Vec::new();
    let (acceptance, curve_drafter) = resolve_acceptance(&args, &args.curve, &mut notes)?;
    let seed_drafter = args.curve.model.is_none().then(|| DEFAULT_DRAFTER.to_string());
    let drafter_name = args.curve.drafter.clone().or(curve_drafter).or(seed_drafter);
    let mut drafters =
        vec![(profiles.drafter(model, drafter_name.as_deref(), args.curve.method.as_deref())?, acceptance)];
    if let Some(versus) = &args.versus {
        let mut curve = args.curve.clone();
        curve.drafter = Some(versus.clone());
        let (versus_acceptance, _) = resolve_acceptance(&args, &curve, &mut notes)
            .with_context(|| format!("--versus {versus}: its own golden curve"))?;
        let other = profiles.drafter(model, Some(versus), None)?;
        if other.key == drafters[0].0.key {
            anyhow::bail!("--versus {versus} is the drafter already predicted; name the other one");
        }
        drafters.push((other, versus_acceptance));
    }
    let workloads: Vec<Workload> = match &args.context {
        Some(list) => list.0.iter().map(|&context| Workload::Decode { context }).collect(),
        None => vec![Workload::Turns { isl: args.isl, osl: args.osl, prefix_hit: args.prefix_hit }],
    };
    let rows = args.concurrency.0.len() * workloads.len() * hardware_names.len() * drafters.len();
    if rows > MAX_ROWS {
        anyhow::bail!(
            "--concurrency × --context × --hardware × drafters: {rows} rows is more than the {MAX_ROWS} one run predicts; narrow one of them"
        );
    }
    let precision = args.precision.unwrap_or(model.default_precision);
    let deployment = Deployment {
        tp: args.tp,
        precision,
        kv_precision: args.kv_dtype,
        dp_attention: args.dp_attention,
        ep: args.ep,
    };

    let mut sweeps = Vec::new();
    for name in &hardware_names {
        let hw = profiles.hardware(name)?;
        for workload in &workloads {
            for (drafter, acceptance) in &drafters {
                let cost = CostModel::new(hw, model, Some(drafter), &deployment)
                    .with_context(|| format!("{} on {}", model.key, hw.key))?;
                let sweep = Sweep::run(&cost, acceptance, &args.concurrency.0, workload, args.min_user_tps, band)?;
                if let Some(p) = sweep.predictions.iter().find(|p| !p.fits_memory) {
                    notes.push(format!(
                        "{} with {} at {}: weights plus the KV cache of {} requests at the peak context exceed 90% of HBM; rows from concurrency {} on are optimistic",
                        hw.key, drafter.key, workload.label(), p.concurrency, p.concurrency
                    ));
                }
                sweeps.push(sweep);
            }
        }
        if hw.confidence.contains("UNCONFIRMED") || hw.confidence.contains("UNCALIBRATED") {
            notes.push(format!("hardware {}: {}", hw.key, hw.confidence));
        }
    }
    for (what, confidence) in
        std::iter::once(("model", &model.confidence)).chain(drafters.iter().map(|(d, _)| ("drafter", &d.confidence)))
    {
        if confidence.contains("UNCONFIRMED") {
            notes.push(format!("{what} profile: {confidence}"));
        }
    }
    if args.why {
        notes.extend(sweeps.iter().flat_map(report::why));
    }
    let report = PredictReport {
        model: format!("{} ({})", model.key, model.name),
        acceptance: drafters[0].1.clone(),
        workloads,
        min_user_tps: args.min_user_tps,
        model_error,
        comparison: versus::compare_drafters(&sweeps, model_error),
        sweeps,
        notes,
    };
    if let Some(slot) = plot {
        writes.write(slot, &args.plot.image(report::plot_svg(&report)?)?)?;
    }
    args.output.emit_long(&mut writes, &report, args.long)?;
    Ok(Outcome::Pass)
}

/// AL(k) from the source the flags name, and the drafter of the golden curve when that is the source.
fn resolve_acceptance(
    args: &Args,
    curve_args: &CurveArgs,
    notes: &mut Vec<String>,
) -> anyhow::Result<(AcceptanceSource, Option<String>)> {
    let max_k = args.max_k.unwrap_or(DEFAULT_MAX_K);
    check_draft_len(max_k, "--max-k")?;
    let replaced = if args.al.is_some() { Some("--al") } else { (!args.evidence.is_empty()).then_some("--evidence") };
    if let Some(source) = replaced {
        let curve = &args.curve;
        for (given, flag) in [
            (!curve.curve_files.is_empty(), "--curve"),
            (curve.golden.is_some(), "--golden"),
            (curve.draft_sampling.is_some(), "--draft-sampling"),
        ] {
            if given {
                anyhow::bail!("{flag} chooses a golden curve, which {source} replaces; drop one of them");
            }
        }
    }
    if args.evidence.is_empty() && (args.read.format_in.is_some() || args.read.decode_log_interval.is_some()) {
        anyhow::bail!("--format-in and --decode-log-interval say how to read --evidence files; give --evidence");
    }
    let points = |values: BTreeMap<usize, f64>, what: &str| Curve::new(what, args.curve.mode, values);
    if let Some(values) = &args.al {
        let explicit = AcceptanceSource::explicit(&values.0)?;
        let source = match (args.fit, args.max_k) {
            (Some(kind), _) => {
                let curve = points((1..).zip(values.0.iter().copied()).collect(), "--al")?;
                AcceptanceSource::fitted(&curve, kind, "explicit AL", max_k)?
            }
            (None, Some(max_k)) if max_k > explicit.max_k() => {
                anyhow::bail!("--max-k {max_k}: --al gives AL up to k = {}; add --fit to extend it", explicit.max_k())
            }
            (None, Some(max_k)) => AcceptanceSource { al: explicit.al[..=max_k].to_vec(), ..explicit },
            (None, None) => explicit,
        };
        return Ok((source, None));
    }
    if !args.evidence.is_empty() {
        if let Some(k) = args.evidence_k {
            check_draft_len(k, "--evidence-k")?;
        }
        let options = args.read.options(args.evidence_k, None)?;
        let mut all = Vec::new();
        for path in &args.evidence {
            all.extend(evidence::read_path(path, None, &options)?);
        }
        for ev in &all {
            notes.extend(ev.notes.iter().map(ToString::to_string));
        }
        let measured = evidence::measured_al(&all, args.evidence_k)?;
        notes.extend(measured.notes.iter().map(ToString::to_string));
        if measured.runs.len() > 1 {
            let each: Vec<String> = measured.runs.iter().map(|(at, al)| format!("{at} AL {al:.3}")).collect();
            notes.push(format!(
                "pooled {} runs ({}); `alsim eval` tests whether they agree before pooling",
                measured.runs.len(),
                each.join(", ")
            ));
        }
        if args.fit.is_some() && measured.points.len() < 3 {
            notes.push(format!(
                "the fit rests on {} measured point(s); AL at other k is the fit's extrapolation",
                measured.points.len()
            ));
        }
        let files: Vec<String> = args.evidence.iter().map(|p| p.display().to_string()).collect();
        let origin = format!("evidence {}", files.join(", "));
        let source = match args.fit {
            None => AcceptanceSource::measured(&measured.points, origin, max_k)?,
            Some(kind) => AcceptanceSource::fitted(&points(measured.points, "evidence")?, kind, &origin, max_k)?,
        };
        return Ok((source, None));
    }
    let set = curve_args.curve_set()?;
    let found = set.lookup(&curve_args.query(true))?;
    let source = match args.fit {
        None => AcceptanceSource::from_curve(found.curve, &found.file.origin, max_k)
            .context("reading AL(k) from the golden curve (lower --max-k, add --fit, or give --al)")?,
        Some(kind) => {
            let origin = format!("{} {} {}", found.file.origin, found.curve.model(), found.curve.mode());
            AcceptanceSource::fitted(found.curve, kind, &origin, max_k)?
        }
    };
    Ok((source, found.file.provenance.drafter.clone()))
}

fn parse_precision(text: &str) -> Result<Precision, String> {
    text.parse().map_err(|e: alsim::Error| e.to_string())
}

/// Most concurrencies in one sweep.
const MAX_POINTS: usize = 4096;
/// Most rows (concurrency × context × hardware × drafter) one run predicts: each is a table row of every k,
/// so this bounds the time and memory (~100 MB, the table held whole while it is drawn).
const MAX_ROWS: usize = 8192;

/// `--concurrency`: comma-separated counts and inclusive ranges (`1,4,8` or `1-64`).
#[derive(Debug, Clone, PartialEq)]
pub struct Concurrency(pub Vec<usize>);

impl std::str::FromStr for Concurrency {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        let count = |s: &str| -> Result<usize, String> {
            match s.trim().parse::<usize>() {
                Ok(0) => Err("concurrency must be at least 1".into()),
                Ok(n) if n <= MAX_CONCURRENCY => Ok(n),
                _ => Err(format!("'{}' is not a concurrency (a whole number from 1 to {MAX_CONCURRENCY})", s.trim())),
            }
        };
        let mut out = Vec::new();
        for part in text.split(',') {
            if part.trim().starts_with('-') {
                return Err(format!("'{}' is negative; concurrency must be at least 1", part.trim()));
            }
            match part.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (count(lo)?, count(hi)?);
                    if lo > hi {
                        return Err(format!("range '{}' runs backwards", part.trim()));
                    }
                    out.extend(lo..=hi);
                }
                None => out.push(count(part)?),
            }
        }
        if out.len() > MAX_POINTS {
            return Err(format!("{} concurrencies is more than the {MAX_POINTS} a sweep takes", out.len()));
        }
        Ok(Concurrency(out))
    }
}

#[cfg(test)]
mod tests {
    use super::Concurrency;

    #[test]
    fn concurrency_lists_and_ranges() {
        assert_eq!("1,4-6".parse::<Concurrency>().unwrap().0, vec![1, 4, 5, 6]);
        assert_eq!("1-64".parse::<Concurrency>().unwrap().0.len(), 64);
        assert!("0".parse::<Concurrency>().is_err());
        assert!("8-4".parse::<Concurrency>().is_err());
        assert!("x".parse::<Concurrency>().is_err());
        assert!("1-65536".parse::<Concurrency>().is_err());
        assert!("70000".parse::<Concurrency>().is_err());
    }
}

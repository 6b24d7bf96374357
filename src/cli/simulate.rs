//! `alsim simulate`: Monte Carlo of requests under real versus pinned acceptance.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use alsim::accept::schedule::ScheduleKind;
use alsim::report::{self, PlotMetric};
use alsim::sim::{DEFAULT_SEED, Heterogeneity, OutputLengths, Phases, RunConfig, Study};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Outcome;
use super::common::{OutputArgs, PlotArgs, RealAcceptanceArgs};

/// Which acceptance to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum SourceArg {
    /// Real verification: the golden curve's chain (or --rates / --conditional).
    Curve,
    /// Every engine schedule below.
    Schedules,
    /// vLLM / ATOM / TensorRT-LLM minimum-variance pin.
    #[value(alias = "vllm", alias = "atom", alias = "trtllm")]
    MinVariance,
    /// SGLang match-expected (per-request marginal = minimum variance; shared by the batch).
    SglangMatchExpected,
    /// SGLang multinomial (Normal(AL, 1), clamped and rounded; shared by the batch).
    SglangMultinomial,
    /// llama.cpp length pin (constant conditional rate, geometric).
    #[value(alias = "llama.cpp", alias = "llamacpp-geometric")]
    Llamacpp,
    /// The rates pin: the curve's own per-position chain as vLLM / llama.cpp rates.
    RatesPin,
}

/// Flags of `alsim simulate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    real: RealAcceptanceArgs,
    /// Pinned acceptance length for the synthetic schedules (default: the golden AL at k, as `accept` pins it;
    /// the real chain's AL where there is no golden point).
    #[arg(long, allow_negative_numbers = true)]
    al: Option<f64>,
    /// Acceptance sources to simulate, comma separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "curve,schedules")]
    source: Vec<SourceArg>,
    /// Requests simulated per source.
    #[arg(long, default_value_t = 100_000, allow_negative_numbers = true)]
    requests: u64,
    /// Seed of every random stream (printed with the results).
    #[arg(long, default_value_t = DEFAULT_SEED, allow_negative_numbers = true)]
    seed: u64,
    /// Worker threads (default: all cores, or RAYON_NUM_THREADS). Results do not depend on it.
    #[arg(long, allow_negative_numbers = true)]
    threads: Option<usize>,
    /// Output tokens per request (the centre of --output-spread).
    #[arg(long, default_value_t = 1024, allow_negative_numbers = true)]
    output_len: u32,
    /// Spread of output lengths: `uniform:R` (uniform on [R·len, len], default R = 0.8: a 1k-output
    /// serving benchmark with 20% jitter), `lognormal:SIGMA` (median len, chat-like), or `fixed`.
    #[arg(long, default_value = "uniform:0.8")]
    output_spread: String,
    /// Time of one verify step in ms (default 26: a 70B target at batch 16 on B200 with k = 3,
    /// SPEED-Bench Table 10).
    #[arg(long, default_value_t = 26.0, allow_negative_numbers = true)]
    step_ms: f64,
    /// Heterogeneity across requests: standard deviation of each request's log-odds scale on the
    /// conditional rates (0 = identical requests); calibrated so the step-weighted AL is unchanged.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    spread: f64,
    /// Two-phase requests: mean steps per phase (Markov switching).
    #[arg(long, requires = "phase_spread", allow_negative_numbers = true)]
    phase_steps: Option<f64>,
    /// Two-phase requests: half the log-odds gap between the easy and the hard phase.
    #[arg(long, requires = "phase_steps", allow_negative_numbers = true)]
    phase_spread: Option<f64>,
    /// Batch size for the shared-draw (SGLang) versus per-request comparison.
    #[arg(long, default_value_t = 32, conflicts_with = "no_batch", allow_negative_numbers = true)]
    batch: u32,
    /// Skip the batch comparison.
    #[arg(long)]
    no_batch: bool,
    /// Also compute the exact distribution of steps to emit N tokens and check the Monte Carlo against it.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    exact: Option<u32>,
    /// Confidence level of every interval.
    #[arg(long, default_value_t = 0.95, allow_negative_numbers = true)]
    level: f64,
    // Chart: the per-request distribution of --plot-metric, one line per source.
    #[command(flatten)]
    plot: PlotArgs,
    /// What --plot draws: per-request TPOT or per-user speed.
    #[arg(long, value_enum, default_value_t = PlotMetric::Tpot, requires = "plot")]
    plot_metric: PlotMetric,
    #[command(flatten)]
    output: OutputArgs,
}

/// The most threads `--threads` accepts.
const MAX_THREADS: usize = 1024;

pub fn run(args: Args) -> anyhow::Result<Outcome> {
    // Outputs that cannot be written are refused before the Monte Carlo, not after it.
    let mut writes = args.output.export.writes()?;
    let plot = args.plot.add_to(&mut writes)?;
    let resolved = args.real.resolve()?;
    // The same default pin as `accept`: with --fit the fitted chain's AL differs slightly from the golden
    // point, and the engines pin the golden value.
    let pinned_al = args.al.or(resolved.curve_al).unwrap_or_else(|| resolved.chain.acceptance_length());
    let (real, real_origin, rates_pin) = (resolved.chain, resolved.source, resolved.rates_pin);
    let mut schedules = Vec::new();
    for source in &args.source {
        let add: &[ScheduleKind] = match source {
            SourceArg::Curve => &[],
            SourceArg::Schedules => &ScheduleKind::ALL,
            SourceArg::MinVariance => &[ScheduleKind::MinVariance],
            SourceArg::SglangMatchExpected => &[ScheduleKind::SglangMatchExpected],
            SourceArg::SglangMultinomial => &[ScheduleKind::SglangMultinomial],
            SourceArg::Llamacpp => &[ScheduleKind::LlamacppGeometric],
            SourceArg::RatesPin => &[ScheduleKind::RatesPin],
        };
        for kind in add {
            if !schedules.contains(kind) {
                schedules.push(*kind);
            }
        }
    }
    let phases = match (args.phase_steps, args.phase_spread) {
        (Some(mean_steps), Some(spread)) => Some(Phases { mean_steps, spread }),
        _ => None,
    };
    let study = Study {
        pinned_al,
        rates_pin,
        real,
        real_origin,
        include_real: args.source.contains(&SourceArg::Curve),
        schedules,
        heterogeneity: Heterogeneity { spread: args.spread, phases },
        lengths: output_lengths(args.output_len, &args.output_spread)?,
        step_ms: args.step_ms,
        run: RunConfig::new(args.requests, args.seed)?,
        batch: (!args.no_batch).then_some(args.batch),
        exact_tokens: args.exact,
        level: args.level,
    };
    study.validate()?;
    let pool = thread_pool(args.threads)?;
    let progress = Progress::new(study.total_requests());
    let report = pool.install(|| study.run(&|n| progress.advance(n)));
    progress.finish();
    let report = report?;
    if let Some(slot) = plot {
        writes.write(slot, &args.plot.image(report::plot_requests(&report, args.plot_metric)?)?)?;
    }
    args.output.emit(&mut writes, &report)?;
    Ok(Outcome::Pass)
}

/// Parses `--output-spread` around `--output-len`.
fn output_lengths(len: u32, spread: &str) -> alsim::Result<OutputLengths> {
    let bad = |why: &str| alsim::Error::invalid("--output-spread", format!("'{spread}': {why}"));
    let (kind, value) = spread.split_once(':').map_or((spread, None), |(k, v)| (k, Some(v)));
    let number = |v: Option<&str>| -> alsim::Result<f64> {
        v.ok_or_else(|| bad("give a value after the colon"))?.trim().parse::<f64>().map_err(|_| bad("not a number"))
    };
    let lengths = match kind.trim() {
        "fixed" => OutputLengths::Fixed { tokens: len },
        "uniform" => {
            let ratio = number(value)?;
            if !(ratio > 0.0 && ratio <= 1.0) {
                return Err(bad("the ratio must be in (0, 1]"));
            }
            OutputLengths::Uniform { low: ((len as f64 * ratio).ceil() as u32).max(1), high: len }
        }
        "lognormal" => OutputLengths::LogNormal { median: len as f64, sigma: number(value)? },
        _ => return Err(bad("expected uniform:R, lognormal:SIGMA or fixed")),
    };
    lengths.validated("output_len")
}

/// rayon's pool: `--threads`, else rayon's default (RAYON_NUM_THREADS, else all cores).
fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    if let Some(n) = threads.filter(|&n| n == 0 || n > MAX_THREADS) {
        anyhow::bail!("--threads: {n} must be between 1 and {MAX_THREADS}");
    }
    Ok(rayon::ThreadPoolBuilder::new().num_threads(threads.unwrap_or(0)).build()?)
}

/// A progress bar on stderr that appears only once a run has taken a second, and only when stderr is a
/// terminal: `alsim simulate … > out.txt` shows it, since the bar never enters stdout, while a captured
/// stderr (CI logs, `2> err.txt`) stays clean.
struct Progress {
    bar: ProgressBar,
    start: Instant,
    visible: AtomicBool,
    allowed: bool,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} requests, {eta} left").expect("the template is valid"),
        );
        Progress {
            bar,
            start: Instant::now(),
            visible: AtomicBool::new(false),
            allowed: std::io::stderr().is_terminal(),
        }
    }

    fn advance(&self, requests: u64) {
        self.bar.inc(requests);
        if self.allowed && self.start.elapsed() > Duration::from_secs(1) && !self.visible.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

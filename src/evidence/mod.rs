//! Evidence from real-verification runs: reading what eval-only runs left behind (metrics scrapes, debug
//! JSON, server logs, AIPerf exports) and judging a pinned acceptance length against it (docs/model.md §5).
//!
//! This module owns
//! - format detection and the streaming readers ([`prometheus`], `logs`, `json`), which all reduce an
//!   input to [`Evidence`]: verification steps D (drafts), accepted drafts A, per-position counts P_i or the
//!   per-count distribution where the engine gives them, and a time series of [`Window`]s for batch means.
//!   Metric names, labels and log formats follow docs/engines.md (vLLM `SpecDecodingProm`, SGLang
//!   `scheduler_metrics_mixin`, TensorRT-LLM `MetricsCollector` and iteration stats, ATOM `SpecStats`);
//! - the estimator ([`estimate()`]): ÂL = 1 + A/D, p̂_i = P_i/D, the independent standard error σ_a/√D
//!   (σ_a² from §2's moments E\[a²\] = Σ(2i−1)p_i, or from ATOM's per-count distribution) and a
//!   design-effect standard error from batch means of the time series or from several runs;
//! - the verdict ([`verdict`]) with the criterion.rs `compare_to_threshold` shape: consistent only when
//!   the whole interval lies within the tolerance band around the pin, pin too high / too low only when
//!   it lies entirely outside, inconclusive otherwise with the further verification steps needed; the
//!   implied throughput error (first order: throughput at a fixed step time scales with AL); where the
//!   real chain departs from the golden curve's chain; and the heterogeneity check that must pass before
//!   several files are pooled.
//!
//! Every reader rejects what it cannot read with an [`Error::Parse`] naming the file and line (JSON:
//! the element path), never a panic and never a silently wrong count: NaN/Inf, negative counters, missing
//! families, several engines in one file, and inconsistent counters are errors; counters are differenced
//! per series, a series' reset between snapshots handled like Prometheus `increase()` and reported; a
//! last line without its newline (a cut file) is never read as a value (JSON that ends early is a syntax
//! error).

pub mod artifact;
pub mod coverage;
pub mod estimate;
pub(crate) mod json;
pub(crate) mod logs;
mod note;
pub mod prometheus;
mod scrape;
mod snapshots;
pub(crate) mod validate;
pub mod verdict;
mod window;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::Serialize;

pub use estimate::{AlEstimate, PositionEstimate, estimate};
pub use note::{Note, NoteKind};
pub use verdict::{CochranQ, EvalReport, FileResult, PinUnderTest, Verdict, evaluate};
pub use window::{MAX_SERIES_LEN, Series, Window};

pub use crate::diagnostic::Location;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::units::check_draft_len_argument;

/// The longest line the streaming readers (Prometheus text, logs) take: a metrics sample or an acceptance
/// log line is a few hundred bytes; a longer line is refused (Prometheus) or skipped (logs), never held.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The largest JSON evidence document read whole (ATOM `/debug/mtp_stats` and AIPerf exports are KiBs;
/// TensorRT-LLM iteration lists are streamed element by element instead). A parsed tree costs up to ~17×
/// its text (an array of one-digit numbers), so this keeps the worst case near 70 MB.
pub const JSON_DOCUMENT_LIMIT: u64 = 4 * 1024 * 1024;

/// SGLang's default `--decode-log-interval`: each "Decode batch" log line covers this many decode steps.
pub const SGLANG_DECODE_LOG_INTERVAL: f64 = 40.0;

/// The kinds of evidence file alsim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum InputFormat {
    /// Prometheus text exposition (`/metrics`, `/prometheus/metrics`), one or several concatenated scrapes.
    Prometheus,
    /// ATOM `GET /debug/mtp_stats` JSON.
    AtomJson,
    /// TensorRT-LLM `GET /metrics` iteration-stats JSON (a list of elements with `specDecodingStats`).
    TrtllmJson,
    /// AIPerf `server_metrics_export.json` (InferenceX AgentX results).
    AiperfJson,
    /// Server logs: vLLM "SpecDecoding metrics", SGLang "Decode batch", ATOM "[MTP Stats …]", llama.cpp
    /// "draft acceptance" and "statistics" lines.
    Log,
}

impl InputFormat {
    /// Guesses the format from the first bytes of a file: JSON by its first character and keys,
    /// Prometheus by `# HELP`/`# TYPE` or a sample line of a known family, logs otherwise.
    ///
    /// ```
    /// use alsim::evidence::InputFormat;
    /// assert_eq!(InputFormat::detect(b"# TYPE atom:mtp_draft_tokens_total counter\n"), InputFormat::Prometheus);
    /// assert_eq!(InputFormat::detect(b"{\"enabled\": true, \"distribution\": {}}"), InputFormat::AtomJson);
    /// ```
    pub fn detect(head: &[u8]) -> InputFormat {
        let text = String::from_utf8_lossy(head);
        let trimmed = text.trim_start_matches('\u{feff}').trim_start();
        // A log line may start with '[' (timestamps, `[MTP Stats …]`): JSON only when what follows the
        // bracket is JSON too.
        let after = trimmed.get(1..).unwrap_or("").trim_start();
        let json = (trimmed.starts_with('{') && (after.starts_with('"') || after.starts_with('}')))
            || (trimmed.starts_with('[')
                && (after.starts_with('{') || after.starts_with('[') || after.starts_with(']')));
        if json {
            return if text.contains("specDecodingStats") || trimmed.starts_with('[') {
                InputFormat::TrtllmJson
            } else if text.contains("\"metrics\"") && !text.contains("\"distribution\"") {
                InputFormat::AiperfJson
            } else {
                InputFormat::AtomJson
            };
        }
        let looks_prometheus = trimmed.lines().take(64).any(|line| {
            line.starts_with("# HELP ")
                || line.starts_with("# TYPE ")
                || prometheus::family_of(line.split(['{', ' ']).next().unwrap_or("")).is_some()
        });
        if looks_prometheus { InputFormat::Prometheus } else { InputFormat::Log }
    }
}

crate::names::named_enum!(
    InputFormat,
    field = "format_in",
    what = "evidence format",
    [
        Prometheus = "prometheus",
        AtomJson = "atom-json" | "atom",
        TrtllmJson = "trtllm-json" | "trtllm",
        AiperfJson = "aiperf-json" | "aiperf",
        Log = "log",
    ]
);

/// Everything one evidence source says about acceptance.
#[derive(Debug, Clone, Serialize)]
pub struct Evidence {
    /// Where it came from (the line of its step counter or first record).
    pub location: Location,
    /// The engine whose metrics these are.
    pub engine: Engine,
    /// The input format.
    pub format: InputFormat,
    /// Draft length k the evidence shows, and where it was learned (`None`: the evidence does not say).
    pub k: Option<(usize, Location)>,
    /// The whole run (or the delta between the first and last snapshot).
    pub total: Window,
    /// Time series for batch means: log intervals, deltas between consecutive snapshots, iterations.
    pub batches: Vec<Window>,
    /// Assumptions made and irregularities met (resets, rounding, skipped ranks).
    pub notes: Vec<Note>,
}

/// How to read evidence files.
#[derive(Debug, Clone)]
pub struct ReadOptions {
    /// Force a format instead of detecting it.
    pub format: Option<InputFormat>,
    /// Draft length for sources that do not state it (TensorRT-LLM Prometheus counts draft tokens, not drafts).
    pub k: Option<usize>,
    /// Split Prometheus/AIPerf series by this label (e.g. `engine`, `tp_rank`) instead of summing them.
    pub split: Option<String>,
    /// Decode steps per SGLang "Decode batch" log line (SGLang `--decode-log-interval`).
    pub decode_log_interval: f64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions { format: None, k: None, split: None, decode_log_interval: SGLANG_DECODE_LOG_INTERVAL }
    }
}

/// Reads one evidence file (and, for Prometheus text, an optional earlier snapshot of the same server).
/// Several evidence items come back when `options.split` names a label.
///
/// # Errors
/// [`Error::Io`] when a file cannot be read; [`Error::Parse`] naming file and line for anything
/// malformed (see the module docs).
pub fn read_path(path: &Path, before: Option<&Path>, options: &ReadOptions) -> Result<Vec<Evidence>> {
    let open = |p: &Path| crate::input::open_regular(p).map(BufReader::new);
    let origin = path.display().to_string();
    match before {
        None => read(open(path)?, &origin, options),
        Some(before_path) => {
            let mut first = open(before_path)?;
            let mut second = open(path)?;
            for (reader, p) in [(&mut first, before_path), (&mut second, path)] {
                let format = options.format.unwrap_or_else(|| InputFormat::detect(peek(reader, p).unwrap_or(&[])));
                if format != InputFormat::Prometheus {
                    return Err(Error::parse(
                        p.display().to_string(),
                        None,
                        format!("an earlier snapshot must be Prometheus text, but this file reads as {format}"),
                    ));
                }
            }
            let before_origin = before_path.display().to_string();
            let mut reducer = prometheus::Reducer::new(&origin, options);
            prometheus::parse(first, &before_origin, options.split.as_deref(), &mut reducer)?;
            if reducer.snapshots() != 1 {
                return Err(Error::parse(
                    &before_origin,
                    None,
                    format!(
                        "an earlier snapshot must be one scrape, but this file holds {} concatenated",
                        reducer.snapshots()
                    ),
                ));
            }
            prometheus::parse(second, &origin, options.split.as_deref(), &mut reducer)?;
            reducer.finish()
        }
    }
}

fn peek<'a>(reader: &'a mut BufReader<std::fs::File>, path: &Path) -> Result<&'a [u8]> {
    reader.fill_buf().map_err(|e| Error::io(path, e))
}

/// Reads evidence from `reader`, detecting the format from its first bytes unless `options.format` says.
///
/// # Errors
/// As [`read_path`].
///
/// ```
/// use alsim::evidence::{read, ReadOptions};
/// let text = "\
/// # TYPE atom:mtp_decode_steps_total counter
/// atom:mtp_decode_steps_total{accepted_tokens=\"0\"} 0.0
/// atom:mtp_decode_steps_total{accepted_tokens=\"1\"} 1700.0
/// atom:mtp_decode_steps_total{accepted_tokens=\"2\"} 8300.0
/// atom:mtp_decode_steps_total{accepted_tokens=\"3\"} 0.0
/// ";
/// let evidence = read(text.as_bytes(), "metrics.prom", &ReadOptions::default())?;
/// assert_eq!(evidence[0].total.steps, 10000.0);
/// assert!((1.0 + evidence[0].total.accepted / evidence[0].total.steps - 2.83).abs() < 1e-12);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn read(mut reader: impl BufRead, origin: &str, options: &ReadOptions) -> Result<Vec<Evidence>> {
    if let Some(k) = options.k {
        check_draft_len_argument(k, "k")?;
    }
    let format = match options.format {
        Some(format) => format,
        None => InputFormat::detect(reader.fill_buf().map_err(|e| Error::io(origin, e))?),
    };
    match format {
        InputFormat::Prometheus => prometheus::read(reader, origin, options),
        InputFormat::Log => logs::read(reader, origin, options).map(|e| vec![e]),
        InputFormat::AtomJson => json::read_atom(reader, origin).map(|e| vec![e]),
        InputFormat::TrtllmJson => json::read_trtllm(reader, origin).map(|e| vec![e]),
        InputFormat::AiperfJson => json::read_aiperf(reader, origin, options),
    }
}

/// How a line handed out by [`for_each_line`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Line {
    /// At a newline.
    Complete,
    /// At the end of the input without a newline (a truncation hint).
    Eof,
    /// Past [`MAX_LINE_BYTES`]: only the first `MAX_LINE_BYTES` are handed out, the rest is skipped unread
    /// into memory.
    TooLong,
}

/// Calls `each(line_number, line, end)` for every line of `reader`, without the line end (`\n` or
/// `\r\n`). Lines are handed out of the reader's buffer where they fit in it, so streaming costs one scan
/// for newlines, and no line costs more than [`MAX_LINE_BYTES`] of memory.
///
/// # Errors
/// [`Error::Io`] on a read failure, or the first error `each` returns.
pub(crate) fn for_each_line(
    mut reader: impl BufRead,
    origin: &str,
    mut each: impl FnMut(usize, &[u8], Line) -> Result<()>,
) -> Result<usize> {
    let mut line_no = 0usize;
    let mut carry: Vec<u8> = Vec::new();
    // Whether the current line already passed the limit (its head was handed out, the rest is skipped).
    let mut skipping = false;
    let trim = |line: &[u8]| -> usize {
        let mut end = line.len();
        while end > 0 && line[end - 1] == b'\r' {
            end -= 1;
        }
        end
    };
    loop {
        let buf = reader.fill_buf().map_err(|e| Error::io(origin, e))?;
        if buf.is_empty() {
            break;
        }
        let mut start = 0;
        while let Some(offset) = memchr::memchr(b'\n', &buf[start..]) {
            let end = start + offset;
            if skipping {
                skipping = false;
            } else {
                line_no += 1;
                if carry.is_empty() && end - start <= MAX_LINE_BYTES {
                    let line = &buf[start..end];
                    each(line_no, &line[..trim(line)], Line::Complete)?;
                } else {
                    carry.extend_from_slice(&buf[start..end]);
                    if carry.len() > MAX_LINE_BYTES {
                        each(line_no, &carry[..MAX_LINE_BYTES], Line::TooLong)?;
                    } else {
                        let n = trim(&carry);
                        each(line_no, &carry[..n], Line::Complete)?;
                    }
                    carry.clear();
                }
            }
            start = end + 1;
        }
        if !skipping {
            carry.extend_from_slice(&buf[start..]);
            if carry.len() > MAX_LINE_BYTES {
                line_no += 1;
                each(line_no, &carry[..MAX_LINE_BYTES], Line::TooLong)?;
                carry = Vec::new();
                skipping = true;
            }
        }
        let used = buf.len();
        reader.consume(used);
    }
    if !carry.is_empty() {
        line_no += 1;
        let n = trim(&carry);
        each(line_no, &carry[..n], Line::Eof)?;
    }
    Ok(line_no)
}

/// Acceptance lengths measured by real-verification runs of one draft length k, pooled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MeasuredAl {
    /// The runs' draft length.
    pub k: usize,
    /// AL(j) of the pooled runs: j = 1..=k where every run counts positions, else j = k alone.
    pub points: BTreeMap<usize, f64>,
    /// Each run's own AL(k) = 1 + A/D, in input order.
    pub runs: Vec<(Location, f64)>,
    /// What pooling assumed or lost.
    pub notes: Vec<Note>,
}

/// AL(j) measured by evidence of one draft length k, pooled over every item: AL(j) = 1 + Σ_{i≤j} P_i/D for
/// j = 1..k where the engine counts positions, and AL(k) = 1 + A/D. Reading AL(j < k) off a run at k is exact
/// for a chain drafter: whether draft i is accepted does not depend on how many drafts follow it.
/// `k` is the draft length the caller gives, for evidence that does not state one.
///
/// # Errors
/// [`Error::Parameter`] naming `evidence` when there is none, `k` when its k is unknown and none was given or
/// it is out of range; [`Error::Parse`] naming the file where
/// an item's k differs from the others' or from `k`, an item counts no verification steps, or
/// `validate::check` refuses it (impossible counts, a pinned read-back, too small a sample).
///
/// ```
/// use alsim::evidence::{measured_al, read, ReadOptions};
/// let text = "atom:mtp_decode_steps_total{accepted_tokens=\"0\"} 2000\n\
///             atom:mtp_decode_steps_total{accepted_tokens=\"1\"} 3000\n\
///             atom:mtp_decode_steps_total{accepted_tokens=\"2\"} 5000\n";
/// let evidence = read(text.as_bytes(), "metrics.prom", &ReadOptions::default())?;
/// let al = measured_al(&evidence, None)?;
/// assert_eq!(al.points.keys().copied().collect::<Vec<_>>(), [1, 2]);
/// assert!((al.points[&1] - 1.8).abs() < 1e-12 && (al.points[&2] - 2.3).abs() < 1e-12);
/// # Ok::<(), alsim::Error>(())
/// ```
pub fn measured_al(evidence: &[Evidence], k: Option<usize>) -> Result<MeasuredAl> {
    if let Some(k) = k {
        check_draft_len_argument(k, "k")?;
    }
    let (first, rest) = evidence.split_first().ok_or_else(|| Error::parameter("evidence", "no evidence given"))?;
    let stated = |ev: &Evidence| ev.k.as_ref().map(|(k, _)| *k).or(ev.total.positions.as_ref().map(Vec::len));
    let run_k = stated(first).or(k).ok_or_else(|| {
        Error::parameter("k", format!("{} does not state the draft length k; give it", first.location))
    })?;
    let mut runs = Vec::with_capacity(evidence.len());
    let mut notes = Vec::new();
    for ev in evidence {
        let at = ev.k.as_ref().map_or(&ev.location, |(_, at)| at);
        let own = stated(ev);
        let here = |message: String| Error::parse(&at.file, at.line, message);
        match (own, k) {
            (Some(own), Some(given)) if own != given => {
                return Err(here(format!("the evidence is for k = {own}, not the k = {given} given for it")));
            }
            (Some(own), _) if own != run_k => {
                return Err(here(format!(
                    "the evidence is for k = {own} but {} is for k = {run_k}: give runs of one draft length",
                    first.location
                )));
            }
            _ => {}
        }
        if ev.total.steps <= 0.0 {
            return Err(Error::parse(&ev.location.file, ev.location.line, "the evidence counts no verification steps"));
        }
        // The checks `eval` makes before a verdict; a sample too small to judge a pin by is too small to
        // predict from.
        let findings = validate::check(ev, run_k)?;
        if let Some(reason) = findings.too_small {
            return Err(Error::parse(&ev.location.file, ev.location.line, format!("{reason}: measure a longer run")));
        }
        notes.extend(findings.read_back.map(|r| Note::new(NoteKind::ReadBack, ev.location.clone(), r)));
        runs.push((ev.location.clone(), 1.0 + ev.total.accepted / ev.total.steps));
    }
    let total = rest.iter().fold(first.total.clone(), |acc, ev| acc.add(&ev.total));
    let d = total.steps;
    let mut points: BTreeMap<usize, f64> = match total.positions.filter(|p| p.len() == run_k) {
        Some(positions) => positions
            .iter()
            .scan(1.0, |al, p| {
                *al += p / d;
                Some(*al)
            })
            .enumerate()
            .map(|(i, al)| (i + 1, al))
            .collect(),
        None => {
            if evidence.iter().any(|ev| ev.total.positions.is_some()) {
                notes.push(Note::new(
                    NoteKind::Pooling,
                    first.location.clone(),
                    format!("not every run counts positions, so the pooled runs give AL at k = {run_k} alone"),
                ));
            }
            BTreeMap::new()
        }
    };
    // At the runs' own k the accepted-token count is the headline figure (`eval`'s estimate); rounded
    // per-position rates in logs can sum to a hair less.
    points.insert(run_k, 1.0 + total.accepted / d);
    Ok(MeasuredAl { k: run_k, points, runs, notes })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(name: &str, engine: Engine, k: Option<usize>, total: Window) -> Evidence {
        let location = Location::in_file(name, Some(1));
        let k = k.map(|k| (k, location.clone()));
        Evidence { location, engine, format: InputFormat::Prometheus, k, total, batches: Vec::new(), notes: Vec::new() }
    }

    #[test]
    fn measured_al_pools_counts_not_averages() {
        // Runs of 1,000 and 3,000 steps: the pooled AL weighs them by steps.
        let a = run("a", Engine::Atom, Some(2), Window::from_distribution(vec![200.0, 300.0, 500.0]));
        let b = run("b", Engine::Atom, Some(2), Window::from_distribution(vec![300.0, 900.0, 1800.0]));
        let m = measured_al(&[a.clone(), b], None).unwrap();
        assert_eq!(m.k, 2);
        // P_1 = 800 + 2700, P_2 = 500 + 1800 over D = 4000.
        assert!((m.points[&1] - (1.0 + 3500.0 / 4000.0)).abs() < 1e-12);
        assert!((m.points[&2] - (1.0 + 5800.0 / 4000.0)).abs() < 1e-12);
        assert_eq!(m.runs.iter().map(|r| r.1).collect::<Vec<_>>(), [2.3, 2.5]);
        assert!(m.notes.is_empty());

        // A run without per-position counts leaves only AL(k), and says so.
        let c = run("c", Engine::Sglang, None, Window::new(1000.0, 1500.0));
        let m = measured_al(&[a.clone(), c.clone()], None).unwrap();
        assert_eq!(m.points.keys().copied().collect::<Vec<_>>(), [2]);
        assert!((m.points[&2] - (1.0 + 2800.0 / 2000.0)).abs() < 1e-12);
        assert!(m.notes[0].message.contains("not every run counts positions"), "{:?}", m.notes);

        // k comes from the runs, else the caller; a contradiction names the file.
        assert!(measured_al(std::slice::from_ref(&c), None).unwrap_err().to_string().contains("k: "));
        assert_eq!(measured_al(std::slice::from_ref(&c), Some(4)).unwrap().k, 4);
        let err = measured_al(&[a, c], Some(3)).unwrap_err().to_string();
        assert!(err.starts_with("a:1") && err.contains("is for k = 2, not the k = 3"), "{err}");
    }

    #[test]
    fn lines_across_buffer_boundaries() {
        let text = b"a\r\nbb\n\nccc";
        let reader = std::io::BufReader::with_capacity(2, &text[..]);
        let mut seen = Vec::new();
        let n = for_each_line(reader, "t", |i, line, complete| {
            seen.push((i, String::from_utf8(line.to_vec()).unwrap(), complete));
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 4);
        assert_eq!(seen[0], (1, "a".to_string(), Line::Complete));
        assert_eq!(seen[2], (3, String::new(), Line::Complete));
        assert_eq!(seen[3], (4, "ccc".to_string(), Line::Eof));
    }

    #[test]
    fn an_over_long_line_is_cut_and_skipped_not_held() {
        let mut text = vec![b'x'; 3 * MAX_LINE_BYTES];
        text.extend_from_slice(b"\nnext\n");
        let mut seen = Vec::new();
        let reader = std::io::BufReader::with_capacity(4096, &text[..]);
        for_each_line(reader, "t", |i, line, end| {
            seen.push((i, line.len(), end));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [(1, MAX_LINE_BYTES, Line::TooLong), (2, 4, Line::Complete)]);
    }

    #[test]
    fn a_format_no_reader_takes_is_refused() {
        // Names and aliases read back in names.rs, for every enum alike.
        assert!("csv".parse::<InputFormat>().is_err());
    }
}

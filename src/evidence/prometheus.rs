//! Prometheus text exposition: one scrape, or several concatenated (`curl /metrics >> scrapes.prom` in a
//! loop), reduced to [`Evidence`].
//!
//! Families (engines.md §1.4, §2.4, §3.2, §4.2), matched with or without `_total` and with the colon
//! written as `_` (`atom_mtp_…`, as InferenceX's ATOM adapter accepts); `_created` samples are skipped:
//! - vLLM: `vllm:spec_decode_num_drafts`, `…_num_draft_tokens`, `…_num_accepted_tokens`,
//!   `…_num_accepted_tokens_per_pos{position="0".."k−1"}` → D, A, P_i;
//! - SGLang: `sglang:spec_verify_calls` and `sglang:generation_tokens` → D = Δcalls, A = Δtokens − Δcalls
//!   (the formula InferenceX index hits use; the generation counter also counts each request's first,
//!   prefill-made token, which biases AL up by requests/steps), `sglang:spec_num_steps` → k;
//! - TensorRT-LLM: `trtllm_spec_decode_num_draft_tokens`, `…_num_accepted_tokens` → D = draft tokens / k
//!   (there is no draft counter, so k must be given);
//! - ATOM: `atom:mtp_decode_steps{accepted_tokens="a"}` → the per-count distribution (D, A, P_i), checked
//!   against `atom:mtp_accepted_tokens` and `atom:mtp_draft_tokens` when present.
//!
//! Samples of one family with different label sets (engines, ranks, models) are summed, or split into
//! separate evidence by a label. A series that appears a second time starts the next snapshot; deltas
//! between consecutive snapshots are the time series for batch means, and a counter that goes down marks a
//! server restart: the delta restarts from zero (Prometheus `increase()` semantics) and a note says so.
//!
//! Parsing streams line by line and only fully parses the few lines of these families; other lines are
//! checked for a well-formed metric name (and fully, when the file ends without a newline, to catch
//! truncation).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::io::BufRead;

use super::{Evidence, InputFormat, Location, ReadOptions, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// A metric family alsim reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// `vllm:spec_decode_num_drafts` (counter).
    VllmDrafts,
    /// `vllm:spec_decode_num_draft_tokens` (counter).
    VllmDraftTokens,
    /// `vllm:spec_decode_num_accepted_tokens` (counter).
    VllmAccepted,
    /// `vllm:spec_decode_num_accepted_tokens_per_pos{position}` (counter).
    VllmPerPosition,
    /// `sglang:spec_verify_calls` (counter).
    SglangVerifyCalls,
    /// `sglang:generation_tokens` (counter).
    SglangGenerationTokens,
    /// `sglang:spec_accept_length` (gauge, last log interval).
    SglangAcceptLength,
    /// `sglang:spec_num_steps` (gauge, k).
    SglangNumSteps,
    /// `trtllm_spec_decode_num_draft_tokens` (counter).
    TrtllmDraftTokens,
    /// `trtllm_spec_decode_num_accepted_tokens` (counter).
    TrtllmAccepted,
    /// `atom:mtp_draft_tokens` (counter).
    AtomDraftTokens,
    /// `atom:mtp_accepted_tokens` (counter).
    AtomAccepted,
    /// `atom:mtp_decode_steps{accepted_tokens}` (counter).
    AtomDecodeSteps,
}

const FAMILIES: [(&str, Family); 13] = [
    ("vllm:spec_decode_num_drafts", Family::VllmDrafts),
    ("vllm:spec_decode_num_draft_tokens", Family::VllmDraftTokens),
    ("vllm:spec_decode_num_accepted_tokens", Family::VllmAccepted),
    ("vllm:spec_decode_num_accepted_tokens_per_pos", Family::VllmPerPosition),
    ("sglang:spec_verify_calls", Family::SglangVerifyCalls),
    ("sglang:generation_tokens", Family::SglangGenerationTokens),
    ("sglang:spec_accept_length", Family::SglangAcceptLength),
    ("sglang:spec_num_steps", Family::SglangNumSteps),
    ("trtllm_spec_decode_num_draft_tokens", Family::TrtllmDraftTokens),
    ("trtllm_spec_decode_num_accepted_tokens", Family::TrtllmAccepted),
    ("atom:mtp_draft_tokens", Family::AtomDraftTokens),
    ("atom:mtp_accepted_tokens", Family::AtomAccepted),
    ("atom:mtp_decode_steps", Family::AtomDecodeSteps),
];

impl Family {
    /// The family's canonical name (without `_total`).
    pub fn name(self) -> &'static str {
        FAMILIES.iter().find(|(_, f)| *f == self).map(|(n, _)| *n).unwrap_or_default()
    }

    /// The engine that exports it.
    pub fn engine(self) -> Engine {
        use Family::*;
        match self {
            VllmDrafts | VllmDraftTokens | VllmAccepted | VllmPerPosition => Engine::Vllm,
            SglangVerifyCalls | SglangGenerationTokens | SglangAcceptLength | SglangNumSteps => Engine::Sglang,
            TrtllmDraftTokens | TrtllmAccepted => Engine::Trtllm,
            AtomDraftTokens | AtomAccepted | AtomDecodeSteps => Engine::Atom,
        }
    }

    /// Whether the family is a counter (deltas apply) rather than a gauge.
    pub fn is_counter(self) -> bool {
        !matches!(self, Family::SglangAcceptLength | Family::SglangNumSteps)
    }

    /// The label that indexes its series (`position`, `accepted_tokens`), if any.
    pub fn index_label(self) -> Option<&'static str> {
        match self {
            Family::VllmPerPosition => Some("position"),
            Family::AtomDecodeSteps => Some("accepted_tokens"),
            _ => None,
        }
    }
}

/// The family a sample or family name belongs to: `_total` and colon-as-underscore spellings match,
/// `_created` samples and unrelated names do not.
///
/// ```
/// use alsim::evidence::prometheus::{family_of, Family};
/// assert_eq!(family_of("vllm:spec_decode_num_drafts_total"), Some(Family::VllmDrafts));
/// assert_eq!(family_of("atom_mtp_decode_steps"), Some(Family::AtomDecodeSteps));
/// assert_eq!(family_of("vllm:spec_decode_num_drafts_created"), None);
/// ```
pub fn family_of(name: &str) -> Option<Family> {
    // Cheap first-byte filter: almost every line of a real scrape belongs to some other family.
    if !matches!(name.as_bytes().first(), Some(b'v' | b's' | b't' | b'a')) {
        return None;
    }
    let name = name.strip_suffix("_total").unwrap_or(name);
    FAMILIES.iter().find(|(canonical, _)| same_name(canonical, name)).map(|(_, f)| *f)
}

/// Equal names, where a `:` in the canonical name may be written `_`.
fn same_name(canonical: &str, name: &str) -> bool {
    canonical.len() == name.len()
        && canonical.bytes().zip(name.bytes()).all(|(c, n)| c == n || (c == b':' && n == b'_'))
}

/// One reduced series: family, index label value, split label value.
type SeriesKey = (Family, Option<usize>, Option<String>);

/// A sample's value and where it was read.
#[derive(Debug, Clone, Copy)]
struct Sample {
    value: f64,
    line: Option<usize>,
}

/// One scrape: the families alsim reads, with label sets summed except the index and split labels.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    series: BTreeMap<SeriesKey, Sample>,
    /// (family, hash of the sorted label set) of every series seen: a repeat starts the next scrape.
    seen: HashSet<(Family, u64)>,
    /// The file the snapshot came from.
    origin: String,
}

impl Snapshot {
    /// An empty snapshot of `origin`.
    pub fn new(origin: &str) -> Snapshot {
        Snapshot { origin: origin.to_string(), ..Default::default() }
    }

    /// Adds one sample; `false` when this exact series was already in the snapshot (the next scrape
    /// begins).
    ///
    /// # Errors
    /// [`Error::Parse`] for a non-finite or negative value or a bad index label.
    pub fn add(
        &mut self,
        family: Family,
        labels: &mut [(String, String)],
        value: f64,
        split: Option<&str>,
        line: Option<usize>,
    ) -> Result<bool> {
        let here = |message: String| Error::parse(&self.origin, line, message);
        if !value.is_finite() {
            return Err(here(format!("{} has value {value}: counts must be finite numbers", family.name())));
        }
        if value < 0.0 {
            return Err(here(format!(
                "{} is negative ({value}): {} never go below zero",
                family.name(),
                if family.is_counter() { "counters" } else { "these gauges" }
            )));
        }
        labels.sort();
        let index = match family.index_label() {
            None => None,
            Some(label) => {
                let text = labels
                    .iter()
                    .find(|(n, _)| n == label)
                    .map(|(_, v)| v.as_str())
                    .ok_or_else(|| here(format!("{} sample has no '{label}' label", family.name())))?;
                let index: usize = text.parse().map_err(|_| {
                    here(format!("{} label {label}=\"{text}\" is not a non-negative integer", family.name()))
                })?;
                if index > crate::units::MAX_DRAFT_LEN {
                    return Err(here(format!(
                        "{} label {label}=\"{index}\" is beyond the largest draft length alsim reads ({})",
                        family.name(),
                        crate::units::MAX_DRAFT_LEN
                    )));
                }
                Some(index)
            }
        };
        let split_value =
            split.map(|s| labels.iter().find(|(n, _)| n == s).map_or_else(String::new, |(_, v)| v.clone()));
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        labels.hash(&mut hasher);
        if !self.seen.insert((family, hasher.finish())) {
            return Ok(false);
        }
        let entry = self.series.entry((family, index, split_value)).or_insert(Sample { value: 0.0, line });
        entry.value += value;
        Ok(true)
    }

    /// Whether the snapshot holds any sample of a family alsim reads.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }
}

/// Parses Prometheus text from `reader` into one snapshot per concatenated scrape.
///
/// # Errors
/// [`Error::Io`] on a read failure; [`Error::Parse`] naming `origin` and the line for a malformed or
/// truncated sample of a family alsim reads, a malformed metric name anywhere, non-finite or negative
/// values, or no family alsim reads at all.
pub fn parse(reader: impl BufRead, origin: &str, split: Option<&str>) -> Result<Vec<Snapshot>> {
    let mut snapshots = Vec::new();
    let mut current = Snapshot::new(origin);
    let lines = super::for_each_line(reader, origin, |line_no, line, complete| {
        let here = |message: String| Error::parse(origin, Some(line_no), message);
        let start = line.iter().position(|b| *b != b' ' && *b != b'\t').unwrap_or(line.len());
        let line = &line[start..];
        if line.is_empty() || line[0] == b'#' {
            return Ok(());
        }
        let name_len = line.iter().position(|b| !is_name_byte(*b)).unwrap_or(line.len());
        if name_len == 0 || line[0].is_ascii_digit() {
            return Err(here(format!(
                "expected a metric sample, found '{}': not Prometheus text exposition (use --format-in to choose another reader)",
                preview(line)
            )));
        }
        // Names are ASCII by construction, so this cannot fail.
        let name = std::str::from_utf8(&line[..name_len]).unwrap_or_default();
        let family = family_of(name);
        if family.is_none() && complete {
            return match line.get(name_len) {
                Some(b'{' | b' ' | b'\t') => Ok(()),
                _ => Err(here(format!("metric '{name}' has no value (truncated or malformed line)"))),
            };
        }
        let (mut labels, value) = parse_sample(&line[name_len..]).map_err(|m| here(format!("{name}: {m}")))?;
        let Some(family) = family else { return Ok(()) };
        if !current.add(family, &mut labels, value, split, Some(line_no))? {
            snapshots.push(std::mem::replace(&mut current, Snapshot::new(origin)));
            current.add(family, &mut labels, value, split, Some(line_no))?;
        }
        Ok(())
    })?;
    if !current.is_empty() {
        snapshots.push(current);
    }
    if snapshots.is_empty() {
        return Err(Error::parse(
            origin,
            (lines > 0).then_some(lines),
            format!(
                "no speculative-decoding metrics found ({lines} lines read); expected one of: {}",
                FAMILIES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(snapshots)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b':'
}

fn preview(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(60)]);
    text.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Parses `{labels} value [timestamp]` after the metric name.
fn parse_sample(rest: &[u8]) -> std::result::Result<(Vec<(String, String)>, f64), String> {
    let mut i = 0;
    let mut labels = Vec::new();
    if rest.first() == Some(&b'{') {
        i = 1;
        loop {
            i = skip_ws(rest, i);
            match rest.get(i) {
                Some(b'}') => {
                    i += 1;
                    break;
                }
                None => return Err("label set is not closed (truncated line?)".into()),
                _ => {}
            }
            let name_start = i;
            while rest.get(i).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_') {
                i += 1;
            }
            if i == name_start {
                return Err(format!("expected a label name at column {}", i + 1));
            }
            let name = String::from_utf8_lossy(&rest[name_start..i]).into_owned();
            i = skip_ws(rest, i);
            if rest.get(i) != Some(&b'=') {
                return Err(format!("expected '=' after label '{name}'"));
            }
            i = skip_ws(rest, i + 1);
            if rest.get(i) != Some(&b'"') {
                return Err(format!("label '{name}' value must be quoted"));
            }
            i += 1;
            let mut value = Vec::new();
            loop {
                match rest.get(i) {
                    None => return Err(format!("label '{name}' value is not closed (truncated line?)")),
                    Some(b'"') => break,
                    Some(b'\\') => {
                        match rest.get(i + 1) {
                            Some(b'n') => value.push(b'\n'),
                            Some(b'\\') => value.push(b'\\'),
                            Some(b'"') => value.push(b'"'),
                            Some(other) => {
                                value.push(b'\\');
                                value.push(*other);
                            }
                            None => return Err(format!("label '{name}' value ends in a lone backslash")),
                        }
                        i += 2;
                    }
                    Some(b) => {
                        value.push(*b);
                        i += 1;
                    }
                }
            }
            i += 1;
            labels.push((name, String::from_utf8_lossy(&value).into_owned()));
            i = skip_ws(rest, i);
            match rest.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {}
                None => return Err("label set is not closed (truncated line?)".into()),
                Some(_) => {
                    return Err(format!("expected ',' or '}}' after label '{}'", labels.last().map_or("", |l| &l.0)));
                }
            }
        }
    }
    let value_start = skip_ws(rest, i);
    if value_start == i && value_start < rest.len() {
        return Err("expected a space before the value".into());
    }
    let value_end =
        rest[value_start..].iter().position(|b| *b == b' ' || *b == b'\t').map_or(rest.len(), |p| value_start + p);
    let token = std::str::from_utf8(&rest[value_start..value_end]).map_err(|_| "value is not text".to_string())?;
    if token.is_empty() {
        return Err("sample has no value (truncated line?)".into());
    }
    let value: f64 = token.parse().map_err(|_| format!("value '{token}' is not a number"))?;
    let tail = &rest[skip_ws(rest, value_end)..];
    if !tail.is_empty() && !tail.iter().all(|b| b.is_ascii_digit() || *b == b'.' || *b == b'-' || *b == b'e') {
        return Err(format!("unexpected text '{}' after the value", String::from_utf8_lossy(tail)));
    }
    Ok((labels, value))
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// The counters of one snapshot for one split group: (family, index) → sample.
type Reduced = BTreeMap<(Family, Option<usize>), Sample>;

/// Turns snapshots into evidence: one per split group, with deltas between consecutive snapshots as its
/// time series.
///
/// # Errors
/// [`Error::Parse`] naming file and line for families of several engines, missing families, or
/// inconsistent counts.
pub fn evidence(snapshots: Vec<Snapshot>, origin: &str, options: &ReadOptions) -> Result<Vec<Evidence>> {
    let groups: BTreeSet<Option<String>> =
        snapshots.iter().flat_map(|s| s.series.keys().map(|(_, _, g)| g.clone())).collect();
    let mut out = Vec::new();
    for group in groups {
        let reduced: Vec<(Reduced, &Snapshot)> = snapshots
            .iter()
            .map(|s| {
                let map = s
                    .series
                    .iter()
                    .filter(|((_, _, g), _)| *g == group)
                    .map(|((f, i, _), sample)| ((*f, *i), *sample))
                    .collect();
                (map, s)
            })
            .collect();
        let label = match (&group, &options.split) {
            (Some(value), Some(split)) => format!("{origin}[{split}={value}]"),
            _ => origin.to_string(),
        };
        out.push(group_evidence(&reduced, &label, options)?);
    }
    Ok(out)
}

fn group_evidence(snapshots: &[(Reduced, &Snapshot)], label: &str, options: &ReadOptions) -> Result<Evidence> {
    let engine = single_engine(snapshots.iter().flat_map(|(m, s)| m.iter().map(move |(k, v)| (k.0, v.line, *s))))?;
    let mut notes = Vec::new();
    let (last, last_snapshot) = snapshots.last().expect("parse returns at least one snapshot");
    let (k, line) = engine_k(engine, last, &last_snapshot.origin)?;
    let location = Location { origin: label.to_string(), line };
    let mut batches = Vec::new();
    if snapshots.len() == 1 {
        notes.push(
            "one snapshot: counts are cumulative since the server started (an earlier snapshot, eval --before, or concatenated scrapes give a window and a time series)"
                .into(),
        );
        let total = window(engine, last, k.as_ref().map(|k| k.0), &last_snapshot.origin, options)?;
        return Ok(Evidence { location, engine, format: InputFormat::Prometheus, k, total, batches, notes });
    }
    for pair in snapshots.windows(2) {
        let ((before, _), (after, after_snapshot)) = (&pair[0], &pair[1]);
        let fell = after
            .iter()
            .find(|(key, now)| key.0.is_counter() && before.get(key).is_some_and(|was| was.value > now.value));
        let delta: Reduced = match fell {
            Some((key, now)) => {
                notes.push(format!(
                    "line {}: {} went down (from {} to {}): the server restarted between scrapes; counting from zero after the restart, so steps before it are lost",
                    now.line.map_or("?".into(), |l| l.to_string()),
                    key.0.name(),
                    before.get(key).map_or(0.0, |s| s.value),
                    now.value
                ));
                after.clone()
            }
            None => after
                .iter()
                .map(|(key, now)| {
                    let was = if key.0.is_counter() { before.get(key).map_or(0.0, |s| s.value) } else { 0.0 };
                    (*key, Sample { value: now.value - was, line: now.line })
                })
                .collect(),
        };
        let w = window(engine, &delta, k.as_ref().map(|k| k.0), &after_snapshot.origin, options)?;
        batches.push(w);
    }
    let total = batches.iter().skip(1).fold(batches[0].clone(), |acc, w| acc.add(w));
    batches.retain(|w| w.steps > 0.0);
    Ok(Evidence { location, engine, format: InputFormat::Prometheus, k, total, batches, notes })
}

/// The one engine whose families appear; several engines in one file is an error naming both.
fn single_engine<'a>(families: impl Iterator<Item = (Family, Option<usize>, &'a Snapshot)>) -> Result<Engine> {
    let mut first: BTreeMap<Engine, (Family, Option<usize>, &Snapshot)> = BTreeMap::new();
    for (family, line, snapshot) in families {
        let entry = first.entry(family.engine()).or_insert((family, line, snapshot));
        if line < entry.1 {
            *entry = (family, line, snapshot);
        }
    }
    let mut engines = first.into_iter();
    let (engine, (family, line, snapshot)) = engines.next().expect("snapshots are never empty");
    if let Some((other, (other_family, other_line, _))) = engines.next() {
        return Err(Error::parse(
            &snapshot.origin,
            other_line.max(line),
            format!(
                "metrics of two engines in one file: {} ({} at line {}) and {} ({} at line {}); give each server's scrape as its own file",
                engine.display_name(),
                family.name(),
                line.map_or("?".into(), |l| l.to_string()),
                other.display_name(),
                other_family.name(),
                other_line.map_or("?".into(), |l| l.to_string()),
            ),
        ));
    }
    Ok(engine)
}

/// The draft length the metrics state, where they state it, and the line of the step counter.
/// The draft length with where it was stated, and the line of the step counter.
type KAndLine = (Option<(usize, Location)>, Option<usize>);

fn engine_k(engine: Engine, m: &Reduced, origin: &str) -> Result<KAndLine> {
    let at = |line| Location { origin: origin.to_string(), line };
    let max_index = |family: Family| {
        m.iter().filter(|((f, _), _)| *f == family).filter_map(|((_, i), s)| i.map(|i| (i, s.line))).max_by_key(|x| x.0)
    };
    let line_of = |family: Family| m.iter().find(|((f, _), _)| *f == family).and_then(|(_, s)| s.line);
    Ok(match engine {
        Engine::Vllm => {
            (max_index(Family::VllmPerPosition).map(|(i, line)| (i + 1, at(line))), line_of(Family::VllmDrafts))
        }
        Engine::Atom => (
            max_index(Family::AtomDecodeSteps).filter(|(i, _)| *i > 0).map(|(i, line)| (i, at(line))),
            line_of(Family::AtomDecodeSteps).or(line_of(Family::AtomDraftTokens)),
        ),
        Engine::Sglang => {
            let k = match m.get(&(Family::SglangNumSteps, None)) {
                Some(s) if s.value >= 1.0 && s.value.fract() == 0.0 => Some((s.value as usize, at(s.line))),
                Some(s) => {
                    return Err(Error::parse(
                        origin,
                        s.line,
                        format!("sglang:spec_num_steps = {} is not a draft length", s.value),
                    ));
                }
                None => None,
            };
            (k, line_of(Family::SglangVerifyCalls))
        }
        Engine::Trtllm => (None, line_of(Family::TrtllmDraftTokens)),
        // No metric family maps to llama.cpp yet, so no page reaches here as llama.cpp.
        Engine::Llamacpp => (None, None),
    })
}

fn missing(origin: &str, line: Option<usize>, engine: Engine, family: Family, extra: &str) -> Error {
    Error::parse(
        origin,
        line,
        format!(
            "{} metrics found but {} (or {}_total) is missing{extra}",
            engine.display_name(),
            family.name(),
            family.name()
        ),
    )
}

/// The counts of one snapshot or delta.
fn window(engine: Engine, m: &Reduced, k: Option<usize>, origin: &str, options: &ReadOptions) -> Result<Window> {
    let get = |family: Family| m.get(&(family, None)).copied();
    // The line of the engine's first sample, so the message points at the metrics that are incomplete.
    let first_line = m.values().filter_map(|s| s.line).min();
    let need =
        |family: Family, extra: &str| get(family).ok_or_else(|| missing(origin, first_line, engine, family, extra));
    let indexed = |family: Family| -> Vec<(usize, Sample)> {
        m.iter().filter(|((f, _), _)| *f == family).filter_map(|((_, i), s)| i.map(|i| (i, *s))).collect()
    };
    let (w, line) = match engine {
        Engine::Vllm => {
            let drafts = need(Family::VllmDrafts, "")?;
            let accepted = need(Family::VllmAccepted, "")?;
            let per_pos = indexed(Family::VllmPerPosition);
            let mut w = Window::new(drafts.value, accepted.value);
            if !per_pos.is_empty() {
                for (expect, (i, s)) in per_pos.iter().enumerate() {
                    if *i != expect {
                        return Err(Error::parse(
                            origin,
                            s.line,
                            format!(
                                "{} has position=\"{i}\" but no position=\"{expect}\"",
                                Family::VllmPerPosition.name()
                            ),
                        ));
                    }
                }
                w.positions = Some(per_pos.iter().map(|(_, s)| s.value).collect());
            }
            (w, drafts.line)
        }
        Engine::Sglang => {
            let gauge = get(Family::SglangAcceptLength)
                .map(|s| format!("; the gauge sglang:spec_accept_length ({}) alone has no step count, read the server log's 'Decode batch' lines instead", s.value))
                .unwrap_or_default();
            let calls = need(Family::SglangVerifyCalls, &gauge)?;
            let tokens = need(Family::SglangGenerationTokens, &gauge)?;
            if tokens.value < calls.value {
                return Err(Error::parse(
                    origin,
                    tokens.line,
                    format!(
                        "sglang:generation_tokens ({}) is below sglang:spec_verify_calls ({}): every verify call emits at least one token",
                        tokens.value, calls.value
                    ),
                ));
            }
            (Window::new(calls.value, tokens.value - calls.value), calls.line)
        }
        Engine::Trtllm => {
            let drafted = need(Family::TrtllmDraftTokens, "")?;
            let accepted = need(Family::TrtllmAccepted, "")?;
            let k = k.or(options.k).ok_or_else(|| {
                Error::parse(
                    origin,
                    drafted.line,
                    "TensorRT-LLM exports draft tokens but no draft (step) counter: give the draft length k (eval --k, predict --evidence-k) to turn draft tokens into steps",
                )
            })?;
            (Window::new(drafted.value / k as f64, accepted.value), drafted.line)
        }
        Engine::Atom => {
            let steps = indexed(Family::AtomDecodeSteps);
            if steps.is_empty() {
                let drafted = need(Family::AtomDraftTokens, "")?;
                let accepted = need(Family::AtomAccepted, "")?;
                let k = k.or(options.k).ok_or_else(|| {
                    Error::parse(
                        origin,
                        drafted.line,
                        "ATOM metrics without atom:mtp_decode_steps have no step count: give the draft length k (eval --k, predict --evidence-k) to turn draft tokens into steps",
                    )
                })?;
                (Window::new(drafted.value / k as f64, accepted.value), drafted.line)
            } else {
                let top = steps.iter().map(|(i, _)| *i).max().unwrap_or(0);
                let mut counts = vec![0.0; top + 1];
                for (i, s) in &steps {
                    counts[*i] = s.value;
                }
                let line = steps[0].1.line;
                let w = Window::from_distribution(counts);
                if let Some(acc) = get(Family::AtomAccepted)
                    && (acc.value - w.accepted).abs() > 0.5
                {
                    return Err(Error::parse(
                        origin,
                        acc.line,
                        format!(
                            "atom:mtp_accepted_tokens is {} but atom:mtp_decode_steps implies {} accepted drafts",
                            acc.value, w.accepted
                        ),
                    ));
                }
                if let (Some(drafted), Some(k)) = (get(Family::AtomDraftTokens), k)
                    && (drafted.value - k as f64 * w.steps).abs() > 0.5
                {
                    return Err(Error::parse(
                        origin,
                        drafted.line,
                        format!(
                            "atom:mtp_draft_tokens is {} but {} decode steps at k = {k} draft {}",
                            drafted.value,
                            w.steps,
                            k as f64 * w.steps
                        ),
                    ));
                }
                (w, line)
            }
        }
        Engine::Llamacpp => {
            return Err(Error::parse(origin, first_line, "llama.cpp publishes no metrics alsim reads yet"));
        }
    };
    w.check(k, origin, line)?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Evidence>> {
        evidence(parse(text.as_bytes(), "t.prom", None)?, "t.prom", &ReadOptions::default())
    }

    #[test]
    fn labels_in_any_order_with_escapes() {
        let (labels, value) =
            parse_sample(br#"{position="1", model_name="a \"q\" \\ b\n",engine="0",} 8300 1700000000"#).unwrap();
        assert_eq!(value, 8300.0);
        assert_eq!(labels[1], ("model_name".to_string(), "a \"q\" \\ b\n".to_string()));
        assert!(parse_sample(br#"{position="1""#).is_err());
        assert!(parse_sample(b" NaNx").is_err());
    }

    #[test]
    fn engines_sum_and_created_samples_are_skipped() {
        let e = read(
            "vllm:spec_decode_num_drafts_total{engine=\"0\"} 6000\nvllm:spec_decode_num_drafts_total{engine=\"1\"} 4000\n\
             vllm:spec_decode_num_drafts_created{engine=\"0\"} 1.7e9\n\
             vllm:spec_decode_num_accepted_tokens{engine=\"0\"} 10000\nvllm:spec_decode_num_accepted_tokens{engine=\"1\"} 8300\n",
        )
        .unwrap();
        assert_eq!(e[0].total.steps, 10000.0);
        assert_eq!(e[0].total.accepted, 18300.0);
    }

    #[test]
    fn old_sglang_gauges_alone_say_where_to_look() {
        let err = read("# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{tp_rank=\"0\"} 2.84\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("t.prom:2:") && err.contains("spec_verify_calls") && err.contains("Decode batch"),
            "{err}"
        );
        let no_k =
            read("trtllm_spec_decode_num_draft_tokens_total 300\ntrtllm_spec_decode_num_accepted_tokens_total 183\n");
        assert!(no_k.unwrap_err().to_string().contains("give the draft length k"));
    }

    #[test]
    fn second_scrape_makes_a_delta_and_a_reset_is_noted() {
        let scrape = |d: u32, a: u32| {
            format!("vllm:spec_decode_num_drafts_total {d}\nvllm:spec_decode_num_accepted_tokens_total {a}\n")
        };
        let e = read(&(scrape(100, 150) + &scrape(1100, 1980) + &scrape(1500, 2800))).unwrap();
        assert_eq!(e[0].batches.len(), 2);
        assert_eq!(e[0].total.steps, 1400.0);
        assert_eq!(e[0].total.accepted, 2650.0);
        let e = read(&(scrape(1000, 1500) + &scrape(200, 400))).unwrap();
        assert_eq!(e[0].total.steps, 200.0);
        assert!(e[0].notes.iter().any(|n| n.contains("went down")), "{:?}", e[0].notes);
    }
}

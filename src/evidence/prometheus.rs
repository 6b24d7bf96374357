//! Prometheus text exposition: one scrape, or several concatenated (`curl /metrics >> scrapes.prom` in a
//! loop), reduced to [`Evidence`].
//!
//! Families (each engine's evidence in docs/engines.md), matched with or without `_total` and with the colon
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
//! Each series (family and whole label set) is kept apart in a [`Snapshot`]; series of one family with
//! different label sets (engines, ranks, models) are summed only after their counters are differenced
//! ([`Reducer`]), or split into separate evidence by a label. A series that appears a second
//! time starts the next snapshot, which is handed to a [`Reducer`] at once (deltas, restarts and the time
//! series are its business).
//!
//! Parsing streams line by line and only fully parses the few lines of these families; other lines are
//! checked for a well-formed metric name. Input that ends inside a line (no final newline) was cut off:
//! that line is never read as a value ([`parse`]). Counter values must be whole numbers (fractional or
//! tiny values are not counts); lines are bounded by [`super::MAX_LINE_BYTES`] and one scrape by
//! [`MAX_SERIES_PER_SCRAPE`] label sets and [`MAX_LABEL_BYTES_PER_SCRAPE`] of label text, so no input
//! costs more than a few tens of MiB of memory.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;

pub use super::snapshots::Reducer;
use super::{Evidence, Line, ReadOptions};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The most label sets of the families alsim reads in one scrape: real servers export a few per rank.
pub const MAX_SERIES_PER_SCRAPE: usize = 100_000;

/// The most label text those label sets may hold in one scrape (each series is kept by its whole label
/// set): real pages hold a few KiB.
pub const MAX_LABEL_BYTES_PER_SCRAPE: usize = 8 << 20;

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

/// A series' identity: its family and its whole label set, sorted and written as in the exposition
/// (`engine="0",model_name="a \"q\""`), so no two series share one.
pub(crate) type SeriesId = (Family, String);

/// A sample's value and where it was read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) value: f64,
    pub(crate) line: Option<usize>,
}

/// One series' reading in a scrape.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    /// The value of the family's index label (`position`, `accepted_tokens`).
    pub(crate) index: Option<usize>,
    /// The value of the `--split` label (empty where a sample lacks it), when splitting.
    pub(crate) group: Option<String>,
    pub(crate) sample: Sample,
    /// Whether the reading was carried over from an earlier scrape that held the series
    /// ([`Snapshot::carry`]) rather than read in this one.
    pub(crate) carried: bool,
}

/// One scrape: every series of the families alsim reads, each kept apart (counters are differenced per
/// series before they are summed, see [`Reducer`]).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    series: BTreeMap<SeriesId, Reading>,
    /// Bytes of label text held, bounded by [`MAX_LABEL_BYTES_PER_SCRAPE`].
    label_bytes: usize,
    /// The file the snapshot came from.
    pub(crate) origin: String,
    /// Whether any sample carried the split label.
    pub(crate) split_seen: bool,
    /// Label names met (a few), for messages.
    label_names: BTreeSet<String>,
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
    /// [`Error::Parse`] for a non-finite or negative value, a bad index label, or more series (or label
    /// text) than one server's page holds.
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
        if family.is_counter() {
            super::validate::counter(value, family.name(), &self.origin, line)?;
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
        let group = split.map(|s| match labels.iter().find(|(n, _)| n == s) {
            Some((_, v)) => {
                self.split_seen = true;
                v.clone()
            }
            None => String::new(),
        });
        for (name, _) in labels.iter() {
            if self.label_names.len() < 32 && !self.label_names.contains(name) {
                self.label_names.insert(name.clone());
            }
        }
        let text = label_text(labels);
        let bytes = text.len();
        let (held, label_bytes) = (self.series.len(), self.label_bytes + bytes);
        let std::collections::btree_map::Entry::Vacant(slot) = self.series.entry((family, text)) else {
            return Ok(false);
        };
        if held >= MAX_SERIES_PER_SCRAPE || label_bytes > MAX_LABEL_BYTES_PER_SCRAPE {
            return Err(here(format!(
                "more than {MAX_SERIES_PER_SCRAPE} label sets (or {} MiB of labels) of speculative-decoding families in one scrape: not a server's metrics page",
                MAX_LABEL_BYTES_PER_SCRAPE >> 20
            )));
        }
        slot.insert(Reading { index, group, sample: Sample { value, line }, carried: false });
        self.label_bytes = label_bytes;
        Ok(true)
    }

    /// Whether the snapshot holds this series.
    pub(crate) fn holds(&self, family: Family, labels: &mut [(String, String)]) -> bool {
        labels.sort();
        self.series.contains_key(&(family, label_text(labels)))
    }

    /// Whether the snapshot holds any sample of a family alsim reads.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// The split groups present.
    pub(crate) fn groups(&self) -> BTreeSet<Option<String>> {
        self.series.values().map(|r| r.group.clone()).collect()
    }

    /// Every series, in a fixed order.
    pub(crate) fn readings(&self) -> impl Iterator<Item = (&SeriesId, &Reading)> {
        self.series.iter()
    }

    /// One series' reading, if the snapshot holds it.
    pub(crate) fn get(&self, id: &SeriesId) -> Option<&Reading> {
        self.series.get(id)
    }

    /// Keeps the series of `earlier` that this snapshot lacks, at their last reading, so a series missing
    /// from one scrape is differenced against that reading when it comes back (as Prometheus does), not
    /// counted whole again.
    ///
    /// # Errors
    /// [`Error::Parse`] when the series kept exceed the limits of one scrape.
    pub(crate) fn carry(&mut self, earlier: &Snapshot) -> Result<()> {
        for (id, reading) in &earlier.series {
            if !self.series.contains_key(id) {
                self.label_bytes += id.1.len();
                self.series.insert(id.clone(), Reading { carried: true, ..reading.clone() });
            }
        }
        if self.series.len() > MAX_SERIES_PER_SCRAPE || self.label_bytes > MAX_LABEL_BYTES_PER_SCRAPE {
            return Err(Error::parse(
                &self.origin,
                None,
                format!(
                    "more than {MAX_SERIES_PER_SCRAPE} distinct label sets (or {} MiB of labels) of speculative-decoding families across scrapes: not one server's metrics",
                    MAX_LABEL_BYTES_PER_SCRAPE >> 20
                ),
            ));
        }
        Ok(())
    }

    /// Each family present with the line of its first sample.
    pub(crate) fn families(&self) -> Vec<(Family, Option<usize>)> {
        let mut first: BTreeMap<Family, Option<usize>> = BTreeMap::new();
        for ((family, _), reading) in &self.series {
            let line = first.entry(*family).or_insert(reading.sample.line);
            *line = (*line).min(reading.sample.line).or(reading.sample.line);
        }
        first.into_iter().collect()
    }

    /// Label names met (at most 32), sorted.
    pub(crate) fn label_names(&self) -> Vec<String> {
        self.label_names.iter().cloned().collect()
    }
}

/// Sorted labels as the exposition writes them: `name="value"`, comma-separated, values escaped.
fn label_text(labels: &[(String, String)]) -> String {
    let mut text = String::new();
    for (i, (name, value)) in labels.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(name);
        text.push_str("=\"");
        for c in value.chars() {
            match c {
                '\\' => text.push_str("\\\\"),
                '"' => text.push_str("\\\""),
                '\n' => text.push_str("\\n"),
                c => text.push(c),
            }
        }
        text.push('"');
    }
    text
}

/// A series as a message names it, `family{labels}`: label values escaped as in the exposition, other
/// control characters shown as `?`, and cut after 200 characters.
pub(crate) fn series_name(id: &SeriesId) -> String {
    const SHOWN: usize = 200;
    let labels: String = id.1.chars().take(SHOWN).map(|c| if c.is_control() { '?' } else { c }).collect();
    let more = if id.1.chars().nth(SHOWN).is_some() { "…" } else { "" };
    format!("{}{{{labels}{more}}}", id.0.name())
}

/// Reads Prometheus text from `reader` into evidence (one per split group).
///
/// # Errors
/// As [`parse`] and [`Reducer::push`].
pub fn read(reader: impl BufRead, origin: &str, options: &ReadOptions) -> Result<Vec<Evidence>> {
    let mut reducer = Reducer::new(origin, options);
    parse(reader, origin, options.split.as_deref(), &mut reducer)?;
    reducer.finish()
}

/// Parses Prometheus text from `reader`, handing each concatenated scrape to `reducer` as it completes.
///
/// The exposition format ends every line with a newline, so input that ends inside a line was cut off
/// (a truncated download, a scrape still being written): that line is never read as a value. The scrape
/// it interrupts is incomplete and is left out with a note when earlier scrapes precede it; a lone cut
/// page is refused. A cut line that repeats a series of the scrape before it begins the next scrape, so
/// that scrape is whole and kept. A last `# EOF` (OpenMetrics) or blank line needs no newline.
///
/// # Errors
/// [`Error::Io`] on a read failure; [`Error::Parse`] naming `origin` and the line for a malformed,
/// cut or over-long line, a malformed metric name anywhere, values that cannot be counts, or no
/// family alsim reads at all; and what `reducer` refuses.
pub fn parse(reader: impl BufRead, origin: &str, split: Option<&str>, reducer: &mut Reducer) -> Result<()> {
    let mut current = Snapshot::new(origin);
    let mut pushed = 0usize;
    // The line the input ends inside, and whether it begins the next scrape.
    let mut cut: Option<(usize, bool)> = None;
    let lines = super::for_each_line(reader, origin, |line_no, line, end| {
        let here = |message: String| Error::parse(origin, Some(line_no), message);
        if end == Line::TooLong {
            return Err(here(format!(
                "line longer than {} bytes: not Prometheus text exposition",
                super::MAX_LINE_BYTES
            )));
        }
        let start = line.iter().position(|b| *b != b' ' && *b != b'\t').unwrap_or(line.len());
        let line = &line[start..];
        if end == Line::Eof {
            if !(line.is_empty() || line == b"# EOF") {
                cut = Some((line_no, begins_next_scrape(&current, line)));
            }
            return Ok(());
        }
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
        let Some(family) = family_of(name) else {
            return match line.get(name_len) {
                Some(b'{' | b' ' | b'\t') => Ok(()),
                _ => Err(here(format!("metric '{name}' has no value (truncated or malformed line)"))),
            };
        };
        let (mut labels, value) = parse_sample(&line[name_len..]).map_err(|m| here(format!("{name}: {m}")))?;
        if !current.add(family, &mut labels, value, split, Some(line_no))? {
            reducer.push(std::mem::replace(&mut current, Snapshot::new(origin)))?;
            pushed += 1;
            current.add(family, &mut labels, value, split, Some(line_no))?;
        }
        Ok(())
    })?;
    match cut {
        Some((line, false)) if pushed == 0 => {
            return Err(Error::parse(
                origin,
                Some(line),
                "the file ends inside this line (no newline after it): the page was cut off, so this value and any series after it are missing; scrape the page again",
            ));
        }
        Some((line, false)) => {
            let from = current.families().iter().filter_map(|(_, l)| *l).min();
            reducer.note(format!(
                "line {line}: the file ends inside this line (no newline after it), so the last scrape{} is cut short and left out",
                from.map_or(String::new(), |l| format!(" (from line {l})"))
            ));
            return Ok(());
        }
        Some((line, true)) => reducer.note(format!(
            "line {line}: the file ends inside this line (no newline after it), which began another scrape: left out"
        )),
        None => {}
    }
    if !current.is_empty() {
        reducer.push(current)?;
    } else if pushed == 0 {
        return Err(Error::parse(
            origin,
            (lines > 0).then_some(lines),
            format!(
                "no speculative-decoding metrics found ({lines} lines read); expected one of: {}",
                FAMILIES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            ),
        ));
    }
    Ok(())
}

/// Whether a cut last `line` is a sample of a series `current` already holds, i.e. the first line of the
/// next scrape (so `current` is whole).
fn begins_next_scrape(current: &Snapshot, line: &[u8]) -> bool {
    let name_len = line.iter().position(|b| !is_name_byte(*b)).unwrap_or(line.len());
    let Some(family) = std::str::from_utf8(&line[..name_len]).ok().and_then(family_of) else {
        return false;
    };
    parse_sample(&line[name_len..]).is_ok_and(|(mut labels, _)| current.holds(family, &mut labels))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Evidence>> {
        super::read(text.as_bytes(), "t.prom", &ReadOptions::default())
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

    #[test]
    fn counters_are_differenced_per_series_before_they_are_summed() {
        let scrape = |ranks: &[(u32, u32)]| -> String {
            ranks
                .iter()
                .enumerate()
                .filter(|(_, (d, _))| *d > 0)
                .map(|(r, (d, a))| {
                    format!(
                        "vllm:spec_decode_num_drafts_total{{rank=\"{r}\"}} {d}\nvllm:spec_decode_num_accepted_tokens_total{{rank=\"{r}\"}} {a}\n"
                    )
                })
                .collect()
        };
        // Rank 1 restarts: it counts its 100 steps since, rank 0 its own 100; neither counts its history.
        let e = read(&(scrape(&[(5000, 15000), (5000, 15000)]) + &scrape(&[(5100, 15180), (100, 180)]))).unwrap();
        assert_eq!((e[0].total.steps, e[0].total.accepted), (200.0, 360.0));
        let note = e[0].notes.iter().find(|n| n.contains("went down")).unwrap();
        assert!(note.starts_with("line 7: 2 counter series") && note.contains("{rank=\"1\"} 5000 → 100"), "{note}");
        // A series missing from one scrape adds nothing then, and its return is differenced against its
        // last reading, not counted whole.
        let e = read(
            &(scrape(&[(5000, 15000), (5000, 15000)])
                + &scrape(&[(5100, 15180), (0, 0)])
                + &scrape(&[(5200, 15360), (5200, 15360)])),
        )
        .unwrap();
        assert_eq!((e[0].total.steps, e[0].total.accepted), (400.0, 720.0));
        assert!(
            e[0].notes.iter().any(|n| n.starts_with("2 counter series of the scrape before are missing")),
            "{:?}",
            e[0].notes
        );
    }

    #[test]
    fn a_cut_page_is_never_read_as_a_value() {
        let scrape = |d: u32, a: u32| {
            format!("vllm:spec_decode_num_drafts_total {d}\nvllm:spec_decode_num_accepted_tokens_total {a}\n")
        };
        // AL 1.830 cut to "…_total 1" would read as AL 1.001: a lone cut page is refused instead.
        let page = scrape(1000, 1830);
        let err = read(&page[..page.len() - 4]).unwrap_err().to_string();
        assert!(err.starts_with("t.prom:2:") && err.contains("cut off"), "{err}");
        assert!(read(&page[..page.len() - 1]).unwrap_err().to_string().contains("cut off"));
        // Concatenated scrapes: the cut scrape is left out and the series ends at the one before.
        let text = scrape(100, 150) + &scrape(1100, 1980) + &scrape(1500, 2800);
        let e = read(&text[..text.len() - 3]).unwrap();
        assert_eq!((e[0].batches.len(), e[0].total.steps, e[0].total.accepted), (1, 1000.0, 1830.0));
        assert!(e[0].notes.iter().any(|n| n.starts_with("line 6:") && n.contains("(from line 5)")), "{:?}", e[0].notes);
        // A cut line that repeats a series begins the next scrape, so the one before it is whole.
        let e = read(&(scrape(100, 150) + &scrape(1100, 1980) + "vllm:spec_decode_num_drafts_total 15")).unwrap();
        assert_eq!((e[0].batches.len(), e[0].total.steps), (1, 1000.0));
        assert!(e[0].notes.iter().any(|n| n.contains("began another scrape")), "{:?}", e[0].notes);
        // OpenMetrics ends with `# EOF`, which needs no newline; nor does a blank last line.
        for end in ["# EOF", "  "] {
            assert_eq!(read(&(page.clone() + end)).unwrap()[0].total.steps, 1000.0);
        }
        assert!(read(&(page.clone() + "# HELP vllm:spec_decode_num")).is_err());
    }
}

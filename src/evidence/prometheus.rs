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
//! separate evidence by a label. A series that appears a second time starts the next snapshot, which is
//! handed to a [`Reducer`] at once (deltas, restarts and the time series are its business).
//!
//! Parsing streams line by line and only fully parses the few lines of these families; other lines are
//! checked for a well-formed metric name (and fully, when the file ends without a newline, to catch
//! truncation). Counter values must be whole numbers (fractional or tiny values are not counts); lines
//! are bounded by [`super::MAX_LINE_BYTES`] and one scrape by [`MAX_SERIES_PER_SCRAPE`] label sets, so no
//! input costs more than a few MiB of memory.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{Hash, Hasher};
use std::io::BufRead;

pub use super::snapshots::Reducer;
use super::{Evidence, Line, ReadOptions};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The most label sets of the families alsim reads in one scrape: real servers export a few per rank.
pub const MAX_SERIES_PER_SCRAPE: usize = 100_000;

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
pub(crate) struct Sample {
    pub(crate) value: f64,
    pub(crate) line: Option<usize>,
}

/// One scrape: the families alsim reads, with label sets summed except the index and split labels.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    series: BTreeMap<SeriesKey, Sample>,
    /// (family, hash of the sorted label set) of every series seen: a repeat starts the next scrape.
    seen: HashSet<(Family, u64)>,
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
        let split_value = split.map(|s| match labels.iter().find(|(n, _)| n == s) {
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
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        labels.hash(&mut hasher);
        if !self.seen.insert((family, hasher.finish())) {
            return Ok(false);
        }
        if self.seen.len() > MAX_SERIES_PER_SCRAPE {
            return Err(here(format!(
                "more than {MAX_SERIES_PER_SCRAPE} label sets of speculative-decoding families in one scrape: not a server's metrics page"
            )));
        }
        let entry = self.series.entry((family, index, split_value)).or_insert(Sample { value: 0.0, line });
        entry.value += value;
        Ok(true)
    }

    /// Whether the snapshot holds any sample of a family alsim reads.
    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    /// The split groups present.
    pub(crate) fn groups(&self) -> BTreeSet<Option<String>> {
        self.series.keys().map(|(_, _, g)| g.clone()).collect()
    }

    /// Every reduced series.
    pub(crate) fn series(&self) -> impl Iterator<Item = (&SeriesKey, &Sample)> {
        self.series.iter()
    }

    /// Each family present with the line of its first sample.
    pub(crate) fn families(&self) -> Vec<(Family, Option<usize>)> {
        let mut first: BTreeMap<Family, Option<usize>> = BTreeMap::new();
        for ((family, _, _), sample) in &self.series {
            let line = first.entry(*family).or_insert(sample.line);
            *line = (*line).min(sample.line).or(sample.line);
        }
        first.into_iter().collect()
    }

    /// Label names met (at most 32), sorted.
    pub(crate) fn label_names(&self) -> Vec<String> {
        self.label_names.iter().cloned().collect()
    }
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
/// # Errors
/// [`Error::Io`] on a read failure; [`Error::Parse`] naming `origin` and the line for a malformed,
/// truncated or over-long line, a malformed metric name anywhere, values that cannot be counts, or no
/// family alsim reads at all; and what `reducer` refuses.
pub fn parse(reader: impl BufRead, origin: &str, split: Option<&str>, reducer: &mut Reducer) -> Result<()> {
    let mut current = Snapshot::new(origin);
    let mut pushed = 0usize;
    let lines = super::for_each_line(reader, origin, |line_no, line, end| {
        let here = |message: String| Error::parse(origin, Some(line_no), message);
        if end == Line::TooLong {
            return Err(here(format!(
                "line longer than {} bytes: not Prometheus text exposition",
                super::MAX_LINE_BYTES
            )));
        }
        let complete = end == Line::Complete;
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
            reducer.push(std::mem::replace(&mut current, Snapshot::new(origin)))?;
            pushed += 1;
            current.add(family, &mut labels, value, split, Some(line_no))?;
        }
        Ok(())
    })?;
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
}

//! One scrape's data model: the metric families alsim reads from each engine's Prometheus page, and a
//! [`Snapshot`] of one scrape holding every series (family and whole label set) apart, with its reading and
//! where it was read. The text parser (`prometheus`) fills snapshots; the reducer (`snapshots`) turns a
//! time series of them into evidence.

use std::collections::{BTreeMap, BTreeSet};

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

pub(crate) const FAMILIES: [(&str, Family); 13] = [
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
/// series before they are summed, see [`Reducer`](super::snapshots::Reducer)).
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

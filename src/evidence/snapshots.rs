//! From metric snapshots to evidence, streaming: each scrape is reduced against the one before it as
//! it arrives, so only two snapshots and the bounded [`Series`] of deltas are ever held, however many
//! scrapes a file concatenates.
//!
//! Deltas between consecutive snapshots are the time series for batch means. Counters are differenced
//! per series (family and whole label set) and only then summed, as Prometheus `increase()` sums per
//! series: a series whose counter goes down has restarted (the server, or one rank of several), and its
//! window counts from the restart, its new value being the increase since then, while every other series
//! keeps its own difference; a note names the series. A series missing from a scrape adds nothing to
//! that window and is differenced against its last reading when it returns. Across the two files of
//! `eval --before`, counters that all fall mean the snapshots are swapped (or every series restarted at
//! once): that is refused rather than judging the later page's cumulative counts as if they were the
//! window.

use std::collections::BTreeMap;

use super::scrape::{Family, Sample, SeriesId, Snapshot, series_name};
use super::validate::{self, metrics};
use super::{Evidence, InputFormat, Location, Note, NoteKind, ReadOptions, Series, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// The counters of one snapshot or delta for one split group, summed over label sets: (family, index) →
/// sample (at the line of its first series).
type Reduced = BTreeMap<(Family, Option<usize>), Sample>;

/// Notes on restarts and missing series one evidence item lists; the rest are counted.
const LISTED_NOTES: usize = 8;

/// Series one such note names.
const NAMED_SERIES: usize = 3;

/// One split group's state.
#[derive(Debug)]
struct Group {
    /// The cumulative window of the first snapshot that held this group.
    first: Option<Window>,
    /// Deltas between consecutive snapshots.
    series: Series,
    /// Draft length the metrics state, where they state it.
    k: Option<(usize, Location)>,
    /// The line of the step counter in the first snapshot.
    line: Option<usize>,
    /// Restarts and missing series met in this group.
    notes: Vec<Note>,
    /// Such notes past [`LISTED_NOTES`].
    unlisted: usize,
}

impl Group {
    fn note(&mut self, note: Note) {
        if self.notes.len() < LISTED_NOTES {
            self.notes.push(note);
        } else {
            self.unlisted += 1;
        }
    }
}

/// Reduces snapshots, pushed in time order, to evidence (one per split group).
#[derive(Debug)]
pub struct Reducer<'a> {
    /// The evidence's name: the file whose counts are judged (the later one with `--before`).
    origin: String,
    options: &'a ReadOptions,
    /// The engine of the first family seen, with that family, its line and file.
    engine: Option<(Engine, Family, Option<usize>, String)>,
    /// The latest snapshot, with the series it lacked kept at their last reading.
    previous: Option<Snapshot>,
    snapshots: usize,
    /// Verification steps counted between snapshots, over every group.
    steps_between: f64,
    groups: BTreeMap<Option<String>, Group>,
    notes: Vec<Note>,
    /// Whether any sample carried the `--split` label.
    split_seen: bool,
}

impl<'a> Reducer<'a> {
    /// A reducer for evidence named `origin`.
    pub fn new(origin: &str, options: &'a ReadOptions) -> Reducer<'a> {
        Reducer {
            origin: origin.to_string(),
            options,
            engine: None,
            previous: None,
            snapshots: 0,
            steps_between: 0.0,
            groups: BTreeMap::new(),
            notes: Vec::new(),
            split_seen: false,
        }
    }

    /// Snapshots pushed so far.
    pub fn snapshots(&self) -> usize {
        self.snapshots
    }

    /// Adds a note every evidence item carries (a reader's finding about the whole file).
    pub(crate) fn note(&mut self, note: Note) {
        self.notes.push(note);
    }

    /// Takes the next snapshot in time order.
    ///
    /// # Errors
    /// [`Error::Parse`] naming file and line for families of several engines, missing families, a draft
    /// length that changes, impossible counts, or an earlier snapshot later than the file it precedes (settled by `before`).
    pub fn push(&mut self, mut snapshot: Snapshot) -> Result<()> {
        let engine = self.engine(&snapshot)?;
        self.split_seen |= snapshot.split_seen;
        let origin = snapshot.origin.clone();
        let previous = self.previous.take();
        let options = self.options;
        for group_key in snapshot.groups() {
            let now = reduce(&snapshot, &group_key);
            let (k, line) = engine_k(engine, &now, &origin)?;
            let group = self.groups.entry(group_key.clone()).or_insert_with(|| Group {
                first: None,
                series: Series::new(),
                k: k.clone(),
                line,
                notes: Vec::new(),
                unlisted: 0,
            });
            match (&group.k, &k) {
                (Some((was, at)), Some((new, new_at))) if was != new => {
                    return Err(Error::parse(
                        &new_at.file,
                        new_at.line,
                        format!(
                            "the metrics show k = {new} here but k = {was} at {at}: the server changed its draft length; give one run per file"
                        ),
                    ));
                }
                (None, Some(_)) => group.k = k.clone(),
                _ => {}
            }
            let k_value = group.k.as_ref().map(|k| k.0);
            let Some(before) = &previous else {
                group.first = Some(window(engine, &now, k_value, &origin, options)?);
                continue;
            };
            let delta = difference(before, &snapshot, &group_key);
            let since = if before.origin == origin {
                "the scrape before".to_string()
            } else {
                format!("the earlier snapshot {}", before.origin)
            };
            if let Some((id, was, s)) = delta.restarted.first() {
                if !delta.rose && before.origin != origin {
                    return Err(Error::parse(
                        &origin,
                        s.line,
                        format!(
                            "every counter is lower than in the earlier snapshot {} ({} {was} → {}): the two snapshots are swapped, or every series restarted between them (after a restart, the later scrape alone covers the run since then)",
                            before.origin,
                            id.0.name(),
                            s.value
                        ),
                    )
                    .settled_by("before"));
                }
                let first_line = delta.restarted.iter().filter_map(|r| r.2.line).min();
                let message = format!(
                    "{} counter series went down since {since}, so each restarted (the server, or one rank) and counts from its restart, as Prometheus increase() does (its steps before the restart are lost): {}",
                    delta.restarted.len(),
                    named(delta.restarted.iter().map(|(id, was, s)| format!(
                        "{} {was} → {}",
                        series_name(id),
                        s.value
                    )))
                );
                let at = Location::in_file(group_name(&origin, &group_key, options), first_line);
                group.note(Note::new(NoteKind::SeriesBreak, at, message));
            }
            if !delta.vanished.is_empty() {
                let message = format!(
                    "{} counter series of {since} are missing from the scrape: they add nothing to this window (a series that returns is differenced against its last reading): {}",
                    delta.vanished.len(),
                    named(delta.vanished.iter().map(series_name))
                );
                let at = Location::in_file(group_name(&origin, &group_key, options), line);
                group.note(Note::new(NoteKind::SeriesBreak, at, message));
            }
            let between = window(engine, &delta.counts, k_value, &origin, options)?;
            self.steps_between += between.steps;
            group.series.push(between);
        }
        if let Some(before) = &previous {
            snapshot.carry(before)?;
        }
        self.previous = Some(snapshot);
        self.snapshots += 1;
        Ok(())
    }

    /// Whether several snapshots were pushed and no verification step was counted between any two.
    pub(crate) fn counted_nothing(&self) -> bool {
        self.snapshots >= 2 && self.steps_between == 0.0
    }

    /// The evidence of every split group.
    ///
    /// # Errors
    /// [`Error::Parse`] when no snapshot was pushed; [`Error::Invalid`] when the split label names a label no
    /// sample carries.
    pub fn finish(self) -> Result<Vec<Evidence>> {
        let Some((engine, ..)) = self.engine else {
            return Err(Error::parse(&self.origin, None, "no speculative-decoding metrics found"));
        };
        if let Some(split) = &self.options.split
            && !self.split_seen
        {
            return Err(Error::parameter(
                "split",
                format!(
                    "no speculative-decoding sample in {} carries the label '{split}': nothing to split by (labels present: {})",
                    self.origin,
                    self.previous.as_ref().map_or(String::new(), |s| s.label_names().join(", "))
                ),
            ));
        }
        let mut out = Vec::new();
        for (group_key, group) in self.groups {
            let origin = group_name(&self.origin, &group_key, self.options);
            let location = Location::in_file(origin.clone(), group.line);
            let mut notes = self.notes.clone();
            notes.extend(group.notes);
            let whole = Location::in_file(origin, None);
            if group.unlisted > 0 {
                let message = format!("{} more notes on restarted or missing series not listed", group.unlisted);
                notes.push(Note::new(NoteKind::SeriesBreak, whole.clone(), message));
            }
            let inputs = group.series.inputs();
            let (total, batches) = if self.snapshots == 1 {
                notes.push(Note::new(
                    NoteKind::Counting,
                    whole,
                    "one snapshot: counts are cumulative since the server started (an earlier snapshot or concatenated scrapes give a window and a time series)",
                ));
                (group.first.unwrap_or_else(|| Window::new(0.0, 0.0)), Vec::new())
            } else {
                let (batches, stride) = group.series.finish();
                if stride > 1 {
                    let message = format!(
                        "{inputs} scrape deltas kept as {} windows of {stride} neighbours each (the series is bounded in memory)",
                        batches.len()
                    );
                    notes.push(Note::new(NoteKind::Counting, whole, message));
                }
                (Window::sum(&batches).unwrap_or_else(|| Window::new(0.0, 0.0)), batches)
            };
            out.push(Evidence { location, engine, format: InputFormat::Prometheus, k: group.k, total, batches, notes });
        }
        Ok(out)
    }

    /// The one engine whose families appear; several engines is an error naming both.
    fn engine(&mut self, snapshot: &Snapshot) -> Result<Engine> {
        for (family, line) in snapshot.families() {
            match &self.engine {
                None => self.engine = Some((family.engine(), family, line, snapshot.origin.clone())),
                Some((engine, first, first_line, first_origin)) if *engine != family.engine() => {
                    return Err(Error::parse(
                        &snapshot.origin,
                        line,
                        format!(
                            "metrics of two engines: {} ({} at {first_origin}:{}) and {} ({}); give each server's scrape as its own file",
                            engine.display_name(),
                            first.name(),
                            first_line.map_or("?".into(), |l| l.to_string()),
                            family.engine().display_name(),
                            family.name(),
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        self.engine.as_ref().map(|e| e.0).ok_or_else(|| Error::parse(&snapshot.origin, None, "empty snapshot"))
    }
}

/// A group's counters in one snapshot, summed over label sets.
fn reduce(snapshot: &Snapshot, group: &Option<String>) -> Reduced {
    let mut sums = Reduced::new();
    for (id, reading) in snapshot.readings().filter(|(_, r)| !r.carried && &r.group == group) {
        accumulate(&mut sums, (id.0, reading.index), reading.sample.value, reading.sample.line);
    }
    sums
}

/// Adds `value` to `key`'s sum, which keeps the earliest line.
fn accumulate(sums: &mut Reduced, key: (Family, Option<usize>), value: f64, line: Option<usize>) {
    let sum = sums.entry(key).or_insert(Sample { value: 0.0, line });
    sum.value += value;
    sum.line = match (sum.line, line) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
}

/// A group's counters between two snapshots.
#[derive(Debug, Default)]
struct Delta {
    /// The increase of each counter (gauges: their reading now), summed over label sets.
    counts: Reduced,
    /// Series whose counter went down, with the earlier value and the sample now.
    restarted: Vec<(SeriesId, f64, Sample)>,
    /// Counter series of the earlier snapshot missing now.
    vanished: Vec<SeriesId>,
    /// Whether any counter rose or a series appeared.
    rose: bool,
}

/// Differences each counter series of `group` between `before` and `now`, then sums them: a series that
/// fell restarted and counts its value now (the increase since the restart), a new series counts from
/// zero.
fn difference(before: &Snapshot, now: &Snapshot, group: &Option<String>) -> Delta {
    let mut delta = Delta::default();
    for (id, reading) in now.readings().filter(|(_, r)| &r.group == group) {
        let value = reading.sample.value;
        let increase = match before.get(id) {
            _ if !id.0.is_counter() => value,
            None => {
                delta.rose = true;
                value
            }
            Some(was) if was.sample.value > value => {
                delta.restarted.push((id.clone(), was.sample.value, reading.sample));
                value
            }
            Some(was) => {
                delta.rose |= value > was.sample.value;
                value - was.sample.value
            }
        };
        accumulate(&mut delta.counts, (id.0, reading.index), increase, reading.sample.line);
    }
    delta.vanished = before
        .readings()
        .filter(|(id, r)| !r.carried && &r.group == group && id.0.is_counter() && now.get(id).is_none())
        .map(|(id, _)| id.clone())
        .collect();
    delta
}

/// The first [`NAMED_SERIES`] of `items`, and how many more.
fn named(items: impl ExactSizeIterator<Item = String>) -> String {
    let n = items.len();
    let mut text = items.take(NAMED_SERIES).collect::<Vec<_>>().join(", ");
    if n > NAMED_SERIES {
        text.push_str(&format!(" and {} more", n - NAMED_SERIES));
    }
    text
}

/// The draft length the metrics state, where they state it, and the line of the step counter.
/// The draft length with where it was stated, and the line of the step counter.
type KAndLine = (Option<(usize, Location)>, Option<usize>);

/// The name of the evidence a split group of `origin` gives: the file, with `[label=value]` when split.
fn group_name(origin: &str, group_key: &Option<String>, options: &ReadOptions) -> String {
    match (group_key, &options.split) {
        (Some(value), Some(split)) => format!("{origin}[{split}={value}]"),
        _ => origin.to_string(),
    }
}

fn engine_k(engine: Engine, m: &Reduced, origin: &str) -> Result<KAndLine> {
    let at = |line| Location { file: origin.to_string(), line };
    let max_index = |family: Family| {
        m.iter().filter(|((f, _), _)| *f == family).filter_map(|((_, i), s)| i.map(|i| (i, s.line))).max_by_key(|x| x.0)
    };
    let line_of = |family: Family| m.iter().find(|((f, _), _)| *f == family).and_then(|(_, s)| s.line);
    Ok(match engine {
        Engine::Vllm => {
            // Without per-position counters, the draft-token counter states k: k tokens per draft.
            let from_tokens = || {
                let drafts = m.get(&(Family::VllmDrafts, None)).filter(|s| s.value > 0.0)?;
                let tokens = m.get(&(Family::VllmDraftTokens, None))?;
                let k = tokens.value / drafts.value;
                (k.fract() == 0.0 && (1.0..=crate::units::MAX_DRAFT_LEN as f64).contains(&k))
                    .then(|| (k as usize, at(tokens.line)))
            };
            let k = max_index(Family::VllmPerPosition).map(|(i, line)| (i + 1, at(line))).or_else(from_tokens);
            (k, line_of(Family::VllmDrafts))
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

/// Engines that count draft tokens but not steps: every step drafts k tokens, so steps = drafted / k.
fn steps_from_draft_tokens(drafted: f64, accepted: f64, k: usize) -> Window {
    let mut w = Window::new(drafted / k as f64, accepted);
    w.draft_tokens = Some(drafted);
    w
}

fn no_step_count(origin: &str, line: Option<usize>, what: &str) -> Error {
    Error::parse(origin, line, format!("{what}: the draft length k turns draft tokens into steps")).settled_by("k")
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
            w.draft_tokens = get(Family::VllmDraftTokens).map(|s| s.value);
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
            if let Some(al) = get(Family::SglangAcceptLength) {
                let top = k.or(options.k).map(|k| k as f64 + 1.0);
                if al.value < 1.0 || top.is_some_and(|top| al.value > top + 0.005) {
                    return Err(Error::parse(
                        origin,
                        al.line,
                        format!(
                            "sglang:spec_accept_length = {} contradicts the counters: an acceptance length lies in [1, {}]",
                            al.value,
                            top.map_or("k + 1".into(), |t| t.to_string())
                        ),
                    ));
                }
            }
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
                no_step_count(origin, drafted.line, "TensorRT-LLM exports draft tokens but no draft (step) counter")
            })?;
            (steps_from_draft_tokens(drafted.value, accepted.value, k), drafted.line)
        }
        Engine::Atom => {
            let steps = indexed(Family::AtomDecodeSteps);
            if steps.is_empty() {
                let drafted = need(Family::AtomDraftTokens, "")?;
                let accepted = need(Family::AtomAccepted, "")?;
                let k = k.or(options.k).ok_or_else(|| {
                    no_step_count(origin, drafted.line, "ATOM metrics without atom:mtp_decode_steps have no step count")
                })?;
                (steps_from_draft_tokens(drafted.value, accepted.value, k), drafted.line)
            } else {
                let top = steps.iter().map(|(i, _)| *i).max().unwrap_or(0);
                let mut counts = vec![0.0; top + 1];
                for (i, s) in &steps {
                    counts[*i] = s.value;
                }
                let line = steps[0].1.line;
                let mut w = Window::from_distribution(counts);
                w.draft_tokens = get(Family::AtomDraftTokens).map(|s| s.value);
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
                (w, line)
            }
        }
        Engine::Llamacpp => {
            return Err(Error::parse(origin, first_line, "llama.cpp publishes no metrics alsim reads yet"));
        }
    };
    validate::counts(&w, k.or(options.k), &metrics(engine, InputFormat::Prometheus), origin, line)?;
    Ok(w)
}

//! JSON evidence: ATOM `/debug/mtp_stats`, TensorRT-LLM iteration stats, AIPerf server-metrics exports
//! (docs/engines.md: the TensorRT-LLM, ATOM and AIPerf sections).
//!
//! - ATOM: `distribution` {a: steps} gives D = Σ n_a, A = Σ a·n_a; it must agree with
//!   `total_accepted_tokens`, and k = `total_draft_tokens`/D where that counter is given (the docs' example
//!   omits zero keys, so the largest key is only a lower bound), else the largest key; `enabled: false` is
//!   an error.
//! - TensorRT-LLM: a list (or several concatenated lists, one per poll of `/metrics`) of iteration
//!   elements, streamed one element at a time (so a long run costs no more memory than its bounded
//!   series); each `specDecodingStats` gives one window, D = `numRequestsWithDraftTokens`,
//!   A = `numAcceptedTokens`, k = `numDraftTokens`/D (the largest over iterations).
//! - AIPerf: `metrics` maps family names (without `_total`) to `series` of `{labels, stats}`; counters use
//!   `stats.total` (the increase over the benchmark window), gauges `avg`/`max`; the families are those of
//!   [`super::prometheus`].
//!
//! Counts must be whole numbers. ATOM and AIPerf documents are read whole up to
//! [`super::JSON_DOCUMENT_LIMIT`]. Syntax errors name the line; semantic errors name the JSON path of the
//! offending value.

use std::fmt;
use std::io::{BufRead, Read};

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde_json::Value;

use super::scrape::{Snapshot, family_of};
use super::snapshots::Reducer;
use super::validate::{self, metrics};
use super::{Evidence, InputFormat, Location, Note, NoteKind, ReadOptions, Series, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Reads a whole JSON document of at most [`super::JSON_DOCUMENT_LIMIT`] bytes.
fn document(reader: impl BufRead, origin: &str) -> Result<Value> {
    let mut bytes = Vec::new();
    reader.take(super::JSON_DOCUMENT_LIMIT + 1).read_to_end(&mut bytes).map_err(|e| Error::io(origin, e))?;
    if bytes.len() as u64 > super::JSON_DOCUMENT_LIMIT {
        return Err(Error::parse(
            origin,
            None,
            format!(
                "larger than the {} MiB limit for this JSON evidence: not a /debug/mtp_stats or AIPerf export",
                super::JSON_DOCUMENT_LIMIT >> 20
            ),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| syntax(origin, &e))
}

fn syntax(origin: &str, e: &serde_json::Error) -> Error {
    let what = if e.is_eof() { "JSON ends early (truncated file?)" } else { "invalid JSON" };
    Error::parse(origin, (e.line() > 0).then_some(e.line()), format!("{what}: {e}"))
}

fn at_path(origin: &str, path: &str, message: impl std::fmt::Display) -> Error {
    Error::parse(origin, None, format!("{path}: {message}"))
}

/// A count (a whole, non-negative number) at `path`.
fn count(value: Option<&Value>, origin: &str, path: &str) -> Result<f64> {
    let v = value.ok_or_else(|| at_path(origin, path, "missing"))?;
    let n = v.as_f64().ok_or_else(|| at_path(origin, path, format!("{v} is not a number")))?;
    validate::counter(n, path, origin, None)?;
    Ok(n)
}

/// Reads ATOM `/debug/mtp_stats`.
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line), a missing or inconsistent field (with its path).
pub(crate) fn read_atom(reader: impl BufRead, origin: &str) -> Result<Evidence> {
    let doc = document(reader, origin)?;
    if doc.get("enabled").and_then(Value::as_bool) == Some(false) {
        return Err(at_path(origin, "enabled", "MTP statistics are disabled on this server: no acceptance recorded"));
    }
    let dist = doc
        .get("distribution")
        .and_then(Value::as_object)
        .ok_or_else(|| at_path(origin, "distribution", "missing: this is not ATOM /debug/mtp_stats JSON"))?;
    let mut entries = Vec::new();
    for (key, value) in dist {
        let a: usize = key
            .parse()
            .ok()
            .filter(|a| *a <= crate::units::MAX_DRAFT_LEN)
            .ok_or_else(|| at_path(origin, &format!("distribution.{key}"), "key is not an accepted-draft count"))?;
        entries.push((a, count(Some(value), origin, &format!("distribution.{key}"))?));
    }
    let top = entries.iter().map(|e| e.0).max().unwrap_or(0);
    if top == 0 {
        return Err(at_path(origin, "distribution", "needs keys 0..k with k ≥ 1"));
    }
    let mut counts = vec![0.0; top + 1];
    for (a, n) in entries {
        counts[a] = n;
    }
    let mut window = Window::from_distribution(counts);
    if let Some(v) = doc.get("total_accepted_tokens") {
        let accepted = count(Some(v), origin, "total_accepted_tokens")?;
        if (accepted - window.accepted).abs() > 0.5 {
            return Err(at_path(
                origin,
                "total_accepted_tokens",
                format!("{accepted} disagrees with the distribution's {} accepted drafts", window.accepted),
            ));
        }
    }
    // Every request-step adds k draft tokens, so the counter states k where the distribution omits its
    // top (zero) keys; a counter that is no whole multiple of the steps is checked against k below.
    let drafted = doc.get("total_draft_tokens").map(|v| count(Some(v), origin, "total_draft_tokens")).transpose()?;
    let stated = drafted
        .filter(|_| window.steps > 0.0)
        .map(|d| d / window.steps)
        .filter(|per_step| per_step.fract() == 0.0 && *per_step > top as f64 && *per_step <= MAX_K as f64)
        .map(|per_step| per_step as usize);
    let k = stated.unwrap_or(top);
    if let Some(positions) = window.positions.as_mut() {
        positions.resize(k, 0.0);
    }
    if let Some(distribution) = window.distribution.as_mut() {
        distribution.resize(k + 1, 0.0);
    }
    window.draft_tokens = drafted;
    let names = metrics(Engine::Atom, InputFormat::AtomJson);
    validate::counts(&window, Some(k), &names, origin, None)?;
    let location = Location::in_file(origin, None);
    Ok(Evidence {
        location: location.clone(),
        engine: Engine::Atom,
        format: InputFormat::AtomJson,
        k: Some((k, location.clone())),
        total: window,
        batches: Vec::new(),
        notes: vec![Note::new(NoteKind::Counting, location, "ATOM counts are cumulative since server start")],
    })
}

const MAX_K: usize = crate::units::MAX_DRAFT_LEN;

/// Reads TensorRT-LLM iteration stats: one or several concatenated JSON lists (or objects).
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line) or an invalid `specDecodingStats` field (with its path).
pub(crate) fn read_trtllm(mut reader: impl BufRead, origin: &str) -> Result<Evidence> {
    let mut series = Series::new();
    let mut k_max = 0usize;
    let mut first_path = None;
    let names = metrics(Engine::Trtllm, InputFormat::TrtllmJson);
    let mut each = |doc_index: usize, i: usize, element: Value| -> Result<()> {
        let path = format!("document {}[{i}]", doc_index + 1);
        let Some(stats) = element.get("specDecodingStats") else {
            if element.is_object() {
                return Ok(());
            }
            return Err(at_path(origin, &path, "is not an iteration-stats object"));
        };
        let sub = |field: &str| format!("{path}.specDecodingStats.{field}");
        let n = count(stats.get("numRequestsWithDraftTokens"), origin, &sub("numRequestsWithDraftTokens"))?;
        let accepted = count(stats.get("numAcceptedTokens"), origin, &sub("numAcceptedTokens"))?;
        let drafted = count(stats.get("numDraftTokens"), origin, &sub("numDraftTokens"))?;
        if n == 0.0 {
            return Ok(());
        }
        let mut w = Window::new(n, accepted);
        // Each iteration states its own k as draft tokens per drafted request (fewer near a request's end).
        let k = (drafted / n).ceil().min(MAX_K as f64) as usize;
        w.draft_tokens = Some(drafted);
        validate::counts(&w, Some(k.max(1)), &names, &format!("{origin}: {path}"), None)?;
        k_max = k_max.max(k);
        first_path.get_or_insert(path);
        series.push(w);
        Ok(())
    };
    let mut lines_before = 0usize;
    for doc_index in 0.. {
        // Documents follow one another with only white space between them.
        loop {
            let buf = reader.fill_buf().map_err(|e| Error::io(origin, e))?;
            let blank = buf.iter().take_while(|b| b.is_ascii_whitespace()).count();
            lines_before += buf[..blank].iter().filter(|&&b| b == b'\n').count();
            let done = blank < buf.len() || buf.is_empty();
            reader.consume(blank);
            if done {
                break;
            }
        }
        if reader.fill_buf().map_err(|e| Error::io(origin, e))?.is_empty() {
            break;
        }
        let budget = Budget::default();
        let mut counting = CountLines { inner: &mut reader, lines: 0, budget: &budget };
        let mut failure = None;
        let mut de = serde_json::Deserializer::from_reader(&mut counting);
        let result = Elements { each: &mut |i, v| each(doc_index, i, v), failure: &mut failure, budget: &budget }
            .deserialize(&mut de);
        if let Some(error) = failure {
            return Err(error);
        }
        result.map_err(|e| {
            let line = (e.line() > 0).then(|| lines_before + e.line());
            let what = if e.is_eof() { "JSON ends early (truncated file?)" } else { "invalid JSON" };
            Error::parse(origin, line, format!("{what}: {e}"))
        })?;
        lines_before += counting.lines;
    }
    let inputs = series.inputs();
    let (batches, stride) = series.finish();
    let (Some(first), Some(total)) = (first_path, Window::sum(&batches)) else {
        return Err(Error::parse(origin, None, "no iteration with specDecodingStats and drafted requests found"));
    };
    let k = (k_max > 0).then(|| (k_max, Location::in_file(format!("{origin} ({first})"), None)));
    let location = Location::in_file(origin, None);
    let mut notes = vec![Note::new(
        NoteKind::AssumedK,
        location.clone(),
        "k is the largest numDraftTokens/numRequestsWithDraftTokens over iterations",
    )];
    if stride > 1 {
        let message = format!("{inputs} iterations kept as {} windows of {stride} each", batches.len());
        notes.push(Note::new(NoteKind::Counting, location.clone(), message));
    }
    Ok(Evidence { location, engine: Engine::Trtllm, format: InputFormat::TrtllmJson, k, total, batches, notes })
}

/// The largest single iteration element: real ones are a few hundred bytes.
const MAX_ELEMENT_BYTES: u64 = 1 << 20;

/// Bytes read, and where the element being parsed began: one element never costs more than
/// [`MAX_ELEMENT_BYTES`] of input (and so a bounded tree), however long the list.
#[derive(Default)]
struct Budget {
    read: std::cell::Cell<u64>,
    element_start: std::cell::Cell<u64>,
}

/// Counts the newlines read through it, so a later document's errors can name their line in the file, and
/// enforces the element [`Budget`].
struct CountLines<'a, R> {
    inner: R,
    lines: usize,
    budget: &'a Budget,
}

impl<R: Read> Read for CountLines<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        let read = self.budget.read.get() + n as u64;
        self.budget.read.set(read);
        if read - self.budget.element_start.get() > MAX_ELEMENT_BYTES {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "an iteration element longer than {} KiB: not TensorRT-LLM iteration stats",
                    MAX_ELEMENT_BYTES >> 10
                ),
            ));
        }
        Ok(n)
    }
}

/// Hands out the elements of a top-level list one at a time (a lone object counts as a list of one), so
/// a long iteration list is never held whole.
struct Elements<'a> {
    each: &'a mut dyn FnMut(usize, Value) -> Result<()>,
    /// The first error `each` returned (serde errors cannot carry it).
    failure: &'a mut Option<Error>,
    budget: &'a Budget,
}

impl<'de> DeserializeSeed<'de> for Elements<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Elements<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of iteration-stats objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut i = 0;
        self.budget.element_start.set(self.budget.read.get());
        while let Some(element) = seq.next_element::<Value>()? {
            self.budget.element_start.set(self.budget.read.get());
            if let Err(e) = (self.each)(i, element) {
                *self.failure = Some(e);
                return Err(serde::de::Error::custom("stopped"));
            }
            i += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<(), A::Error> {
        let element = serde::Deserialize::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
        (self.each)(0, element).map_err(|e| {
            *self.failure = Some(e);
            serde::de::Error::custom("stopped")
        })
    }
}

/// Reads an AIPerf `server_metrics_export.json`.
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line), a malformed series (with its path), or no family
/// alsim reads.
pub(crate) fn read_aiperf(reader: impl BufRead, origin: &str, options: &ReadOptions) -> Result<Vec<Evidence>> {
    let doc = document(reader, origin)?;
    let metrics = doc
        .get("metrics")
        .and_then(Value::as_object)
        .ok_or_else(|| at_path(origin, "metrics", "missing: this is not an AIPerf server_metrics_export.json"))?;
    let mut snapshot = Snapshot::new(origin);
    for (name, metric) in metrics {
        let Some(family) = family_of(name) else { continue };
        let series = metric
            .get("series")
            .and_then(Value::as_array)
            .ok_or_else(|| at_path(origin, &format!("metrics.{name}.series"), "missing or not a list"))?;
        for (i, s) in series.iter().enumerate() {
            let path = format!("metrics.{name}.series[{i}]");
            let mut labels: Vec<(String, String)> = match s.get("labels") {
                Some(Value::Object(map)) => map
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                    .collect(),
                None | Some(Value::Null) => Vec::new(),
                Some(_) => return Err(at_path(origin, &format!("{path}.labels"), "is not an object")),
            };
            let stats = s.get("stats").ok_or_else(|| at_path(origin, &format!("{path}.stats"), "missing"))?;
            let keys: &[&str] = if family.is_counter() { &["total", "sum", "max"] } else { &["avg", "max"] };
            let (key, value) = keys
                .iter()
                .find_map(|k| stats.get(*k).map(|v| (*k, v)))
                .ok_or_else(|| at_path(origin, &format!("{path}.stats"), format!("has none of {}", keys.join(", "))))?;
            let value = count(Some(value), origin, &format!("{path}.stats.{key}"))?;
            if !snapshot.add(family, &mut labels, value, options.split.as_deref(), None)? {
                return Err(at_path(origin, &path, "repeats a series already given"));
            }
        }
    }
    if snapshot.is_empty() {
        return Err(at_path(
            origin,
            "metrics",
            "holds no speculative-decoding family (vllm:spec_decode_*, sglang:spec_*, trtllm_spec_decode_*, atom:mtp_*)",
        ));
    }
    let mut reducer = Reducer::new(origin, options);
    reducer.push(snapshot)?;
    let mut out = reducer.finish()?;
    for e in &mut out {
        e.format = InputFormat::AiperfJson;
        let message = "AIPerf counter totals are the increase over the benchmark window";
        e.notes = vec![Note::new(NoteKind::Counting, e.location.clone(), message)];
    }
    Ok(out)
}

//! JSON evidence: ATOM `/debug/mtp_stats`, TensorRT-LLM iteration stats, AIPerf server-metrics exports
//! (engines.md §3.2, §4.2, §5).
//!
//! - ATOM: `distribution` {a: steps} gives D = Σ n_a, A = Σ a·n_a and k = the largest key; it must agree
//!   with `total_accepted_tokens` and `total_draft_tokens` (= k·D); `enabled: false` is an error.
//! - TensorRT-LLM: a list (or several concatenated lists, one per poll of `/metrics`) of iteration
//!   elements; each `specDecodingStats` gives one window, D = `numRequestsWithDraftTokens`,
//!   A = `numAcceptedTokens`, k = `numDraftTokens`/D (the largest over iterations).
//! - AIPerf: `metrics` maps family names (without `_total`) to `series` of `{labels, stats}`; counters use
//!   `stats.total` (the increase over the benchmark window), gauges `avg`/`max`; the families are those of
//!   [`super::prometheus`].
//!
//! Syntax errors name the line; semantic errors name the JSON path of the offending value.

use std::io::BufRead;

use serde_json::Value;

use super::prometheus::{self, Snapshot, family_of};
use super::{Evidence, InputFormat, Location, ReadOptions, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

fn syntax(origin: &str, e: &serde_json::Error) -> Error {
    let what = if e.is_eof() { "JSON ends early (truncated file?)" } else { "invalid JSON" };
    Error::parse(origin, (e.line() > 0).then_some(e.line()), format!("{what}: {e}"))
}

fn at_path(origin: &str, path: &str, message: impl std::fmt::Display) -> Error {
    Error::parse(origin, None, format!("{path}: {message}"))
}

/// A finite non-negative number at `path`.
fn count(value: Option<&Value>, origin: &str, path: &str) -> Result<f64> {
    let v = value.ok_or_else(|| at_path(origin, path, "missing"))?;
    let n = v.as_f64().ok_or_else(|| at_path(origin, path, format!("{v} is not a number")))?;
    if !n.is_finite() || n < 0.0 {
        return Err(at_path(origin, path, format!("{n} is not a finite, non-negative count")));
    }
    Ok(n)
}

/// Reads ATOM `/debug/mtp_stats`.
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line), a missing or inconsistent field (with its path).
pub fn read_atom(reader: impl BufRead, origin: &str) -> Result<Evidence> {
    let doc: Value = serde_json::from_reader(reader).map_err(|e| syntax(origin, &e))?;
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
    let k = entries.iter().map(|e| e.0).max().unwrap_or(0);
    if k == 0 {
        return Err(at_path(origin, "distribution", "needs keys 0..k with k ≥ 1"));
    }
    let mut counts = vec![0.0; k + 1];
    for (a, n) in entries {
        counts[a] = n;
    }
    let window = Window::from_distribution(counts);
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
    let mut notes = vec!["ATOM counts are cumulative since server start".to_string()];
    if let Some(v) = doc.get("total_draft_tokens") {
        let drafted = count(Some(v), origin, "total_draft_tokens")?;
        if (drafted - k as f64 * window.steps).abs() > 0.5 {
            notes.push(format!(
                "total_draft_tokens {drafted} is not k·steps = {}: the distribution may omit its top keys, so k = {k} is a lower bound",
                k as f64 * window.steps
            ));
        }
    }
    let location = Location { origin: origin.to_string(), line: None };
    window.check(Some(k), origin, None)?;
    let k_at = Location { origin: origin.to_string(), line: None };
    Ok(Evidence {
        location,
        engine: Engine::Atom,
        format: InputFormat::AtomJson,
        k: Some((k, k_at)),
        total: window,
        batches: Vec::new(),
        notes,
    })
}

/// Reads TensorRT-LLM iteration stats: one or several concatenated JSON lists (or objects).
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line) or an invalid `specDecodingStats` field (with its path).
pub fn read_trtllm(reader: impl BufRead, origin: &str) -> Result<Evidence> {
    let mut batches = Vec::new();
    let mut k_max = 0usize;
    let mut first_line = None;
    for (doc_index, doc) in serde_json::Deserializer::from_reader(reader).into_iter::<Value>().enumerate() {
        let doc = doc.map_err(|e| syntax(origin, &e))?;
        let elements = match doc {
            Value::Array(items) => items,
            other => vec![other],
        };
        for (i, element) in elements.iter().enumerate() {
            let path = format!("document {}[{i}]", doc_index + 1);
            let Some(stats) = element.get("specDecodingStats") else {
                if element.is_object() {
                    continue;
                }
                return Err(at_path(origin, &path, "is not an iteration-stats object"));
            };
            let sub = |field: &str| format!("{path}.specDecodingStats.{field}");
            let n = count(stats.get("numRequestsWithDraftTokens"), origin, &sub("numRequestsWithDraftTokens"))?;
            let accepted = count(stats.get("numAcceptedTokens"), origin, &sub("numAcceptedTokens"))?;
            let drafted = count(stats.get("numDraftTokens"), origin, &sub("numDraftTokens"))?;
            if n == 0.0 {
                continue;
            }
            if accepted > drafted {
                return Err(at_path(
                    origin,
                    &sub("numAcceptedTokens"),
                    format!("{accepted} exceeds numDraftTokens {drafted}"),
                ));
            }
            k_max = k_max.max((drafted / n).ceil() as usize);
            first_line.get_or_insert(path);
            batches.push(Window::new(n, accepted));
        }
    }
    let Some(first) = first_line else {
        return Err(Error::parse(origin, None, "no iteration with specDecodingStats and drafted requests found"));
    };
    let total = batches.iter().skip(1).fold(batches[0].clone(), |acc, w| acc.add(w));
    let k = (k_max > 0).then(|| (k_max, Location { origin: format!("{origin} ({first})"), line: None }));
    total.check(k.as_ref().map(|k| k.0), origin, None)?;
    Ok(Evidence {
        location: Location { origin: origin.to_string(), line: None },
        engine: Engine::Trtllm,
        format: InputFormat::TrtllmJson,
        k,
        total,
        batches,
        notes: vec!["k is the largest numDraftTokens/numRequestsWithDraftTokens over iterations".into()],
    })
}

/// Reads an AIPerf `server_metrics_export.json`.
///
/// # Errors
/// [`Error::Parse`] for invalid JSON (with its line), a malformed series (with its path), or no family
/// alsim reads.
pub fn read_aiperf(reader: impl BufRead, origin: &str, options: &ReadOptions) -> Result<Vec<Evidence>> {
    let doc: Value = serde_json::from_reader(reader).map_err(|e| syntax(origin, &e))?;
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
    let mut out = prometheus::evidence(vec![snapshot], origin, options)?;
    for e in &mut out {
        e.format = InputFormat::AiperfJson;
        e.notes = vec!["AIPerf counter totals are the increase over the benchmark window".into()];
    }
    Ok(out)
}

//! Server logs: each periodic acceptance line is one window of the time series (each engine's evidence in
//! docs/engines.md).
//!
//! - vLLM `SpecDecoding metrics: Mean acceptance length: X, …, Accepted: N tokens, Drafted: M tokens,
//!   Per-position acceptance rate: r1, …, rk, …`: k = number of rates, D = M/k, A = N, P_i = r_i·D (rates
//!   carry 3 decimals). The printed mean is checked against 1 + N/D, which catches a wrong k.
//! - SGLang `Decode batch, #running-req: R, …, accept len: X, …`: the line gives the interval's AL but no
//!   step count, so D = (decode log interval, default 40) × R, A = (X − 1)·D. Lines from TP ranks other
//!   than 0 repeat rank 0's numbers and are skipped. SGLang logs do not state k.
//! - ATOM `[MTP Stats Interval] …, Accepted/Total Draft tokens: a/t, …, Accepted tokens distribution:
//!   {0: 'x%', …}` (and the cumulative `[MTP Stats         ]` line): k = the largest count, D = t/k, A = a,
//!   the distribution gives P_i. Interval lines are used when present, else deltas of cumulative lines.
//! - llama.cpp per-request `draft acceptance = … (A accepted / G generated), mean acceptance length = …`
//!   lines and cumulative per-drafter `statistics <drafter>: #calls(b,g,a) = …` lines (`llamacpp`).
//!   Here the cumulative lines are preferred: they count the steps, which the request lines only imply.
//!
//! Other lines are ignored, so logs may hold anything else; a recognised line that cannot be read is an
//! error naming its line. An acceptance line the log ends inside (no newline after it: a log still being
//! written, or copied short) is left out with a note, since its last figure may be cut ("accept len: 2.8"
//! of 2.83); it is refused when it is the only one.

mod llamacpp;

use std::collections::BTreeSet;
use std::io::BufRead;

use memchr::memmem;

use super::validate::{self, metrics};
use super::{Evidence, InputFormat, Line, Location, Note, NoteKind, ReadOptions, Series, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

const VLLM: &str = "SpecDecoding metrics:";
const SGLANG: &str = "accept len:";
const SGLANG_BATCH: &str = "Decode batch";
const ATOM: &str = "[MTP Stats";

/// Whether `bytes` hold any line [`read`] takes: a log without one is no evidence, where an artifact holds
/// many logs (routers, frontends, benchmark clients) beside the servers'.
pub(crate) fn mentions_acceptance(bytes: &[u8]) -> bool {
    [VLLM, ATOM, llamacpp::REQUEST, llamacpp::STATISTICS]
        .iter()
        .any(|marker| memmem::find(bytes, marker.as_bytes()).is_some())
        || [SGLANG, SGLANG_BATCH].iter().all(|marker| memmem::find(bytes, marker.as_bytes()).is_some())
}

/// Reads a server log into evidence.
///
/// # Errors
/// [`Error::Parse`] naming `origin` and the line for a recognised line that cannot be read, lines of two
/// engines in one file, or a file without any acceptance line.
pub(crate) fn read(reader: impl BufRead, origin: &str, options: &ReadOptions) -> Result<Evidence> {
    let mut first: Option<(usize, Engine)> = None;
    let mut k: Option<(usize, Location)> = None;
    let mut skipped_ranks = 0usize;
    let mut too_long = 0usize;
    // Interval lines are the series when present; otherwise deltas of cumulative lines.
    let mut intervals = Series::new();
    let mut cumulative = Series::new();
    let mut previous: Option<Window> = None;
    // llama.cpp: per-position counts of the server runs before the last restart.
    let mut finished_positions: Option<Vec<f64>> = None;
    let mut notes = Vec::new();
    // llama.cpp: the drafter whose statistics lines are read, the others seen, and the first request line
    // that could not be read for want of k.
    let mut drafter: Option<String> = None;
    let mut other_drafters = BTreeSet::new();
    let mut request_without_k: Option<usize> = None;
    // SIMD substring search: most log lines match nothing, and this keeps them at memory speed.
    let (vllm_marker, sglang_marker, sglang_batch, atom_marker, request_marker, statistics_marker) = (
        memmem::Finder::new(VLLM),
        memmem::Finder::new(SGLANG),
        memmem::Finder::new(SGLANG_BATCH),
        memmem::Finder::new(ATOM),
        memmem::Finder::new(llamacpp::REQUEST),
        memmem::Finder::new(llamacpp::STATISTICS),
    );
    // An acceptance line the log ends inside (no newline after it): a log still being written or cut short.
    let mut cut: Option<usize> = None;
    let lines = super::for_each_line(reader, origin, |line_no, bytes, end| {
        let here = |message: String| Error::parse(origin, Some(line_no), message);
        if end == Line::TooLong {
            // Request dumps and tracebacks can be long; acceptance lines never are.
            too_long += 1;
            return Ok(());
        }
        if end == Line::Eof
            && [&vllm_marker, &sglang_marker, &sglang_batch, &atom_marker, &request_marker, &statistics_marker]
                .iter()
                .any(|marker| marker.find(bytes).is_some())
        {
            // Its last number may be cut short ("accept len: 2.8" of 2.83), so it is never read.
            cut = Some(line_no);
            return Ok(());
        }
        let record = if let Some(at) = vllm_marker.find(bytes) {
            match vllm(&String::from_utf8_lossy(&bytes[at + VLLM.len()..]), options.k).map_err(here)? {
                Some(record) => record,
                None => {
                    return Err(here("the line has no per-position rates, so its draft length k is unknown".into())
                        .settled_by("k"));
                }
            }
        } else if let Some(at) = sglang_marker.find(bytes) {
            let text = String::from_utf8_lossy(bytes);
            if sglang_batch.find(bytes).is_none() {
                return Ok(());
            }
            if other_rank(&String::from_utf8_lossy(&bytes[..at])) {
                skipped_ranks += 1;
                return Ok(());
            }
            sglang(&text, options).map_err(here)?
        } else if let Some(at) = atom_marker.find(bytes) {
            atom(&String::from_utf8_lossy(&bytes[at + ATOM.len()..])).map_err(here)?
        } else if let Some(at) = request_marker.find(bytes) {
            let request = llamacpp::request(&String::from_utf8_lossy(&bytes[at..])).map_err(here)?;
            let Some(k) = options.k else {
                request_without_k.get_or_insert(line_no);
                return Ok(());
            };
            (Engine::Llamacpp, request.window(k).map_err(here)?, None, false)
        } else if statistics_marker.find(bytes).is_some() {
            let Some((name, window)) =
                llamacpp::statistics(&String::from_utf8_lossy(bytes), options.k).map_err(here)?
            else {
                return Ok(());
            };
            // The cumulative counts of one drafter are one series; a second drafter's are another run.
            if *drafter.get_or_insert_with(|| name.clone()) != name {
                other_drafters.insert(name);
                return Ok(());
            }
            (Engine::Llamacpp, window, None, true)
        } else {
            return Ok(());
        };
        let (engine, window, line_k, is_cumulative) = record;
        if let Some((first_line, first_engine)) = first
            && first_engine != engine
        {
            return Err(here(format!(
                "an acceptance line of {} in a {} log (first {} line: {first_line}): give each server's log as its own file",
                engine.display_name(),
                first_engine.display_name(),
                first_engine.display_name(),
            )));
        }
        first.get_or_insert((line_no, engine));
        match (&k, line_k) {
            (Some((a, _)), Some(b)) if *a != b => {
                return Err(here(format!("this line has k = {b}, earlier lines k = {a}")));
            }
            (None, Some(b)) => k = Some((b, Location::in_file(origin, Some(line_no)))),
            _ => {}
        }
        let names = metrics(engine, InputFormat::Log);
        validate::counts(&window, line_k.or(options.k), &names, origin, Some(line_no))?;
        if !is_cumulative {
            intervals.push(window);
            return Ok(());
        }
        let mut delta = match &previous {
            Some(p) if window.steps < p.steps || window.accepted < p.accepted => {
                let message = format!(
                    "cumulative {} went down: the server restarted; counting from zero after it",
                    if engine == Engine::Llamacpp { "statistics" } else { "MTP stats" }
                );
                notes.push(Note::new(NoteKind::SeriesBreak, Location::new(origin, line_no), message));
                finished_positions = add_positions(finished_positions.take(), p.positions.as_ref());
                window.clone()
            }
            Some(p) => subtract(&window, p),
            None => window.clone(),
        };
        if engine == Engine::Llamacpp {
            // llama.cpp prints cumulative rates to 3 decimals, so their rounding grows with the count: the
            // difference of two lines is no per-position count. The last line of each server run is.
            delta.positions = None;
        }
        cumulative.push(delta);
        previous = Some(window);
        Ok(())
    })?;
    let cut_note = cut.map(|line| {
        let message = "the log ends inside this acceptance line (no newline after it), so it is left out";
        Note::new(NoteKind::CutLine, Location::new(origin, line), message)
    });
    let Some((first_line, engine)) = first else {
        if let Some(line) = cut {
            return Err(Error::parse(
                origin,
                Some(line),
                "the log's only acceptance line is cut off (no newline after it): its figures may be incomplete; copy the log again once the line is written",
            ));
        }
        if let Some(line) = request_without_k {
            return Err(Error::parse(
                origin,
                Some(line),
                "llama.cpp's per-request line does not state the draft length k, which its step count depends on (or log at -lv 4 for the statistics lines)",
            )
            .settled_by("k"));
        }
        return Err(Error::parse(
            origin,
            None,
            format!(
                "no acceptance lines found in {lines} lines: expected vLLM '{VLLM}', SGLang 'Decode batch … {SGLANG}', ATOM '{ATOM} …]' or llama.cpp '{}' / 'statistics … {}' lines",
                llamacpp::REQUEST,
                llamacpp::STATISTICS
            ),
        ));
    };
    let location = Location::in_file(origin, Some(first_line));
    let whole = Location::in_file(origin, None);
    notes.extend(cut_note);
    let mut note = |kind, message: String| notes.push(Note::new(kind, whole.clone(), message));
    if skipped_ranks > 0 {
        note(
            NoteKind::SkippedLines,
            format!("{skipped_ranks} lines from TP ranks other than 0 skipped (they repeat rank 0's numbers)"),
        );
    }
    if too_long > 0 {
        note(
            NoteKind::SkippedLines,
            format!(
                "{too_long} lines longer than {} bytes skipped (no acceptance line is that long)",
                super::MAX_LINE_BYTES
            ),
        );
    }
    if engine == Engine::Sglang {
        note(
            NoteKind::Counting,
            format!(
                "SGLang lines give no step count: each line weighs decode log interval ({}) × #running-req steps",
                options.decode_log_interval
            ),
        );
    }
    if !other_drafters.is_empty() {
        note(
            NoteKind::SkippedLines,
            format!(
                "statistics of {} read; those of {} left out (each drafter is its own run)",
                drafter.as_deref().unwrap_or("-"),
                other_drafters.into_iter().collect::<Vec<_>>().join(", ")
            ),
        );
    }
    let use_intervals = intervals.inputs() > 0 && (engine != Engine::Llamacpp || cumulative.inputs() == 0);
    if engine == Engine::Llamacpp {
        let how = if use_intervals {
            "llama.cpp per-request lines: each request's steps recovered from its printed mean and k (the statistics lines of -lv 4 count them)"
        } else {
            "llama.cpp statistics lines: deltas of the cumulative counts"
        };
        note(NoteKind::Counting, how.to_string());
    }
    let series = if use_intervals { intervals } else { cumulative };
    let inputs = series.inputs();
    let (batches, stride) = series.finish();
    if stride > 1 {
        note(NoteKind::Counting, format!("{inputs} log intervals kept as {} windows of {stride} each", batches.len()));
    }

    let mut total = Window::sum(&batches).unwrap_or_else(|| Window::new(0.0, 0.0));
    if engine == Engine::Llamacpp && !use_intervals {
        total.positions = previous.and_then(|last| add_positions(finished_positions, last.positions.as_ref()));
    }
    Ok(Evidence { location, engine, format: InputFormat::Log, k, total, batches, notes })
}

/// The sum of per-position counts of two server runs; the first run counts nothing.
fn add_positions(done: Option<Vec<f64>>, run: Option<&Vec<f64>>) -> Option<Vec<f64>> {
    let run = run?;
    Some(match done {
        Some(done) => done.iter().zip(run).map(|(a, b)| a + b).collect(),
        None => run.clone(),
    })
}

fn subtract(a: &Window, b: &Window) -> Window {
    let minus = |x: &Option<Vec<f64>>, y: &Option<Vec<f64>>| match (x, y) {
        (Some(x), Some(y)) if x.len() == y.len() => Some(x.iter().zip(y).map(|(p, q)| (p - q).max(0.0)).collect()),
        _ => None,
    };
    Window {
        steps: a.steps - b.steps,
        accepted: a.accepted - b.accepted,
        positions: minus(&a.positions, &b.positions),
        distribution: minus(&a.distribution, &b.distribution),
        draft_tokens: a.draft_tokens.zip(b.draft_tokens).map(|(x, y)| x - y),
    }
}

type Parsed = (Engine, Window, Option<usize>, bool);

/// The number that follows `label` (up to a separator).
fn number_after(text: &str, label: &str) -> std::result::Result<f64, String> {
    let at =
        text.find(label).ok_or_else(|| format!("'{}' is missing (truncated line?)", label.trim_end_matches(':')))?;
    let rest = text[at + label.len()..].trim_start();
    let token: &str = rest.split([',', ' ', '%', '/', '}', ')', '\n', '\r']).next().unwrap_or("");
    number(token, label)
}

fn number(token: &str, what: &str) -> std::result::Result<f64, String> {
    let value: f64 =
        token.trim().parse().map_err(|_| format!("'{}' after '{}' is not a number", token.trim(), what.trim()))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("'{}' is {value}: it must be a finite, non-negative number", what.trim()));
    }
    Ok(value)
}

/// A count: a number that is also whole.
fn whole(value: f64, what: &str) -> std::result::Result<f64, String> {
    if value.fract() != 0.0 {
        return Err(format!("{what} = {value} is not a whole number: it counts tokens or requests"));
    }
    Ok(value)
}

/// A vLLM line: its draft length is its per-position rates' count where it lists them, else `k_hint`;
/// `None` for a well-formed line whose draft length neither gives.
fn vllm(text: &str, k_hint: Option<usize>) -> std::result::Result<Option<Parsed>, String> {
    let mean = number_after(text, "Mean acceptance length:")?;
    let accepted = whole(number_after(text, "Accepted:")?, "Accepted")?;
    let drafted = whole(number_after(text, "Drafted:")?, "Drafted")?;
    let mut rates = Vec::new();
    if let Some(at) = text.find("Per-position acceptance rate:") {
        for part in text[at + "Per-position acceptance rate:".len()..].split(',') {
            match part.trim().parse::<f64>() {
                Ok(r) if r.is_finite() && (0.0..=1.0).contains(&r) => rates.push(r),
                Ok(r) => return Err(format!("per-position acceptance rate {r} is not a probability")),
                Err(_) => break,
            }
        }
    }
    let Some(k) = (if rates.is_empty() { k_hint } else { Some(rates.len()) }) else {
        return Ok(None);
    };
    if !(1.0..=k as f64 + 1.0).contains(&mean) {
        return Err(format!("mean acceptance length {mean} is outside [1, k + 1] = [1, {}]", k + 1));
    }
    let steps = drafted / k as f64;
    let mut window = Window::new(steps, accepted);
    window.draft_tokens = Some(drafted);
    if !rates.is_empty() {
        window.positions = Some(rates.iter().map(|r| r * steps).collect());
    }
    if steps > 0.0 && (1.0 + accepted / steps - mean).abs() > 0.011 {
        return Err(format!(
            "mean acceptance length {mean} disagrees with Accepted/Drafted at k = {k} ({:.3}): the drafts are not k tokens each, or k is wrong",
            1.0 + accepted / steps
        ));
    }
    Ok(Some((Engine::Vllm, window, (!rates.is_empty()).then_some(k), false)))
}

/// Whether a SGLang line prefix `[time DPx TPy EPz]` names a TP rank other than 0.
fn other_rank(prefix: &str) -> bool {
    prefix.split([' ', '[', ']']).any(|word| {
        word.strip_prefix("TP").is_some_and(|n| {
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !n.trim_start_matches('0').is_empty()
        })
    })
}

fn sglang(text: &str, options: &ReadOptions) -> std::result::Result<Parsed, String> {
    let running = whole(number_after(text, "#running-req:")?, "#running-req")?;
    let al = number_after(text, SGLANG)?;
    if al < 1.0 || options.k.is_some_and(|k| al > k as f64 + 1.0 + 0.005) {
        return Err(format!("accept len {al} is outside [1, k+1]"));
    }
    let steps = options.decode_log_interval * running;
    Ok((Engine::Sglang, Window::new(steps, (al - 1.0) * steps), None, false))
}

fn atom(text: &str) -> std::result::Result<Parsed, String> {
    let close = text.find(']').ok_or("'[MTP Stats' without a closing ']' (truncated line?)")?;
    let tag = text[..close].trim();
    let cumulative = match tag {
        "Interval" => false,
        "" => true,
        other => return Err(format!("unknown MTP stats kind '{other}'")),
    };
    let body = &text[close..];
    let label = "Accepted/Total Draft tokens:";
    let at = body.find(label).ok_or("'Accepted/Total Draft tokens' is missing (truncated line?)")?;
    let pair = body[at + label.len()..].trim_start();
    let pair = pair.split([',', ' ']).next().unwrap_or("");
    let (a, t) = pair.split_once('/').ok_or_else(|| format!("'{pair}' is not accepted/total"))?;
    let accepted = whole(number(a, "accepted draft tokens")?, "accepted draft tokens")?;
    let drafted = whole(number(t, "total draft tokens")?, "total draft tokens")?;
    let label = "Accepted tokens distribution:";
    let at = body.find(label).ok_or("'Accepted tokens distribution' is missing (truncated line?)")?;
    let dist = body[at + label.len()..].trim_start();
    let inner = dist
        .strip_prefix('{')
        .and_then(|d| d.split_once('}'))
        .map(|(d, _)| d)
        .ok_or("distribution is not a closed {…} (truncated line?)")?;
    let mut percents = Vec::new();
    for (expect, entry) in inner.split(',').enumerate() {
        let (key, value) =
            entry.split_once(':').ok_or_else(|| format!("distribution entry '{}' is not key: value", entry.trim()))?;
        if key.trim().parse::<usize>().ok() != Some(expect) {
            return Err(format!("distribution key '{}' where {expect} was expected", key.trim()));
        }
        let value = value.trim().trim_matches(['\'', '"']).trim_end_matches('%');
        percents.push(number(value, "distribution percentage")?);
    }
    let k = percents.len().saturating_sub(1);
    if k == 0 {
        return Err("distribution has no draft positions".into());
    }
    let steps = drafted / k as f64;
    let counts: Vec<f64> = percents.iter().map(|p| p / 100.0 * steps).collect();
    let mut window = Window::from_distribution(counts);
    window.steps = steps;
    window.accepted = accepted;
    window.draft_tokens = Some(drafted);
    // The printed mean (2 decimals) must be the counts' AL, inside [1, k + 1].
    if let Ok(mean) = number_after(body, "Average toks/fwd:") {
        if !(1.0..=k as f64 + 1.0).contains(&mean) {
            return Err(format!("Average toks/fwd {mean} is outside [1, k + 1] = [1, {}]", k + 1));
        }
        if steps > 0.0 && (1.0 + accepted / steps - mean).abs() > 0.006 {
            return Err(format!(
                "Average toks/fwd {mean} disagrees with Accepted/Total Draft tokens at k = {k} ({:.3})",
                1.0 + accepted / steps
            ));
        }
    }
    Ok((Engine::Atom, window, Some(k), cumulative))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_str(text: &str) -> Result<Evidence> {
        read(text.as_bytes(), "t.log", &ReadOptions::default())
    }

    #[test]
    fn the_three_engines() {
        let v = read_str("INFO SpecDecoding metrics: Mean acceptance length: 2.61, Accepted throughput: 10.2 tokens/s, Drafted throughput: 19.0 tokens/s, Accepted: 1610 tokens, Drafted: 3000 tokens, Per-position acceptance rate: 0.906, 0.497, 0.203, Avg Draft acceptance rate: 53.5%\n").unwrap();
        assert_eq!(v.total.steps, 1000.0);
        assert_eq!(v.k.as_ref().unwrap().0, 3);
        let a = read_str("[MTP Stats Interval] Average toks/fwd: 2.83, Accepted/Total Draft tokens: 1830/3000, Acceptance rate: 61.00%, Accepted tokens distribution: {0: '0.00%', 1: '17.00%', 2: '83.00%', 3: '0.00%'}\n").unwrap();
        assert_eq!(a.total.positions, Some(vec![1000.0, 830.0, 0.0]));
        let s = read_str("[2026 DP0 TP0 EP0] Decode batch, #running-req: 64, #token: 1, token usage: 0.41, accept len: 2.83, accept rate: 0.61, cuda graph: True\n[2026 DP0 TP1 EP0] Decode batch, #running-req: 64, accept len: 2.83\n").unwrap();
        assert_eq!(s.total.steps, 2560.0);
        assert_eq!(
            (s.notes[0].class, s.notes[0].message.contains("1 lines from TP ranks")),
            (NoteKind::SkippedLines, true)
        );
    }

    #[test]
    fn a_cut_last_line_is_left_out_not_read() {
        let whole = "[2026 DP0 TP0] Decode batch, #running-req: 64, accept len: 2.83, cuda graph: True\n";
        let e = read_str(&format!("{whole}[2026 DP0 TP0] Decode batch, #running-req: 64, accept len: 1.0")).unwrap();
        assert_eq!(e.total.steps, 2560.0);
        assert!((e.total.accepted / e.total.steps - 1.83).abs() < 1e-12);
        let cut = e.notes.iter().find(|n| n.class == NoteKind::CutLine).unwrap();
        assert!(cut.to_string().starts_with("t.log:2: the log ends inside"), "{cut}");
        let err = read_str(whole.trim_end()).unwrap_err().to_string();
        assert!(err.starts_with("t.log:1:") && err.contains("cut off"), "{err}");
        // Other text may end without a newline.
        assert!(
            read_str(&format!("{whole}INFO shutting down")).unwrap().notes.iter().all(|n| n.class != NoteKind::CutLine)
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        let err = read_str("hello\nSpecDecoding metrics: Mean acceptance length: 2.61, Accepted: 16\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("t.log:2:") && err.contains("Drafted"), "{err}");
        let err = read_str("nothing here\n").unwrap_err().to_string();
        assert!(err.contains("no acceptance lines"), "{err}");
    }
}

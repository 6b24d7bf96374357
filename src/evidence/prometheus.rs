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

use std::io::BufRead;

use super::scrape::FAMILIES;
pub use super::scrape::{Family, MAX_LABEL_BYTES_PER_SCRAPE, MAX_SERIES_PER_SCRAPE, Snapshot, family_of};
pub use super::snapshots::Reducer;
use super::{Evidence, Line, Location, Note, NoteKind, ReadOptions};
use crate::error::{Error, Result};

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
    // The first series seen twice, which began the second scrape: its line and name.
    let mut repeated: Option<(usize, String)> = None;
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
                "expected a metric sample, found '{}': not Prometheus text exposition",
                preview(line)
            ))
            .settled_by("format_in"));
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
            repeated.get_or_insert_with(|| (line_no, name.to_string()));
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
            let message = format!(
                "the file ends inside this line (no newline after it), so the last scrape{} is cut short and left out",
                from.map_or(String::new(), |l| format!(" (from line {l})"))
            );
            reducer.note(Note::new(NoteKind::CutLine, Location::new(origin, line), message));
            return Ok(());
        }
        Some((line, true)) => reducer.note(Note::new(
            NoteKind::CutLine,
            Location::new(origin, line),
            "the file ends inside this line (no newline after it), which began another scrape: left out",
        )),
        None => {}
    }
    let empty = current.is_empty();
    if !empty {
        reducer.push(current)?;
    }
    // A series listed twice on one page (or scrapes taken before anything happened) reads as scrapes with
    // nothing between them: say where, rather than only that no step was counted.
    if let Some((line, name)) = repeated.filter(|_| reducer.counted_nothing()) {
        return Err(Error::parse(
            origin,
            Some(line),
            format!(
                "{name} appears again here, which begins another scrape, but no counter moved since the one before, so no verification step was counted (D = 0): a page lists each series once; concatenate scrapes taken at different times"
            ),
        ));
    }
    if empty && pushed == 0 {
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
        assert!(matches!(no_k.unwrap_err(), Error::SettledBy { parameter: "k", .. }));
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
        assert!(e[0].notes.iter().any(|n| n.class == NoteKind::SeriesBreak && n.message.contains("went down")));
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
        let note = e[0].notes.iter().find(|n| n.message.contains("went down")).unwrap().to_string();
        assert!(note.starts_with("t.prom:7: 2 counter series") && note.contains("{rank=\"1\"} 5000 → 100"), "{note}");
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
            e[0].notes.iter().any(|n| n.message.starts_with("2 counter series of the scrape before are missing")),
            "{:?}",
            e[0].notes
        );
    }

    #[test]
    fn a_page_that_repeats_a_series_says_where() {
        let page = "vllm:spec_decode_num_drafts_total 1000\nvllm:spec_decode_num_accepted_tokens_total 1800\n";
        let err = read(&format!("{page}{page}")).unwrap_err().to_string();
        assert!(err.starts_with("t.prom:3: vllm:spec_decode_num_drafts_total appears again here"), "{err}");
        assert!(!err.contains("the run drafted nothing"), "{err}");
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
        assert!(
            e[0].notes.iter().any(|n| n.location.line == Some(6) && n.message.contains("(from line 5)")),
            "{:?}",
            e[0].notes
        );
        // A cut line that repeats a series begins the next scrape, so the one before it is whole.
        let e = read(&(scrape(100, 150) + &scrape(1100, 1980) + "vllm:spec_decode_num_drafts_total 15")).unwrap();
        assert_eq!((e[0].batches.len(), e[0].total.steps), (1, 1000.0));
        assert!(e[0].notes.iter().any(|n| n.message.contains("began another scrape")), "{:?}", e[0].notes);
        // OpenMetrics ends with `# EOF`, which needs no newline; nor does a blank last line.
        for end in ["# EOF", "  "] {
            assert_eq!(read(&(page.clone() + end)).unwrap()[0].total.steps, 1000.0);
        }
        assert!(read(&(page.clone() + "# HELP vllm:spec_decode_num")).is_err());
    }
}

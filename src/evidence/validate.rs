//! Evidence is checked before it is believed (model.md §5): impossible counts, counters that cannot be
//! counts, a k that the draft-token counter contradicts, and read-backs of pinned runs are refused with
//! the file, the metric and the reason; too small a sample is flagged so the verdict stays undecided.
//!
//! Every reader calls [`counts`] on each window it builds, and both consumers of evidence — the verdict
//! ([`super::evaluate`], `alsim eval`) and the measured acceptance of `alsim predict --evidence`
//! ([`super::measured_al`]) — call [`check`] with the draft length they will use, so the two paths refuse
//! the same files for the same reasons.
//!
//! Pinned read-backs: vLLM, ATOM and TensorRT-LLM force the minimum-variance schedule, in which every step
//! accepts f or f + 1 drafts (p_i = 1 for i ≤ f, p_{f+1} = frac, 0 after), so p_1 = 1 exactly (or, below
//! AL 2, p_2 = 0 exactly) and no step accepts all k drafts. Real drafters never do that over a sample of
//! any size. It is visible wherever positions or the per-count distribution are counted (vLLM per-position
//! counters and log rates, ATOM's distribution). SGLang `match-expected` (every request of a batch step
//! accepting the same count) and TensorRT-LLM's forced counts leave no mark in the counters, gauges or log
//! lines alsim reads: their batch totals look like real ones, so such read-backs cannot be told apart here.

use super::{Evidence, InputFormat, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Fewest verification steps for the normal approximation behind every interval: fewer is inconclusive.
pub const MIN_STEPS: f64 = 30.0;

/// Counters are integers held in an f64: above 2^53 they are no longer exact counts.
const MAX_EXACT_COUNT: f64 = 9_007_199_254_740_992.0;

/// The names of what an engine's evidence counts, as the user sees them in the file.
#[derive(Debug, Clone, Copy)]
pub struct Metrics {
    /// Verification steps D.
    pub steps: &'static str,
    /// Accepted drafts A.
    pub accepted: &'static str,
    /// Per-position or per-count acceptance.
    pub positions: &'static str,
    /// Draft tokens proposed.
    pub draft_tokens: &'static str,
}

/// The metric names of `engine`'s evidence in `format`.
pub fn metrics(engine: Engine, format: InputFormat) -> Metrics {
    let m = |steps, accepted, positions, draft_tokens| Metrics { steps, accepted, positions, draft_tokens };
    match (engine, format) {
        (Engine::Vllm, InputFormat::Log) => m("Drafted (÷ k)", "Accepted", "Per-position acceptance rate", "Drafted"),
        (Engine::Vllm, _) => m(
            "vllm:spec_decode_num_drafts",
            "vllm:spec_decode_num_accepted_tokens",
            "vllm:spec_decode_num_accepted_tokens_per_pos",
            "vllm:spec_decode_num_draft_tokens",
        ),
        (Engine::Sglang, InputFormat::Log) => m("#running-req × decode log interval", "accept len", "-", "-"),
        (Engine::Sglang, _) => {
            m("sglang:spec_verify_calls", "sglang:generation_tokens − sglang:spec_verify_calls", "-", "-")
        }
        (Engine::Trtllm, InputFormat::TrtllmJson) => {
            m("numRequestsWithDraftTokens", "numAcceptedTokens", "-", "numDraftTokens")
        }
        (Engine::Trtllm, _) => m(
            "trtllm_spec_decode_num_draft_tokens (÷ k)",
            "trtllm_spec_decode_num_accepted_tokens",
            "-",
            "trtllm_spec_decode_num_draft_tokens",
        ),
        (Engine::Atom, InputFormat::Log) => m(
            "Total Draft tokens (÷ k)",
            "Accepted/Total Draft tokens",
            "Accepted tokens distribution",
            "Total Draft tokens",
        ),
        (Engine::Atom, InputFormat::AtomJson) => {
            m("distribution", "total_accepted_tokens", "distribution", "total_draft_tokens")
        }
        (Engine::Atom, _) => {
            m("atom:mtp_decode_steps", "atom:mtp_accepted_tokens", "atom:mtp_decode_steps", "atom:mtp_draft_tokens")
        }
        // The statistics line's names; a request line's counts are its "accepted", "generated" and steps.
        (Engine::Llamacpp, _) => m(
            "verification steps (#calls a)",
            "accepted (#acc tokens)",
            "acceptance rate per position",
            "generated (#gen tokens)",
        ),
    }
}

/// Checks that `value` of `metric` can be a counter reading: finite, non-negative, a whole number and
/// exactly representable.
///
/// # Errors
/// [`Error::Parse`] at `origin`/`line` naming the metric.
pub fn counter(value: f64, metric: &str, origin: &str, line: Option<usize>) -> Result<()> {
    let problem = if !value.is_finite() {
        "is not a finite number"
    } else if value < 0.0 {
        "is negative: counters never go below zero"
    } else if value.fract() != 0.0 {
        "is not a whole number: counters count events"
    } else if value > MAX_EXACT_COUNT {
        "is beyond 2^53, where an f64 no longer holds an exact count"
    } else {
        return Ok(());
    };
    // Scientific notation where plain digits would run to hundreds of characters (1e-300, 1e300).
    let shown =
        if value != 0.0 && !(1e-3..1e15).contains(&value.abs()) { format!("{value:e}") } else { value.to_string() };
    Err(Error::parse(origin, line, format!("{metric} = {shown} {problem}")))
}

/// Checks that one window's counts are possible for a chain drafter with `k` drafts per step (where k is
/// known): finite and non-negative, A ≤ k·D, P_1 ≤ D and P_i non-increasing, Σ P_i = A, and the
/// draft-token counter consistent with D·k. Log figures are rounded (rates to 3 decimals, percentages to
/// 2), so comparisons leave that much slack.
///
/// # Errors
/// [`Error::Parse`] at `origin`/`line` naming the metric and the impossible count.
pub fn counts(w: &Window, k: Option<usize>, names: &Metrics, origin: &str, line: Option<usize>) -> Result<()> {
    let bad = |message: String| Err(Error::parse(origin, line, message));
    let all = [(w.steps, names.steps), (w.accepted, names.accepted)]
        .into_iter()
        .chain(w.positions.iter().flatten().map(|p| (*p, names.positions)))
        .chain(w.distribution.iter().flatten().map(|p| (*p, names.positions)))
        .chain(w.draft_tokens.map(|d| (d, names.draft_tokens)));
    for (v, metric) in all {
        if !v.is_finite() || v < 0.0 {
            return bad(format!("{metric}: count {v} is not a finite, non-negative number"));
        }
    }
    let slack = 0.5 + 2e-3 * w.steps;
    if w.steps == 0.0 && w.accepted > slack {
        return bad(format!("{} = {} with no {}: accepted drafts need steps", names.accepted, w.accepted, names.steps));
    }
    // A drafter proposes k tokens per step, never more; fewer only near a request's end, so one window
    // may fall short, while a whole run at k − 1 or less per step was not run at k ([`check`]).
    if let (Some(k), Some(drafted)) = (k, w.draft_tokens)
        && w.steps > 0.0
        && drafted / w.steps > k as f64 + slack / w.steps
    {
        return Err(wrong_k(w, drafted, k, names, origin, line));
    }
    if let Some(k) = k
        && w.accepted > k as f64 * w.steps + slack
    {
        return bad(format!(
            "{} = {} in {} = {} steps is more than k = {k} accepted drafts per step (AL {:.3} > k + 1): impossible counts",
            names.accepted,
            w.accepted,
            names.steps,
            w.steps,
            1.0 + w.accepted / w.steps.max(f64::MIN_POSITIVE)
        ));
    }
    if let Some(positions) = &w.positions {
        let mut previous = w.steps;
        for (i, &p) in positions.iter().enumerate() {
            if p > previous + slack {
                return bad(format!(
                    "{}: position {} accepted {p} drafts, more than {previous} at the position before (or steps): a chain never accepts a later draft more often",
                    names.positions,
                    i + 1,
                ));
            }
            previous = p;
        }
        let sum: f64 = positions.iter().sum();
        if (sum - w.accepted).abs() > slack * positions.len().max(1) as f64 {
            return bad(format!("{} sum to {sum} but {} is {}", names.positions, names.accepted, w.accepted));
        }
    }
    Ok(())
}

fn wrong_k(w: &Window, drafted: f64, k: usize, names: &Metrics, origin: &str, line: Option<usize>) -> Error {
    let per_step = drafted / w.steps;
    Error::parse(
        origin,
        line,
        format!(
            "{} = {drafted} over {} = {} steps is {per_step:.2} draft tokens per step: this run drafted k = {} tokens, not k = {k}",
            names.draft_tokens,
            names.steps,
            w.steps,
            per_step.round().max(1.0)
        ),
    )
}

/// What [`check`] found that does not stop the evidence from being read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Findings {
    /// Why the sample is too small for a verdict, when it is.
    pub too_small: Option<String>,
}

/// Checks `ev` as evidence of real acceptance at draft length `k`: its counts (total and every window)
/// must be possible, and it must not be the read-back of a pinned run. A sample too small for the normal
/// approximation is returned as a finding: the verdict must then stay undecided.
///
/// # Errors
/// [`Error::Parse`] naming the file, the metric and the reason.
///
/// ```
/// use alsim::engine::Engine;
/// use alsim::evidence::{validate, Evidence, InputFormat, Location, Window};
/// // ATOM's read-back of a forced AL 2.83 at k = 3: every step accepts 1 or 2 drafts.
/// let ev = Evidence {
///     location: Location { origin: "mtp_stats.json".into(), line: None },
///     engine: Engine::Atom,
///     format: InputFormat::AtomJson,
///     k: None,
///     total: Window::from_distribution(vec![0.0, 85_000.0, 415_000.0, 0.0]),
///     batches: Vec::new(),
///     notes: Vec::new(),
/// };
/// let err = validate::check(&ev, 3).unwrap_err().to_string();
/// assert!(err.contains("pinned run"), "{err}");
/// ```
pub fn check(ev: &Evidence, k: usize) -> Result<Findings> {
    let names = metrics(ev.engine, ev.format);
    let (origin, line) = (&ev.location.origin, ev.location.line);
    counts(&ev.total, Some(k), &names, origin, line)?;
    if let Some(drafted) = ev.total.draft_tokens
        && ev.total.steps > 0.0
        && drafted / ev.total.steps <= k as f64 - 1.0
    {
        return Err(wrong_k(&ev.total, drafted, k, &names, origin, line));
    }
    for w in &ev.batches {
        counts(w, Some(k), &names, origin, line)?;
    }
    if let Some(reason) = pinned(&ev.total, k) {
        return Err(Error::parse(
            origin,
            line,
            format!(
                "{}: {reason} — the fingerprint of a pinned run (the minimum-variance schedule vLLM, ATOM and TensorRT-LLM force for a synthetic AL), not real acceptance; take evidence from a run with real verification (no synthetic-acceptance flag)",
                names.positions
            ),
        ));
    }
    let d = ev.total.steps;
    let too_small = if d < MIN_STEPS {
        Some(format!(
            "only {d} verification steps: fewer than {MIN_STEPS} is too few for the normal approximation behind the interval"
        ))
    } else if ev.total.accepted <= 0.0 || ev.total.accepted >= k as f64 * d {
        Some(format!(
            "every one of the {d} steps accepted {} drafts: the sample variance is 0 at the boundary of [1, k + 1], so the interval is degenerate",
            if ev.total.accepted <= 0.0 { "no".to_string() } else { format!("all {k}") }
        ))
    } else {
        None
    };
    Ok(Findings { too_small })
}

/// The minimum-variance fingerprint in a window with per-position counts, described; `None` when the
/// counts could come from real verification (or say nothing either way).
fn pinned(w: &Window, k: usize) -> Option<String> {
    let positions = w.positions.as_ref().filter(|p| p.len() == k)?;
    let d = w.steps;
    if k < 2 || d < MIN_STEPS || w.accepted <= 0.0 {
        return None;
    }
    // Log rates carry 3 decimals: 1.000 and 0.000 read back as exactly D and 0; counters are exact.
    let tol = 1e-9 * d;
    let full = |p: f64| (p - d).abs() <= tol;
    let none = |p: f64| p.abs() <= tol;
    let inside = positions.iter().filter(|&&p| !full(p) && !none(p)).count();
    if !none(positions[k - 1]) || inside > 1 || !(full(positions[0]) || none(positions[1])) {
        return None;
    }
    let p: Vec<String> = positions.iter().map(|x| format!("{:.3}", x / d)).collect();
    Some(format!(
        "over {d} steps p = [{}]: every step accepted the same {} draft(s) or one more, and none accepted all k = {k}",
        p.join(", "),
        positions.iter().filter(|&&x| full(x)).count()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Location;

    fn ev(total: Window) -> Evidence {
        Evidence {
            location: Location { origin: "e.prom".into(), line: Some(4) },
            engine: Engine::Vllm,
            format: InputFormat::Prometheus,
            k: None,
            total,
            batches: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn with_positions(d: f64, positions: Vec<f64>) -> Window {
        let mut w = Window::new(d, positions.iter().sum());
        w.positions = Some(positions);
        w
    }

    #[test]
    fn impossible_counts_name_the_metric() {
        let err = check(&ev(Window::new(10.0, 500.0)), 3).unwrap_err().to_string();
        assert!(err.starts_with("e.prom:4: vllm:spec_decode_num_accepted_tokens = 500"), "{err}");
        let mut k7 = Window::new(1000.0, 3500.0);
        k7.draft_tokens = Some(7000.0);
        let err = check(&ev(k7.clone()), 3).unwrap_err().to_string();
        assert!(err.contains("vllm:spec_decode_num_draft_tokens") && err.contains("k = 7 tokens, not k = 3"), "{err}");
        let err = check(&ev(k7), 8).unwrap_err().to_string();
        assert!(err.contains("k = 7 tokens, not k = 8"), "{err}");
        // One window may draft fewer than k per step (requests ending), never more.
        let mut short = Window::new(10.0, 5.0);
        short.draft_tokens = Some(25.0);
        assert!(counts(&short, Some(3), &metrics(Engine::Vllm, InputFormat::Prometheus), "w", None).is_ok());
        let err = check(&ev(with_positions(100.0, vec![50.0, 60.0, 10.0])), 3).unwrap_err().to_string();
        assert!(err.contains("position 2 accepted 60"), "{err}");
        assert!(counter(2.5, "m", "f", Some(1)).unwrap_err().to_string().contains("not a whole number"));
        assert!(counter(1e-300, "m", "f", None).is_err());
        assert!(counter(1e17, "m", "f", None).is_err());
        assert!(counter(18300.0, "m", "f", None).is_ok());
    }

    #[test]
    fn forced_schedules_are_refused_and_real_chains_pass() {
        for positions in [vec![500_000.0, 415_000.0, 0.0], vec![250_000.0, 0.0, 0.0], vec![500_000.0, 500_000.0, 0.0]] {
            let err = check(&ev(with_positions(500_000.0, positions)), 3).unwrap_err().to_string();
            assert!(err.contains("pinned run"), "{err}");
        }
        // The golden chain at k = 3, a run that accepts everything at k = 1, and a tiny sample pass the
        // fingerprint (the last two are flagged as too small or degenerate instead).
        let real = check(&ev(with_positions(10_000.0, vec![7_800.0, 6_000.0, 4_500.0])), 3).unwrap();
        assert_eq!(real, Findings::default());
        assert!(check(&ev(with_positions(10_000.0, vec![10_000.0])), 1).unwrap().too_small.is_some());
        let tiny = check(&ev(with_positions(5.0, vec![5.0, 3.0, 0.0])), 3).unwrap();
        assert!(tiny.too_small.unwrap().contains("only 5 verification steps"));
    }
}

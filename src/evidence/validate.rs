//! Evidence is checked before it is believed (docs/model.md §5): impossible counts, counters that cannot be
//! counts, a k that the draft-token counter contradicts, and read-backs of pinned runs are refused with
//! the file, the metric and the reason; too small a sample is flagged so the verdict stays undecided.
//!
//! Every reader calls [`counts`] on each window it builds, and both consumers of evidence — the verdict
//! ([`super::evaluate`], `alsim eval`) and the measured acceptance of `alsim predict --evidence`
//! ([`super::measured_al`]) — call [`check`] with the draft length they will use, so the two paths refuse
//! the same files for the same reasons.
//!
//! Pinned read-backs: vLLM, ATOM and TensorRT-LLM force the minimum-variance schedule, in which every step
//! accepts f or f + 1 drafts (p_i = 1 for i ≤ f, p_{f+1} = frac, 0 after; above AL k that is
//! p = [1, …, 1, frac] and some steps accept all k). A real drafter shows that only by never missing its
//! first f drafts and never accepting one past the last, which over enough steps it does with a vanishing
//! chance ([`REAL_RATE_MARGIN`], [`FINGERPRINT_LEVEL`]); over fewer, and always at k = 1 (every step
//! accepts 0 or 1 drafts, forced or not), the counts cannot tell, and [`Findings::read_back`] says so. It
//! is visible wherever positions or the per-count distribution are counted (vLLM per-position counters and
//! log rates, ATOM's distribution). SGLang `match-expected` (every request of a batch step accepting the
//! same count), TensorRT-LLM's forced counts and llama.cpp's geometric length pin (a constant conditional
//! rate, which a real chain may have) leave no mark in the counters, gauges or log lines alsim reads, so
//! such read-backs cannot be told apart here.

use super::{Evidence, InputFormat, Window};
use crate::engine::Engine;
use crate::error::{Error, Result};

/// Fewest verification steps for the normal approximation behind every interval: fewer is inconclusive.
pub(crate) const MIN_STEPS: f64 = 30.0;

/// Counters are integers held in an f64: above 2^53 they are no longer exact counts.
const MAX_EXACT_COUNT: f64 = 9_007_199_254_740_992.0;

/// The names of what an engine's evidence counts, as the user sees them in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Metrics {
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
pub(crate) fn metrics(engine: Engine, format: InputFormat) -> Metrics {
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
pub(crate) fn counter(value: f64, metric: &str, origin: &str, line: Option<usize>) -> Result<()> {
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
pub(crate) fn counts(w: &Window, k: Option<usize>, names: &Metrics, origin: &str, line: Option<usize>) -> Result<()> {
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
pub(crate) struct Findings {
    /// Why the sample is too small for a verdict, when it is.
    pub too_small: Option<String>,
    /// Why the evidence cannot show that it came from real verification rather than a pinned run's
    /// read-back, when it cannot (k = 1, or counts that fit a forced schedule over too few steps).
    pub read_back: Option<String>,
}

/// A real drafter's conditional acceptance rate at every position stays at least this far from 0 and
/// from 1: it sometimes misses its first draft and sometimes accepts the draft after its last accepted
/// one. (The golden curves' first-position rates p_1 = AL(1) − 1 lie within [0.78, 0.93].)
pub(crate) const REAL_RATE_MARGIN: f64 = 0.01;

/// A read-back is called pinned only when a real drafter within [`REAL_RATE_MARGIN`] shows the forced
/// schedule's fingerprint with a chance below this: (1 − margin)^n < level takes n ≥ 688 chances to
/// depart from it (steps, and steps that could have accepted one more draft).
pub(crate) const FINGERPRINT_LEVEL: f64 = 1e-3;

/// Checks `ev` as evidence of real acceptance at draft length `k`: its counts (total and every window)
/// must be possible, and it must not be the read-back of a pinned run. A sample too small for the normal
/// approximation is returned as a finding: the verdict must then stay undecided; so is evidence that
/// cannot tell a read-back from real acceptance, which the verdict must then say.
///
/// # Errors
/// [`Error::Parse`] naming the file, the metric and the reason.
pub(crate) fn check(ev: &Evidence, k: usize) -> Result<Findings> {
    let names = metrics(ev.engine, ev.format);
    let (origin, line) = (&ev.location.file, ev.location.line);
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
    let d = ev.total.steps;
    let degenerate = ev.total.accepted <= 0.0 || ev.total.accepted >= k as f64 * d;
    let read_back = if k == 1 {
        Some(
            "at k = 1 every step accepts 0 or 1 drafts whether acceptance is forced or real, so a pinned run's read-back looks the same as real acceptance"
                .to_string(),
        )
    } else {
        match fingerprint(&ev.total, k).filter(|_| d >= MIN_STEPS && !degenerate) {
            Some(Fingerprint { shape, chance }) if chance < FINGERPRINT_LEVEL => {
                return Err(Error::parse(
                    origin,
                    line,
                    format!(
                        "{}: {shape}, which a real drafter (conditional rates within [{REAL_RATE_MARGIN}, {}]) does with chance {chance:.1e} — the fingerprint of a pinned run (the minimum-variance schedule vLLM, ATOM and TensorRT-LLM force for a synthetic AL), not real acceptance; take evidence from a run with real verification (no synthetic-acceptance flag)",
                        names.positions,
                        1.0 - REAL_RATE_MARGIN
                    ),
                ));
            }
            Some(Fingerprint { shape, chance }) => Some(format!(
                "{shape}, as a pinned run's forced schedule does, and a real drafter would with chance up to {chance:.2}: too few steps to tell a read-back from real acceptance"
            )),
            None => None,
        }
    };
    let too_small = if d < MIN_STEPS {
        Some(format!(
            "only {d} verification steps: fewer than {MIN_STEPS} is too few for the normal approximation behind the interval"
        ))
    } else if degenerate {
        Some(format!(
            "every one of the {d} steps accepted {} drafts: the sample variance is 0 at the boundary of [1, k + 1], so the interval is degenerate",
            if ev.total.accepted <= 0.0 { "no".to_string() } else { format!("all {k}") }
        ))
    } else {
        None
    };
    Ok(Findings { too_small, read_back })
}

/// Per-position counts in the shape of the minimum-variance schedule.
#[derive(Debug, Clone, PartialEq)]
struct Fingerprint {
    /// The counts and what they mean, described.
    shape: String,
    /// The largest chance a real drafter within [`REAL_RATE_MARGIN`] has of that shape.
    chance: f64,
}

/// The minimum-variance schedule's mark in a window with per-position counts: P_i = D for i ≤ f, at most
/// one position f + 1 strictly between, and 0 after — every step accepted f or f + 1 drafts, at any AL
/// (above k too: p = [1, …, 1, frac]). A real drafter shows it only by never missing positions 1..f in
/// D steps (chance ≤ (1 − margin)^D when f ≥ 1) and by never accepting position j + 1 in the P_j steps
/// that reached the last position j with acceptances (chance ≤ (1 − margin)^P_j when j < k). `None`
/// when the counts have another shape, or no per-position counts at k.
fn fingerprint(w: &Window, k: usize) -> Option<Fingerprint> {
    let positions = w.positions.as_ref().filter(|p| p.len() == k)?;
    let d = w.steps;
    // Log rates carry 3 decimals: 1.000 and 0.000 read back as exactly D and 0; counters are exact.
    let tol = 1e-9 * d;
    let full = positions.iter().take_while(|&&p| (p - d).abs() <= tol).count();
    let last = positions.iter().rposition(|&p| p.abs() > tol).map_or(0, |i| i + 1);
    if last > full + 1 || last == 0 {
        return None;
    }
    let exposure = if full >= 1 { d } else { 0.0 } + if last < k { positions[last - 1] } else { 0.0 };
    let p: Vec<String> = positions.iter().map(|x| format!("{:.3}", x / d)).collect();
    let accepted = if last > full { format!("{full} or {last} drafts") } else { format!("exactly {full} draft(s)") };
    Some(Fingerprint {
        shape: format!("over {d} steps p = [{}]: every step accepted {accepted}", p.join(", ")),
        chance: (1.0 - REAL_RATE_MARGIN).powf(exposure),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::evidence::Location;

    #[test]
    fn atoms_read_back_of_a_forced_al_is_refused_as_a_pinned_run() {
        use crate::engine::Engine;
        use crate::evidence::{Evidence, InputFormat, Window};
        // ATOM's read-back of a forced AL 2.83 at k = 3: every step accepts 1 or 2 drafts.
        let ev = Evidence {
            location: Location::in_file("mtp_stats.json", None),
            engine: Engine::Atom,
            format: InputFormat::AtomJson,
            k: None,
            total: Window::from_distribution(vec![0.0, 85_000.0, 415_000.0, 0.0]),
            batches: Vec::new(),
            notes: Vec::new(),
        };
        let err = check(&ev, 3).unwrap_err().to_string();
        assert!(err.contains("pinned run"), "{err}");
    }

    fn ev(total: Window) -> Evidence {
        Evidence {
            location: Location::in_file("e.prom", Some(4)),
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
        // Above k the schedule is p = [1, …, 1, frac]: AL 2.27 at k = 2, AL 3.5 at k = 3.
        for (k, positions) in [(2, vec![1_000.0, 270.0]), (3, vec![1_000.0, 1_000.0, 500.0])] {
            let err = check(&ev(with_positions(1_000.0, positions)), k).unwrap_err().to_string();
            assert!(err.contains("pinned run") && err.contains("every step accepted"), "{err}");
        }
        // Over 300 steps a real drafter that misses its first draft 1% of the time shows p_1 = 1 with
        // chance 0.05: not proof, so the verdict is told instead.
        let short = check(&ev(with_positions(300.0, vec![300.0, 81.0])), 2).unwrap();
        assert!(short.read_back.unwrap().contains("chance up to 0.05"));
        let real = check(&ev(with_positions(10_000.0, vec![7_800.0, 6_000.0, 4_500.0])), 3).unwrap();
        assert_eq!(real, Findings::default());
        // At k = 1 forced and real acceptance look the same, whatever the counts.
        let one = check(&ev(with_positions(10_000.0, vec![7_800.0])), 1).unwrap();
        assert!(one.too_small.is_none() && one.read_back.unwrap().contains("at k = 1"));
        assert!(check(&ev(with_positions(10_000.0, vec![10_000.0])), 1).unwrap().too_small.is_some());
        let tiny = check(&ev(with_positions(5.0, vec![5.0, 3.0, 0.0])), 3).unwrap();
        assert!(tiny.too_small.unwrap().contains("only 5 verification steps"));
    }
}

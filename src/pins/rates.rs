//! Rate lists as pins: vLLM's `"synthetic_acceptance_rates": [p_1, …, p_k]` and llama.cpp's
//! `--spec-synth-rates p_1,…,p_k` (docs/engines.md#rates-pin; [`crate::accept::pin`] writes them).
//!
//! This module owns reading a written list, the engines' own rules for one (k entries, each in [0, 1],
//! non-increasing — both refuse to start otherwise), the comparison position by position with the golden
//! chain ([`RatesPin::from_curve`]), and the text a list is shown and fixed with. A list's implied AL,
//! 1 + Σ p_i, is what the rest of the check compares with golden values, so a wrong list is classed like
//! a wrong length (another k's, another mode's, another drafter's chain).

use crate::accept::RatesPin;
use crate::accept::pin::rate_text;
use crate::curve::Curve;

use super::{Knob, RATE_TOLERANCE};

/// The rates of a written list (`0.78, 0.60, 0.45`, `[0.78,0.60,0.45]`, `0.78,0.6,0.45`); `None` when an
/// entry is not a finite number.
pub(crate) fn parse(text: &str) -> Option<Vec<f64>> {
    let body = text.trim().trim_matches(|c| c == '"' || c == '\'').trim();
    let body = body.strip_prefix('[').and_then(|b| b.strip_suffix(']')).unwrap_or(body);
    if body.trim().is_empty() {
        return None;
    }
    body.split(',').map(|r| r.trim().parse::<f64>().ok().filter(|x| x.is_finite())).collect()
}

/// 1 + Σ p_i.
pub(crate) fn implied_al(rates: &[f64]) -> f64 {
    1.0 + rates.iter().sum::<f64>()
}

/// The value a knob's written text stands for, in the knob's spelling (for a rates knob: the implied AL,
/// with the list).
pub(crate) fn read_written(knob: Knob, text: &str) -> Option<(f64, Option<Vec<f64>>)> {
    if knob.is_rates() {
        parse(text).map(|r| (implied_al(&r), Some(r)))
    } else {
        text.trim().parse::<f64>().ok().filter(|x| x.is_finite()).map(|v| (v, None))
    }
}

/// The list as `knob` spells it: `0.78, 0.60, 0.45` inside vLLM's JSON brackets, `0.78,0.60,0.45` for
/// llama.cpp's flag.
pub(crate) fn spelled(knob: Knob, rates: &[f64]) -> String {
    let separator = if knob == Knob::LlamacppRates { "," } else { ", " };
    rates.iter().map(|&p| rate_text(p)).collect::<Vec<_>>().join(separator)
}

/// `[0.78, 0.60, 0.45]`, for reports.
pub(crate) fn shown(rates: &[f64]) -> String {
    format!("[{}]", spelled(Knob::VllmSyntheticRates, rates))
}

/// Why the engines refuse the list whatever k is (an entry outside [0, 1], an increase), if they do.
pub(crate) fn chain_problem(rates: &[f64]) -> Option<String> {
    if let Some((i, p)) = rates.iter().enumerate().find(|(_, p)| !(0.0..=1.0).contains(*p)) {
        return Some(format!("rate {} = {} is outside [0, 1]", i + 1, rate_text(*p)));
    }
    rates.windows(2).position(|w| w[1] > w[0]).map(|i| {
        format!(
            "rates must not increase, but rate {} = {} > rate {} = {}",
            i + 2,
            rate_text(rates[i + 1]),
            i + 1,
            rate_text(rates[i])
        )
    })
}

/// The golden chain of `curve` at `k`, when the curve can shape one.
pub(crate) fn golden(curve: &Curve, k: usize) -> Option<RatesPin> {
    RatesPin::from_curve(curve, k).ok()
}

/// The 1-based positions where `written` is off `golden` by more than [`RATE_TOLERANCE`] (every position
/// when the lengths differ).
pub(crate) fn off_positions(written: &[f64], golden: &[f64]) -> Vec<usize> {
    if written.len() != golden.len() {
        return (1..=written.len().max(golden.len())).collect();
    }
    written
        .iter()
        .zip(golden)
        .enumerate()
        .filter(|(_, (w, g))| (*w - *g).abs() > RATE_TOLERANCE)
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_read_in_every_spelling() {
        assert_eq!(parse("0.78, 0.60, 0.45"), Some(vec![0.78, 0.6, 0.45]));
        assert_eq!(parse("[0.78,0.6,0.45]"), Some(vec![0.78, 0.6, 0.45]));
        assert_eq!(parse("'0.9'"), Some(vec![0.9]));
        assert_eq!(parse("0.78,,0.45"), None);
        assert_eq!(parse("0.78, x"), None);
        assert_eq!(parse("[]"), None);
        let (al, list) = read_written(Knob::LlamacppRates, "0.78,0.60,0.45").unwrap();
        assert!((al - 2.83).abs() < 1e-12);
        assert_eq!(list.unwrap().len(), 3);
        assert_eq!(read_written(Knob::VllmSyntheticLength, "2.83"), Some((2.83, None)));
    }

    #[test]
    fn engine_rules_and_positions() {
        assert_eq!(chain_problem(&[0.78, 0.6, 0.45]), None);
        assert!(chain_problem(&[0.6, 0.78, 0.45]).unwrap().contains("rate 2 = 0.78 > rate 1 = 0.60"));
        assert!(chain_problem(&[1.2, 0.5]).unwrap().contains("outside [0, 1]"));
        assert_eq!(off_positions(&[0.78, 0.6, 0.45], &[0.7805, 0.6, 0.45]), Vec::<usize>::new());
        assert_eq!(off_positions(&[1.0, 0.83, 0.0], &[0.78, 0.6, 0.45]), [1, 2, 3]);
        assert_eq!(off_positions(&[0.78, 0.6], &[0.78, 0.6, 0.45]), [1, 2, 3]);
        assert_eq!(spelled(Knob::LlamacppRates, &[0.78, 0.6]), "0.78,0.60");
        assert_eq!(shown(&[0.78, 0.6, 0.45]), "[0.78, 0.60, 0.45]");
    }

    proptest::proptest! {
        /// A chain as either engine spells it reads back as itself, with its implied AL and no problem.
        #[test]
        fn spelled_chains_read_back(mut raw in proptest::collection::vec(0u32..=10_000, 1..=8), llama: bool) {
            raw.sort_unstable_by(|a, b| b.cmp(a));
            let list: Vec<f64> = raw.iter().map(|&r| f64::from(r) / 10_000.0).collect();
            let knob = if llama { Knob::LlamacppRates } else { Knob::VllmSyntheticRates };
            let (al, back) = read_written(knob, &spelled(knob, &list)).unwrap();
            let back = back.unwrap();
            proptest::prop_assert!(off_positions(&back, &list).is_empty());
            proptest::prop_assert!((al - implied_al(&list)).abs() < 1e-9);
            proptest::prop_assert_eq!(chain_problem(&back), None);
        }
    }
}

//! Property tests of the core invariants: probabilities in [0, 1], distributions sum to 1 with the stated
//! mean, AL in [1, k+1], conversions round-trip, fits are valid chains, the engines' minimum-variance
//! schedule really has the least variance for its mean, llama.cpp's geometric schedule keeps the requested
//! mean, and a rates pin is a valid chain with the curve's mean.

use std::collections::BTreeMap;

use alsim::accept::fit::{FitKind, fit};
use alsim::accept::pin::Derivation;
use alsim::accept::schedule::{ScheduleKind, SyntheticSchedule};
use alsim::accept::{Acceptance, Distribution, RatesPin, geometric_chain, min_variance_chain};
use alsim::curve::{Curve, ThinkingMode};
use alsim::units::Spelling;
use proptest::prelude::*;

/// A random valid chain: conditional rates in [0, 1].
fn chain() -> impl Strategy<Value = Acceptance> {
    prop::collection::vec(0.0..=1.0f64, 1..=12).prop_map(|c| Acceptance::from_conditional(&c, "c").unwrap())
}

/// A random (k, AL) with AL in [1, k+1].
fn pin() -> impl Strategy<Value = (usize, f64)> {
    (1usize..=12).prop_flat_map(|k| (Just(k), 1.0..=(k as f64 + 1.0)))
}

/// A noisy golden curve over k = 1..=8 at most: cumulative sums of random increments, perturbed, kept in range
/// (so it may dip or rise where a chain cannot).
fn noisy_curve() -> impl Strategy<Value = BTreeMap<usize, f64>> {
    (prop::collection::vec(0.0..1.0f64, 1..=8), prop::collection::vec(-0.05..0.05f64, 8)).prop_map(|(values, noise)| {
        let mut al = 1.0;
        values
            .iter()
            .enumerate()
            .map(|(i, p)| {
                al += p;
                (i + 1, ((al + noise[i]).clamp(1.0, i as f64 + 2.0) * 100.0).round() / 100.0)
            })
            .collect()
    })
}

proptest! {
    #[test]
    fn distributions_sum_to_one_with_the_chain_mean(a in chain()) {
        let d = a.distribution();
        let total: f64 = d.probabilities().iter().sum();
        prop_assert!((total - 1.0).abs() < 1e-9);
        prop_assert!(d.probabilities().iter().all(|q| (0.0..=1.0).contains(q)));
        prop_assert!((d.acceptance_length() - a.acceptance_length()).abs() < 1e-9);
        let al = a.acceptance_length();
        prop_assert!((1.0..=a.k() as f64 + 1.0).contains(&al));
        // E[a²] = Σ (2i − 1) p_i (docs/model.md §2).
        let second: f64 = a.unconditional().iter().enumerate().map(|(i, p)| (2 * i + 1) as f64 * p).sum();
        prop_assert!((d.variance() - (second - (al - 1.0).powi(2))).abs() < 1e-9);
        prop_assert!(a.conditional().iter().all(|c| (0.0..=1.0).contains(c)));
        let back = d.acceptance();
        for (x, y) in back.unconditional().iter().zip(a.unconditional()) {
            prop_assert!((x - y).abs() < 1e-9);
        }
    }

    #[test]
    fn conversions_round_trip((k, al) in pin()) {
        for spelling in Spelling::ALL {
            let written = spelling.from_al(al, k, "v").unwrap();
            let (lo, hi) = spelling.range(k);
            prop_assert!(written >= lo - 1e-9 && written <= hi + 1e-9);
            prop_assert!((spelling.to_al(written, k, "v").unwrap() - al).abs() < 1e-9);
        }
    }

    #[test]
    fn min_variance_schedule_has_the_least_variance_for_its_mean(a in chain()) {
        // Any chain with the same mean has at least the schedule's variance.
        let mean = a.acceptance_length();
        let schedule = min_variance_chain(mean, a.k()).unwrap().distribution();
        prop_assert!((schedule.acceptance_length() - mean).abs() < 1e-9);
        prop_assert!(schedule.variance() <= a.distribution().variance() + 1e-9);
    }

    #[test]
    fn engine_schedules_are_distributions_and_keep_the_pin_except_multinomial((k, al) in pin()) {
        for kind in ScheduleKind::FROM_LENGTH {
            let s = SyntheticSchedule::new(kind, al, k).unwrap();
            let total: f64 = s.distribution.probabilities().iter().sum();
            prop_assert!((total - 1.0).abs() < 1e-9);
            match kind {
                ScheduleKind::SglangMultinomial => {}
                // The engine's 32-step bisection leaves at most k(k+1)/2 · 2⁻³³ in the mean.
                ScheduleKind::LlamacppGeometric => {
                    prop_assert!((s.distribution.acceptance_length() - al).abs() < 1e-7)
                }
                _ => {
                    prop_assert!((s.distribution.acceptance_length() - al).abs() < 1e-9);
                    // At most two adjacent outcomes, as the engines draw them.
                    prop_assert!(s.distribution.probabilities().iter().filter(|q| **q > 0.0).count() <= 2);
                }
            }
        }
    }

    #[test]
    fn llamacpp_geometric_schedule_has_the_requested_mean(
        (k, al) in (1usize..=8).prop_flat_map(|k| (Just(k), 1.0..=(k as f64 + 1.0))),
    ) {
        let chain = geometric_chain(al, k).unwrap();
        prop_assert_eq!(chain.k(), k);
        prop_assert!((chain.acceptance_length() - al).abs() < 1e-8, "{} vs {}", chain.acceptance_length(), al);
        // One constant conditional rate, so p_i = p^i.
        let p = chain.unconditional()[0];
        for (i, &pi) in chain.unconditional().iter().enumerate() {
            prop_assert!((pi - p.powi(i as i32 + 1)).abs() < 1e-12);
        }
        let s = SyntheticSchedule::new(ScheduleKind::LlamacppGeometric, al, k).unwrap();
        prop_assert!((s.distribution.acceptance_length() - al).abs() < 1e-8);
    }

    #[test]
    fn a_rates_pin_is_a_chain_with_the_curves_mean(points in noisy_curve(), pick in 0usize..8) {
        let k = pick % points.len() + 1;
        let curve = Curve::new("m", ThinkingMode::On, points.clone()).unwrap();
        let pin = RatesPin::from_curve(&curve, k).unwrap();
        let rates = pin.rates();
        prop_assert_eq!(rates.len(), k);
        prop_assert!(rates.iter().all(|r| (0.0..=1.0).contains(r)));
        prop_assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{:?}", rates);
        // Written with at most four decimals, so 1 + Σ r_i is the chain's AL to k · 5·10⁻⁵.
        prop_assert!((1.0 + rates.iter().sum::<f64>() - pin.chain_al()).abs() <= k as f64 * 0.5e-4 + 1e-12);
        prop_assert!((pin.implied_al() - pin.chain_al()).abs() <= k as f64 * 0.5e-4 + 1e-12);
        // Raw or fitted, the chain keeps the golden mean at k.
        prop_assert!((pin.chain_al() - points[&k]).abs() < 1e-6, "{} vs golden {}", pin.chain_al(), points[&k]);
        match pin.derivation() {
            Derivation::Increments { .. } => {
                let mut previous = 1.0;
                for (i, r) in rates.iter().enumerate() {
                    prop_assert!((r - (points[&(i + 1)] - previous)).abs() < 1e-9);
                    previous = points[&(i + 1)];
                }
            }
            Derivation::Fitted { fit, .. } => {
                prop_assert_eq!(*fit, FitKind::Concave);
                prop_assert!(curve.chain(k).is_err(), "fitted although the increments are a chain");
            }
            Derivation::Given { .. } => prop_assert!(false, "a curve's pin is derived, not given"),
        }
    }

    #[test]
    fn fits_are_valid_chains_and_concave_is_the_best_chain(
        values in prop::collection::vec(0.0..1.0f64, 3..=8),
        noise in prop::collection::vec(-0.05..0.05f64, 8),
    ) {
        // A noisy golden curve: cumulative sums of random increments, perturbed, kept in range.
        let mut al = 1.0;
        let points: BTreeMap<usize, f64> = values.iter().enumerate().map(|(i, p)| {
            al += p;
            (i + 1, (al + noise[i]).clamp(1.0, i as f64 + 2.0))
        }).collect();
        let curve = Curve::new("m", ThinkingMode::On, points.clone()).unwrap();
        let sse = |chain: &Acceptance| -> f64 {
            points.iter().map(|(&k, &al)| (1.0 + chain.unconditional()[..k].iter().sum::<f64>() - al).powi(2)).sum()
        };
        let max_k = points.len();
        let concave = fit(&curve, FitKind::Concave).unwrap().chain(max_k).unwrap();
        for &kind in FitKind::ALL {
            let f = fit(&curve, kind).unwrap();
            let chain = f.chain(max_k + 4).unwrap(); // valid past the curve too
            prop_assert!(chain.unconditional().windows(2).all(|w| w[0] + 1e-12 >= w[1]));
            prop_assert!(sse(&concave) <= sse(&f.chain(max_k).unwrap()) + 1e-7, "{kind} beats the constrained optimum");
        }
    }

    #[test]
    fn distribution_rejects_what_does_not_sum_to_one(q in prop::collection::vec(0.0..1.0f64, 2..6)) {
        let total: f64 = q.iter().sum();
        prop_assume!((total - 1.0).abs() > 1e-3);
        prop_assert!(Distribution::new(q, "d").is_err());
    }
}

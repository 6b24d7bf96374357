//! `alsim simulate` and the `alsim::sim` engine: the seed's case, determinism across thread counts, exact
//! versus Monte Carlo, heterogeneity, batches, output formats and bad input; proptests for the invariants.

use alsim::accept::{Acceptance, Distribution};
use alsim::sim::{
    Heterogeneity, Metric, OutputLengths, Phases, RequestModel, RunConfig, StepSampler, request_rng, simulate_requests,
    simulate_totals, steps_to_emit,
};
use proptest::prelude::*;

use crate::util::{json, run};

fn number(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("expected a number, found {v}"))
}

fn covers(estimate: &serde_json::Value, value: f64) -> bool {
    let ci = &estimate["confidence_interval"];
    number(&ci["lower_bound"]) <= value && value <= number(&ci["upper_bound"])
}

#[test]
fn seed_case_real_versus_pinned() {
    let v = json(&["simulate", "--requests", "3000", "--no-batch"]);
    assert_eq!(v["schema_version"], "3");
    assert_eq!(v["seed"], alsim::sim::DEFAULT_SEED);
    let sources = v["sources"].as_array().unwrap();
    let labels: Vec<&str> = sources.iter().map(|s| s["label"].as_str().unwrap()).collect();
    // Real, then minimum variance, multinomial, llama.cpp's geometric length pin and the rates pin (SGLang
    // match-expected draws per request like minimum variance, so it appears only in batches).
    assert_eq!(labels.len(), 5, "{labels:?}");
    let real = &sources[0];
    assert_eq!(real["source"]["kind"], "real");
    assert!(covers(&real["summary"]["per_step"]["tokens_per_step"], 2.83));
    let observed = real["summary"]["per_step"]["distribution"].as_array().unwrap();
    for (q, want) in observed.iter().zip([0.22, 0.18, 0.15, 0.45]) {
        assert!((number(q) - want).abs() < 0.01, "{q} vs {want}");
    }
    let pinned = &sources[1];
    assert_eq!(pinned["source"]["schedule"], "min-variance");
    assert_eq!(number(&pinned["summary"]["per_step"]["distribution"][0]), 0.0);
    // Same mean, wider real tails: the real sd of per-request AL is about √10 times the pinned one.
    let sd = |s: &serde_json::Value| number(&s["summary"]["acceptance_length"]["standard_deviation"]);
    assert!(sd(real) > 2.5 * sd(pinned), "{} vs {}", sd(real), sd(pinned));
    // TPOT = step time / tokens per step, at the default 26 ms.
    let tpot = number(&real["summary"]["tpot_ms"]["mean"]["point_estimate"]);
    assert!((tpot - 26.0 / 2.83).abs() < 0.05, "{tpot}");
    let p99 = &real["summary"]["tpot_ms"]["percentiles"][4];
    assert_eq!(number(&p99["percentile"]), 99.0);
}

#[test]
fn the_rates_pin_keeps_the_tpot_tails_the_length_pins_lose() {
    let v = json(&["simulate", "--requests", "4000", "--no-batch"]);
    let sources = v["sources"].as_array().unwrap();
    let by_kind = |kind: &str| {
        sources.iter().find(|s| s["source"]["schedule"] == kind).unwrap_or_else(|| panic!("no {kind} in {v}"))
    };
    fn tpot(s: &serde_json::Value, i: usize) -> &serde_json::Value {
        &s["summary"]["tpot_ms"]["percentiles"][i]["estimate"]
    }
    let (p50, p99) = (2, 4);
    let real = &sources[0];
    assert_eq!(real["source"]["kind"], "real");
    assert_eq!(number(&tpot(real, p99)["point_estimate"]), number(&tpot(by_kind("rates-pin"), p99)["point_estimate"]));
    assert_eq!(v["rates_pin"]["rates"], serde_json::json!([0.78, 0.6, 0.45]));
    // The minimum-variance pin has the real mean and p50 but not its p99: the real value lies outside its interval.
    let min_var = by_kind("min-variance");
    assert!(covers(tpot(min_var, p50), number(&tpot(real, p50)["point_estimate"])), "{min_var}");
    assert!(!covers(tpot(min_var, p99), number(&tpot(real, p99)["point_estimate"])), "{min_var}");
    let (code, stdout, _) = run(&["simulate", "--requests", "4000", "--no-batch"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("TPOT tails against real acceptance"), "{stdout}");
    assert!(stdout.contains("rates pin [0.78, 0.60, 0.45]"), "{stdout}");
    // Only the chosen sources run: the rates pin alone beside real.
    let v = json(&["simulate", "--requests", "500", "--no-batch", "--source", "curve,rates-pin,llama.cpp"]);
    let kinds: Vec<&serde_json::Value> = v["sources"].as_array().unwrap().iter().map(|s| &s["source"]).collect();
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert_eq!(kinds[1]["schedule"], "rates-pin");
    assert_eq!(kinds[2]["schedule"], "llamacpp-geometric");
}

#[test]
fn table_prints_the_seed_and_csv_has_every_table() {
    let (code, stdout, _) = run(&["simulate", "--requests", "1000", "--seed", "42"]);
    assert_eq!(code, 0);
    for want in ["seed 42", "--seed 42", "Per-user decode speed", "shared by batch", "p99"] {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("sim.csv");
    let (code, _, _) = run(&["simulate", "--requests", "1000", "--export-csv", export.to_str().unwrap()]);
    assert_eq!(code, 0);
    let tpot = std::fs::read_to_string(dir.path().join("sim.time-output-token.csv")).unwrap();
    assert!(tpot.starts_with("source,mean,mean low,mean high,sd,p50,"), "a table of its own, header first: {tpot}");
}

#[test]
fn same_seed_same_results_at_any_thread_count() {
    let args = ["simulate", "--requests", "1500", "--spread", "0.5", "--exact", "300", "--format", "json"];
    let outputs: Vec<String> = ["1", "2", "3"]
        .iter()
        .map(|t| {
            let mut all = args.to_vec();
            all.extend(["--threads", t]);
            let (code, stdout, stderr) = run(&all);
            assert_eq!(code, 0, "{stderr}");
            stdout
        })
        .collect();
    assert_eq!(outputs[0], outputs[1]);
    assert_eq!(outputs[0], outputs[2]);
    let other = json(&["simulate", "--requests", "1500", "--seed", "7", "--no-batch"]);
    let first: serde_json::Value = serde_json::from_str(&outputs[0]).unwrap();
    assert_ne!(first["sources"][0]["summary"]["steps"], other["sources"][0]["summary"]["steps"]);
}

#[test]
fn exact_mode_agrees_with_monte_carlo() {
    let v = json(&["simulate", "--requests", "4000", "--exact", "2000", "--no-batch"]);
    let rows = v["exact"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let mc = &row["monte_carlo"]["mean"];
        let gap = (number(&row["exact_mean"]) - number(&mc["point_estimate"])).abs();
        assert!(gap < 5.0 * number(&mc["standard_error"]), "{row}");
        assert!(number(&row["truncated_mass"]) < 1e-12);
    }
}

#[test]
fn heterogeneity_keeps_the_mean_and_moves_the_tail() {
    let v = json(&[
        "simulate",
        "--requests",
        "4000",
        "--source",
        "curve",
        "--spread",
        "0.8",
        "--phase-steps",
        "30",
        "--phase-spread",
        "0.5",
        "--no-batch",
    ]);
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 2);
    let het = &sources[1];
    assert_eq!(het["source"]["kind"], "real-heterogeneous");
    let al = number(&het["summary"]["per_step"]["tokens_per_step"]["point_estimate"]);
    assert!((al - 2.83).abs() < 0.02, "step-weighted AL {al}");
    assert!(number(&v["calibrated_shift"]) > 0.0);
    let p99 = |s: &serde_json::Value| number(&s["summary"]["tpot_ms"]["percentiles"][4]["estimate"]["point_estimate"]);
    assert!(p99(het) > 1.2 * p99(&sources[0]), "{} vs {}", p99(het), p99(&sources[0]));
}

#[test]
fn batch_shared_draws_and_explicit_rates() {
    let v = json(&["simulate", "--rates", "0.9,0.6,0.3", "--requests", "3200", "--batch", "16"]);
    assert!((number(&v["real_al"]) - 2.8).abs() < 1e-12);
    let rows = v["batch"].as_array().unwrap();
    let shared: Vec<_> = rows.iter().filter(|r| r["summary"]["draws"] == "shared-by-batch").collect();
    let own: Vec<_> = rows.iter().filter(|r| r["summary"]["draws"] == "per-request").collect();
    // Shared: both SGLang methods; per request: real, minimum variance, llama.cpp, the rates pin.
    assert_eq!((shared.len(), own.len()), (2, 4));
    for r in &shared {
        assert!(number(&r["summary"]["design_effect"]) > 8.0, "{r}");
    }
    for r in &own {
        assert!(number(&r["summary"]["design_effect"]) < 3.0, "{r}");
    }
}

#[test]
fn fitted_chain_is_pinned_at_the_golden_point_like_accept() {
    let v = json(&["simulate", "--fit", "geometric-decay", "--requests", "500", "--no-batch"]);
    assert_eq!(number(&v["pinned_al"]), 2.83);
    let real_al = number(&v["real_al"]);
    assert!(real_al != 2.83 && (real_al - 2.83).abs() < 0.1, "fitted AL {real_al}");
    assert!(v["real_origin"].as_str().unwrap().contains("geometric-decay fit"), "{}", v["real_origin"]);
    let accept = json(&["accept", "--fit", "geometric-decay"]);
    assert_eq!(number(&accept["pinned_al"]), 2.83, "{accept}");
}

#[test]
fn plot_draws_tpot_or_speed_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tpot.svg");
    let (code, _, stderr) = run(&["simulate", "--requests", "500", "--no-batch", "--plot", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("TPOT"), "{}", &svg[..200.min(svg.len())]);
    // The title reads as words: how many requests, k, both ALs, output lengths as a range (not `820..=1024`).
    assert!(svg.contains("Per-request TPOT of 500 requests at k = 3 (real AL"), "{}", &svg[..600.min(svg.len())]);
    assert!(svg.contains("820 to 1024 tokens (uniform)") && !svg.contains("..="), "{}", &svg[..600.min(svg.len())]);
    let (code, _, stderr) = run(&["simulate", "--requests", "500", "--no-batch", "--plot", path.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("already exists") && stderr.contains("--force"), "{stderr}");
    let args = ["simulate", "--requests", "500", "--no-batch", "--plot", path.to_str().unwrap()];
    let (code, _, stderr) = run(&[&args[..], &["--plot-metric", "speed", "--force"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.contains("tokens/s") && !svg.contains("TPOT (ms)"), "the speed chart was not drawn");
    let missing = dir.path().join("nope/tpot.svg");
    let (code, _, stderr) = run(&["simulate", "--requests", "500", "--plot", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("nope/tpot.svg") && stderr.contains("does not exist"), "{stderr}");
}

#[test]
fn bad_flags_are_clear_errors_with_exit_2() {
    for (args, needle) in [
        (vec!["--spread", "-1"], "--spread"),
        (vec!["--k", "0"], "k = 0"),
        (vec!["--step-ms", "0"], "--step-ms"),
        (vec!["--step-ms", "-5"], "--step-ms"),
        (vec!["--requests", "0"], "--requests"),
        (vec!["--requests", "1000000000000"], "--requests"),
        (vec!["--output-len", "0"], "--output-len"),
        (vec!["--output-spread", "gamma:2"], "--output-spread"),
        (vec!["--output-spread", "uniform:1.5"], "--output-spread"),
        (vec!["--output-spread", "lognormal:x"], "not a number"),
        (vec!["--batch", "0"], "--batch"),
        (vec!["--batch", "150"], "fewer than 2 batches"),
        (vec!["--threads", "0"], "--threads"),
        (vec!["--phase-steps", "0.5", "--phase-spread", "1"], "--phase-steps"),
        (vec!["--level", "1.5"], "confidence level"),
        (vec!["--al", "9"], "--al"),
        (vec!["--exact", "0"], "--exact"),
        (vec!["--source", "fit"], "invalid value"),
        (vec!["--rates", "0.5,0.7"], "never increase"),
    ] {
        let mut all = vec!["simulate", "--requests", "200"];
        all.extend(args.iter());
        let (code, _, stderr) = run(&all);
        assert_eq!(code, 2, "{all:?}: {stderr}");
        assert!(stderr.contains(needle), "{all:?}: expected '{needle}' in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A distribution on {0..k} from proptest weights (at least one positive).
fn distribution(weights: &[f64]) -> Distribution {
    Distribution::from_weights(weights, "proptest").expect("positive weights")
}

fn weights() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(prop_oneof![Just(0.0), 0.01f64..1.0], 2..=6)
        .prop_filter("some weight", |w| w.iter().sum::<f64>() > 0.0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Every step is counted once and the tokens add up; the last step overshoots by at most k.
    #[test]
    fn counts_conserve_tokens(w in weights(), spread in 0.0f64..1.5, phase in 0.0f64..1.0, seed in any::<u64>(),
                              low in 1u32..400, extra in 0u32..400) {
        let chain = distribution(&w).acceptance();
        let het = Heterogeneity { spread, phases: (phase > 0.5).then_some(Phases { mean_steps: 5.0, spread: phase }) };
        let lengths = OutputLengths::Uniform { low, high: low + extra };
        let model = match RequestModel::heterogeneous(&chain, het, lengths) {
            Ok(model) => model,
            // Rates all 0 or 1: nothing to scale, and the library says so.
            Err(_) => RequestModel::iid(StepSampler::new(&chain.distribution()), lengths),
        };
        let k = chain.k();
        let sample = simulate_requests(&model, k, RunConfig::new(64, seed).unwrap(), &|_| {});
        let t = &sample.totals;
        prop_assert_eq!(t.counts.iter().sum::<u64>(), t.steps);
        let tokens: u64 = t.counts.iter().enumerate().map(|(a, n)| (a as u64 + 1) * n).sum();
        prop_assert_eq!(tokens, t.emitted);
        prop_assert_eq!(sample.outcomes.iter().map(|o| o.steps as u64).sum::<u64>(), t.steps);
        for o in &sample.outcomes {
            prop_assert!(o.emitted >= o.output_tokens && o.emitted - o.output_tokens <= k as u32);
            prop_assert!(o.output_tokens >= low && o.output_tokens <= low + extra);
        }
        let again = simulate_totals(&model, k, RunConfig::new(64, seed).unwrap(), &|_| {});
        prop_assert_eq!(&again, t);
    }

    /// The exact law of S_N and a Monte Carlo of it agree: the mean within 5 standard errors and the whole CDF
    /// within the Dvoretzky–Kiefer–Wolfowitz band at α = 10⁻⁶ (so a correct engine fails ~never).
    #[test]
    fn exact_and_monte_carlo_agree(w in weights(), n in 1u32..2_500, seed in any::<u64>()) {
        let d = distribution(&w);
        let exact = steps_to_emit(&d, n).unwrap();
        prop_assert!(exact.truncated_mass < 1e-12);
        let requests = 3_000u64;
        let model = RequestModel::iid(StepSampler::new(&d), OutputLengths::Fixed { tokens: n });
        let sample = simulate_requests(&model, d.k(), RunConfig::new(requests, seed).unwrap(), &|_| {});
        let steps: Vec<f64> = sample.outcomes.iter().map(|o| o.steps as f64).collect();
        let mc = Metric::from_values(steps.clone(), 0.95).unwrap();
        let gap = (mc.mean.point_estimate - exact.mean()).abs();
        prop_assert!(gap <= 5.0 * mc.mean.standard_error + 1e-9, "mean {} vs exact {}", mc.mean.point_estimate, exact.mean());
        let band = ((2.0f64 / 1e-6).ln() / (2.0 * requests as f64)).sqrt();
        let mut sorted = steps;
        sorted.sort_by(f64::total_cmp);
        for (s, _) in exact.iter() {
            let empirical = sorted.partition_point(|&x| x <= s as f64) as f64 / requests as f64;
            prop_assert!((empirical - exact.cdf(s)).abs() <= band, "s {}: {} vs {}", s, empirical, exact.cdf(s));
        }
    }

    /// A seed gives identical outcomes on 1, 2 and 3 threads.
    #[test]
    fn deterministic_across_thread_counts(w in weights(), seed in any::<u64>(), spread in 0.0f64..1.0) {
        let chain: Acceptance = distribution(&w).acceptance();
        let het = Heterogeneity { spread, phases: None };
        let lengths = OutputLengths::LogNormal { median: 150.0, sigma: 0.7 };
        let model = RequestModel::heterogeneous(&chain, het, lengths)
            .unwrap_or_else(|_| RequestModel::iid(StepSampler::new(&chain.distribution()), lengths));
        let config = RunConfig::new(700, seed).unwrap();
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| simulate_requests(&model, chain.k(), config, &|_| {}))
        };
        let one = on(1);
        for threads in [2, 3] {
            let other = on(threads);
            prop_assert_eq!(&one.outcomes, &other.outcomes);
            prop_assert_eq!(&one.totals, &other.totals);
        }
    }

    /// The sampler's draw is a pure function of the u32 and never yields an impossible count.
    #[test]
    fn sampler_respects_support(w in weights(), seed in any::<u64>()) {
        let d = distribution(&w);
        let sampler = StepSampler::new(&d);
        let mut rng = request_rng(seed, 0);
        for _ in 0..2_000 {
            let a = sampler.accepted(&mut rng);
            prop_assert!(d.probabilities()[a] > 0.0, "drew impossible a = {}", a);
        }
    }
}

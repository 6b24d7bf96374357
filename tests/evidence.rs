//! `alsim eval` and the evidence library: every fixture format, the verdicts on the MiniMax-M3 EAGLE3
//! card's real numbers, malformed inputs, round trips, and the coverage of the design-effect interval.

use alsim::evidence::{self, Location, ReadOptions, Window, estimate};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::util::run;

const DIR: &str = "tests/fixtures/evidence";

fn fixture(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// Runs `alsim eval ARGS --format json`, returning the exit code and the parsed report.
fn eval_json(args: &[&str]) -> (i32, serde_json::Value) {
    let mut all = vec!["eval"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    let (code, stdout, stderr) = run(&all);
    let value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{all:?}: invalid JSON ({e}): {stdout}{stderr}"));
    (code, value)
}

fn al(file: &serde_json::Value) -> f64 {
    file["estimate"]["independent"]["point_estimate"].as_f64().unwrap()
}

#[test]
fn mt_bench_reads_pin_too_high_and_gsm8k_pin_too_low_in_every_format() {
    for (name, al_card, extra) in [
        ("vllm_mtbench_after.prom", Some(2.698), vec!["--before", "tests/fixtures/evidence/vllm_mtbench_before.prom"]),
        ("vllm_mtbench_scrapes.prom", None, vec![]),
        ("vllm_mtbench.log", None, vec![]),
        ("trtllm_mtbench.prom", Some(2.698), vec![]),
        ("atom_mtbench.prom", Some(2.698), vec![]),
        ("atom_mtbench.log", None, vec![]),
    ] {
        let path = fixture(name);
        let mut args = vec!["--pin", "2.83", "--k", "3", path.as_str()];
        args.extend(extra.iter().copied());
        let (code, v) = eval_json(&args);
        assert_eq!(code, 1, "{name}: {v}");
        assert_eq!(v["overall"], "pin_too_high", "{name}");
        let got = al(&v["files"][0]);
        match al_card {
            Some(want) => assert!((got - want).abs() < 1e-3, "{name}: AL {got}"),
            None => assert!((got - 2.698).abs() < 0.05, "{name}: AL {got}"),
        }
    }
    for name in [
        "sglang_gsm8k.prom",
        "sglang_gsm8k.log",
        "trtllm_gsm8k_iterations.json",
        "atom_gsm8k_mtp_stats.json",
        "aiperf_gsm8k_server_metrics_export.json",
    ] {
        let (code, v) = eval_json(&["--pin", "2.83", "--k", "3", &fixture(name)]);
        assert_eq!(code, 1, "{name}: {v}");
        assert_eq!(v["overall"], "pin_too_low", "{name}");
        assert!((al(&v["files"][0]) - 3.518).abs() < 0.05, "{name}");
    }
}

#[test]
fn before_and_after_snapshots_give_the_window() {
    let (_, v) = eval_json(&[
        "--pin",
        "2.83",
        "--k",
        "3",
        &fixture("vllm_mtbench_after.prom"),
        "--before",
        &fixture("vllm_mtbench_before.prom"),
    ]);
    let e = &v["files"][0]["estimate"];
    assert_eq!(e["steps"], 24000.0);
    assert_eq!(e["accepted"], 40752.0);
    // 1 − pin/AL: 2.83/2.698 − 1 ≈ +4.9% overstated throughput.
    assert!((v["files"][0]["throughput_error"]["point_estimate"].as_f64().unwrap() - 0.0489).abs() < 1e-3);
    let p1 = e["positions"][0]["unconditional"]["point_estimate"].as_f64().unwrap();
    assert!((p1 - 0.749).abs() < 1e-9);
}

#[test]
fn time_series_give_both_standard_errors_and_a_design_effect() {
    for name in ["vllm_mtbench.log", "vllm_mtbench_scrapes.prom", "atom_mtbench.log", "trtllm_gsm8k_iterations.json"] {
        let (_, v) = eval_json(&["--pin", "2.83", "--k", "3", &fixture(name)]);
        let e = &v["files"][0]["estimate"];
        assert!(e["batches"].as_u64().unwrap() >= 29, "{name}");
        assert!(e["design"]["standard_error"].as_f64().unwrap() > 0.0, "{name}");
        assert!(e["design_effect"].as_f64().unwrap() > 1.0, "{name}: {}", e["design_effect"]);
    }
}

#[test]
fn consistent_and_inconclusive_exit_codes() {
    let (code, v) = eval_json(&["--pin", "2.78", "--k", "3", &fixture("atom_speedbench_mtp_stats.json")]);
    assert_eq!((code, v["overall"].as_str().unwrap()), (0, "consistent"));
    let (code, v) = eval_json(&["--pin", "2.76", "--k", "3", &fixture("vllm_mtbench_short.prom")]);
    assert_eq!((code, v["overall"].as_str().unwrap()), (3, "inconclusive"));
    assert!(v["files"][0]["further_steps"].as_f64().unwrap() > 0.0);
}

#[test]
fn pin_from_the_golden_curve_compares_positions() {
    let (code, v) = eval_json(&["--pin-from", &fixture("atom_mtbench.prom")]);
    assert_eq!(code, 1);
    assert_eq!(v["pin"]["al"], 2.83);
    let departures = v["files"][0]["departures"].as_array().unwrap();
    assert_eq!(departures.len(), 3);
    // The card's MT-Bench chain (0.749, 0.547, 0.402) sits below the golden thinking-on chain (0.78, 0.60, 0.45).
    assert!(departures.iter().all(|d| d["departs"] == true && d["difference"].as_f64().unwrap() < 0.0));
    assert_eq!(v["files"][0]["first_departure"], 1);
}

#[test]
fn different_workloads_are_reported_apart_and_same_workload_pooled() {
    let (code, v) =
        eval_json(&["--pin", "2.83", "--k", "3", &fixture("atom_mtbench.prom"), &fixture("atom_gsm8k_mtp_stats.json")]);
    assert_eq!(code, 1);
    assert_eq!(v["overall"], "mixed");
    assert_eq!(v["heterogeneity"]["pooled"], false);
    assert!(v["pooled"].is_null());
    let (code, v) =
        eval_json(&["--pin", "2.83", "--k", "3", &fixture("atom_mtbench.prom"), &fixture("trtllm_mtbench.prom")]);
    assert_eq!(code, 1);
    assert_eq!(v["heterogeneity"]["pooled"], true);
    assert_eq!(v["pooled"]["estimate"]["steps"], 48000.0);
    assert_eq!(v["pooled"]["verdict"], "pin_too_high");
}

#[test]
fn split_by_label_gives_one_result_per_engine() {
    let (_, v) = eval_json(&["--pin", "2.83", "--k", "3", &fixture("vllm_mtbench_after.prom"), "--split", "engine"]);
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert!(files[0]["location"]["origin"].as_str().unwrap().ends_with("[engine=0]"));
    let steps: f64 = files.iter().map(|f| f["estimate"]["steps"].as_f64().unwrap()).sum();
    assert_eq!(steps, 25000.0);
}

#[test]
fn github_annotations_and_human_formats() {
    let (code, stdout, _) =
        run(&["eval", "--pin", "2.83", "--k", "3", &fixture("vllm_mtbench.log"), "--format", "github"]);
    assert_eq!(code, 1);
    assert!(
        stdout.starts_with("::error file=tests/fixtures/evidence/vllm_mtbench.log,line=2,title=alsim eval::pin 2.830"),
        "{stdout}"
    );
    let (code, stdout, _) =
        run(&["eval", "--pin", "2.78", "--k", "3", &fixture("atom_speedbench_mtp_stats.json"), "--format", "github"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("::notice "), "{stdout}");
    let (_, stdout, _) = run(&["eval", "--pin-from", &fixture("atom_mtbench.log"), "--format", "md"]);
    for want in
        ["### Pin AL 2.830", "| position i |", "pin too high", "departs from the golden chain first at position 1"]
    {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let (_, stdout, _) = run(&["eval", "--help"]);
    for want in ["3  inconclusive", "0.05 AL", "--format-in"] {
        assert!(stdout.contains(want), "missing {want} in --help");
    }
}

#[test]
fn malformed_inputs_name_file_and_line_and_exit_2() {
    for (name, needle) in [
        ("bad/truncated.prom", "bad/truncated.prom:32:"),
        ("bad/garbage.prom", "bad/garbage.prom:2:"),
        ("bad/nan.prom", "bad/nan.prom:22: vllm:spec_decode_num_accepted_tokens has value NaN"),
        ("bad/negative.prom", "bad/negative.prom:2: vllm:spec_decode_num_drafts is negative"),
        (
            "bad/missing_family.prom",
            "bad/missing_family.prom:12: vLLM metrics found but vllm:spec_decode_num_accepted_tokens (or",
        ),
        ("bad/mixed_engines.prom", "metrics of two engines in one file"),
        ("bad/mixed_engines.log", "bad/mixed_engines.log:2:"),
        ("bad/k4.prom", "bad/k4.prom:33: the evidence is for k = 4"),
        ("bad/truncated.json", "bad/truncated.json:7: JSON ends early"),
    ] {
        let (code, stdout, stderr) = run(&["eval", "--pin", "2.83", "--k", "3", &fixture(name)]);
        assert_eq!(code, 2, "{name}: {stdout}{stderr}");
        assert!(stderr.contains(needle), "{name}: expected '{needle}' in {stderr}");
    }
}

#[test]
fn a_counter_reset_is_reported_not_negative() {
    let (code, v) = eval_json(&[
        "--pin",
        "2.83",
        "--k",
        "3",
        &fixture("bad/reset_after.prom"),
        "--before",
        &fixture("vllm_mtbench_after.prom"),
    ]);
    assert_eq!(code, 3);
    assert_eq!(v["files"][0]["estimate"]["steps"], 500.0);
    assert!(v["files"][0]["notes"].to_string().contains("went down"), "{v}");
}

#[test]
fn no_path_panics() {
    let cases: Vec<Vec<String>> = [
        vec!["eval"],
        vec!["eval", "--pin", "2.83", "x.prom"],
        vec!["eval", "--pin", "9", "--k", "3", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec!["eval", "--pin", "2.83", "--k", "0", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec!["eval", "--pin", "2.83", "--k", "3", "--tolerance", "-1", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec!["eval", "--pin", "2.83", "--k", "3", "--confidence", "1", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec!["eval", "--pin", "2.83", "--k", "3", "/nonexistent/metrics.prom"],
        vec![
            "eval",
            "--pin",
            "2.83",
            "--k",
            "3",
            "--format-in",
            "atom-json",
            "tests/fixtures/evidence/atom_mtbench.prom",
        ],
        vec!["eval", "--pin", "2.83", "--k", "3", "--format-in", "log", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec![
            "eval",
            "--pin",
            "2.83",
            "--k",
            "3",
            "--format-in",
            "trtllm-json",
            "tests/fixtures/evidence/atom_gsm8k_mtp_stats.json",
        ],
        vec![
            "eval",
            "--pin",
            "2.83",
            "--k",
            "3",
            "--format-in",
            "aiperf-json",
            "tests/fixtures/evidence/atom_gsm8k_mtp_stats.json",
        ],
        vec!["eval", "--pin", "2.83", "--k", "3", "--format-in", "csv", "tests/fixtures/evidence/atom_mtbench.prom"],
        vec![
            "eval",
            "--pin",
            "2.83",
            "--k",
            "3",
            "--decode-log-interval",
            "0",
            "tests/fixtures/evidence/sglang_gsm8k.log",
        ],
        vec!["eval", "--pin", "2.83", "--k", "4", "tests/fixtures/evidence/trtllm_mtbench.prom"],
        vec!["eval", "--pin", "2.83", "--k", "3", "tests/fixtures/evidence/make_fixtures.py"],
        vec![
            "eval",
            "--pin",
            "2.83",
            "--k",
            "3",
            "tests/fixtures/evidence/minimax_m3_eagle3_per_position_acceptance.csv",
        ],
    ]
    .iter()
    .map(|c| c.iter().map(|s| s.to_string()).collect())
    .collect();
    for case in cases {
        let args: Vec<&str> = case.iter().map(String::as_str).collect();
        let (code, _, stderr) = run(&args);
        assert!(code == 1 || code == 2 || code == 3, "{args:?} exited {code}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

// ---------- round trips ----------

fn escape(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// A vLLM exposition of `counts` split over label sets, with the spelling choices varied.
fn render_vllm(
    parts: &[(f64, f64, Vec<f64>)],
    model: &str,
    total_suffix: bool,
    created: bool,
    model_first: bool,
) -> String {
    let suffix = if total_suffix { "_total" } else { "" };
    let mut out = String::from(
        "# HELP vllm:num_requests_running Running.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 4\n",
    );
    for (e, (d, a, positions)) in parts.iter().enumerate() {
        let labels = if model_first {
            format!("model_name=\"{}\",engine=\"{e}\"", escape(model))
        } else {
            format!("engine=\"{e}\", model_name=\"{}\"", escape(model))
        };
        out += &format!("vllm:spec_decode_num_drafts{suffix}{{{labels}}} {d}\n");
        out += &format!("vllm:spec_decode_num_accepted_tokens{suffix}{{{labels}}} {a:e}\n");
        if created {
            out += &format!("vllm:spec_decode_num_drafts_created{{{labels}}} 1.7646e9\n");
        }
        for (i, p) in positions.iter().enumerate() {
            out += &format!("vllm:spec_decode_num_accepted_tokens_per_pos{suffix}{{position=\"{i}\",{labels}}} {p}\n");
        }
    }
    out
}

fn chain_counts() -> impl Strategy<Value = (f64, f64, Vec<f64>)> {
    (1u32..1_000_000, proptest::collection::vec(0.0f64..=1.0, 1..6)).prop_map(|(d, cond)| {
        let mut positions = Vec::new();
        let mut previous = d as f64;
        for c in cond {
            previous = (previous * c).floor();
            positions.push(previous);
        }
        let a = positions.iter().sum();
        (d as f64, a, positions)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prometheus_round_trip(
        first in chain_counts(),
        engines in 1usize..4,
        model in "[a-z \"\\\\\n]{0,8}",
        total_suffix: bool,
        created: bool,
        model_first: bool,
    ) {
        let k = first.2.len();
        let parts: Vec<(f64, f64, Vec<f64>)> = (0..engines)
            .map(|e| (first.0 + e as f64, first.1, first.2.clone()))
            .collect();
        let text = render_vllm(&parts, &model, total_suffix, created, model_first);
        let ev = evidence::read(text.as_bytes(), "p.prom", &ReadOptions::default()).unwrap();
        prop_assert_eq!(ev.len(), 1);
        let total = &ev[0].total;
        prop_assert_eq!(total.steps, parts.iter().map(|p| p.0).sum::<f64>());
        prop_assert_eq!(total.accepted, first.1 * engines as f64);
        let want: Vec<f64> = first.2.iter().map(|p| p * engines as f64).collect();
        prop_assert_eq!(total.positions.as_ref().unwrap(), &want);
        prop_assert_eq!(ev[0].k.as_ref().unwrap().0, k);
        let split = ReadOptions { split: Some("engine".into()), ..ReadOptions::default() };
        prop_assert_eq!(evidence::read(text.as_bytes(), "p.prom", &split).unwrap().len(), engines);
    }

    #[test]
    fn atom_json_and_log_round_trip(counts in proptest::collection::vec(0u32..100_000, 2..6)) {
        prop_assume!(counts.iter().sum::<u32>() > 0);
        let w = Window::from_distribution(counts.iter().map(|&n| n as f64).collect());
        let k = counts.len() - 1;
        let dist: Vec<String> = counts.iter().enumerate().map(|(a, n)| format!("\"{a}\": {n}")).collect();
        let json = format!(
            "{{\"enabled\": true, \"total_draft_tokens\": {}, \"total_accepted_tokens\": {}, \"distribution\": {{{}}}}}",
            w.steps * k as f64, w.accepted, dist.join(", ")
        );
        let ev = evidence::read(json.as_bytes(), "s.json", &ReadOptions::default()).unwrap();
        prop_assert_eq!(&ev[0].total, &w);
        let pct: Vec<String> = counts.iter().enumerate().map(|(a, n)| format!("{a}: '{:.2}%'", 100.0 * *n as f64 / w.steps)).collect();
        let line = format!(
            "[MTP Stats Interval] Average toks/fwd: {:.2}, Accepted/Total Draft tokens: {}/{}, Acceptance rate: 1.00%, Accepted tokens distribution: {{{}}}\n",
            1.0 + w.accepted / w.steps, w.accepted, w.steps * k as f64, pct.join(", ")
        );
        let ev = evidence::read(line.as_bytes(), "a.log", &ReadOptions::default()).unwrap();
        prop_assert_eq!(ev[0].total.steps, w.steps);
        prop_assert_eq!(ev[0].total.accepted, w.accepted);
        // Percentages carry two decimals: positions come back within that rounding.
        for (got, want) in ev[0].total.positions.as_ref().unwrap().iter().zip(w.positions.as_ref().unwrap()) {
            prop_assert!((got - want).abs() <= 5e-5 * w.steps * (k as f64 + 1.0) + 1e-9);
        }
    }
}

// ---------- coverage of the design-effect interval ----------

/// Accepted drafts of one step of a chain with conditional rates `cond`.
fn step(rng: &mut ChaCha8Rng, cond: &[f64]) -> usize {
    cond.iter().take_while(|&&c| rng.random::<f64>() < c).count()
}

/// One simulated run as (total, batches) with per-position counts.
fn simulated_run(
    batches: usize,
    batch_steps: usize,
    mut next: impl FnMut() -> usize,
    k: usize,
) -> (Window, Vec<Window>) {
    let series: Vec<Window> = (0..batches)
        .map(|_| {
            let mut counts = vec![0.0; k + 1];
            for _ in 0..batch_steps {
                counts[next()] += 1.0;
            }
            Window::from_distribution(counts)
        })
        .collect();
    let total = series.iter().skip(1).fold(series[0].clone(), |acc, w| acc.add(w));
    (total, series)
}

/// Fractions of `runs` whose (independent, design-effect) 95% intervals cover `truth`.
fn coverage(runs: usize, truth: f64, mut one: impl FnMut(&mut ChaCha8Rng) -> (Window, Vec<Window>)) -> (f64, f64) {
    let at = Location { origin: "simulated".into(), line: None };
    let mut rng = ChaCha8Rng::seed_from_u64(20261202);
    let (mut independent, mut design) = (0usize, 0usize);
    for _ in 0..runs {
        let (total, batches) = one(&mut rng);
        // Like a real distribution count (ATOM), drop it so σ_a² comes from positions (vLLM's case).
        let total = Window { distribution: None, ..total };
        let e = estimate(&total, &batches, 3, 0.95, "batches", &at).unwrap();
        independent += e.independent.covers(truth) as usize;
        design += e.design.unwrap().covers(truth) as usize;
    }
    (independent as f64 / runs as f64, design as f64 / runs as f64)
}

fn chain_al(cond: &[f64]) -> f64 {
    let mut p = 1.0;
    1.0 + cond
        .iter()
        .map(|c| {
            p *= c;
            p
        })
        .sum::<f64>()
}

/// Markov-switching phases (easy/hard text): a two-state chain switching with probability 0.1 per step,
/// so steps are correlated over ≈ 9 steps; batches of 400 steps are long against that.
#[test]
fn design_effect_interval_covers_markov_phase_acceptance() {
    let easy = [0.9, 0.85, 0.8];
    let hard = [0.45, 0.35, 0.3];
    let truth = 0.5 * chain_al(&easy) + 0.5 * chain_al(&hard);
    let (independent, design) = coverage(1000, truth, |rng| {
        let mut phase_easy = rng.random::<bool>();
        let mut inner = ChaCha8Rng::seed_from_u64(rng.random());
        simulated_run(
            30,
            400,
            || {
                if inner.random::<f64>() < 0.1 {
                    phase_easy = !phase_easy;
                }
                let cond = if phase_easy { &easy } else { &hard };
                step(&mut inner, cond)
            },
            3,
        )
    });
    assert!((0.93..=0.97).contains(&design), "design-effect coverage {design}");
    assert!(independent < 0.85, "independent coverage {independent} should fall well short of 95%");
}

/// Per-request heterogeneity: requests of 50 steps run one after another, each with its conditional rates
/// scaled by its own factor s ~ U(0.5, 1.15) (capped at 1); a batch of 400 steps holds 8 whole requests.
#[test]
fn design_effect_interval_covers_per_request_heterogeneity() {
    let base = [0.85, 0.75, 0.7];
    let scaled = |s: f64| -> Vec<f64> { base.iter().map(|c| (c * s).min(1.0)).collect() };
    // Every request has the same number of steps, so the true AL is the mean of AL(s) over s (midpoint rule).
    let grid = 100_000;
    let truth =
        (0..grid).map(|i| chain_al(&scaled(0.5 + 0.65 * (i as f64 + 0.5) / grid as f64))).sum::<f64>() / grid as f64;
    let (independent, design) = coverage(1000, truth, |rng| {
        let mut inner = ChaCha8Rng::seed_from_u64(rng.random());
        let mut cond = scaled(0.5);
        let mut steps = 0usize;
        simulated_run(
            30,
            400,
            || {
                if steps.is_multiple_of(50) {
                    cond = scaled(0.5 + 0.65 * inner.random::<f64>());
                }
                steps += 1;
                step(&mut inner, &cond)
            },
            3,
        )
    });
    assert!((0.93..=0.97).contains(&design), "design-effect coverage {design}");
    assert!(independent < 0.85, "independent coverage {independent} should fall well short of 95%");
}

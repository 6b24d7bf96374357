//! `alsim golden collect` and `alsim golden check`: eval-only runs simulated from a known curve with the
//! `sim` module's sampler (seeded), written as vLLM Prometheus scrapes in a temp dir, collected back into a
//! curve, and the curve retested against them.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use alsim::accept::Acceptance;
use alsim::curve::{Curve, CurveFile, ThinkingMode};
use alsim::evidence::{self, ReadOptions, Verdict};
use alsim::measured::collect::{self, Identity, Run};
use alsim::measured::retest::retest;
use alsim::sim::{StepSampler, request_rng};
use proptest::prelude::*;
use rand::Rng;

use crate::util::run;

/// The known chain: unconditional acceptance per draft position, the shape of the seed's EAGLE3 curve.
const CHAIN: [f64; 8] = [0.78, 0.60, 0.45, 0.33, 0.24, 0.17, 0.12, 0.08];
/// Scrapes per run after the zero one: 100 deltas, so the batch-means interval is the decisive one.
const SCRAPES: u64 = 100;

fn chain(k: usize) -> Acceptance {
    Acceptance::from_unconditional(CHAIN[..k].to_vec(), "test chain").unwrap()
}

/// The curve the chain implies: AL(k) = 1 + p_1 + … + p_k.
fn known_curve() -> Curve {
    Curve::new("m", ThinkingMode::On, (1..=8).map(|k| (k, chain(k).acceptance_length())).collect()).unwrap()
}

/// One eval-only run at draft length `k`: `steps` verification steps drawn from the chain, scraped as
/// cumulative vLLM counters (drafts, draft tokens, accepted tokens, accepted per position) every
/// `steps / SCRAPES` steps, after an all-zero first scrape.
pub(crate) fn vllm_run(dir: &Path, k: usize, steps: u64, seed: u64, name: &str) -> PathBuf {
    let sampler = StepSampler::new(&chain(k).distribution());
    let mut rng = request_rng(seed, k as u64);
    let (mut drafts, mut accepted, mut per_pos) = (0u64, 0u64, vec![0u64; k]);
    let mut text = String::new();
    let scrape = |text: &mut String, drafts: u64, accepted: u64, per_pos: &[u64]| {
        for (family, value) in [
            ("vllm:spec_decode_num_drafts", drafts),
            ("vllm:spec_decode_num_draft_tokens", drafts * k as u64),
            ("vllm:spec_decode_num_accepted_tokens", accepted),
        ] {
            let _ =
                writeln!(text, "# TYPE {family} counter\n{family}_total{{engine=\"0\",model_name=\"m\"}} {value}.0");
        }
        let _ = writeln!(text, "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos counter");
        for (i, n) in per_pos.iter().enumerate() {
            let _ = writeln!(
                text,
                "vllm:spec_decode_num_accepted_tokens_per_pos_total{{engine=\"0\",model_name=\"m\",position=\"{i}\"}} {n}.0"
            );
        }
    };
    scrape(&mut text, 0, 0, &per_pos);
    for _ in 0..SCRAPES {
        for _ in 0..steps / SCRAPES {
            let a = sampler.accepted_from(rng.next_u32());
            drafts += 1;
            accepted += a as u64;
            per_pos[..a].iter_mut().for_each(|n| *n += 1);
        }
        scrape(&mut text, drafts, accepted, &per_pos);
    }
    let path = dir.join(format!("{name}_k{k}.prom"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs at k = 1..=8 written to `dir`, read back and grouped by the k the evidence records.
fn runs(dir: &Path, steps: u64, seed: u64) -> collect::ByK {
    let runs = (1..=8)
        .map(|k| {
            let path = vllm_run(dir, k, steps, seed, "run");
            Run { evidence: evidence::read_path(&path, None, &ReadOptions::default()).unwrap(), k: None }
        })
        .collect();
    collect::group_by_k(runs).unwrap()
}

fn identity() -> Identity {
    Identity {
        model: "m".into(),
        mode: ThinkingMode::On,
        drafter: "org/m-EAGLE3".into(),
        method: "eagle3".into(),
        draft_sampling: "greedy".into(),
        hardware: Some("H200".into()),
        source_run: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// Whatever the seed: one value per k, the written file reads back to the estimates (to its three
    /// decimals) with the header's facts, and every interval brackets its value.
    #[test]
    fn a_collected_curve_reads_back(seed in any::<u64>()) {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("m_eagle3.yaml");
        let c = collect::collect(identity(), &runs(dir.path(), 4_000, seed), 0.95, 0.01, &out.display().to_string())
            .unwrap();
        collect::write_file(&c, &out, false).unwrap();
        let file = CurveFile::read(&out).unwrap();
        prop_assert_eq!(file.provenance.drafter.as_deref(), Some("org/m-EAGLE3"));
        prop_assert_eq!(file.provenance.hardware.as_deref(), Some("H200"));
        let curve = &file.curves[0];
        prop_assert_eq!(curve.points().len(), 8);
        for p in &c.points {
            prop_assert!((curve.points()[&p.k] - p.al.point_estimate).abs() <= 0.0005 + 1e-12);
            prop_assert!(p.al.covers(p.al.point_estimate) && p.al.standard_error > 0.0);
            prop_assert_eq!(p.steps, 4_000.0);
        }
        // 4,000 steps give an SE of about 0.01–0.02 at the larger k: those are named, with the steps needed.
        for s in &c.shortfalls {
            let p = &c.points[s.k - 1];
            prop_assert!(p.al.standard_error > 0.01);
            let more = s.further_steps.unwrap();
            prop_assert!(((4_000.0 + more) / 4_000.0 - (p.al.standard_error / 0.01).powi(2)).abs() < 1e-3);
        }
    }
}

/// Coverage: over 50 seeded collections of k = 1..8 (400 intervals at 95%), the known AL lies inside the
/// reported interval at the stated rate: misses within the 99.9% binomial range of 5% (7–35), so the
/// intervals are neither too narrow nor padded.
#[test]
fn collected_intervals_cover_the_known_curve_at_the_stated_rate() {
    let truth = known_curve();
    let mut misses = 0;
    for seed in 0..50 {
        let dir = tempfile::tempdir().unwrap();
        let c = collect::collect(identity(), &runs(dir.path(), 10_000, seed), 0.95, 0.01, "x.yaml").unwrap();
        for p in &c.points {
            assert_eq!(p.basis, "design-effect", "k = {}: 100 windows decide by batch means", p.k);
            misses += usize::from(!p.al.covers(truth.points()[&p.k]));
        }
    }
    assert!((7..=35).contains(&misses), "{misses} of 400 intervals miss the known curve");
}

/// A retest's false-alarm rate: 150 sets of runs drawn from the committed curve itself, checked with no
/// tolerance (so any interval that excludes the value calls the curve off), call it off at most at the
/// family rate α = 5% (Bonferroni over the 8 k): at most 16 of 150 (the 99.9% binomial bound). Without the
/// correction each k would alarm at 5% and a set of 8 at about 34%.
#[test]
fn a_retests_false_alarms_stay_within_the_family_rate() {
    let truth = known_curve();
    let mut alarms = 0;
    for seed in 1_000..1_150 {
        let dir = tempfile::tempdir().unwrap();
        let d = retest(&truth, "golden.yaml", &runs(dir.path(), 3_000, seed), 0.0, 0.95).unwrap();
        assert_eq!(d.correction, "Bonferroni");
        assert!((d.per_k_confidence - (1.0 - 0.05 / 8.0)).abs() < 1e-12);
        alarms += usize::from(d.overall.differs());
    }
    assert!(alarms <= 16, "{alarms} of 150 honest curves called off");
}

/// A stale value is found: the same runs against a curve 0.15 too high at k = 5 call it off there and only there.
#[test]
fn a_retest_finds_a_stale_value() {
    let dir = tempfile::tempdir().unwrap();
    let by_k = runs(dir.path(), 20_000, 7);
    let mut points: BTreeMap<usize, f64> = known_curve().points().clone();
    *points.get_mut(&5).unwrap() += 0.15;
    let stale = Curve::new("m", ThinkingMode::On, points).unwrap();
    let d = retest(&stale, "golden.yaml", &by_k, 0.05, 0.95).unwrap();
    assert_eq!(d.overall, Verdict::PinTooHigh);
    for p in &d.points {
        assert_eq!(p.verdict == Verdict::PinTooHigh, p.k == 5, "k = {}: {:?}", p.k, p.verdict);
        let diff = p.difference.unwrap();
        assert!(diff.covers(p.measured.unwrap().point_estimate - p.golden));
    }
    assert!((d.points[4].difference.unwrap().point_estimate + 0.15).abs() < 0.05);
}

/// The CLI end to end: collect from files (one stating no k, given as RUN@k=N), refuse to overwrite, then
/// check the written curve against the same runs (consistent) and a short run (undecided).
#[test]
fn collect_and_check_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (1..=8).map(|k| vllm_run(dir.path(), k, 40_000, 3, "run").display().to_string()).collect();
    let out = dir.path().join("m_eagle3.yaml");
    let out_s = out.display().to_string();
    let mut args = vec![
        "golden",
        "collect",
        "--model",
        "m",
        "--drafter",
        "org/m-EAGLE3",
        "--method",
        "eagle3",
        "--draft-sampling",
        "greedy",
        "--mode",
        "thinking_on",
        "--target-se",
        "0.02",
        "-o",
        &out_s,
    ];
    args.extend(files.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.contains("# key = num_speculative_tokens; value = golden AL\nm:\n  thinking_on:\n    1: "),
        "{written}"
    );
    assert!(written.contains("steps 40000, runs 1, SE "), "{written}");

    // The file is never replaced without --force, and a run is never replaced at all.
    let (code, _, stderr) = run(&args);
    assert_eq!((code, stderr.contains("already exists")), (2, true), "{stderr}");
    let mut onto_run: Vec<&str> =
        args.iter().map(|a| if *a == out_s.as_str() { files[0].as_str() } else { a }).collect();
    onto_run.push("--force");
    let before = std::fs::read_to_string(&files[0]).unwrap();
    let (code, _, stderr) = run(&onto_run);
    assert_eq!((code, stderr.contains("never overwritten")), (2, true), "{stderr}");
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), before);

    // Bonferroni over 8 k puts each interval at 99.4%, with Student-t on 5 batch means: about ±0.06 here.
    let mut check = vec!["golden", "check", &out_s, "--tolerance", "0.1"];
    check.extend(files.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&check);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("Bonferroni over 8 k"), "{stdout}");

    // A short run at k = 3 whose evidence states no k: given with @k=3; too short to tell → exit 3.
    let short = dir.path().join("short.prom");
    std::fs::write(&short, "sglang:spec_verify_calls_total 20\nsglang:generation_tokens_total 55\n").unwrap();
    let short_s = format!("{}@k=3", short.display());
    let (code, stdout, stderr) = run(&["golden", "check", &out_s, &short_s, "--format", "json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let (code, _, stderr) = run(&["golden", "check", &out_s, &short.display().to_string()]);
    assert_eq!((code, stderr.contains("@k=N")), (2, true), "{stderr}");
}

const FIXTURES: &str = "tests/fixtures/evidence";

/// The seed's question for the whole curve: MiniMax-M3 EAGLE3 thinking on, k = 3 → 2.83, against the
/// project's eval fixtures. MT-Bench runs (vLLM, ATOM, TensorRT-LLM, llama.cpp) agree with each other and say
/// 2.70: the curve is too high; GSM8K runs say 3.51: too low; all together they disagree (no pool).
#[test]
fn the_seed_curve_against_the_eval_fixtures() {
    let dir = tempfile::tempdir().unwrap();
    let curve = dir.path().join("minimaxm3_eagle3.yaml");
    std::fs::write(
        &curve,
        "# drafter: Inferact/MiniMax-M3-EAGLE3\nminimax-m3:\n  thinking_on:\n    1: 1.78\n    2: 2.38\n    3: 2.83\n  thinking_off:\n    3: 2.93\n",
    )
    .unwrap();
    let curve_s = curve.display().to_string();
    let fixture = |name: &str| format!("{FIXTURES}/{name}");
    let mtbench: Vec<String> = [
        "vllm_mtbench_scrapes.prom",
        "atom_mtbench.prom",
        "atom_mtbench.log",
        "trtllm_mtbench.prom@k=3",
        "vllm_mtbench.log",
        "llamacpp_mtbench.log@k=3",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    let gsm8k: Vec<String> = [
        "atom_gsm8k_mtp_stats.json",
        "sglang_gsm8k.prom",
        "sglang_gsm8k.log@k=3",
        "trtllm_gsm8k_iterations.json@k=3",
        "aiperf_gsm8k_server_metrics_export.json@k=3",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    let check = |runs: &[String]| {
        let mut args = vec!["golden", "check", &curve_s, "--mode", "thinking_on", "--format", "json"];
        args.extend(runs.iter().map(String::as_str));
        let (code, stdout, stderr) = run(&args);
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{stderr}"));
        (code, json)
    };
    let (code, j) = check(&mtbench);
    assert_eq!((code, j["overall"].as_str()), (1, Some("pin_too_high")), "{j}");
    let k3 = &j["points"][0];
    assert_eq!((k3["k"].as_u64(), k3["runs"].as_u64()), (Some(3), Some(6)));
    assert!(k3["heterogeneity"]["pooled"].as_bool().unwrap());
    assert!((k3["difference"]["point_estimate"].as_f64().unwrap() + 0.128).abs() < 0.002, "{k3}");
    assert_eq!(j["not_measured"], serde_json::json!([1, 2]));
    let (code, j) = check(&gsm8k);
    assert_eq!((code, j["overall"].as_str()), (1, Some("pin_too_low")), "{j}");
    assert!((j["points"][0]["measured"]["point_estimate"].as_f64().unwrap() - 3.511).abs() < 0.002);
    let all: Vec<String> = mtbench.iter().chain(&gsm8k).cloned().collect();
    let (code, j) = check(&all);
    assert_eq!((code, j["overall"].as_str()), (1, Some("mixed")), "{j}");
    assert!(j["points"][0]["measured"].is_null() && !j["points"][0]["heterogeneity"]["pooled"].as_bool().unwrap());

    // Collected from the MT-Bench runs: one value at k = 3, the check flags the k below it as missing (exit 1).
    let out = dir.path().join("collected.yaml");
    let out_s = out.display().to_string();
    let mut args = vec![
        "golden",
        "collect",
        "--model",
        "minimax-m3",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3",
        "--method",
        "eagle3",
        "--draft-sampling",
        "greedy",
        "--mode",
        "thinking_on",
        "-o",
        &out_s,
        "--format",
        "json",
    ];
    args.extend(mtbench.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 1, "{stdout}{stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!((j["points"][0]["al"]["point_estimate"].as_f64().unwrap() - 2.702).abs() < 0.001, "{j}");
    assert_eq!(j["points"][0]["steps"].as_f64(), Some(130_221.0));
    assert!(j["check"]["problems"].as_array().unwrap().iter().any(|p| p["field"] == "minimax-m3.thinking_on.1"));
    assert!(std::fs::read_to_string(&out).unwrap().contains("    3: 2.702  # steps 130221, runs 6, SE "));
}

/// Input errors exit 2 with the file named: a curve holding several modes without --mode, a run at a k the
/// curve lacks, a run whose k contradicts the one given.
#[test]
fn golden_input_errors_name_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let curve = dir.path().join("c.yaml");
    std::fs::write(&curve, "m:\n  thinking_on:\n    1: 1.78\n    2: 2.38\n  thinking_off:\n    1: 1.8\n").unwrap();
    let curve_s = curve.display().to_string();
    let scrapes = format!("{FIXTURES}/vllm_mtbench_scrapes.prom");
    let (code, _, stderr) = run(&["golden", "check", &curve_s, &scrapes]);
    assert_eq!((code, stderr.contains("2 curves match")), (2, true), "{stderr}");
    let (code, _, stderr) = run(&["golden", "check", &curve_s, "--mode", "thinking_on", &scrapes]);
    assert_eq!(
        (code, stderr.contains("vllm_mtbench_scrapes.prom:12") && stderr.contains("k = 3")),
        (2, true),
        "{stderr}"
    );
    let given = format!("{scrapes}@k=2");
    let (code, _, stderr) = run(&["golden", "check", &curve_s, "--mode", "thinking_on", &given]);
    assert_eq!((code, stderr.contains("is for k = 3, not the k = 2 given")), (2, true), "{stderr}");
    let bad = format!("{scrapes}@k=three");
    let (code, _, stderr) = run(&["golden", "check", &curve_s, "--mode", "thinking_on", &bad]);
    assert_eq!((code, stderr.contains("not a draft length")), (2, true), "{stderr}");
}

/// Runs at one k that disagree beyond their noise (one workload accepts about 2.0 tokens a step, another
/// about 3.5) pool into a value that describes neither: no curve is written, the runs and their ALs are
/// named, exit 1, and no interval leaves [1, k + 1].
#[test]
fn runs_that_disagree_write_no_curve() {
    let dir = tempfile::tempdir().unwrap();
    let scrapes = |name: &str, per_thousand: [u64; 2]| {
        let mut text = String::new();
        let (mut drafts, mut accepted) = (0u64, 0u64);
        for i in 0..40 {
            drafts += 1000;
            accepted += per_thousand[i % 2];
            text += &format!(
                "vllm:spec_decode_num_drafts_total {drafts}\nvllm:spec_decode_num_draft_tokens_total {}\nvllm:spec_decode_num_accepted_tokens_total {accepted}\n",
                3 * drafts
            );
        }
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (low, high) = (scrapes("chat.prom", [990, 1010]), scrapes("code.prom", [2490, 2510]));
    let out = dir.path().join("m.yaml").display().to_string();
    let json = dir.path().join("c.json").display().to_string();
    let mut args = vec!["golden", "collect", "--model", "m", "--drafter", "org/m-EAGLE3", "--method", "eagle3"];
    args.extend(["--draft-sampling", "greedy", "--mode", "thinking_on", "-o", &out, "--export-json", &json]);
    let runs = [format!("{low}@k=3"), format!("{high}@k=3")];
    args.extend(runs.iter().map(String::as_str));
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(!Path::new(&out).exists(), "no curve is written");
    assert!(stdout.contains("NOT written"), "{stdout}");
    assert!(stdout.contains("chat.prom") && stdout.contains("AL 2.000") && stdout.contains("AL 3.500"), "{stdout}");
    let report: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let ci = &report["points"][0]["al"]["confidence_interval"];
    let (lower, upper) = (ci["lower_bound"].as_f64().unwrap(), ci["upper_bound"].as_f64().unwrap());
    assert!((1.0..=4.0).contains(&lower) && (1.0..=4.0).contains(&upper), "{ci}");
}

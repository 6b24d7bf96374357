//! Pins that carry the real shape, and llama.cpp as evidence: `alsim pin --shape real` for the engines
//! that take per-position rates, and `alsim eval` on llama.cpp server logs.

use alsim::evidence::{PinUnderTest, ReadOptions, evaluate, read};
use proptest::prelude::*;

use crate::util::{json, run};

const LOG: &str = "tests/fixtures/evidence/llamacpp_mtbench.log";

#[test]
fn the_seed_pins_its_own_chain_for_vllm_and_llamacpp() {
    let (code, stdout, stderr) = run(&["pin", "--k", "3", "--engine", "vllm", "--shape", "real"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        "\"num_speculative_tokens\": 3, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_rates\": [0.78, 0.60, 0.45]\n"
    );
    assert!(stderr.contains("golden increments") && stderr.contains("valid chain"), "{stderr}");
    let (code, stdout, _) = run(&["pin", "--k", "3", "--engine", "llamacpp", "--shape", "real"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "--spec-draft-n-max 3\n--spec-synth-rates 0.78,0.60,0.45\n");
    // The default shape is the mean, as before.
    let (_, stdout, _) = run(&["pin", "--k", "3", "--engine", "llamacpp"]);
    assert_eq!(stdout, "--spec-draft-n-max 3\n--spec-synth-len 2.83\n");
}

#[test]
fn json_and_table_carry_the_rates_and_where_they_came_from() {
    let v = json(&["pin", "--k", "3", "--engine", "vllm", "--shape", "real"]);
    assert_eq!(v["rates"], serde_json::json!([0.78, 0.6, 0.45]));
    assert_eq!(v["derivation"]["from"], "increments");
    assert!((v["implied_al"].as_f64().unwrap() - 2.83).abs() < 1e-12);
    assert_eq!(v["golden_al"], 2.83);
    assert!(v["lines"][0].as_str().unwrap().ends_with("[0.78, 0.60, 0.45]"));
    let (code, stdout, _) = run(&["pin", "--k", "3", "--engine", "llamacpp", "--shape", "real", "--format", "table"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("llama.cpp rates pin for AL 2.83 at k = 3") && stdout.contains("[0.78, 0.60, 0.45]"));
    assert!(stdout.contains("note: rates: the golden increments"), "{stdout}");
}

#[test]
fn increments_that_are_no_chain_are_fitted_through_the_golden_mean() {
    let curve = "tests/fixtures/curves/dip.yaml";
    let v = json(&["pin", "--curve", curve, "--model", "m", "--k", "7", "--engine", "vllm", "--shape", "real"]);
    assert_eq!(v["derivation"]["from"], "fitted");
    assert_eq!(v["derivation"]["fit"], "concave");
    let rates: Vec<f64> = v["rates"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
    assert_eq!(rates.len(), 7);
    assert!(rates.windows(2).all(|w| w[1] <= w[0]), "{rates:?}");
    // Rates cut to 4 decimals move the mean by at most 7 × 0.00005.
    assert!((1.0 + rates.iter().sum::<f64>() - 3.00).abs() <= 7.0 * 0.5e-4 + 1e-9, "{rates:?}");
    let (code, _, stderr) =
        run(&["pin", "--curve", curve, "--model", "m", "--k", "7", "--engine", "llamacpp", "--shape", "real"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("concave fit") && stderr.contains("not usable"), "{stderr}");
}

#[test]
fn engines_without_a_rates_knob_are_refused() {
    for engine in ["sglang", "trtllm", "atom"] {
        let (code, stdout, stderr) = run(&["pin", "--k", "3", "--engine", engine, "--shape", "real"]);
        assert_eq!(code, 2, "{engine}: {stdout}");
        assert!(
            stderr.contains("takes only a mean acceptance length") && stderr.contains("vllm or llamacpp"),
            "{stderr}"
        );
    }
    let (code, _, stderr) = run(&["pin", "--k", "3", "--engine", "atom", "--rate", "--shape", "real"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--shape real"), "{stderr}");
    let (_, stdout, _) = run(&["pin", "--help"]);
    assert!(stdout.contains("atom or llamacpp") && stdout.contains("--shape"), "{stdout}");
}

/// The last statistics line of the fixture: (accept calls, accepted tokens, printed rates).
fn last_statistics(text: &str) -> (f64, f64, Vec<f64>) {
    let line = text.lines().rev().find(|l| l.contains("#calls(b,g,a)")).unwrap();
    let after = |label: &str| line[line.find(label).unwrap() + label.len()..].trim_start();
    let calls: f64 = after("#calls(b,g,a) =").split_whitespace().nth(2).unwrap().trim_end_matches(',').parse().unwrap();
    let accepted: f64 = after("#acc tokens =").split(',').next().unwrap().parse().unwrap();
    let rates = after("#acc rate/pos = (").split(')').next().unwrap().split(", ").map(|r| r.parse().unwrap());
    (calls, accepted, rates.collect())
}

#[test]
fn a_llamacpp_log_gives_the_al_and_rates_of_its_statistics_line() {
    let text = std::fs::read_to_string(LOG).unwrap();
    let (calls, accepted, rates) = last_statistics(&text);
    let al = 1.0 + accepted / calls;

    // `eval` reads the statistics lines (detected as a log) and reports the last line's figures.
    let (code, stdout, stderr) = run(&["eval", "--pin-from", "--k", "3", LOG, "--format", "json"]);
    assert!(code == 0 || code == 1 || code == 3, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let file = &v["files"][0];
    assert_eq!(file["engine"], "llamacpp");
    assert_eq!(file["estimate"]["steps"], calls);
    assert!((file["estimate"]["independent"]["point_estimate"].as_f64().unwrap() - al).abs() < 1e-12);
    let positions = file["estimate"]["positions"].as_array().unwrap();
    assert_eq!(positions.len(), 3);
    for (p, want) in positions.iter().zip(&rates) {
        assert!((p["unconditional"]["point_estimate"].as_f64().unwrap() - want).abs() <= 5e-4 + 1e-12, "{p}");
    }

    // The per-request lines alone (default verbosity) give the same figures: each request's steps are
    // recovered from its printed mean and k, so the accepted and step totals are the statistics line's.
    let requests: String =
        text.lines().filter(|l| l.contains("draft acceptance =")).map(|l| format!("{l}\n")).collect();
    let options = ReadOptions { k: Some(3), ..ReadOptions::default() };
    let ev = &read(requests.as_bytes(), "requests.log", &options).unwrap()[0];
    assert_eq!((ev.total.steps, ev.total.accepted), (calls, accepted));
    assert_eq!(ev.batches.len(), 40);
    for (count, want) in ev.total.positions.as_ref().unwrap().iter().zip(&rates) {
        // Each request's rates carry 3 decimals: its counts are within half a step.
        assert!((count / calls - want).abs() < 1e-3, "{count} / {calls} vs {want}");
    }
    // Without k the request lines cannot be counted, and the error says what to give.
    let err = read(requests.as_bytes(), "requests.log", &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, alsim::Error::SettledBy { parameter: "k", .. }), "{err}");
    assert!(err.to_string().starts_with("requests.log:1:"), "{err}");
}

#[test]
fn impossible_llamacpp_counts_name_the_line_and_short_runs_stay_undecided() {
    let bad = "tests/fixtures/evidence/bad/llamacpp_impossible.log";
    let (code, _, stderr) = run(&["eval", "--pin", "2.83", "--k", "3", bad]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("llamacpp_impossible.log:2") && stderr.contains("impossible"), "{stderr}");
    let (code, stdout, stderr) =
        run(&["eval", "--pin", "2.83", "--k", "3", "tests/fixtures/evidence/llamacpp_short.log"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stdout.contains("only 12 verification steps"), "{stdout}");
    // A run at k = 3 is not evidence for a pin at k = 4: three draft tokens per step say so.
    let (code, _, stderr) = run(&["eval", "--pin", "3.5", "--k", "4", LOG]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("not k = 4"), "{stderr}");
}

const LINES: [&str; 3] = [
    "0.12.0 I slot print_timing: id  0 | task 0 | draft acceptance = 0.58333 (   21 accepted /    36 generated), mean acceptance length =  2.75, acceptance rate per position = (0.750, 0.583, 0.417)",
    "0.12.0 I slot print_timing: id  0 | task 0 | draft acceptance = 0.77945 (  311 accepted /   399 generated), mean len =  2.55",
    "0.12.0 I spec common_specu: statistics     draft-eagle3: #calls(b,g,a) =    1     12     12, #gen drafts =     12, #acc drafts =     9, #gen tokens =     36, #acc tokens =    21, #mean acc len = 2.75, #acc rate/pos = (0.750, 0.583, 0.417), dur(b,g,a) = 0.004, 120.000, 0.148 ms",
];

proptest! {
    // cargo-fuzz (fuzz/fuzz_targets/llamacpp_log.rs) explores further where it is installed; this keeps
    // mangled llama.cpp lines in every `cargo test`.
    #[test]
    fn mangled_llamacpp_lines_are_errors_or_evidence_never_panics(
        which in 0usize..3,
        edits in proptest::collection::vec((0usize..400, any::<u8>()), 0..4),
        cut in 0usize..400,
        numbers in proptest::collection::vec(0u32..100_000, 3),
    ) {
        let mut text = LINES[which]
            .replace("21 accepted", &format!("{} accepted", numbers[0]))
            .replace("=     12,", &format!("= {},", numbers[1]))
            .replace("#acc tokens =    21", &format!("#acc tokens = {}", numbers[2]))
            .into_bytes();
        for (at, byte) in edits {
            let n = text.len();
            text[at % n] = byte;
        }
        text.truncate(cut.max(1));
        let twice = [text.clone(), b"\n".to_vec(), text].concat();
        for k in [None, Some(1), Some(3)] {
            let options = ReadOptions { k, ..ReadOptions::default() };
            if let Ok(evidence) = read(&twice[..], "p.log", &options) {
                let pin = PinUnderTest::new(2.83, 3, 0.05, 0.95, "p").unwrap();
                let _ = evaluate(&pin, &evidence);
            }
        }
    }
}

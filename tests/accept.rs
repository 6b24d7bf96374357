//! `alsim accept`: the seed's case on embedded defaults, flags, and bad input.

use crate::util::{json, run};

fn close(value: &serde_json::Value, want: f64, tol: f64) -> bool {
    (value.as_f64().expect("a number") - want).abs() < tol
}

#[test]
fn seed_case_on_embedded_defaults() {
    let (code, stdout, _) = run(&["accept"]);
    assert_eq!(code, 0);
    for want in ["0.780", "0.600", "0.450", "0.220", "0.180", "0.150", "SGLang multinomial", "2.789"] {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let v = json(&["accept"]);
    assert_eq!(v["schema_version"], "3");
    assert!(close(&v["pinned_al"], 2.83, 1e-12));
    let probs = v["real"]["distribution"]["probabilities"].as_array().unwrap();
    for (p, want) in probs.iter().zip([0.22, 0.18, 0.15, 0.45]) {
        assert!(close(p, want, 1e-9), "{p} vs {want}");
    }
    let min_var = &v["schedules"][0];
    assert_eq!(min_var["schedule"]["kind"], "min-variance");
    assert!(close(&min_var["variance"], 0.1411, 1e-9));
    assert!(close(&min_var["p_zero"], 0.0, 1e-12));
}

#[test]
fn the_seed_model_named_explores_with_the_seed_drafter_but_never_judges_with_a_guess() {
    let (code, stdout, stderr) = run(&["accept", "--model", "minimax-m3", "--k", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("AL 2.830") && stdout.contains("minimaxm3_eagle3.yaml"), "{stdout}");
    assert!(stderr.contains("two drafters") && stderr.contains("MiniMax-M3-EAGLE3-GQA"), "{stderr}");
    // A verdict or a pin written from a guessed drafter is the mistake alsim exists to catch.
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/evidence/vllm_mtbench.log");
    let (code, _, stderr) = run(&["eval", "--pin-from", "--model", "minimax-m3", "--k", "3", log]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("matches 2 golden files"), "{stderr}");
    let (code, _, stderr) = run(&["pin", "--model", "minimax-m3", "--k", "3", "--engine", "vllm"]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn llamacpp_length_and_the_rates_pin_beside_the_others() {
    let (code, stdout, _) = run(&["accept"]);
    assert_eq!(code, 0);
    for want in [
        "llama.cpp length (geometric)",
        "rates pin (vLLM, llama.cpp)",
        "p = 0.7724",
        "\"synthetic_acceptance_rates\": [0.78, 0.60, 0.45]",
        "--spec-draft-n-max 3 --spec-synth-rates 0.78,0.60,0.45",
        "golden increments",
    ] {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let v = json(&["accept"]);
    let kinds: Vec<&str> =
        v["schedules"].as_array().unwrap().iter().map(|s| s["schedule"]["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["min-variance", "sglang-match-expected", "sglang-multinomial", "llamacpp-geometric", "rates-pin"]
    );
    // llama.cpp: one conditional rate p with p + p² + p³ = 1.83, so P(a = 3) = p³ and every count occurs.
    let geometric = &v["schedules"][3];
    assert!(close(&geometric["mean_al"], 2.83, 1e-8));
    let probs = geometric["schedule"]["distribution"]["probabilities"].as_array().unwrap();
    assert!(probs.iter().all(|q| q.as_f64().unwrap() > 0.1), "{probs:?}");
    assert!(close(&probs[3], 0.7724f64.powi(3), 1e-3));
    // The rates pin is the real chain: same distribution, total variation 0.
    let rates = &v["schedules"][4];
    assert!(close(&rates["total_variation"], 0.0, 1e-12), "{rates}");
    assert_eq!(rates["engines"], serde_json::json!(["vllm", "llamacpp"]));
    assert_eq!(v["rates_pin"]["rates"], serde_json::json!([0.78, 0.6, 0.45]));
    assert_eq!(v["rates_pin"]["derivation"]["from"], "increments");
    let settings = v["rates_settings"].as_array().unwrap();
    assert_eq!(settings[1]["lines"], serde_json::json!(["--spec-draft-n-max 3", "--spec-synth-rates 0.78,0.60,0.45"]));
}

#[test]
fn a_dipping_curve_gets_a_fitted_rates_pin_with_the_golden_mean() {
    // deepseek-v4-pro MTP thinking_off: AL(7) = 3.00 < AL(6) = 3.16, so the increments are no chain at k = 7.
    let args = ["accept", "--model", "deepseek-v4-pro", "--method", "mtp", "--mode", "thinking_off", "--k", "7"];
    let v = json(&[&args[..], &["--fit", "concave"]].concat());
    assert!(close(&v["pinned_al"], 3.00, 1e-12));
    let pin = &v["rates_pin"];
    assert_eq!(pin["derivation"]["from"], "fitted");
    assert_eq!(pin["derivation"]["fit"], "concave");
    assert!(close(&pin["chain_al"], 3.00, 1e-6), "{pin}");
    let rates: Vec<f64> = pin["rates"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
    assert_eq!(rates.len(), 7);
    assert!(rates.windows(2).all(|w| w[0] >= w[1]), "{rates:?}");
    assert!((1.0 + rates.iter().sum::<f64>() - 3.00).abs() < 7.0 * 0.5e-4, "{rates:?}");
    let (_, stdout, _) = run(&[&args[..], &["--fit", "concave"]].concat());
    assert!(stdout.contains("concave fit") && stdout.contains("held through AL(7)"), "{stdout}");
}

#[test]
fn gqa_sibling_and_explicit_rates() {
    let v = json(&["accept", "--drafter", "Inferact/MiniMax-M3-EAGLE3-GQA"]);
    assert!(close(&v["pinned_al"], 2.78, 1e-12));
    let v = json(&["accept", "--rates", "0.9,0.5,0.2", "--al", "2.6"]);
    assert!(close(&v["real"]["acceptance_length"], 2.6, 1e-12));
    assert!(close(&v["pinned_al"], 2.6, 1e-12));
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    for (args, needle) in [
        (vec!["accept", "--al", "4.5"], "[1.0000, 4.0000]"),
        (vec!["accept", "--k", "0"], "k = 0"),
        (vec!["accept", "--model", "llama-9"], "known models"),
        (vec!["accept", "--rates", "0.5,0.7"], "never increase"),
        (vec!["accept", "--rates", "0.5,x"], "not a number"),
        (vec!["accept", "--curve", "/nonexistent/curve.yaml"], "/nonexistent/curve.yaml"),
        (
            vec!["accept", "--model", "deepseek-v4-pro", "--method", "mtp", "--mode", "thinking_off", "--k", "7"],
            "valid chain",
        ),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn convert_writes_a_mean_as_every_pin_shape() {
    let v = json(&["convert", "--rates", "0.78,0.60,0.45"]);
    assert!(close(&v["acceptance_length"], 2.83, 1e-12));
    assert_eq!(v["given_rates"], serde_json::json!([0.78, 0.6, 0.45]));
    let geometric: Vec<f64> = v["geometric_rates"].as_array().unwrap().iter().map(|r| r.as_f64().unwrap()).collect();
    assert!((1.0 + geometric.iter().sum::<f64>() - 2.83).abs() < 1e-8, "{geometric:?}");
    let p = v["geometric_p"].as_f64().unwrap();
    assert!((geometric[2] - p.powi(3)).abs() < 1e-12);
    // A length has no given list; its two forced shapes have its mean.
    let v = json(&["convert", "2.83", "--k", "3"]);
    assert!(v["given_rates"].is_null());
    assert_eq!(v["forced_rates"][1].as_f64().unwrap(), 0.8300000000000001);
    // Geometric in, geometric out: the round trip returns p.
    let (code, stdout, _) = run(&["convert", "--geometric", "0.6", "--k", "5", "--to", "geometric-p"]);
    assert_eq!((code, stdout.as_str()), (0, "0.6\n"));
    for (args, needle) in [
        (vec!["convert", "--geometric", "0.5", "--rates", "0.5"], "cannot be used with"),
        (vec!["convert", "2.83", "--k", "3", "--to", "rates"], "min-variance, geometric, geometric-p"),
        (vec!["convert", "--rates", "0.5,0.6"], "never increase"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
    }
}

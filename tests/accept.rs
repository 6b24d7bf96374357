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
    assert_eq!(v["schema_version"], "1");
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

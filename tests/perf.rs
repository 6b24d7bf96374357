//! `alsim predict` and `alsim calibrate`: the seed's case on embedded defaults, every output format, the
//! SVG chart, calibration round trip, and bad input.

use crate::util::{json, run};

#[test]
fn seed_case_on_embedded_defaults() {
    let (code, stdout, stderr) = run(&["predict"]);
    assert_eq!(code, 0, "{stderr}");
    for want in
        ["AMD Instinct MI355X x4", "inferact-minimax-m3-eagle3", "Best k per concurrency", "minimaxm3_eagle3.yaml"]
    {
        assert!(stdout.contains(want), "missing {want} in\n{stdout}");
    }
    let v = json(&["predict"]);
    assert_eq!(v["schema_version"], "1");
    let sweep = &v["sweeps"][0];
    assert_eq!(sweep["hardware"], "mi355x");
    assert_eq!(sweep["tp"], 4);
    let predictions = sweep["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 5 * 9, "concurrency 1,4,8,12,16 x k 0..8");
    assert_eq!(predictions[3]["k"], 3);
    assert!((predictions[3]["al"].as_f64().unwrap() - 2.83).abs() < 1e-12);
    let best: Vec<u64> = sweep["best"].as_array().unwrap().iter().map(|b| b["concurrency"].as_u64().unwrap()).collect();
    assert_eq!(best, vec![1, 4, 8, 12, 16]);
    for b in sweep["best"].as_array().unwrap() {
        assert!(b["best_k"].as_u64().unwrap() > 0, "speculation pays on the seed's case: {b}");
        assert!(b["margin_pct"].as_f64().unwrap() >= 0.0);
    }
}

#[test]
fn formats_flags_and_sweep_over_all_hardware() {
    let (code, csv, _) = run(&["predict", "--format", "csv", "--concurrency", "1-3", "--max-k", "4"]);
    assert_eq!(code, 0);
    assert!(csv.starts_with("# Predicted decode") && csv.contains("concurrency,k,AL,step ms"), "{csv}");
    let (code, md, _) = run(&["predict", "--format", "md", "--concurrency", "2"]);
    assert_eq!(code, 0);
    assert!(md.contains("| concurrency | best k |"), "{md}");
    let v = json(&["predict", "--hardware", "all", "--tp", "8", "--concurrency", "1-64"]);
    let sweeps = v["sweeps"].as_array().unwrap();
    assert_eq!(sweeps.len(), 7);
    assert!(sweeps.iter().all(|s| s["predictions"].as_array().unwrap().len() == 64 * 9));
    let v = json(&[
        "predict",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3-GQA",
        "--context",
        "8192",
        "--kv-dtype",
        "fp8",
        "--precision",
        "fp8",
        "--min-user-tps",
        "150",
    ]);
    let sweep = &v["sweeps"][0];
    assert_eq!(sweep["drafter"], "inferact-minimax-m3-eagle3-gqa");
    assert_eq!(v["acceptance"]["al"][3], 2.78);
    assert_eq!(v["workload"]["kind"], "decode");
    for (b, p) in sweep["best"].as_array().unwrap().iter().filter_map(|b| b["best_k"].as_u64().map(|k| (b, k))) {
        let row = sweep["predictions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["concurrency"] == b["concurrency"] && r["k"] == p);
        assert!(row.unwrap()["per_user_tps"].as_f64().unwrap() >= 150.0);
    }
    let v = json(&[
        "predict",
        "--model",
        "glm-5.2",
        "--tp",
        "8",
        "--hardware",
        "b300",
        "--isl",
        "8192",
        "--osl",
        "1024",
        "--prefix-hit",
        "0.9",
    ]);
    assert_eq!(v["sweeps"][0]["drafter"], "glm-5.2-mtp");
    let v = json(&["predict", "--al", "1.8,2.4", "--concurrency", "4"]);
    assert_eq!(v["sweeps"][0]["predictions"].as_array().unwrap().len(), 3);
}

fn acceptance(v: &serde_json::Value) -> Vec<Option<f64>> {
    v["acceptance"]["al"].as_array().unwrap().iter().map(serde_json::Value::as_f64).collect()
}

fn swept_k(v: &serde_json::Value) -> Vec<u64> {
    let rows = v["sweeps"][0]["predictions"].as_array().unwrap();
    rows.iter().filter(|r| r["concurrency"] == rows[0]["concurrency"]).map(|r| r["k"].as_u64().unwrap()).collect()
}

#[test]
fn acceptance_from_a_fitted_chain_or_real_evidence() {
    // A fitted chain stays near the golden points and extends past k = 8.
    let v = json(&["predict", "--fit", "concave", "--max-k", "12", "--concurrency", "1,16"]);
    let al = acceptance(&v);
    assert_eq!(al.len(), 13);
    for (k, golden) in [(1, 1.78), (2, 2.38), (3, 2.83)] {
        assert!((al[k].unwrap() - golden).abs() < 0.05, "k = {k}: {al:?}");
    }
    assert!(al.windows(2).all(|w| w[1].unwrap() >= w[0].unwrap()), "AL never falls with k: {al:?}");
    assert!(v["acceptance"]["description"].as_str().unwrap().ends_with("concave fit"));
    assert_eq!(swept_k(&v), (0..=12).collect::<Vec<_>>());

    // vLLM logs count positions: AL(1..3) are the same numbers `alsim eval` estimates.
    let log = "tests/fixtures/evidence/vllm_mtbench.log";
    let v = json(&["predict", "--evidence", log, "--concurrency", "1,16"]);
    // 40 log intervals make a short series: a wide tolerance keeps this a consistent (exit 0) reading.
    let eval = json(&["eval", log, "--pin", "2.7", "--k", "3", "--tolerance", "0.1"]);
    let estimate = &eval["files"][0]["estimate"];
    let al = acceptance(&v);
    assert_eq!(al.len(), 9, "{al:?}");
    assert!((al[3].unwrap() - estimate["independent"]["point_estimate"].as_f64().unwrap()).abs() < 1e-9);
    let p1 = estimate["positions"][0]["unconditional"]["point_estimate"].as_f64().unwrap();
    assert!((al[1].unwrap() - 1.0 - p1).abs() < 1e-9);
    assert!(al[4..].iter().all(Option::is_none), "nothing measured past the run's k: {al:?}");
    assert_eq!(swept_k(&v), vec![0, 1, 2, 3]);

    // SGLang counts accepted tokens only: AL at its k alone, unless a fit extends it.
    let prom = "tests/fixtures/evidence/sglang_gsm8k.prom";
    let v = json(&["predict", "--evidence", prom, "--concurrency", "1"]);
    assert_eq!(swept_k(&v), vec![0, 3]);
    let (code, table, _) = run(&["predict", "--evidence", prom, "--concurrency", "1"]);
    assert_eq!(code, 0);
    assert!(table.contains("1.00, –, –, 3.5") && table.contains("not measured"), "{table}");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("k.svg");
    assert_eq!(run(&["predict", "--evidence", prom, "--plot", svg.to_str().unwrap()]).0, 0);
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("k = 3") && !svg.contains("k = 1"), "the chart draws only the k swept");
    let fitted = json(&["predict", "--evidence", prom, "--fit", "constant-alpha", "--concurrency", "1"]);
    let al = acceptance(&fitted);
    assert!((al[3].unwrap() - acceptance(&v)[3].unwrap()).abs() < 1e-3, "the fit passes through its one point");
    assert_eq!(swept_k(&fitted), (0..=8).collect::<Vec<_>>());

    // Explicit values can be fitted too.
    let v = json(&["predict", "--al", "1.8,2.4,2.85", "--fit", "geometric-decay", "--max-k", "6"]);
    assert_eq!(acceptance(&v).len(), 7);
}

#[test]
fn plot_is_an_svg_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chart.svg");
    let p = path.to_str().unwrap();
    let (code, _, stderr) = run(&["predict", "--plot", p]);
    assert_eq!(code, 0, "{stderr}");
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("k = 3") && svg.contains("B=16"), "{}", &svg[..200]);
    let (code, _, stderr) = run(&["predict", "--plot", p]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--force"), "{stderr}");
    assert_eq!(run(&["predict", "--plot", p, "--force"]).0, 0);
}

#[test]
fn calibrate_then_predict_with_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b200.csv");
    let o = out.to_str().unwrap();
    let v = json(&["calibrate", "tests/data/speedbench_eagle3.csv", "--output", o]);
    assert!(v["rmse_spec_off_ms"].as_f64().unwrap() < 0.5, "{v}");
    assert!(v["rmse_spec_ms"].as_f64().unwrap() < 2.0, "{v}");
    assert_eq!(v["draft_fixed_us"]["identified"], true);
    assert_eq!(v["residuals"].as_array().unwrap().len(), 6);
    let (code, _, stderr) = run(&["calibrate", "tests/data/speedbench_eagle3.csv", "--output", o]);
    assert_eq!(code, 2, "an existing profile is never overwritten without --force");
    assert!(stderr.contains("--force"), "{stderr}");
    let v = json(&[
        "predict",
        "--profile",
        o,
        "--model",
        "llama-3.3-70b",
        "--drafter",
        "EAGLE3",
        "--al",
        "1.9,2.1,2.12",
        "--context",
        "1024",
        "--concurrency",
        "16",
        "--tp",
        "1",
        "--precision",
        "bf16",
    ]);
    let sweep = &v["sweeps"][0];
    assert_eq!(sweep["hardware"], "b200");
    let k3 = &sweep["predictions"][3];
    // Calibrated on the same rows: t_sd 25.9 ms within 10%.
    assert!((k3["step_ms"].as_f64().unwrap() / 25.9 - 1.0).abs() < 0.1, "{k3}");
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let single = dir.path().join("single.csv");
    std::fs::write(&single, "hardware,model,tp,concurrency,k,context,step_ms\nb200,llama-3.3-70b,1,16,0,1024,19.6\n")
        .unwrap();
    let missing = dir.path().join("missing.csv");
    std::fs::write(&missing, "hardware,model,tp,k,context,step_ms\nb200,llama-3.3-70b,1,0,1024,19.6\n").unwrap();
    let negative = dir.path().join("negative.csv");
    std::fs::write(&negative, "hardware,model,tp,concurrency,k,context,tpot_ms\nb200,llama-3.3-70b,1,16,0,1024,-2\n")
        .unwrap();
    let zero = dir.path().join("zero.prom");
    let no_steps: String =
        (0..4).map(|a| format!("atom:mtp_decode_steps_total{{accepted_tokens=\"{a}\"}} 0\n")).collect();
    std::fs::write(&zero, no_steps).unwrap();
    for (args, needle) in [
        (vec!["predict", "--hardware", "tpu-v9"], "unknown hardware 'tpu-v9'"),
        (vec!["predict", "--model", "llama-9"], "known"),
        (vec!["predict", "--tp", "3"], "query heads"),
        (vec!["predict", "--tp", "0"], "at least 1"),
        (vec!["predict", "--tp", "1", "--hardware", "h100"], "GB of weights"),
        (vec!["predict", "--concurrency", "0"], "at least 1"),
        (vec!["predict", "--concurrency=-4"], "negative"),
        (vec!["predict", "--min-user-tps", "0"], "--min-user-tps"),
        (vec!["predict", "--prefix-hit", "1.5"], "--prefix-hit"),
        (vec!["predict", "--osl", "0"], "--osl"),
        (vec!["predict", "--context=-5"], "--context"),
        (vec!["predict", "--al", "2.5"], "--al"),
        (vec!["predict", "--max-k", "9"], "k = 9"),
        (vec!["predict", "--max-k", "0"], "--max-k"),
        (vec!["predict", "--al", "2.5,3", "--fit", "concave"], "--al"),
        (vec!["predict", "--fit", "concave", "--max-k", "40"], "--max-k"),
        (vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.log"], "--evidence-k"),
        (vec!["predict", "--evidence", "/nonexistent/m.prom"], "/nonexistent/m.prom"),
        (vec!["predict", "--evidence-k", "3"], "--evidence"),
        (vec!["predict", "--al", "2", "--evidence", "tests/fixtures/evidence/vllm_mtbench.log"], "cannot be used"),
        (
            vec![
                "predict",
                "--evidence",
                "tests/fixtures/evidence/vllm_mtbench.log",
                "--evidence",
                "tests/fixtures/evidence/sglang_gsm8k.log",
                "--evidence-k",
                "4",
            ],
            "drop --evidence-k 4 or set it to 3",
        ),
        (
            vec![
                "predict",
                "--evidence",
                zero.to_str().unwrap(),
                "--evidence",
                "tests/fixtures/evidence/atom_mtbench.prom",
            ],
            "zero.prom:1: the evidence counts no verification steps",
        ),
        (
            vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.prom", "--fit", "concave"],
            "constant-alpha",
        ),
        (
            vec!["predict", "--evidence", "tests/fixtures/evidence/sglang_gsm8k.log", "--evidence-k", "0"],
            "--evidence-k",
        ),
        (vec!["predict", "--evidence", "tests/fixtures/evidence/vllm_mtbench.log", "--curve", "x.yaml"], "--curve"),
        (vec!["predict", "--al", "1.8", "--golden", "golden"], "--golden"),
        (vec!["predict", "--decode-log-interval", "20"], "give --evidence"),
        (vec!["predict", "--al", "1.8,2.4", "--max-k", "5"], "add --fit"),
        (vec!["predict", "--max-k", "40"], "--max-k"),
        (vec!["predict", "--kv-dtype", "fp4"], "--kv-dtype"),
        (vec!["predict", "--profile", "/nonexistent/p.csv"], "/nonexistent/p.csv"),
        (vec!["calibrate", "/nonexistent/m.csv"], "/nonexistent/m.csv"),
        (vec!["calibrate", single.to_str().unwrap()], "at least two"),
        (vec!["calibrate", missing.to_str().unwrap()], "missing column(s) concurrency"),
        (vec!["calibrate", negative.to_str().unwrap()], "must be > 0"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

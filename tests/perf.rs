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

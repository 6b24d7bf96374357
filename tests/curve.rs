//! `alsim curve …` and `alsim convert`: golden files as InferenceX writes them, and every malformed input.

use crate::util::{json, run};

const INFERENCEX: &str = "tests/fixtures/inferencex_golden";

#[test]
fn list_shows_every_embedded_curve_with_its_drafter() {
    let v = json(&["curve", "list"]);
    let curves = v["curves"].as_array().unwrap();
    assert_eq!(curves.len(), 9);
    let drafters: Vec<&str> = curves.iter().filter_map(|c| c["drafter"].as_str()).collect();
    assert!(drafters.contains(&"Inferact/MiniMax-M3-EAGLE3") && drafters.contains(&"Inferact/MiniMax-M3-EAGLE3-GQA"));
    assert!(curves.iter().all(|c| c["k_min"] == 1 && c["k_max"] == 8));
}

#[test]
fn check_reads_inferencex_files_unchanged_and_reports_their_problems() {
    let (code, stdout, stderr) = run(&["curve", "check", INFERENCEX, "--format", "json"]);
    assert_eq!(code, 1, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["files_checked"], 9);
    let problems = v["problems"].as_array().unwrap();
    let find = |kind: &str, field: &str| {
        problems.iter().find(|p| p["class"] == kind && p["field"] == field).unwrap_or_else(|| panic!("{kind} {field}"))
    };
    // The two MiniMax-M3 files differ only by name.
    assert_eq!(problems.iter().filter(|p| p["class"] == "drafter-ambiguity").count(), 2);
    // dsv4_mtp thinking_off: AL(7) = 3.00 < AL(6) = 3.16, a dip of 0.16 beyond noise.
    let dip = find("dip", "deepseek-v4-pro.thinking_off.7");
    assert_eq!(dip["severity"], "error");
    assert!((dip["size"].as_f64().unwrap() - 0.16).abs() < 1e-9);
    assert!(dip["noise_se"].as_f64().unwrap() > 0.0);
    // minimax thinking_on p_8 = 0.21 > p_7 = 0.08: a rise within noise.
    assert_eq!(find("rise", "minimax-m3.thinking_on.8")["severity"], "warning");
}

#[test]
fn check_of_shapes_and_clean_files_passes() {
    let (code, stdout, stderr) = run(&["curve", "check", "tests/fixtures/curves/flat_list.yaml", "--strict"]);
    // k = 4..8 missing is a warning, so --strict fails it…
    assert_eq!(code, 1, "{stdout}{stderr}");
    let (code, _, stderr) = run(&["curve", "check", "tests/fixtures/curves/flat_list.yaml"]);
    assert_eq!(code, 0, "{stderr}"); // …and without --strict it passes.
    let v = json(&["curve", "list", "tests/fixtures/curves/plain_map.yaml", "tests/fixtures/curves/flat_list.yaml"]);
    let shapes: Vec<&str> = v["curves"].as_array().unwrap().iter().map(|c| c["shape"].as_str().unwrap()).collect();
    assert_eq!(shapes, ["plain_map", "flat_list"]);
}

#[test]
fn unreadable_curve_files_are_input_errors_and_bad_curves_are_problems() {
    // Files that cannot be parsed: exit 2 with the reason on stderr, nothing on stdout.
    for (file, needle) in [
        ("duplicate_key.yaml", "duplicate"),
        ("not_a_number.yaml", "not_a_number.yaml: example-model.2"),
        ("k_zero.yaml", "k_zero.yaml: example-model.0"),
        ("bad_yaml.yaml", "bad_yaml.yaml:"),
        ("wrong_shape.yaml", "expected a mapping of model keys"),
    ] {
        let path = format!("tests/fixtures/curves/{file}");
        let (code, stdout, stderr) = run(&["curve", "check", &path]);
        assert_eq!(code, 2, "{file}: {stdout}{stderr}");
        assert!(
            stderr.contains(needle) && stderr.starts_with("alsim: error: "),
            "{file}: expected '{needle}' in {stderr}"
        );
        assert!(stdout.is_empty(), "{file}: {stdout}");
        // Used as a curve for a lookup, the same file is an input error.
        let (code, _, stderr) = run(&["accept", "--curve", &path, "--model", "example-model", "--k", "3"]);
        assert_eq!(code, 2, "{file}: {stderr}");
    }
    // A curve that reads but is wrong: a problem found by the check, exit 1 on stdout.
    let (code, stdout, stderr) = run(&["curve", "check", "tests/fixtures/curves/out_of_range.yaml"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("example-model.3") && stderr.is_empty(), "{stdout}{stderr}");
    // Both at once: the readable file is still reported, and the unreadable one makes it exit 2.
    let (code, stdout, stderr) =
        run(&["curve", "check", "tests/fixtures/curves/out_of_range.yaml", "tests/fixtures/curves/bad_yaml.yaml"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stdout.contains("example-model.3"), "{stdout}");
    assert!(stderr.contains("1 of 2 curve file(s) could not be read") && stderr.contains("bad_yaml.yaml:"), "{stderr}");
    let (code, _, stderr) = run(&["curve", "check", "/nonexistent/golden.yaml"]);
    assert_eq!(code, 2);
    assert_eq!(stderr.matches("No such file").count(), 1, "said once: {stderr}");
}

#[test]
fn show_gives_chain_problems_and_fits() {
    let v = json(&["curve", "show", "--drafter", "Inferact/MiniMax-M3-EAGLE3-GQA"]);
    assert_eq!(v["points"][2]["al"], 2.78);
    assert_eq!(v["fits"].as_array().unwrap().len(), 4);
    assert!(v["problems"].as_array().unwrap().iter().any(|p| p["field"] == "minimax-m3.thinking_on.7"));
}

#[test]
fn lookup_reads_inferencex_files_by_file_name() {
    let v = json(&[
        "accept",
        "--golden",
        INFERENCEX,
        "--model",
        "minimax-m3",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3-GQA",
    ]);
    assert_eq!(v["pinned_al"], 2.78);
    let v =
        json(&["accept", "--golden", INFERENCEX, "--model", "minimax-m3", "--drafter", "Inferact/MiniMax-M3-EAGLE3"]);
    assert_eq!(v["pinned_al"], 2.83);
}

#[test]
fn fit_reports_leave_one_k_out_for_every_curve() {
    let v = json(&["curve", "fit"]);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14 * 4, "14 curves × 4 fits");
    assert!(rows.iter().all(|r| r["loo_rmse"].as_f64().is_some_and(|e| (0.0..1.0).contains(&e))));
}

#[test]
fn convert_every_spelling() {
    let v = json(&["convert", "2.83", "--k", "3"]);
    let values: Vec<f64> = v["spellings"].as_array().unwrap().iter().map(|s| s["value"].as_f64().unwrap()).collect();
    for (got, want) in values.iter().zip([2.83, 1.83, 0.61, 0.7075]) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    assert_eq!(v["forced_rates"][0], 1.0);
    assert_eq!(run(&["convert", "1.78", "--from", "accepted-drafts", "--k", "3", "--to", "al"]).1, "2.78\n");
    assert_eq!(run(&["convert", "0.61", "--from", "rate", "--k", "3", "--to", "al"]).1, "2.83\n");
    assert_eq!(run(&["convert", "--rates", "0.78,0.60,0.45", "--to", "rate"]).1, "0.61\n");
    for args in [
        vec!["convert", "4.5", "--k", "3"],
        vec!["convert", "1.2", "--from", "rate", "--k", "3"],
        vec!["convert", "-0.5", "--from", "accepted-drafts", "--k", "3"],
        vec!["convert", "2.0", "--k", "0"],
        vec!["convert", "2.0"],
        vec!["convert", "2.0", "--from", "furlongs", "--k", "3"],
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// One noise model for both commands: on every golden directory the project has, `pins check` reports as
/// curve problems exactly the entries `curve check` finds beyond noise (and its drafter ambiguities).
#[test]
fn curve_check_and_pins_check_judge_the_same_curves_alike() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["golden", "tests/fixtures/inferencex_golden", "tests/fixtures/benchrepo/golden_al_distribution"] {
        let golden = root.join(dir);
        let (_, out, _) = run(&["curve", "check", golden.to_str().unwrap(), "--format", "json"]);
        let checked: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut by_curve_check: Vec<(String, u64, String)> = checked["problems"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["severity"] == "error" && p["class"] != "missing-k" || p["class"] == "drafter-ambiguity")
            .map(|p| {
                let file = p["location"]["file"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
                let message = p["message"].as_str().unwrap();
                // Both checks name the entry before the message; an ambiguity's message names its keys.
                let text = if p["class"] == "drafter-ambiguity" {
                    message.to_string()
                } else {
                    format!("{}: {message}", p["field"].as_str().unwrap())
                };
                (file, p["location"]["line"].as_u64().unwrap(), text)
            })
            .collect();
        // A repository holding nothing but those curves, so that no pin rests on any entry.
        let repo = tempfile::tempdir().unwrap();
        let (_, out, _) = run(&[
            "pins",
            "check",
            repo.path().to_str().unwrap(),
            "--golden",
            golden.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let pins: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut by_pins_check: Vec<(String, u64, String)> = pins["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["class"] == "curve-problem")
            .map(|f| {
                let file = f["location"]["file"].as_str().unwrap().rsplit('/').next().unwrap().to_string();
                let message =
                    f["message"].as_str().unwrap().trim_end_matches(" (no pin's expected value rests on this entry)");
                (file, f["location"]["line"].as_u64().unwrap(), message.to_string())
            })
            .collect();
        by_curve_check.sort();
        by_pins_check.sort();
        assert!(!by_curve_check.is_empty() || dir == "golden", "{dir}: the fixtures have problems to compare");
        assert_eq!(by_pins_check, by_curve_check, "{dir}");
    }
}

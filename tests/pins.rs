//! `alsim pins check|list` on the fixture benchmark repository, and `alsim pin`.
//!
//! The fixture (`tests/fixtures/benchrepo/`) plants at least one error of each class of pins.md; each
//! file's first comment says which. The check must find every one, by file and class, and nothing at the
//! files whose pins are correct.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::run;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo")
}

fn check_json(args: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = run(args);
    assert!(code != 101 && !stderr.contains("panicked"), "{stderr}");
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("invalid JSON ({e}): {stdout}\n{stderr}"));
    (code, value)
}

fn fixture_check() -> (i32, Value) {
    let repo = fixture();
    let allow = repo.join("alsim-allow.yaml");
    check_json(&["pins", "check", repo.to_str().unwrap(), "--allow", allow.to_str().unwrap(), "--format", "json"])
}

const AGENTIC: &str = "benchmarks/single_node/agentic/";
const RECIPES: &str = "benchmarks/multi_node/agentic/recipes/";

/// (file, class, sanctioned by the allow-list)
fn planted() -> Vec<(String, &'static str, bool)> {
    let a = |f: &str| format!("{AGENTIC}{f}");
    let r = |f: &str| format!("{RECIPES}{f}");
    vec![
        (r("minimaxm3/gb300-sglang-disagg-mtp-k2.yaml"), "wrong-k", false),
        (a("minimaxm3_fp8_mi300x_atom_mtp.sh"), "wrong-drafter", false),
        (a("minimaxm3_fp8_h200_vllm_mtp.sh"), "wrong-drafter", false),
        (r("kimik3/gb300-vllm-agg-dspark-greedy-curve.yaml"), "wrong-drafter", false),
        (a("minimaxm3_fp4_b200_sglang_mtp.sh"), "wrong-thinking-mode", false),
        (a("minimaxm3_fp4_gb200_sglang_mtp.sh"), "wrong-thinking-mode", true),
        ("configs/minimaxm3-master.yaml".into(), "wrong-thinking-mode", false),
        (a("kimik2.5_fp4_h200_vllm_mtp.sh"), "wrong-model", false),
        (a("minimaxm3_fp4_b200_trt_mtp.sh"), "spelling", false),
        (a("glm5.2_fp8_b200_sglang_mtp.sh"), "spelling", false),
        (r("kimik3/gb300-vllm-agg-dspark-nosynthetic.yaml"), "spelling", false),
        (a("qwen3.5_fp4_mi355x_atom_mtp.sh"), "out-of-range", false),
        (a("minimaxm3_fp4_mi325x_atom_mtp.sh"), "never-passed", false),
        ("configs/minimaxm3-master.yaml".into(), "never-passed", false),
        (a("kimik2.5_fp4_b300_trt_mtp.sh"), "eval-leak", false),
        (r("minimaxm3/gb300-vllm-agg-eval-pinned.yaml"), "eval-leak", false),
        (a("glm5.2_fp8_h200_vllm_mtp.sh"), "missing-pin", false),
        (a("dsv4_fp4_mi300x_atom_mtp.sh"), "missing-pin", false),
        (a("minimaxm3_fp4_mi350x_atom_mtp.sh"), "drift", false),
        (a("minimaxm3_fp4_b300_vllm_mtp.sh"), "drift", false),
        ("CHANGELOG.md".into(), "drift", false),
        ("golden_al_distribution/minimaxm3_eagle3_gqa.yaml".into(), "curve-problem", false),
        ("golden_al_distribution/dsv4_mtp.yaml".into(), "curve-problem", false),
        (a("qwen3.5_fp4_h200_vllm_mtp.sh"), "assumption", false),
    ]
}

/// Files whose every pin is correct.
fn correct_files() -> Vec<String> {
    [
        "minimaxm3_fp4_mi355x_atom_mtp.sh",
        "minimaxm3_fp4_b200_vllm_mtp.sh",
        "qwen3.5_fp4_b200_sglang_mtp.sh",
        "kimik2.5_fp4_b200_trt_mtp.sh",
        "glm5.2_fp8_mi355x_atom_mtp.sh",
        "dsv4_fp4_mi355x_atom_mtp.sh",
    ]
    .iter()
    .map(|f| format!("{AGENTIC}{f}"))
    .chain(
        [
            "minimaxm3/gb300-sglang-disagg-mtp.yaml",
            "kimik3/gb300-vllm-agg-dspark.yaml",
            "minimaxm3/gb300-vllm-agg-eval.yaml",
            "minimaxm3/gb300-vllm-agg-mtp.yaml",
        ]
        .iter()
        .map(|f| format!("{RECIPES}{f}")),
    )
    .chain([
        "benchmarks/common/spec_al_table.sh".to_string(),
        "benchmarks/single_node/speedbench/minimaxm3_fp4_b300_vllm.sh".to_string(),
    ])
    .collect()
}

fn findings(report: &Value) -> Vec<(String, String, usize, bool)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["location"]["file"].as_str().unwrap().to_string(),
                f["class"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap() as usize,
                !f["allowed"].is_null(),
            )
        })
        .collect()
}

#[test]
fn every_planted_error_is_found_and_nothing_else() {
    let (code, report) = fixture_check();
    assert_eq!(code, 1, "planted errors fail the check");
    let found = findings(&report);
    for (file, class, allowed) in planted() {
        assert!(
            found.iter().any(|(f, c, _, a)| *f == file && c == class && *a == allowed),
            "missing {class} (allowed: {allowed}) at {file}; found {found:#?}"
        );
    }
    let planted = planted();
    for (file, class, line, _) in &found {
        let expected = planted.iter().any(|(f, c, _)| f == file && c == class)
            || (file.starts_with("golden_al_distribution/") && class == "curve-problem");
        assert!(expected, "unexpected {class} at {file}:{line}");
    }
    // The master config's correct entry (line 10) raises nothing; its planted entries do.
    assert!(!found.iter().any(|(f, _, l, _)| f == "configs/minimaxm3-master.yaml" && *l == 10), "{found:#?}");
    let correct = correct_files();
    for (file, class, line, _) in &found {
        assert!(!correct.contains(file), "{class} at {file}:{line} is a correct pin");
    }
    assert_eq!(report["summary"]["allowed"], 1);
}

fn pin_at<'a>(report: &'a Value, file: &str) -> Vec<&'a Value> {
    report["pins"].as_array().unwrap().iter().filter(|p| p["location"]["file"] == file).collect()
}

#[test]
fn seed_recipe_and_its_siblings() {
    let (_, report) = fixture_check();
    let seed = pin_at(&report, &format!("{AGENTIC}minimaxm3_fp4_mi355x_atom_mtp.sh"));
    let [seed] = seed.as_slice() else { panic!("{seed:?}") };
    assert_eq!(seed["engine"]["value"], "atom");
    assert_eq!(seed["knob"], "atom_length");
    assert_eq!(seed["written"]["value"], 2.83);
    assert_eq!(seed["k"]["value"], 3);
    assert_eq!(seed["drafter"]["value"], "Inferact/MiniMax-M3-EAGLE3");
    assert_eq!(seed["mode"]["value"], "thinking_on");
    assert_eq!(seed["eval_guard"], "guarded");
    assert_eq!(seed["verdict"], "ok");
    assert!(seed["golden"]["file"].as_str().unwrap().ends_with("golden_al_distribution/minimaxm3_eagle3.yaml"));

    let vllm = pin_at(&report, &format!("{AGENTIC}minimaxm3_fp4_b200_vllm_mtp.sh"));
    let [vllm] = vllm.as_slice() else { panic!("{vllm:?}") };
    assert_eq!((vllm["written"]["value"].as_f64(), vllm["written"]["how"].as_str()), (Some(2.78), Some("variable")));
    assert!(vllm["golden"]["file"].as_str().unwrap().ends_with("minimaxm3_eagle3_gqa.yaml"));
    assert_eq!(vllm["golden"]["drafter_match"], "file_name");
    assert_eq!(vllm["verdict"], "ok");

    for swapped in ["minimaxm3_fp8_mi300x_atom_mtp.sh", "minimaxm3_fp8_h200_vllm_mtp.sh"] {
        let pins = pin_at(&report, &format!("{AGENTIC}{swapped}"));
        assert_eq!(pins[0]["verdict"], "mismatch", "{swapped}");
    }
}

#[test]
fn every_mechanism_resolves_to_the_golden_value() {
    let (_, report) = fixture_check();
    let ok = |file: &str| -> Vec<(Option<u64>, String)> {
        pin_at(&report, file)
            .iter()
            .map(|p| {
                assert_eq!(p["verdict"], "ok", "{file}: {p}");
                (p["k"]["value"].as_u64(), p["written"]["how"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let branches = ok(&format!("{AGENTIC}qwen3.5_fp4_b200_sglang_mtp.sh"));
    assert_eq!(branches.iter().map(|b| b.0).collect::<Vec<_>>(), [Some(1), Some(2), Some(3)]);
    assert_eq!(ok(&format!("{AGENTIC}glm5.2_fp8_mi355x_atom_mtp.sh"))[0].1, "computed");
    assert_eq!(ok(&format!("{AGENTIC}dsv4_fp4_mi355x_atom_mtp.sh"))[0].1, "table");
    assert_eq!(ok(&format!("{AGENTIC}kimik2.5_fp4_b200_trt_mtp.sh"))[0].0, Some(3));
    let roles = ok(&format!("{RECIPES}minimaxm3/gb300-sglang-disagg-mtp.yaml"));
    assert_eq!(roles.iter().map(|r| r.0).collect::<Vec<_>>(), [Some(2), Some(3)]);
    ok(&format!("{RECIPES}kimik3/gb300-vllm-agg-dspark.yaml"));
    let injected: Vec<&Value> = pin_at(&report, "configs/minimaxm3-master.yaml")
        .into_iter()
        .filter(|p| p["branch"].as_str().unwrap().contains("gb300-vllm-agg-mtp.yaml"))
        .collect();
    assert_eq!(injected.len(), 2, "the correct entry and the leaky-eval entry inject into the same recipe");
    for pin in injected {
        assert_eq!((pin["verdict"].as_str(), pin["written"]["how"].as_str()), (Some("ok"), Some("injected")), "{pin}");
    }
}

#[test]
fn output_formats_and_golden_override() {
    let repo = fixture();
    let repo_str = repo.to_str().unwrap();
    let (code, stdout, _) = run(&["pins", "check", repo_str, "--format", "github"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("::error file=benchmarks/single_node/agentic/minimaxm3_fp4_b200_trt_mtp.sh,line=11,"),
        "{stdout}"
    );
    assert!(stdout.contains("::warning file="), "{stdout}");
    let (code, stdout, _) = run(&["pins", "check", repo_str]);
    assert_eq!(code, 1);
    assert!(stdout.contains("wrong-drafter") && stdout.contains("note: "), "{stdout}");
    let (code, stdout, _) = run(&["pins", "list", repo_str, "--format", "csv"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("file,line,branch,mechanism,engine,knob,written,k,"), "{stdout}");
    assert!(stdout.contains("SPEC_STEPS=3") && stdout.contains("lookup table"), "{stdout}");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden_out_of_range");
    let (_, report) =
        check_json(&["pins", "check", repo_str, "--golden", golden.to_str().unwrap(), "--format", "json"]);
    assert!(report["golden_source"].as_str().unwrap().contains("--golden"));
    assert!(
        findings(&report)
            .iter()
            .any(|(f, c, l, _)| f.ends_with("golden_out_of_range/qwen3.5_mtp.yaml") && c == "curve-problem" && *l == 5),
        "{:#?}",
        findings(&report)
    );
}

/// A scratch repository with the fixture's Qwen3.5 golden file (a clean curve) and the given scripts.
fn scratch(scripts: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden_al_distribution");
    std::fs::create_dir(&golden).unwrap();
    std::fs::copy(fixture().join("golden_al_distribution/qwen3.5_mtp.yaml"), golden.join("qwen3.5_mtp.yaml")).unwrap();
    for (name, text) in scripts {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

#[test]
fn warnings_fail_only_when_strict_and_unresolved_is_undecided() {
    let qwen = std::fs::read_to_string(fixture().join(format!("{AGENTIC}qwen3.5_fp4_h200_vllm_mtp.sh"))).unwrap();
    let dir = scratch(&[("agentic/qwen.sh", &qwen)]);
    let repo = dir.path().to_str().unwrap();
    assert_eq!(run(&["pins", "check", repo]).0, 0);
    assert_eq!(run(&["pins", "check", repo, "--strict"]).0, 1);
    let dir = scratch(&[(
        "agentic/env.sh",
        "if [ \"$EVAL_ONLY\" != true ]; then\n  ARGS=\"--spec-decode-acceptance-length $AL_FROM_CI\"\nfi\natom --model Qwen/Qwen3.5-397B-A17B --num-speculative-tokens 3 $ARGS\n",
    )]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["pins"][0]["written"]["how"], "unresolved");
    assert!(report["findings"][0]["message"].as_str().unwrap().contains("AL_FROM_CI"));
}

#[test]
fn unreadable_inputs_are_skipped_with_a_note() {
    let dir = scratch(&[("bin.sh", "")]);
    std::fs::write(dir.path().join("bin.sh"), b"#!/bin/sh\n\0\x01speculative").unwrap();
    std::fs::write(dir.path().join("latin1.yaml"), b"speculative: \xe9\n").unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "speculative: [\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(".", dir.path().join("loop")).unwrap();
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 0, "skipped files are notes, not failures: {report}");
    let skipped: Vec<String> =
        report["skipped"].as_array().unwrap().iter().map(|s| format!("{} {}", s["path"], s["reason"])).collect();
    for want in ["bin.sh", "latin1.yaml", "broken.yaml"] {
        assert!(skipped.iter().any(|s| s.contains(want)), "{want} not in {skipped:?}");
    }
    #[cfg(unix)]
    assert!(skipped.iter().any(|s| s.contains("loop") && s.contains("symlink loop")), "{skipped:?}");
}

#[test]
fn pin_prints_engine_native_settings() {
    let base = [
        "pin",
        "--model",
        "minimax-m3",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3",
        "--mode",
        "thinking_on",
        "--k",
        "3",
        "--engine",
    ];
    let out = |engine: &str| {
        let mut args = base.to_vec();
        args.push(engine);
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 0, "{stderr}");
        stdout
    };
    assert_eq!(out("atom"), "--spec-decode-acceptance-length 2.83\n");
    assert_eq!(out("trtllm"), "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.83\n");
    assert_eq!(
        out("sglang"),
        "SGLANG_SIMULATE_ACC_LEN=2.83\nSGLANG_SIMULATE_ACC_METHOD=match-expected\nSGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\n"
    );
    assert!(out("vllm").contains("\"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": 2.83"));
    let (_, stdout, _) =
        run(&["pin", "--drafter", "Inferact/MiniMax-M3-EAGLE3-GQA", "--k", "3", "--engine", "atom", "--rate"]);
    assert_eq!(stdout, "--spec-decode-acceptance-rate 0.593333\n");
}

#[test]
fn bad_input_is_exit_2_never_a_panic() {
    let allow = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(allow.path(), "- file: a.sh\n  class: drift\n").unwrap();
    let repo = fixture();
    for (args, needle) in [
        (vec!["pins", "check", "/nonexistent/repo"], "/nonexistent/repo"),
        (vec!["pins", "check", repo.to_str().unwrap(), "--allow", allow.path().to_str().unwrap()], "reason"),
        (vec!["pins", "check", repo.to_str().unwrap(), "--golden", "/nonexistent/golden"], "/nonexistent/golden"),
        (vec!["pin", "--k", "3", "--engine", "tgi"], "unknown engine"),
        (vec!["pin", "--k", "9", "--engine", "atom"], "k = 9"),
        (vec!["pin", "--k", "3", "--engine", "vllm", "--rate"], "only ATOM"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

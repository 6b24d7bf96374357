//! Rate lists in `alsim pins check` (issue 16): vLLM's `synthetic_acceptance_rates` and llama.cpp's
//! `--spec-synth-rates`, on the fixture repository `tests/fixtures/ratesrepo/` (one script per case, each
//! with a twin that is right), and the seed's rates pin as `alsim pin --shape real` writes it, read back.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::pins::check_json;
use crate::util::run;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ratesrepo")
}

fn report_of(repo: &Path) -> (i32, Value) {
    check_json(&["pins", "check", repo.to_str().unwrap(), "--format", "json"])
}

/// The verdict of the one pin in `script`, and the classes of the findings there.
fn verdict(report: &Value, script: &str) -> (String, Vec<String>) {
    let pins: Vec<&Value> = report["pins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["location"]["file"].as_str().unwrap().ends_with(script))
        .collect();
    let [pin] = pins.as_slice() else { panic!("{script}: {} pins", pins.len()) };
    let classes = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["location"]["file"].as_str().unwrap().ends_with(script))
        .map(|f| f["class"].as_str().unwrap().to_string())
        .collect();
    (pin["verdict"].as_str().unwrap().to_string(), classes)
}

fn seed_pin(engine: &str) -> Vec<String> {
    let (code, stdout, stderr) = run(&[
        "pin",
        "--model",
        "minimax-m3",
        "--drafter",
        "Inferact/MiniMax-M3-EAGLE3",
        "--k",
        "3",
        "--mode",
        "thinking_on",
        "--engine",
        engine,
        "--shape",
        "real",
    ]);
    assert_eq!(code, 0, "{stderr}");
    stdout.lines().map(str::to_string).collect()
}

/// A repository holding the fixture's golden file and one launch script.
fn repo_with(script: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden_al_distribution");
    std::fs::create_dir_all(&golden).unwrap();
    std::fs::copy(fixture().join("golden_al_distribution/minimaxm3_eagle3.yaml"), golden.join("minimaxm3_eagle3.yaml"))
        .unwrap();
    let scripts = dir.path().join("benchmarks/single_node/agentic");
    std::fs::create_dir_all(&scripts).unwrap();
    std::fs::write(scripts.join("minimaxm3_seed_mtp.sh"), script).unwrap();
    dir
}

#[test]
fn the_seeds_vllm_rates_pin_round_trips() {
    let [line] = seed_pin("vllm").try_into().unwrap();
    assert!(line.ends_with("\"synthetic_acceptance_rates\": [0.78, 0.60, 0.45]"), "{line}");
    let script = format!(
        "MODEL=MiniMaxAI/MiniMax-M3\nif [ \"${{EVAL_ONLY:-false}}\" != \"true\" ]; then\n  SPEC='{{\"method\": \"eagle3\", \"model\": \"Inferact/MiniMax-M3-EAGLE3\", {line}}}'\nfi\n\
         vllm serve \"$MODEL\" --speculative-config \"$SPEC\" --default-chat-template-kwargs '{{\"thinking_mode\": \"enabled\"}}'\n"
    );
    let repo = repo_with(&script);
    let (code, report) = report_of(repo.path());
    assert_eq!(code, 0, "{report:#}");
    let pin = &report["pins"][0];
    assert_eq!(pin["verdict"], "ok");
    assert_eq!(pin["rates"], serde_json::json!([0.78, 0.6, 0.45]));
    assert!((pin["implied_al"].as_f64().unwrap() - 2.83).abs() < 1e-9);
    assert_eq!(pin["golden"]["expected_rates"], serde_json::json!([0.78, 0.6, 0.45]));
    assert!(pin["golden"]["rates_from"].as_str().unwrap().contains("increments"), "{pin:#}");
}

#[test]
fn the_seeds_llamacpp_rates_pin_round_trips() {
    let lines = seed_pin("llamacpp");
    assert_eq!(lines, ["--spec-draft-n-max 3", "--spec-synth-rates 0.78,0.60,0.45"]);
    let script = format!(
        "MODEL=MiniMaxAI/MiniMax-M3\nARGS=()\nif [ \"${{EVAL_ONLY:-false}}\" != \"true\" ]; then\n  ARGS+=({})\nfi\n\
         llama-server --model \"$MODEL\" --model-draft Inferact/MiniMax-M3-EAGLE3 --chat-template-kwargs '{{\"thinking_mode\": \"enabled\"}}' \"${{ARGS[@]}}\"\n",
        lines.join(" ")
    );
    let repo = repo_with(&script);
    let (code, report) = report_of(repo.path());
    assert_eq!(code, 0, "{report:#}");
    let pin = &report["pins"][0];
    assert_eq!((pin["verdict"].as_str(), pin["engine"]["value"].as_str()), (Some("ok"), Some("llamacpp")));
    assert_eq!((pin["k"]["value"].as_u64(), pin["k"]["how"].as_str()), (Some(3), Some("literal")));
}

#[test]
fn each_wrong_list_has_its_class_and_its_twin_is_ok() {
    let (code, report) = report_of(&fixture());
    assert_eq!(code, 1);
    let ok = (String::from("ok"), Vec::<String>::new());
    let cases: [(&str, &str, &[&str], &str); 10] = [
        ("vllm_rates_wrong_k.sh", "mismatch", &["wrong-k"], "vllm_rates_ok.sh"),
        ("vllm_rates_increasing.sh", "out_of_range", &["out-of-range"], "vllm_rates_ok.sh"),
        ("vllm_rates_no_method.sh", "ok", &["spelling"], "vllm_rates_ok.sh"),
        ("vllm_rates_flat.sh", "mismatch", &["mismatch"], "vllm_rates_ok.sh"),
        ("vllm_rates_wrong_mode.sh", "mismatch", &["wrong-thinking-mode"], "vllm_rates_off_ok.sh"),
        ("llamacpp_rates_default_k_wrong.sh", "mismatch", &["wrong-k"], "llamacpp_rates_ok.sh"),
        ("llamacpp_rates_pr_spelling.sh", "ok", &[], "llamacpp_rates_ok.sh"),
        ("vllm_rates_heredoc.sh", "mismatch", &["wrong-k"], "vllm_rates_ok.sh"),
        ("llamacpp_rates_env.sh", "ok", &[], "llamacpp_rates_ok.sh"),
        ("minimaxm3_rates.yaml", "mismatch", &["eval-leak", "mismatch"], "vllm_rates_ok.sh"),
    ];
    for (script, want_verdict, want_classes, twin) in cases {
        let (v, classes) = verdict(&report, script);
        assert_eq!(
            (v.as_str(), classes.iter().map(String::as_str).collect::<Vec<_>>().as_slice()),
            (want_verdict, want_classes),
            "{script}"
        );
        assert_eq!(verdict(&report, twin), ok, "{twin}");
    }
    assert_eq!(verdict(&report, "llamacpp_length_ok.sh"), ok);
}

#[test]
fn llamacpp_without_a_draft_limit_runs_its_default_k() {
    let (_, report) = report_of(&fixture());
    for script in ["llamacpp_rates_default_k.sh", "llamacpp_rates_default_k_wrong.sh"] {
        let pin = report["pins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["location"]["file"].as_str().unwrap().ends_with(script))
            .unwrap();
        assert_eq!((pin["k"]["value"].as_u64(), pin["k"]["how"].as_str()), (Some(3), Some("inferred")), "{script}");
    }
    let message = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["location"]["file"].as_str().unwrap().ends_with("default_k_wrong.sh"))
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("golden chain for k = 4") && message.contains("[0.78, 0.60, 0.45]"), "{message}");
    // The default differs between llama.cpp builds, so an ok that rests on it is only an assumption.
    let assumption = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["location"]["file"].as_str().unwrap().ends_with("_llamacpp_rates_default_k.sh"))
        .unwrap();
    assert_eq!((assumption["severity"].as_str(), assumption["class"].as_str()), (Some("warning"), Some("assumption")));
    assert!(assumption["message"].as_str().unwrap().contains("assumed k = 3"), "{assumption}");
}

#[test]
fn reports_show_the_list_and_fix_writes_the_golden_chain() {
    let repo = fixture();
    let (_, table, _) = run(&["pins", "check", repo.to_str().unwrap(), "--format", "table"]);
    assert!(table.contains("[1.00, 0.83, 0.00]") && table.contains("2.83 [0.78, 0.60, 0.45]"), "{table}");
    let (_, diff, stderr) = run(&["pins", "fix", repo.to_str().unwrap()]);
    assert!(diff.contains("+  ARGS+=(--spec-synth-rates 0.78,0.60,0.45)"), "{diff}\n{stderr}");
    assert!(diff.contains("\"synthetic_acceptance_rates\": [0.84, 0.68, 0.41]}'"), "{diff}");
    assert!(diff.contains("-SPEC='{\"method\": \"eagle3\", \"model\": \"Inferact/MiniMax-M3-EAGLE3\", \"num_speculative_tokens\": 3, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_rates\": [1.00, 0.83, 0.00]}'"), "{diff}");
    assert!(
        diff.contains("-RATES=\"0.78, 0.60, 0.45\"\n+RATES=\"0.78, 0.60\""),
        "the variable the heredoc reads: {diff}"
    );
    assert!(!diff.contains("rates_no_method"), "a missing rejection method is not mended by a value: {diff}");
}

//! `alsim pins check` along the whole launch path (issue 40), on `tests/fixtures/launchrepo/`: entries
//! served by shared launch code through `$(bash …)`, `sbatch`, a batch script and `source`, each case a
//! planted finding and its twin (the fixture copied to a scratch folder and fixed there as a user would).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::pins::check_json;
use crate::pins_cli::copy_dir;

const SERVER: &str = "benchmarks/multi_node/shared/server_sglang.sh";
const TABLE: &str = "benchmarks/multi_node/tabled/server_table.sh";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/launchrepo")
}

fn check(repo: &Path) -> Value {
    check_json(&["pins", "check", repo.to_str().unwrap(), "--format", "json"]).1
}

/// The fixture in a scratch folder with `file`'s `from` replaced by `to` (which must occur).
fn edited(file: &str, from: &str, to: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let path = dir.path().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&path, text.replace(from, to)).unwrap();
    dir
}

/// The messages of `class` findings in `file`, with their lines.
fn findings(report: &Value, file: &str, class: &str) -> Vec<(u64, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["location"]["file"] == file && f["class"] == class)
        .map(|f| (f["location"]["line"].as_u64().unwrap(), f["message"].as_str().unwrap().to_string()))
        .collect()
}

fn line_of(file: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(fixture().join(file)).unwrap();
    text.lines().position(|l| l.contains(needle) && !l.trim_start().starts_with('#')).unwrap() as u64 + 1
}

#[test]
fn shared_launch_code_that_pins_nothing_the_engine_reads_is_a_missing_pin() {
    let report = check(&fixture());
    let found = findings(&report, SERVER, "missing-pin");
    let [(line, message)] = found.as_slice() else { panic!("{found:?}") };
    assert_eq!(*line, line_of(SERVER, "--speculative-algorithm"), "at the line configuring SGLang's k");
    // The path is named file by file, from the entry's script to the engine's server script, and the knob
    // the engine reads is named: the vLLM server on the same path writes vLLM's, which hides nothing.
    for hop in ["agentic/zeta_fp4_mx_sglang-disagg.sh", "shared/submit.sh", "shared/job.slurm", "shared/server.sh"] {
        assert!(message.contains(hop), "{message}");
    }
    assert!(message.contains("mx-sglang-disagg-agentic") && message.contains("SGLANG_SIMULATE_ACC_LEN"), "{message}");
    assert!(message.contains("real acceptance"), "{message}");

    // The twin: the server script pins SGLang's acceptance (out of eval runs); nothing is missing.
    let pinned = edited(
        SERVER,
        "python3 -m sglang.launch_server",
        "if [[ \"${EVAL_ONLY:-false}\" != \"true\" ]]; then\n    export SGLANG_SIMULATE_ACC_LEN=2.5 SGLANG_SIMULATE_ACC_METHOD=match-expected SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\nfi\npython3 -m sglang.launch_server",
    );
    let report = check(pinned.path());
    assert_eq!(findings(&report, SERVER, "missing-pin"), [], "{}", report["findings"]);
}

#[test]
fn a_table_that_says_it_falls_back_is_reported_for_the_k_an_entry_runs_its_model_at() {
    let report = check(&fixture());
    let found = findings(&report, TABLE, "missing-pin");
    let [(line, message)] = found.as_slice() else { panic!("{found:?}") };
    assert_eq!(*line, line_of(TABLE, "case \"${MODEL_NAME}"));
    assert!(message.contains("Tau-MoE:1") && message.contains("tb-sglang-disagg-fixed"), "{message}");
    assert!(message.contains("falls back to real acceptance"), "{message}");
    // k 3 has its arm; the entry served by the other path (Zeta) never reaches this table.
    assert!(!message.contains(":3") && !report.to_string().contains("Zeta-MoE:3"), "{message}");

    // The twin: k 1 wired, nothing falls back.
    let wired = edited(TABLE, "        Tau*:3)", "        Tau*:1) GOLDEN_AL=1.80 ;;\n        Tau*:3)");
    assert_eq!(findings(&check(wired.path()), TABLE, "missing-pin"), []);
    // A table that merely ends, saying nothing of the other k, is not one the script says falls back.
    let silent = edited(
        TABLE,
        "    else\n        echo \"WARNING: no golden AL for ${MODEL_NAME} at k ${DECODE_MTP_SIZE}: real acceptance\" >&2\n",
        "",
    );
    assert_eq!(findings(&check(silent.path()), TABLE, "missing-pin"), []);
}

/// The one `never-passed` finding of `script`: at its `export SGLANG_SIMULATE_ACC_LEN`, naming its `docker run`
/// as the container that never sees the pin.
fn never_passed_at_docker_run(report: &Value, script: &str) -> Vec<(u64, String)> {
    let found = findings(report, script, "never-passed");
    let [(line, message)] = found.as_slice() else { panic!("{found:?}") };
    assert_eq!(*line, line_of(script, "export SGLANG_SIMULATE_ACC_LEN"));
    assert!(message.contains(&format!("{script}:{}", line_of(script, "docker run"))), "{message}");
    assert!(message.contains("docker run") && message.contains("never sees it"), "{message}");
    found
}

#[test]
fn a_pin_exported_on_the_host_reaches_a_containerized_engine_only_if_the_container_is_given_it() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/ct_fp8_mx.sh";
    never_passed_at_docker_run(&check(&fixture()), SCRIPT);

    // Handed in by name: passed.
    for given in ["-e SGLANG_SIMULATE_ACC_LEN -e SGLANG_SIMULATE_ACC_METHOD", "--env=SGLANG_SIMULATE_ACC_LEN"] {
        let forwarded = edited(SCRIPT, "docker run --rm", &format!("docker run --rm {given}"));
        assert_eq!(findings(&check(forwarded.path()), SCRIPT, "never-passed"), [], "{given}");
    }
    // A different variable handed in does not pass this one.
    let other = edited(SCRIPT, "docker run --rm", "docker run --rm -e SGLANG_SIMULATE_ACC_METHOD");
    assert_eq!(findings(&check(other.path()), SCRIPT, "never-passed").len(), 1);
}

#[test]
fn a_containerized_vllm_serve_is_the_engine_start_whether_its_command_is_written_out_or_quoted() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/dv_fp8_mx.sh";
    let report = check(&fixture());
    let found = never_passed_at_docker_run(&report, SCRIPT);
    assert_eq!(findings(&report, SCRIPT, "missing-pin").len(), 1, "vLLM's own knob is still missing");

    // The same command quoted for a shell in the container is the same start.
    const SERVE: &str =
        r#"vllm serve /models/Tau-MoE --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}'"#;
    let quoted = edited(SCRIPT, SERVE, &format!("bash -c \"{}\"", SERVE.replace('"', "\\\"")));
    assert_eq!(findings(&check(quoted.path()), SCRIPT, "never-passed"), found);
    // The twin: handed in by name, passed.
    let forwarded = edited(SCRIPT, "docker run --rm", "docker run --rm -e SGLANG_SIMULATE_ACC_LEN");
    assert_eq!(findings(&check(forwarded.path()), SCRIPT, "never-passed"), []);
}

#[test]
fn an_env_file_hands_in_only_the_names_the_script_writes_into_it() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/ef_fp8_mx.sh";
    let report = check(&fixture());
    let found = findings(&report, SCRIPT, "never-passed");
    let [(line, message)] = found.as_slice() else { panic!("{found:?}") };
    assert_eq!(*line, line_of(SCRIPT, "export SGLANG_SIMULATE_ACC_LEN"));
    // The group's loop words and its echo line are what the file holds.
    let holds = format!(
        "--env-file \"${{ENV_FILE}}\" (written at {SCRIPT}:{}, {})",
        line_of(SCRIPT, "printf"),
        line_of(SCRIPT, "echo")
    );
    assert!(message.contains(&holds) && message.contains("holds 4 names (HF_HOME, MODEL_NAME"), "{message}");
    assert!(message.contains("not SGLANG_SIMULATE_ACC_LEN: the engine never sees it"), "{message}");

    // The twin: the loop forwards the pin too, or a line of its own writes it.
    for fixed in [
        edited(SCRIPT, "for _v in MODEL_NAME", "for _v in SGLANG_SIMULATE_ACC_LEN MODEL_NAME"),
        edited(
            SCRIPT,
            "} > \"$ENV_FILE\"",
            "} > \"$ENV_FILE\"\necho \"SGLANG_SIMULATE_ACC_LEN=$SGLANG_SIMULATE_ACC_LEN\" >> $ENV_FILE",
        ),
        edited(SCRIPT, "} > \"$ENV_FILE\"", "} > \"$ENV_FILE\"\nenv >> \"$ENV_FILE\""),
    ] {
        let report = check(fixed.path());
        assert_eq!(findings(&report, SCRIPT, "never-passed"), [], "{}", report["findings"]);
        assert!(!findings(&report, SCRIPT, "unresolved").iter().any(|(_, m)| m.contains("env-file")));
    }
    // A line written before the group's `>` empties the file is not in it.
    let emptied =
        edited(SCRIPT, "{\n    for _v", "echo \"SGLANG_SIMULATE_ACC_LEN=2.61\" > \"$ENV_FILE\"\n{\n    for _v");
    assert_eq!(findings(&check(emptied.path()), SCRIPT, "never-passed").len(), 1);
    // A file the script does not write, or writes with a line whose name it does not spell: open, not an error.
    for (case, open) in [
        ("another file", edited(SCRIPT, "--env-file \"${ENV_FILE}\"", "--env-file ./sim.env")),
        ("a name not spelled", edited(SCRIPT, "echo \"HF_HOME", "echo \"$EXTRA_NAME=1\"\n    echo \"HF_HOME")),
    ] {
        let report = check(open.path());
        assert_eq!(findings(&report, SCRIPT, "never-passed"), [], "{case}");
        let found = findings(&report, SCRIPT, "unresolved");
        assert!(
            found.iter().any(|(_, m)| m.contains("reaches the engine in the container") && m.contains("--env-file")),
            "{case}: {found:?}"
        );
    }
}

#[test]
fn a_pin_spelled_for_another_engine_or_only_in_a_comment_leaves_the_run_unpinned() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/cv_fp8_mx.sh";
    let report = check(&fixture());
    let found = findings(&report, SCRIPT, "missing-pin");
    let [(line, message)] = found.as_slice() else { panic!("{found:?}") };
    assert_eq!(*line, line_of(SCRIPT, "vllm serve"));
    assert!(message.contains("vLLM") && message.contains("synthetic_acceptance_length"), "{message}");
    assert_eq!(findings(&report, SCRIPT, "spelling"), [], "no finding about SGLang's spelling");

    // Only a comment spells the knob: the file's text holds it, yet nothing pins the run.
    let comment = edited(
        SCRIPT,
        "    export SGLANG_SIMULATE_ACC_LEN=2.61",
        "    # TODO: \"synthetic_acceptance_length\" in the config below\n    true",
    );
    assert_eq!(findings(&check(comment.path()), SCRIPT, "missing-pin").len(), 1);

    // The twin: vLLM's own knob in its config, kept out of eval runs.
    let pinned = edited(
        SCRIPT,
        "vllm serve /models/Tau-MoE --speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'",
        "SPEC='{\"method\": \"mtp\", \"num_speculative_tokens\": 3}'\nif [[ \"${EVAL_ONLY:-false}\" != \"true\" ]]; then\n    SPEC='{\"method\": \"mtp\", \"num_speculative_tokens\": 3, \"synthetic_acceptance_length\": 2.61, \"rejection_sample_method\": \"synthetic\"}'\nfi\nvllm serve /models/Tau-MoE --speculative-config \"$SPEC\"",
    );
    assert_eq!(findings(&check(pinned.path()), SCRIPT, "missing-pin"), []);
}

#[test]
fn a_guard_through_a_variable_eval_only_decides_keeps_the_pin_out_of_eval_runs() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/eg_fp8_mx.sh";
    let report = check(&fixture());
    assert_eq!(findings(&report, SCRIPT, "eval-leak"), []);
    let pin = report["pins"].as_array().unwrap().iter().find(|p| p["location"]["file"] == SCRIPT).unwrap();
    assert_eq!(pin["eval"]["value"], "guarded");
    assert!(pin["eval"]["text"].as_str().unwrap().contains("SIMULATE"), "{}", pin["eval"]);

    // The twin: EVAL_ONLY no longer changes the variable, so the pin reaches eval runs.
    let leaking = edited(SCRIPT, "    SIMULATE=0", "    echo eval");
    let found = findings(&check(leaking.path()), SCRIPT, "eval-leak");
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_near_miss_of_a_knobs_spelling_is_a_spelling_finding_and_leaves_the_run_unpinned() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/nm_fp8_mx.sh";
    let report = check(&fixture());
    let spelling = findings(&report, SCRIPT, "spelling");
    let [(line, message)] = spelling.as_slice() else { panic!("{spelling:?}") };
    assert_eq!(*line, line_of(SCRIPT, "export SGLANG_SIMULATE_ACC_LENGTH"), "the setting, not the comment naming it");
    assert!(message.contains("nearly SGLANG_SIMULATE_ACC_LEN"), "{message}");
    let missing = findings(&report, SCRIPT, "missing-pin");
    assert_eq!(missing.iter().map(|f| f.0).collect::<Vec<_>>(), [line_of(SCRIPT, "sglang.launch_server")]);

    // An abbreviated flag (argparse's prefix) is one too; the spelled-out twin is neither.
    let abbreviated =
        edited(SCRIPT, "--speculative-num-steps 3", "--speculative-num-steps 3 --spec-decode-acceptance-len 2.61");
    let found = findings(&check(abbreviated.path()), SCRIPT, "spelling");
    assert!(found.iter().any(|(_, m)| m.contains("abbreviation")), "{found:?}");
    let fixed = edited(SCRIPT, "SGLANG_SIMULATE_ACC_LENGTH", "SGLANG_SIMULATE_ACC_LEN");
    let report = check(fixed.path());
    assert_eq!((findings(&report, SCRIPT, "spelling"), findings(&report, SCRIPT, "missing-pin")), (vec![], vec![]));
}

const RECIPE: &str = "benchmarks/multi_node/srt-slurm-recipes/sglang/rx/agg.yaml";
const RX_HELPER: &str = "runners/rx_eval.sh";
const RX_STRIP: &str = "    find \"$RX_RECIPES\" -name \"*.yaml\" -exec sed -i '/SGLANG_SIMULATE_ACC/d' {} +";

/// The recipe pin's eval route as `pins list` records it.
fn recipe_eval(report: &Value) -> Value {
    let pins = report["pins"].as_array().unwrap();
    pins.iter().find(|p| p["location"]["file"] == RECIPE).expect("the recipe's pin")["eval"].clone()
}

#[test]
fn a_launcher_is_read_through_the_file_it_sources_or_execs_for_its_eval_strip() {
    let report = check(&fixture());
    assert_eq!(findings(&report, RECIPE, "eval-leak"), []);
    let eval = recipe_eval(&report);
    assert_eq!(eval["value"], "launcher_strip", "{eval}");
    assert_eq!(eval["at"]["file"], RX_HELPER, "the helper's own guard counts: {eval}");

    // `exec` into the helper is the same hand-over.
    let exec = edited(
        "runners/launch_rx.sh",
        "source \"$(dirname \"${BASH_SOURCE[0]}\")/rx_eval.sh\"",
        "exec bash \"$(dirname \"$0\")/rx_eval.sh\"",
    );
    assert_eq!(recipe_eval(&check(exec.path()))["value"], "launcher_strip");

    // The twin: the helper strips nothing, so the recipe's pin reaches eval runs (a real leak).
    let leaking = edited(RX_HELPER, RX_STRIP, "    echo eval");
    let found = findings(&check(leaking.path()), RECIPE, "eval-leak");
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_strip_written_in_code_counts_like_a_text_filter() {
    // Inline: `yq` deleting the knob's key.
    let yq = edited(
        RX_HELPER,
        RX_STRIP,
        "    yq -i 'del(.backend.aggregated_environment.SGLANG_SIMULATE_ACC_LEN)' \"$RX_RECIPES/agg.yaml\"",
    );
    let report = check(yq.path());
    assert_eq!(findings(&report, RECIPE, "eval-leak"), []);
    assert_eq!(recipe_eval(&report)["value"], "launcher_strip");

    // A Python program of the repository that pops it: the deciding line is the program's.
    let python = edited(RX_HELPER, RX_STRIP, "    python3 \"$GITHUB_WORKSPACE/runners/real_mtp.py\" \"$RX_RECIPES\"");
    std::fs::write(
        python.path().join("runners/real_mtp.py"),
        "import pathlib, sys, yaml\nfor f in pathlib.Path(sys.argv[1]).glob('*.yaml'):\n    d = yaml.safe_load(f.read_text())\n    d['backend']['aggregated_environment'].pop('SGLANG_SIMULATE_ACC_LEN', None)\n    f.write_text(yaml.safe_dump(d))\n",
    )
    .unwrap();
    let eval = recipe_eval(&check(python.path()));
    assert_eq!(
        (eval["value"].as_str(), eval["at"]["file"].as_str()),
        (Some("launcher_strip"), Some("runners/real_mtp.py"))
    );
    assert_eq!(eval["at"]["line"], 4, "{eval}");
}

#[test]
fn an_eval_route_the_check_cannot_follow_is_unresolved_never_a_leak() {
    let program = "    python3 \"$GITHUB_WORKSPACE/runners/real_mtp.py\" \"$RX_RECIPES\"";
    for (case, replacement) in [
        ("a program that names no knob", program),
        ("a file sourced from outside the repository", "    source \"$HOME/eval_env.sh\""),
    ] {
        let dir = edited(RX_HELPER, RX_STRIP, replacement);
        std::fs::write(dir.path().join("runners/real_mtp.py"), "import sys\nprint(sys.argv[1])\n").unwrap();
        let report = check(dir.path());
        assert_eq!(findings(&report, RECIPE, "eval-leak"), [], "{case}");
        let found = findings(&report, RECIPE, "unresolved");
        assert!(
            found.iter().any(|(_, m)| m.contains("reaches EVAL_ONLY runs is unresolved") && m.contains(RX_HELPER)),
            "{case}: {found:?}"
        );
    }
    // A program run on eval runs that edits another folder decides nothing here: the leak stays.
    let elsewhere = edited(RX_HELPER, RX_STRIP, "    python3 runners/real_mtp.py \"benchmarks/multi_node/other\"");
    assert_eq!(findings(&check(elsewhere.path()), RECIPE, "eval-leak").len(), 1);
}

#[test]
fn a_script_that_sources_a_helper_is_guarded_by_the_helpers_eval_only_reset() {
    const SCRIPT: &str = "benchmarks/single_node/agentic/eg_fp8_mx.sh";
    let unguarded = "export SGLANG_SIMULATE_ACC_LEN=2.61\nsource \"$(dirname \"$0\")/eval_env.sh\"\npython3 -m sglang.launch_server";
    let helper = |body: &str| {
        let dir = edited(SCRIPT, "python3 -m sglang.launch_server", unguarded);
        std::fs::write(dir.path().join("benchmarks/single_node/agentic/eval_env.sh"), body).unwrap();
        dir
    };
    let reset = helper("if [[ \"${EVAL_ONLY:-false}\" == \"true\" ]]; then\n    unset SGLANG_SIMULATE_ACC_LEN\nfi\n");
    let report = check(reset.path());
    let line = line_of(SCRIPT, "python3 -m sglang.launch_server");
    let at_line = |f: &(u64, String)| f.0 == line;
    assert!(!findings(&report, SCRIPT, "eval-leak").iter().any(at_line), "{}", report["findings"]);

    // The twin: the helper leaves it, so the pin reaches eval runs.
    let kept = helper("echo \"eval: ${EVAL_ONLY:-false}\"\n");
    assert!(findings(&check(kept.path()), SCRIPT, "eval-leak").iter().any(at_line));
}

/// The fixture in a scratch folder with `file` written as `text`.
fn with_file(file: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    std::fs::write(dir.path().join(file), text).unwrap();
    dir
}

const MODELS: &str = "benchmarks/multi_node/shared/models.yaml";

/// A per-model data file as launch code reads it, `tau` being Tau-MoE's settings.
fn models(tau: &str) -> String {
    format!(
        "# Per-model flags the launch code reads.\nTau-MoE:\n  mtp_flags: \"--speculative-algorithm NEXTN --speculative-num-steps 3\"\n{tau}\n  thinking: true\nZeta-MoE:\n  mtp_flags: \"--speculative-algorithm NEXTN --speculative-num-steps 1\"\n"
    )
}

#[test]
fn a_pin_inside_a_data_files_string_is_a_pin_with_the_k_written_under_its_own_key() {
    let triple = "SGLANG_SIMULATE_ACC_METHOD=match-expected SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token";
    let wrong = with_file(MODELS, &models(&format!("  sim_env: \"SGLANG_SIMULATE_ACC_LEN=2.30 {triple}\"")));
    let report = check(wrong.path());
    let found = findings(&report, MODELS, "wrong-k");
    let [(line, message)] = found.as_slice() else { panic!("{}", report["findings"]) };
    assert_eq!(*line, 4);
    assert!(message.contains("k = 3") && message.contains("2.61"), "Tau-MoE's k, not Zeta-MoE's: {message}");
    // How launch code reads the file is not followed: whether eval runs get it is open, not a leak.
    assert_eq!(findings(&report, MODELS, "eval-leak"), []);
    assert!(findings(&report, MODELS, "unresolved").iter().any(|(_, m)| m.contains("reaches EVAL_ONLY runs")));

    // The same inside a flag's JSON in an argument string.
    let json = "  vllm_flags: \"--speculative-config '{\\\"method\\\": \\\"mtp\\\", \\\"num_speculative_tokens\\\": 3, \\\"synthetic_acceptance_length\\\": 2.30}'\"";
    let found = findings(&check(with_file(MODELS, &models(json)).path()), MODELS, "wrong-k");
    assert_eq!(found.len(), 1, "{found:?}");
    // A nested object before the pin does not end the JSON early.
    let nested = json.replace("\\\"mtp\\\", ", "\\\"mtp\\\", \\\"draft\\\": {\\\"tp\\\": 1}, ");
    assert!(nested.contains("{\\\"tp\\\": 1}"), "{nested}");
    let found = findings(&check(with_file(MODELS, &models(&nested)).path()), MODELS, "wrong-k");
    assert_eq!(found.len(), 1, "{found:?}");

    // The twin: the golden value at k 3.
    let right = with_file(MODELS, &models(&format!("  sim_env: \"SGLANG_SIMULATE_ACC_LEN=2.61 {triple}\"")));
    let report = check(right.path());
    let errors: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["location"]["file"] == MODELS && f["severity"] == "error")
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(report["pins"].as_array().unwrap().iter().any(|p| p["location"]["file"] == MODELS));
}

#[test]
fn a_flag_quoted_in_prose_is_never_a_pin() {
    let sentence = "Throughput runs pin SGLANG_SIMULATE_ACC_LEN=2.30 with --speculative-num-steps 3 for Tau-MoE.";
    for (file, text) in [
        ("perf-changelog.yaml", format!("- config-keys: [ct-sglang-agentic]\n  description:\n    - \"{sentence}\"\n")),
        (MODELS, format!("Tau-MoE:\n  notes: \"{sentence}\"\n")),
    ] {
        let report = check(with_file(file, &text).path());
        let pinned = report["pins"].as_array().unwrap().iter().any(|p| p["location"]["file"] == file);
        assert!(!pinned, "{file}: {}", report["pins"]);
    }
}

#[test]
fn the_environment_list_form_of_a_recipe_carries_its_pin() {
    let map = "    SGLANG_SIMULATE_ACC_LEN: \"2.61\"\n    SGLANG_SIMULATE_ACC_METHOD: match-expected\n    SGLANG_SIMULATE_ACC_TOKEN_MODE: real-draft-token\n";
    let list = |al: &str| {
        format!(
            "    - name: SGLANG_SIMULATE_ACC_LEN\n      value: \"{al}\"\n    - name: SGLANG_SIMULATE_ACC_METHOD\n      value: match-expected\n    - name: SGLANG_SIMULATE_ACC_TOKEN_MODE\n      value: real-draft-token\n"
        )
    };
    let right = edited(RECIPE, map, &list("2.61"));
    let report = check(right.path());
    let pin = report["pins"].as_array().unwrap().iter().find(|p| p["location"]["file"] == RECIPE).cloned();
    let pin = pin.expect("the list form's pin");
    assert_eq!(pin["written"]["value"], 2.61);
    assert_eq!(pin["eval"]["value"], "launcher_strip");
    assert_eq!(findings(&report, RECIPE, "wrong-k"), []);
    // The twin: k 2's value in the list form is caught like the map form's.
    let wrong = edited(RECIPE, map, &list("2.30"));
    assert_eq!(findings(&check(wrong.path()), RECIPE, "wrong-k").len(), 1);
}

#[test]
fn a_changelog_is_held_to_the_pins_of_the_entries_it_names_by_its_newest_word() {
    let entry = |pr: u32, said: &str| {
        format!(
            "- config-keys:\n    - ct-sglang-agentic\n  description:\n    - \"Pin SGLang's simulated acceptance: {said}.\"\n  pr-link: https://example.org/pull/{pr}\n\n"
        )
    };
    let stale = "SGLANG_SIMULATE_ACC_LEN=2.30 at k 3";
    let current = "SGLANG_SIMULATE_ACC_LEN=2.61 at k 3";
    // The newest entry (by pull request, whatever its place) states another value than the script pins.
    let text = format!("{}{}", entry(12, stale), entry(10, current));
    let report = check(with_file("perf-changelog.yaml", &text).path());
    let found = findings(&report, "perf-changelog.yaml", "drift");
    let [(line, message)] = found.as_slice() else { panic!("{}", report["findings"]) };
    assert_eq!(*line, 4);
    assert!(message.contains("ct-sglang-agentic") && message.contains("2.3") && message.contains("2.61"), "{message}");
    // An older entry records what was: only the newest speaks, even when it states no value at all.
    for text in [
        format!("{}{}", entry(10, stale), entry(12, current)),
        format!("{}{}", entry(10, stale), entry(12, "bump the image")),
    ] {
        assert_eq!(
            findings(&check(with_file("perf-changelog.yaml", &text).path()), "perf-changelog.yaml", "drift"),
            []
        );
    }
}

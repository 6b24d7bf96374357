//! `alsim pins check` on the fixture benchmark repository (`tests/fixtures/benchrepo/`): one test per
//! mechanism by which a pin reaches an engine, and one per error class of docs/pins.md, each with its negative
//! twin. The fixture is wired like InferenceX in small files of its own; each file's first comment says
//! whether its pins are correct or which class it plants. Lines are found from the fixture's text, so the
//! tests name what they look for rather than line numbers.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::util::run;

pub const SN: &str = "benchmarks/single_node/agentic/";
pub const RC: &str = "benchmarks/multi_node/srt-slurm-recipes/";
pub const MASTER: &str = "configs/demo-master.yaml";

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo")
}

/// Runs `alsim` with `args` (which end in `--format json`) and parses stdout; a panic fails the test.
pub fn check_json(args: &[&str]) -> (i32, Value) {
    let (code, stdout, stderr) = run(args);
    assert!(code != 101 && !stderr.contains("panicked"), "{stderr}");
    let value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("invalid JSON ({e}): {stdout}\n{stderr}"));
    (code, value)
}

fn check(allow: bool) -> (i32, Value) {
    let repo = fixture();
    let allow_list = repo.join("alsim-allow.yaml");
    let mut args = vec!["pins", "check", repo.to_str().unwrap(), "--format", "json"];
    if allow {
        args.extend(["--allow", allow_list.to_str().unwrap()]);
    }
    check_json(&args)
}

/// The fixture's report with its allow-list, computed once for every test.
fn report() -> &'static Value {
    static REPORT: OnceLock<Value> = OnceLock::new();
    REPORT.get_or_init(|| {
        let (code, report) = check(true);
        assert_eq!(code, 1, "the planted errors fail the check");
        report
    })
}

/// The 1-based line of the `nth` (0-based) line of a fixture file containing `needle`; comment lines
/// count only for a needle that starts with `#`.
pub fn line_of_nth(file: &str, needle: &str, nth: usize) -> usize {
    let text = std::fs::read_to_string(fixture().join(file)).unwrap();
    let mut hits = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle) && (needle.starts_with('#') || !l.trim_start().starts_with('#')));
    hits.nth(nth).unwrap_or_else(|| panic!("{file} has no line #{nth} with {needle:?}")).0 + 1
}

pub fn line_of(file: &str, needle: &str) -> usize {
    line_of_nth(file, needle, 0)
}

fn pins(file: &str) -> Vec<&'static Value> {
    let pins: Vec<&Value> =
        report()["pins"].as_array().unwrap().iter().filter(|p| p["location"]["file"] == file).collect();
    assert!(!pins.is_empty(), "no pin in {file}");
    pins
}

fn pins_at(file: &str, line: usize) -> Vec<&'static Value> {
    report()["pins"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["location"]["file"] == file && p["location"]["line"] == line)
        .collect()
}

fn only_pin(file: &str) -> &'static Value {
    let pins = pins(file);
    let [pin] = pins.as_slice() else { panic!("{file}: {} pins", pins.len()) };
    pin
}

/// (class, line, severity, allowed) of every finding in `file`.
fn findings_in(report: &Value, file: &str) -> Vec<(String, usize, String, bool)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["location"]["file"] == file)
        .map(|f| {
            (
                f["class"].as_str().unwrap().to_string(),
                f["location"]["line"].as_u64().unwrap() as usize,
                f["severity"].as_str().unwrap().to_string(),
                !f["allowed"].is_null(),
            )
        })
        .collect()
}

fn message_at(report: &Value, file: &str, line: usize, class: &str) -> String {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["location"]["file"] == file && f["location"]["line"] == line && f["class"] == class)
        .unwrap_or_else(|| panic!("no {class} at {file}:{line}: {:?}", findings_in(report, file)))["message"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A class's positives (an unsanctioned error at the file's line holding the needle) and negative twins
/// (no finding of that class at the twin's line — or anywhere in the file when the needle is empty — and
/// every pin there that the class would concern is ok).
fn assert_class(class: &str, positives: &[(&str, &str)], twins: &[(&str, &str)]) {
    let report = report();
    for (file, needle) in positives {
        let line = line_of(file, needle);
        let found = findings_in(report, file);
        assert!(
            found.iter().any(|(c, l, s, a)| c == class && *l == line && s == "error" && !a),
            "{class} expected at {file}:{line}; found {found:?}"
        );
    }
    for (file, needle) in twins {
        let line = (!needle.is_empty()).then(|| line_of(file, needle));
        let found = findings_in(report, file);
        assert!(
            !found.iter().any(|(c, l, _, _)| c == class && line.is_none_or(|line| line == *l)),
            "no {class} expected at {file} {line:?}; found {found:?}"
        );
        let pins: Vec<&Value> = match line {
            Some(line) => pins_at(file, line),
            None => report["pins"].as_array().unwrap().iter().filter(|p| p["location"]["file"] == *file).collect(),
        };
        for pin in pins {
            assert!(pin["verdict"] == "ok" || pin["verdict"] == "inert", "twin {file}: {pin}");
            assert!(!pin["problems"].as_array().unwrap().iter().any(|c| c == class), "twin {file}: {pin}");
        }
    }
}

// ---- mechanisms -----------------------------------------------------------------------------------

#[test]
fn an_entry_runs_the_script_its_names_spell_and_sets_the_model() {
    let pin = only_pin(&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"));
    assert_eq!(pin["entries"][0]["name"], "mm3-fp4-h100x-vllm-agentic");
    assert_eq!(pin["entries"][0]["at"]["file"], MASTER);
    assert_eq!(
        (pin["model"]["value"].as_str(), pin["model"]["how"].as_str()),
        (Some("Org/MiniMax-M3-FP4"), Some("entry"))
    );
    assert_eq!(pin["verdict"], "ok");
    // The launcher's fallbacks: the legacy name without a framework, and AMD names that never carry one.
    assert_eq!(
        only_pin(&format!("{SN}qwen3.5_fp8_h100x_mtp.sh"))["entries"][0]["name"],
        "qwen-fp8-h100x-sglang-agentic"
    );
    assert_eq!(only_pin(&format!("{SN}qwen3.5_fp8_mi3x_mtp.sh"))["entries"][0]["name"], "qwen-fp8-mi3x-sglang-agentic");
    // Negative twins: a script no entry runs keeps its pins, its model from the name's prefix; a
    // collector no entry runs pins nothing and is not missing a pin; an entry whose script does not
    // exist is unresolved, naming every name the launcher tries.
    let orphan = &pins(&format!("{SN}minimaxm3_bf16_h100x_vllm_mtp.sh"))[0];
    assert!(orphan["entries"].as_array().unwrap().is_empty());
    assert_eq!(orphan["model"]["how"], "inferred");
    assert!(findings_in(report(), "benchmarks/single_node/speedbench/minimaxm3_fp4_h100x_vllm.sh").is_empty());
    let line = line_of(MASTER, "glm-fp4-h100x-vllm-agentic:");
    let message = message_at(report(), MASTER, line, "unresolved");
    for tried in ["glm5.2_fp4_h100x_vllm_mtp.sh", "glm5.2_fp4_h100x_mtp.sh"] {
        assert!(message.contains(tried), "{message}");
    }
}

#[test]
fn config_file_names_a_recipe_and_injected_values_are_checked_at_the_entry() {
    // `recipes/<x>` maps to the recipes folder; the settings come in any order within the entry.
    let line = line_of(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.27");
    let [pin] = pins_at(MASTER, line)[..] else { panic!() };
    assert_eq!((pin["mechanism"].as_str(), pin["written"]["how"].as_str()), (Some("master_config"), Some("injected")));
    assert!(pin["branch"].as_str().unwrap().starts_with(&format!("{RC}vllm/dsv4/agg-k2.yaml")));
    assert_eq!(
        (pin["k"]["value"].as_u64(), pin["k"]["at"]["file"].as_str()),
        (Some(2), Some(&*format!("{RC}vllm/dsv4/agg-k2.yaml")))
    );
    assert_eq!(pin["verdict"], "ok");
    // A CONFIG_FILE naming the repository path is used as is.
    let strip = pins(&format!("{RC}trtllm/qwen/disagg.yaml"));
    assert!(strip.iter().any(|p| p["entries"][0]["name"] == "qwen-gbx-trt-agentic"));
    // Negative twins: a recipe whose comment spells CONFIG_FILE= is no master config (every entry comes
    // from the master), and a length without SYNTHETIC_ACCEPTANCE=true is never injected.
    let count = |file: &str, key: fn(&str) -> bool| {
        std::fs::read_to_string(fixture().join(file)).unwrap().lines().filter(|l| key(l)).count()
    };
    let entries = count(MASTER, |l| l.ends_with("-agentic:"))
        + count("configs/sweep-master.yaml", |l| !l.starts_with([' ', '#']) && l.ends_with(':'));
    assert_eq!(report()["entries"].as_u64(), Some(entries as u64));
    let line = line_of_nth(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=3.39", 1);
    assert!(pins_at(MASTER, line).is_empty());
    assert!(message_at(report(), MASTER, line, "never-passed").contains("SYNTHETIC_ACCEPTANCE=true"));
}

#[test]
fn eval_routes_decide_which_pins_leak() {
    let route = |file: &str, line: Option<usize>| -> Vec<String> {
        pins(file)
            .iter()
            .filter(|p| line.is_none_or(|l| p["location"]["line"] == l))
            .map(|p| p["eval"]["value"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(route(&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"), None).iter().all(|r| r == "guarded"));
    assert!(route(&format!("{RC}vllm/mm3/disagg.yaml"), None).iter().all(|r| r == "twin"));
    // The decode role reads the prefill role's environment through a YAML anchor: one line, two roles.
    let strip: Vec<(&str, &str)> = pins(&format!("{RC}trtllm/qwen/disagg.yaml"))
        .iter()
        .map(|p| (p["role"].as_str().unwrap(), p["eval"]["value"].as_str().unwrap()))
        .collect();
    assert_eq!(strip, [("decode", "launcher_strip"), ("prefill", "inert")]);
    assert_eq!(route(MASTER, Some(line_of(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"))), ["injector"]);
    // The eval twin's pin itself leaks: the twin is what eval runs read.
    assert_eq!(route(&format!("{RC}vllm/mm3/agg-eval-pinned.yaml"), None), ["leaks"]);
    assert_eq!(route(&format!("{RC}vllm/mm3/agg.yaml"), None), ["twin"]);
    assert_eq!(route(&format!("{RC}trtllm/qwen-gby/agg.yaml"), None), ["leaks"]);
    assert_eq!(route(&format!("{SN}minimaxm3_fp8_mi3x_mtp.sh"), None), ["leaks"]);
}

#[test]
fn each_role_has_its_own_k_and_a_role_without_speculation_is_inert() {
    let glm = format!("{RC}sglang/glm/disagg.yaml");
    let roles: Vec<(String, u64, String)> = pins(&glm)
        .iter()
        .map(|p| {
            (
                p["role"].as_str().unwrap().into(),
                p["k"]["value"].as_u64().unwrap(),
                p["verdict"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(roles, [("prefill".into(), 1, "out_of_range".into()), ("decode".into(), 2, "ok".into())]);
    let qwen = format!("{RC}trtllm/qwen/disagg.yaml");
    let prefill = pins(&qwen).into_iter().find(|p| p["role"] == "prefill").unwrap();
    assert_eq!((prefill["verdict"].as_str(), prefill["eval"]["value"].as_str()), (Some("inert"), Some("inert")));
    let found = findings_in(report(), &qwen);
    assert!(found.iter().any(|(c, _, s, _)| c == "inert" && s == "note"), "{found:?}");
    assert!(!found.iter().any(|(c, ..)| c == "unresolved" || c == "out-of-range"), "{found:?}");
    // Both roles of a recipe an entry injects into are checked, each against its k.
    let line = line_of(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.49");
    let roles: Vec<&str> = pins_at(MASTER, line).iter().map(|p| p["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["decode", "prefill"]);
}

#[test]
fn thinking_mode_is_decided_per_deployment_and_says_how() {
    let mode = |file: &str| -> Vec<(Option<String>, String)> {
        pins(file)
            .iter()
            .map(|p| (p["mode"]["value"].as_str().map(str::to_string), p["mode"]["how"].as_str().unwrap().to_string()))
            .collect()
    };
    // The decode worker's setting decides the prefill role of the same deployment too.
    let mm3 = pins(&format!("{RC}vllm/mm3/disagg.yaml"));
    assert!(
        mm3.iter()
            .all(|p| p["mode"]["value"] == "thinking_on"
                && p["mode"]["text"].as_str().unwrap().contains("decode worker"))
    );
    assert_eq!(mode(&format!("{RC}trtllm/dsv4/disagg.yaml")), [(Some("thinking_off".into()), "literal".into())]);
    assert_eq!(mode(&format!("{SN}dsv4_fp4_h100x_sglang_mtp.sh")), [(Some("thinking_on".into()), "literal".into())]);
    // Defaults, each with its source, decide like a literal: a value written for the other mode is an error
    // of its class, and a value right under the default needs no warning.
    let dsv4_file = format!("{SN}dsv4_fp4_h100x_vllm_mtp.sh");
    let dsv4 = only_pin(&dsv4_file);
    assert_eq!(
        (dsv4["mode"]["value"].as_str(), dsv4["mode"]["how"].as_str(), dsv4["verdict"].as_str()),
        (Some("thinking_off"), Some("default"), Some("mismatch"))
    );
    assert!(dsv4["mode"]["text"].as_str().unwrap().contains("DeepSeek-V4"));
    let wrong_mode = findings_in(report(), &dsv4_file);
    assert!(wrong_mode.iter().any(|(c, _, s, _)| c == "wrong-thinking-mode" && s == "error"), "{wrong_mode:?}");
    assert!(!wrong_mode.iter().any(|(c, ..)| c == "assumption"), "{wrong_mode:?}");
    let qwen_file = format!("{SN}qwen3.5_fp8_h100x_mtp.sh");
    let qwen = only_pin(&qwen_file);
    assert_eq!((qwen["mode"]["how"].as_str(), qwen["verdict"].as_str()), (Some("default"), Some("ok")));
    assert!(findings_in(report(), &qwen_file).iter().all(|(c, ..)| c != "assumption"));
    // SGLANG_ENABLE_THINKING does nothing: noted, and the mode comes from the model's default instead.
    let glm = format!("{RC}sglang/glm/disagg.yaml");
    let note = line_of(&glm, "SGLANG_ENABLE_THINKING");
    assert!(message_at(report(), &glm, note, "inert").contains("SGLANG_DEFAULT_THINKING"));
    assert!(mode(&glm).iter().all(|m| m.1 == "default"));
}

#[test]
fn request_side_thinking_overrides_the_engines_default() {
    // DeepSeek-V4 on vLLM serves thinking off unless the request asks: the injected k = 2 recipe's
    // benchmark asks (`AIPERF_EXTRA_INPUTS: "thinking:true"`), so its pin is judged as thinking_on.
    let recipe = format!("{RC}vllm/dsv4/agg-k2.yaml");
    let injected: Vec<&Value> =
        pins(MASTER).into_iter().filter(|p| p["mode"]["at"]["file"] == recipe.as_str()).collect();
    assert!(!injected.is_empty());
    for pin in injected {
        assert_eq!(
            (pin["mode"]["value"].as_str(), pin["mode"]["how"].as_str()),
            (Some("thinking_on"), Some("literal"))
        );
        assert!(pin["mode"]["text"].as_str().unwrap().contains("AIPERF_EXTRA_INPUTS"), "{pin}");
        assert_eq!(pin["mode"]["at"]["line"].as_u64(), Some(line_of(&recipe, "AIPERF_EXTRA_INPUTS") as u64));
    }
    // Negative twin: the same model and engine with nothing on the request side falls back to the default.
    let plain = only_pin(&format!("{SN}dsv4_fp4_h100x_vllm_mtp.sh"));
    assert_eq!(
        (plain["mode"]["value"].as_str(), plain["mode"]["how"].as_str()),
        (Some("thinking_off"), Some("default"))
    );
    assert!(!plain["mode"]["text"].as_str().unwrap().contains("AIPERF_EXTRA_INPUTS"));
}

#[test]
fn shell_branches_templates_and_defaults_are_read_as_bash_runs_them() {
    let kw = |file: &str| -> Vec<(u64, f64, String)> {
        let mut v: Vec<(u64, f64, String)> = pins(file)
            .iter()
            .map(|p| {
                (
                    p["k"]["value"].as_u64().unwrap(),
                    p["written"]["value"].as_f64().unwrap(),
                    p["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        v.sort_by_key(|a| a.0);
        v
    };
    // if/elif/else: one pin per arm that speculates, k and AL from the same arm.
    assert_eq!(kw(&format!("{SN}kimik3_fp4_h100x_vllm_mtp.sh")), [(3, 3.0, "ok".into()), (7, 3.84, "ok".into())]);
    // case arms, assigned inside the case and used after it.
    assert_eq!(kw(&format!("{SN}glm5.2_fp8_mi3x_mtp.sh")), [(2, 2.5, "ok".into()), (3, 2.99, "ok".into())]);
    // printf binds %d and %.2f to their arguments.
    let printf = only_pin(&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"));
    assert_eq!(
        (printf["written"]["text"].as_str(), printf["k"]["text"].as_str()),
        (Some("SYNTHETIC_ACCEPT_LEN=2.78"), Some("NUM_SPEC_TOKENS=3"))
    );
    // A heredoc writes the engine config that holds k.
    let heredoc = only_pin(&format!("{SN}minimaxm3_fp4_h100x_trt_mtp.sh"));
    assert_eq!(
        (heredoc["k"]["value"].as_u64(), heredoc["k"]["at"]["line"].as_u64()),
        (Some(3), Some(line_of(&format!("{SN}minimaxm3_fp4_h100x_trt_mtp.sh"), "max_draft_len") as u64))
    );
    // ${VAR:-default}: the default, marked as one.
    assert_eq!(only_pin(&format!("{SN}qwen3.5_fp8_mi3x_mtp.sh"))["k"]["how"], "default");
    // An ATOM rate computed by awk, and a value from a shared lookup table called as a function.
    let awk = only_pin(&format!("{SN}glm5.2_fp4_mi3x_mtp.sh"));
    assert_eq!((awk["written"]["how"].as_str(), awk["verdict"].as_str()), (Some("computed"), Some("ok")));
    assert!((awk["implied_al"].as_f64().unwrap() - 2.99).abs() < 1e-3, "the rate carries awk's rounding: {awk}");
    let table = only_pin(&format!("{SN}dsv4_fp8_mi3x_mtp.sh"));
    assert_eq!(
        (table["mechanism"].as_str(), table["written"]["how"].as_str(), table["verdict"].as_str()),
        (Some("lookup_table"), Some("table"), Some("ok"))
    );
}

#[test]
fn a_lookup_table_in_shared_code_is_checked_for_the_k_each_entry_supplies() {
    let server = "benchmarks/multi_node/amd/server.sh";
    let reached: Vec<&Value> =
        pins(server).into_iter().filter(|p| !p["entries"].as_array().unwrap().is_empty()).collect();
    let [k3] = reached.as_slice() else { panic!("{reached:?}") };
    assert_eq!(
        (k3["k"]["value"].as_u64(), k3["k"]["how"].as_str(), k3["verdict"].as_str()),
        (Some(3), Some("branch"), Some("ok"))
    );
    assert_eq!(k3["entries"][0]["name"], "dsv4-fp4-mi3x-sglang-disagg-agentic");
    // The agentic entry's k = 4 has no arm; the fixed-seq-len entry's k = 5 needs none.
    let message = message_at(report(), server, line_of(server, "case \"${MODEL_NAME}"), "missing-pin");
    assert!(message.contains("DeepSeek-V4-Pro:4") && !message.contains(":5"), "{message}");
}

#[test]
fn drafters_match_by_name_and_dspark_k_is_its_block() {
    let sglang = only_pin(&format!("{RC}sglang/kimik3/agg-dspark.yaml"));
    assert_eq!(
        (sglang["k"]["value"].as_u64(), sglang["k"]["text"].as_str()),
        (Some(4), Some("speculative-dspark-block-size: 4"))
    );
    assert_eq!(sglang["drafter"]["value"], "/tmp/stage/Kimi-K3-DSpark");
    assert_eq!((sglang["golden"]["drafter_match"].as_str(), sglang["verdict"].as_str()), (Some("header"), Some("ok")));
    // The same staging path with probabilistic drafting picks the probabilistic curve.
    for pin in pins(&format!("{SN}kimik3_fp4_h100x_vllm_mtp.sh")) {
        assert!(pin["golden"]["file"].as_str().unwrap().contains("probabilistic"), "{pin}");
    }
    // Negative twin: greedy drafting is assumed where nothing is written, with a warning naming the
    // other curve's value.
    let line = line_of(&format!("{RC}sglang/kimik3/agg-dspark.yaml"), "SGLANG_SIMULATE_ACC_LEN");
    assert!(
        message_at(report(), &format!("{RC}sglang/kimik3/agg-dspark.yaml"), line, "assumption")
            .contains("probabilistic")
    );
}

#[test]
fn yaml_is_read_as_pyyaml_reads_it() {
    let dup = format!("{RC}vllm/mm3/agg-dup.yaml");
    let pin = only_pin(&dup);
    let last = line_of_nth(&dup, "speculative-config", 1);
    assert_eq!(
        (pin["location"]["line"].as_u64(), pin["k"]["value"].as_u64(), pin["verdict"].as_str()),
        (Some(last as u64), Some(3), Some("ok"))
    );
    assert!(message_at(report(), &dup, last, "duplicate-key").contains("speculative-config"));
    // Negative twin: the same recipe written once has no duplicate-key warning.
    assert!(findings_in(report(), &format!("{RC}vllm/mm3/agg.yaml")).iter().all(|(c, ..)| c != "duplicate-key"));
    // Model names come from `model.path: hf:org/name` and `served-model-name`, never container mounts.
    for pin in pins(&format!("{RC}sglang/glm/disagg.yaml")) {
        assert_eq!(
            (pin["model"]["value"].as_str(), pin["model"]["text"].as_str()),
            (Some("zai-org/GLM-5.2-FP8"), Some("model.path: zai-org/GLM-5.2-FP8"))
        );
    }
    assert!(pins(&format!("{RC}vllm/mm3/disagg.yaml")).iter().all(|p| p["model"]["value"] == "Org/MiniMax-M3-FP4"));
}

// ---- error classes ----------------------------------------------------------------------------------

#[test]
fn class_1_wrong_k() {
    assert_class(
        "wrong-k",
        &[
            (MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.49"),
            (&format!("{SN}minimaxm3_bf16_h100x_vllm_mtp.sh"), "synthetic_acceptance_length"),
        ],
        &[(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"), (&format!("{RC}vllm/dsv4/agg-k2.yaml"), "")],
    );
    let message = message_at(report(), MASTER, line_of(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.49"), "wrong-k");
    assert!(message.contains("k = 3") && message.contains("is 2.27"), "{message}");
    // Of one literal feeding two case arms, only the arm whose k it does not fit is wrong.
    let verdicts: Vec<(u64, &str)> = pins(&format!("{SN}minimaxm3_bf16_h100x_vllm_mtp.sh"))
        .iter()
        .map(|p| (p["k"]["value"].as_u64().unwrap(), p["verdict"].as_str().unwrap()))
        .collect();
    assert!(verdicts.contains(&(2, "mismatch")) && verdicts.contains(&(3, "ok")), "{verdicts:?}");
}

#[test]
fn class_2_wrong_drafter() {
    assert_class(
        "wrong-drafter",
        &[
            (&format!("{SN}minimaxm3_fp8_h100x_vllm_mtp.sh"), "2.83"),
            (&format!("{SN}minimaxm3_bf16_mi3x_mtp.sh"), "--spec-decode-acceptance-rate"),
        ],
        &[(&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"), "")],
    );
    let gqa = only_pin(&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"));
    assert!(gqa["golden"]["file"].as_str().unwrap().ends_with("minimaxm3_eagle3_gqa.yaml"));
    assert_eq!(gqa["golden"]["drafter_match"], "file_name");
}

#[test]
fn class_3_wrong_thinking_mode_and_its_allow_list_entry() {
    let (code, bare) = check(false);
    assert_eq!(code, 1);
    let file = format!("{RC}trtllm/dsv4/disagg.yaml");
    let line = line_of(&file, "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS");
    assert!(findings_in(&bare, &file).contains(&("wrong-thinking-mode".into(), line, "error".into(), false)));
    assert!(message_at(&bare, &file, line, "wrong-thinking-mode").contains("thinking_off"));
    // With the allow-list the same finding is sanctioned, with its reason, and fails nothing.
    assert!(findings_in(report(), &file).contains(&("wrong-thinking-mode".into(), line, "error".into(), true)));
    assert_eq!(report()["summary"]["allowed"], 1);
    assert_eq!(bare["summary"]["errors"].as_u64().unwrap(), report()["summary"]["errors"].as_u64().unwrap() + 1);
    assert_class(
        "wrong-thinking-mode",
        &[],
        &[(&format!("{RC}vllm/mm3/disagg.yaml"), ""), (&format!("{SN}dsv4_fp4_h100x_sglang_mtp.sh"), "")],
    );
}

#[test]
fn class_4_wrong_model() {
    let file = format!("{SN}kimik2.5_fp4_h100x_vllm_mtp.sh");
    assert_class("wrong-model", &[(&file, "3.39")], &[(&format!("{SN}qwen3.5_fp8_h100x_mtp.sh"), "")]);
    assert!(message_at(report(), &file, line_of(&file, "3.39"), "wrong-model").contains("qwen3.5_mtp.yaml"));
}

#[test]
fn class_5_spelling() {
    assert_class(
        "spelling",
        &[
            (&format!("{SN}minimaxm3_fp4_h100x_trt_mtp.sh"), "export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"),
            (&format!("{SN}qwen3.5_fp4_h100x_mtp.sh"), "SGLANG_SIMULATE_ACC_LEN"),
            (&format!("{RC}vllm/mm3/agg-norej.yaml"), "synthetic_acceptance_length"),
        ],
        &[
            (&format!("{RC}trtllm/qwen/disagg.yaml"), ""),
            (&format!("{SN}glm5.2_fp8_mi3x_mtp.sh"), ""),
            (&format!("{SN}glm5.2_fp4_mi3x_mtp.sh"), ""),
        ],
    );
}

#[test]
fn class_6_out_of_range() {
    let glm = format!("{RC}sglang/glm/disagg.yaml");
    assert_class("out-of-range", &[(&glm, "SGLANG_SIMULATE_ACC_LEN")], &[]);
    // The decode role pins the same 2.5 within its own k = 2.
    let decode = line_of_nth(&glm, "SGLANG_SIMULATE_ACC_LEN", 1);
    assert!(!findings_in(report(), &glm).iter().any(|(c, l, ..)| c == "out-of-range" && *l == decode));
    assert_eq!(pins_at(&glm, decode)[0]["verdict"], "ok");
}

#[test]
fn class_7_never_passed() {
    let mi3x = format!("{SN}minimaxm3_fp4_mi3x_mtp.sh");
    assert_class(
        "never-passed",
        &[(&mi3x, "TARGET_AL="), (&mi3x, "SGLANG_SIMULATE_ACC_LEN=")],
        &[(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=3.39"), (&format!("{SN}glm5.2_fp8_mi3x_mtp.sh"), "")],
    );
    // The injection without SYNTHETIC_ACCEPTANCE=true (the second 3.39 of that entry).
    let line = line_of_nth(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=3.39", 1);
    assert!(findings_in(report(), MASTER).contains(&("never-passed".into(), line, "error".into(), false)));
}

#[test]
fn class_8_eval_leak() {
    assert_class(
        "eval-leak",
        &[
            (&format!("{RC}trtllm/qwen-gby/agg.yaml"), "TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS"),
            (&format!("{RC}vllm/mm3/agg-eval-pinned.yaml"), "synthetic_acceptance_length"),
            (&format!("{SN}minimaxm3_fp8_mi3x_mtp.sh"), "synthetic_acceptance_length"),
        ],
        &[
            // Eval runs read its twin instead; the twin's own pin is the leak.
            (&format!("{RC}vllm/mm3/agg.yaml"), ""),
            (&format!("{RC}trtllm/qwen/disagg.yaml"), ""),
            (&format!("{RC}vllm/mm3/disagg.yaml"), ""),
            (MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"),
            (&format!("{SN}minimaxm3_fp4_h100x_vllm_mtp.sh"), ""),
        ],
    );
    let message = message_at(
        report(),
        &format!("{RC}trtllm/qwen-gby/agg.yaml"),
        line_of(&format!("{RC}trtllm/qwen-gby/agg.yaml"), "TLLM_SPEC"),
        "eval-leak",
    );
    assert!(message.contains("runners/launch_gby.sh"), "{message}");
}

#[test]
fn class_9_missing_pin() {
    let unpinned = format!("{RC}vllm/mm3/agg-unpinned.yaml");
    let found = findings_in(report(), &unpinned);
    assert!(found.iter().any(|(c, _, s, _)| c == "missing-pin" && s == "error"), "{found:?}");
    let script = format!("{SN}qwen3.5_fp4_mi3x_mtp.sh");
    assert!(findings_in(report(), &script).iter().any(|(c, _, s, _)| c == "missing-pin" && s == "error"));
    // Negative twins: a recipe an entry injects into, an eval twin, a collector no entry runs.
    for file in [
        format!("{RC}vllm/dsv4/agg-k2.yaml"),
        format!("{RC}vllm/mm3/disagg-eval.yaml"),
        "benchmarks/single_node/speedbench/minimaxm3_fp4_h100x_vllm.sh".into(),
    ] {
        assert!(!findings_in(report(), &file).iter().any(|(c, ..)| c == "missing-pin"), "{file}");
    }
}

#[test]
fn class_10_drift() {
    let qwen = format!("{SN}qwen3.5_fp8_mi3x_mtp.sh");
    assert_class(
        "drift",
        &[("CHANGELOG.md", "3.30"), (&qwen, "# golden acceptance length"), (&qwen, "SGLANG_SIMULATE_ACC_LEN")],
        &[("CHANGELOG.md", "2.78"), (&format!("{SN}glm5.2_fp8_mi3x_mtp.sh"), "")],
    );
    let line = line_of(&qwen, "SGLANG_SIMULATE_ACC_LEN");
    assert!(message_at(report(), &qwen, line, "drift").contains("NUM_SPEC_TOKENS"));
}

#[test]
fn the_summary_counts_what_the_findings_say() {
    let summary = &report()["summary"];
    let findings = report()["findings"].as_array().unwrap();
    let errors = findings.iter().filter(|f| f["severity"] == "error" && f["allowed"].is_null()).count();
    assert_eq!(summary["errors"].as_u64(), Some(errors as u64));
    let by_class: u64 = summary["errors_by_class"].as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum();
    assert_eq!(by_class, errors as u64);
    for class in [
        "wrong-k",
        "wrong-drafter",
        "wrong-model",
        "spelling",
        "out-of-range",
        "never-passed",
        "eval-leak",
        "missing-pin",
        "drift",
    ] {
        assert!(summary["errors_by_class"][class].as_u64().unwrap_or(0) > 0, "{class} planted: {summary}");
    }
    let ok = report()["pins"].as_array().unwrap().iter().filter(|p| p["verdict"] == "ok").count();
    assert_eq!(summary["ok"].as_u64(), Some(ok as u64));
    assert_eq!(summary["unresolved"], 1, "the entry whose script is missing");
}

/// Seen-era bug 2's tree: the repository holds the EAGLE3 drafter's curve only, and a script serving the
/// EAGLE3-GQA drafter pins that curve's 2.83. The GQA drafter's own curve is alsim's embedded one, used for
/// that drafter alone and said so: the value is another drafter's, and the fix writes the GQA value.
#[test]
fn a_drafter_the_repository_has_no_curve_for_is_checked_against_alsims_own() {
    let (code, report) = check_json(&["pins", "check", "tests/fixtures/gqa", "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    let errors: Vec<&Value> =
        report["findings"].as_array().unwrap().iter().filter(|f| f["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert_eq!(errors[0]["class"], "wrong-drafter", "{message}");
    assert!(
        message.contains("is 2.78 (minimaxm3_eagle3_gqa.yaml") && message.contains("alsim's embedded curve"),
        "{message}"
    );
    assert!(message.contains("file minimaxm3_eagle3.yaml"), "the repository's own curve holds 2.83: {message}");
    assert_eq!(report["pins"][0]["fix_to"].as_f64(), Some(2.78));
}

/// `pins list` shows each fact with where it came from: a default thinking mode names the image version it
/// was placed by and the serving-defaults row that decided it, as the check resolves it.
#[test]
fn pins_list_shows_where_a_default_mode_came_from() {
    let file = format!("{}/benchmarks/single_node/agentic/dsv4_fp4_h100x_vllm_mtp.sh", fixture().display());
    let (code, listed) = check_json(&["pins", "list", &file, "--format", "json"]);
    assert_eq!(code, 0, "{listed}");
    let mode = &listed["pins"][0]["mode"];
    assert_eq!((mode["value"].as_str(), mode["how"].as_str()), (Some("thinking_off"), Some("default")), "{mode}");
    let text = mode["text"].as_str().unwrap();
    assert!(text.contains("vllm/vllm-openai:v0.26.0: release 0.26.0"), "{text}");
    assert!(text.contains("profiles/serving_defaults.csv:") && text.contains("PR #50580"), "{text}");
    assert_eq!(mode["at"]["file"], "configs/demo-master.yaml", "the entry that names the image: {mode}");
    let (_, table, _) = run(&["pins", "list", &file]);
    assert!(table.contains("thinking_off [default] · default: vLLM serves thinking_off"), "{table}");
}

/// A multi-node recipe's `frontend:` section says who renders the prompt, and so whose default thinking
/// mode a deployment that states none serves: two Dynamo entries on vLLM 0.26.0 pin the thinking value;
/// the one whose recipe keeps Dynamo's own chat processor is right, the one whose recipe hands rendering
/// to vLLM (`dyn-chat-processor: vllm`) serves non-thinking, and the message names the recipe's line.
#[test]
fn the_recipe_frontend_decides_who_renders_the_prompt() {
    let (code, report) = check_json(&["pins", "check", "tests/fixtures/served", "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    let verdict = |file: &str| -> (String, String) {
        let pin = report["pins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["entries"][0]["name"] == file)
            .unwrap_or_else(|| panic!("no pin of entry {file}: {report}"));
        (pin["verdict"].as_str().unwrap().to_string(), pin["mode"]["text"].as_str().unwrap().to_string())
    };
    let (dynamo, why) = verdict("dsv4-dynamo-frontend");
    assert_eq!(dynamo, "ok", "{why}");
    assert!(why.contains("frontend.type: dynamo at") && why.contains("dynamo-frontend.yaml:5"), "{why}");
    let (vllm, why) = verdict("dsv4-vllm-chat-processor");
    assert_eq!(vllm, "mismatch", "{why}");
    assert_eq!(report["summary"]["errors_by_class"]["wrong-thinking-mode"], 1, "{report}");
    assert!(why.contains("dyn-chat-processor: vllm at") && why.contains("vllm-chat-processor.yaml:8"), "{why}");
    assert!(why.contains("release 0.26.0"), "the engine's version still places its default: {why}");
    let fix = report["pins"].as_array().unwrap().iter().find(|p| p["entries"][0]["name"] == "dsv4-vllm-chat-processor");
    assert_eq!(fix.unwrap()["fix_to"].as_f64(), Some(2.97), "the fix writes the non-thinking value");
}

/// A model with no known default is said once, not once per pin: two MiniMax-M3 deployments state no
/// thinking mode; the first pin's warning names the second, which gets a note pointing back.
#[test]
fn a_model_with_no_known_default_is_said_once() {
    let (_, report) = check_json(&["pins", "check", "tests/fixtures/served", "--format", "json"]);
    let said: Vec<(&str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "unresolved")
        .map(|f| (f["severity"].as_str().unwrap(), f["message"].as_str().unwrap()))
        .collect();
    assert_eq!(said.len(), 2, "{said:?}");
    assert_eq!(said[0].0, "warning");
    assert!(said[0].1.contains("no documented default for minimax-m3") && said[0].1.contains("served-master.yaml:"));
    assert!(said[0].1.contains("1 more pin of minimax-m3, said here once"), "{}", said[0].1);
    assert_eq!(said[1].0, "note");
    assert!(said[1].1.contains("said once for the model, at configs/served-master.yaml:"), "{}", said[1].1);
    assert_eq!(report["summary"]["unresolved"], 1);
    let unresolved = report["pins"].as_array().unwrap().iter().filter(|p| p["verdict"] == "unresolved").count();
    assert_eq!(unresolved, 2, "both pins stay unchecked");
}

/// The curve is chosen by what runs: two DSpark deployments of DeepSeek-V4-Pro in a repository whose only
/// curve is the model's MTP one. alsim's embedded DSpark curve, keyed by the DSpark checkpoint
/// (`deepseek-v4-pro-0813`), is theirs, said in a note; the right value is ok (never "another model's"),
/// and the MTP head's value is another method's, fixed to the DSpark value.
#[test]
fn the_method_selects_the_curve_family() {
    let (_, report) = check_json(&["pins", "check", "tests/fixtures/served", "--format", "json"]);
    let pin = |entry: &str| -> &Value {
        report["pins"].as_array().unwrap().iter().find(|p| p["entries"][0]["name"] == entry).unwrap()
    };
    let right = pin("dsv4-dspark-right");
    assert_eq!(right["verdict"], "ok", "{right}");
    assert!(right["golden"]["file"].as_str().unwrap().ends_with("dsv4-pro-0813-dspark.yaml"), "{right}");
    let wrong = pin("dsv4-dspark-mtp-value");
    assert_eq!(wrong["fix_to"].as_f64(), Some(3.01), "{wrong}");
    let messages: Vec<(&str, &str, u64)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["class"].as_str().unwrap(), f["message"].as_str().unwrap(), f["location"]["line"].as_u64().unwrap_or(0))
        })
        .collect();
    let at = |line: &Value| line["location"]["line"].as_u64().unwrap();
    let on_wrong: Vec<&(&str, &str, u64)> = messages.iter().filter(|m| m.2 == at(wrong)).collect();
    assert!(
        on_wrong.iter().any(|(class, message, _)| *class == "wrong-drafter"
            && message.contains("another method's curve (mtp: dsv4_mtp.yaml")
            && message.contains("not this run's dspark")),
        "{on_wrong:?}"
    );
    assert!(!messages.iter().any(|(class, ..)| *class == "wrong-model"), "{messages:?}");
    let note = messages.iter().find(|m| m.2 == at(right) && m.0 == "assumption").expect("a note on the curve chosen");
    assert!(
        note.1.contains("hold no dspark curve of deepseek-v4-pro (its curves: mtp)")
            && note.1.contains("the only one of the deepseek-v4-pro family"),
        "{}",
        note.1
    );
}

/// The verdict of the pin entry `name` runs, and the warnings at its line.
fn verdict_and_warnings(report: &Value, name: &str) -> (String, Vec<String>) {
    let pins = report["pins"].as_array().unwrap();
    let pin = pins.iter().find(|p| p["entries"][0]["name"] == name).unwrap_or_else(|| panic!("no pin of {name}"));
    let line = pin["location"]["line"].as_u64().unwrap();
    let warned = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["location"]["line"].as_u64() == Some(line) && f["severity"] == "warning")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    (pin["verdict"].as_str().unwrap().to_string(), warned)
}

/// vLLM's DeepSeek-V4 default from its commit 77434861904a runs effort high, which renders the prompt
/// effort max rendered before; the golden header names the effort, not the version that collected it.
/// The thinking value is the served mode's (ok), with a warning naming the change and its source.
#[test]
fn an_effort_whose_rendering_changed_is_a_warning() {
    let (_, report) = check_json(&["pins", "check", "tests/fixtures/served", "--format", "json"]);
    let (verdict, warned) = verdict_and_warnings(&report, "dsv4-vllm-after-the-change");
    assert_eq!(verdict, "ok");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("renders the prompt effort max rendered before") && warned[0].contains("#52083"),
        "{}",
        warned[0]
    );
}

/// The same effort stated in the recipe (`reasoning_effort: high` in vLLM's default chat-template
/// kwargs) is read like the default's: on vLLM 0.28.0 a warning naming the stated line and the change;
/// on 0.26.0, before the change, high renders what the header's high did and nothing is said.
#[test]
fn a_stated_effort_whose_rendering_changed_is_a_warning_too() {
    let (_, report) = check_json(&["pins", "check", "tests/fixtures/served", "--format", "json"]);
    let (verdict, warned) = verdict_and_warnings(&report, "dsv4-vllm-effort-high-after");
    assert_eq!(verdict, "ok");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("runs effort high as stated")
            && warned[0].contains("vllm-effort-high.yaml:14")
            && warned[0].contains("renders the prompt effort max rendered before")
            && warned[0].contains("release 0.28.0"),
        "{}",
        warned[0]
    );
    assert_eq!(verdict_and_warnings(&report, "dsv4-vllm-effort-high-before"), ("ok".to_string(), vec![]));
}

/// Each cause of an `assumption` says how to mend it: the effort warnings name the curve's engine
/// version, not the draft sampling the class's other cause is mended by.
#[test]
fn an_assumptions_help_line_fits_its_cause() {
    let (_, stdout, _) = run(&["pins", "check", "tests/fixtures/served"]);
    let text = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    let effort = "help: collect the curve on the engine version this runs, or record the version that collected it \
                  in its header (more: alsim explain assumption)";
    assert_eq!(text.matches("warning[assumption]").count(), 2, "{stdout}");
    assert_eq!(text.matches(effort).count(), 2, "{stdout}");
    assert!(!text.contains("help: state the draft sampling"), "{stdout}");
}

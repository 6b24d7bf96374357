//! `alsim pins check|list|fix` as a CI step: severity (what fails, what warns, what is undecided), files
//! that cannot be read, output formats, the repair of wrong literals, and `alsim pin`.

use std::path::Path;

use serde_json::Value;

use crate::pins::{MASTER, RC, SN, check_json, fixture, line_of};
use crate::util::{alsim, run};

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A scratch repository with the fixture's Qwen3.5 golden file (a clean curve) and the given files.
pub fn scratch(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden_al_distribution");
    std::fs::create_dir(&golden).unwrap();
    std::fs::copy(fixture().join("golden_al_distribution/qwen3.5_mtp.yaml"), golden.join("qwen3.5_mtp.yaml")).unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

pub fn sglang_script(value: &str) -> String {
    format!(
        "#!/usr/bin/env bash\nif [ \"$EVAL_ONLY\" != true ]; then\n  export SGLANG_SIMULATE_ACC_LEN={value}\n  export SGLANG_SIMULATE_ACC_METHOD=match-expected\n  export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\nfi\npython3 -m sglang.launch_server --model-path Qwen/Qwen3.5-397B-A17B-FP4 --speculative-num-steps 3\n"
    )
}

fn classes(report: &Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["class"].as_str().unwrap().into(),
                f["severity"].as_str().unwrap().into(),
                f["location"]["file"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn a_documented_default_thinking_mode_decides_like_a_literal() {
    // Qwen3.5 serves thinking unless told otherwise (its chat template's default): the thinking_on value at
    // k = 3 (3.39 in the scratch golden file) passes even under --strict, with nothing assumed.
    let dir = scratch(&[("agentic/qwen.sh", &sglang_script("3.39"))]);
    let repo = dir.path().to_str().unwrap();
    let (code, report) = check_json(&["pins", "check", repo, "--format", "json", "--strict"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(
        (report["pins"][0]["verdict"].as_str(), report["pins"][0]["mode"]["how"].as_str()),
        (Some("ok"), Some("default"))
    );
    assert!(classes(&report).iter().all(|(c, ..)| c != "assumption"), "{report}");
    // Negative twin: the thinking_off value (3.33) under that default is an error of its class, not a warning.
    let dir = scratch(&[("agentic/qwen.sh", &sglang_script("3.33"))]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    assert!(classes(&report).contains(&("wrong-thinking-mode".into(), "error".into(), "agentic/qwen.sh".into())));
    // Stating the other mode makes the same value right.
    let stated = sglang_script("3.33").replace(
        "--speculative-num-steps 3",
        "--speculative-num-steps 3 --default-chat-template-kwargs '{\"enable_thinking\": false}'",
    );
    let dir = scratch(&[("agentic/qwen.sh", &stated)]);
    assert_eq!(run(&["pins", "check", dir.path().to_str().unwrap(), "--strict"]).0, 0);
}

/// A Qwen3.5 SGLang script whose value is `$AL`, with `source LINE` written where `at` says.
fn sourcing_script(source: &str, before_pin: bool) -> String {
    let script = sglang_script("$AL");
    let (head, tail) = script.split_once("if [").unwrap();
    if before_pin { format!("{head}{source}\nif [{tail}") } else { format!("{head}if [{tail}{source}\n") }
}

#[test]
fn a_sourced_file_gives_its_variables_and_facts_where_bash_reads_it() {
    // env.sh states thinking off and sets the value: the thinking_off golden value at k = 3 (3.33) is right.
    let env = "export SGLANG_DEFAULT_THINKING=0\nAL=3.33\n";
    let script = sourcing_script("source \"$(dirname \"$0\")/env.sh\"", true);
    let dir = scratch(&[("agentic/qwen.sh", &script), ("agentic/env.sh", env)]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json", "--strict"]);
    assert_eq!(code, 0, "{report}");
    let pin = &report["pins"][0];
    assert_eq!((pin["mode"]["value"].as_str(), pin["mode"]["how"].as_str()), (Some("thinking_off"), Some("literal")));
    assert_eq!(
        (pin["mode"]["at"]["file"].as_str(), pin["mode"]["at"]["line"].as_u64()),
        (Some("agentic/env.sh"), Some(1))
    );
    assert_eq!((pin["written"]["value"].as_f64(), pin["written"]["at"]["line"].as_u64()), (Some(3.33), Some(2)));
    assert_eq!(pin["written"]["at"]["file"], "agentic/env.sh");
    // The same idioms through a variable, a path from the root and `.`: the file is read all the same.
    for source in [
        "DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n. \"$DIR/env.sh\"",
        "source \"$GITHUB_WORKSPACE/agentic/env.sh\"",
        ". ${BASH_SOURCE%/*}/env.sh",
    ] {
        let dir = scratch(&[("agentic/qwen.sh", &sourcing_script(source, true)), ("agentic/env.sh", env)]);
        let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
        assert_eq!((code, report["pins"][0]["verdict"].as_str()), (0, Some("ok")), "{source}: {report}");
    }
    // Negative twin: sourced after the pin, nothing it sets reaches the pin.
    let dir = scratch(&[
        ("agentic/qwen.sh", &sourcing_script("source \"$(dirname \"$0\")/env.sh\"", false)),
        ("agentic/env.sh", env),
    ]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["pins"][0]["written"]["how"], "unresolved");
}

#[test]
fn a_sourced_files_pins_run_with_the_sourcing_scripts_variables() {
    let pins = sglang_script("3.39").replace("--speculative-num-steps 3", "--speculative-num-steps $K");
    let run = |k_first: bool| {
        let (k, source) = ("K=3", "source \"$(dirname \"$0\")/pin.sh\"");
        let text = if k_first { format!("{k}\n{source}\n") } else { format!("{source}\n{k}\n") };
        let dir = scratch(&[("agentic/run.sh", &text), ("agentic/pin.sh", &pins)]);
        check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"])
    };
    // The pin is reported where it is written, with the k the sourcing script set before reading it.
    let (code, report) = run(true);
    assert_eq!(code, 0, "{report}");
    let pin = &report["pins"][0];
    assert_eq!((pin["location"]["file"].as_str(), pin["verdict"].as_str()), (Some("agentic/pin.sh"), Some("ok")));
    assert_eq!((pin["k"]["value"].as_u64(), pin["k"]["at"]["file"].as_str()), (Some(3), Some("agentic/run.sh")));
    // Negative twin: K set only after the file is read does not reach its pin.
    let (code, report) = run(false);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["pins"][0]["k"]["how"], "unresolved", "{report}");
}

#[test]
fn a_source_that_cannot_be_followed_is_unresolved_naming_the_path() {
    let dir = scratch(&[("agentic/qwen.sh", &sourcing_script("source \"$WS_PATH/missing.sh\"", true))]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 3, "{report}");
    let unresolved: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == "unresolved" && f["location"]["line"] == 2)
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(unresolved.iter().any(|m| m.contains("missing.sh") && m.contains("$WS_PATH")), "{report}");
    // Two files that source each other: each is read once, and the check ends.
    let a = sourcing_script("source \"$(dirname \"$0\")/b.sh\"", true);
    let b = "source \"$(dirname \"${BASH_SOURCE[0]}\")/qwen.sh\"\nAL=3.39\n";
    let dir = scratch(&[("agentic/qwen.sh", &a), ("agentic/b.sh", b)]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!((code, report["pins"][0]["verdict"].as_str()), (0, Some("ok")), "{report}");
}

#[cfg(unix)]
#[test]
fn a_sourced_link_out_of_the_root_is_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("env.sh"), "AL=3.39\n").unwrap();
    let dir = scratch(&[("agentic/qwen.sh", &sourcing_script("source \"$(dirname \"$0\")/env.sh\"", true))]);
    std::os::unix::fs::symlink(outside.path().join("env.sh"), dir.path().join("agentic/env.sh")).unwrap();
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["pins"][0]["written"]["how"], "unresolved", "{report}");
    assert!(!report.to_string().contains("3.39"), "{report}");
}

#[test]
fn an_unresolved_value_is_undecided_naming_the_missing_fact() {
    let dir = scratch(&[("agentic/env.sh", &sglang_script("$AL_FROM_CI"))]);
    let (code, report) = check_json(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["pins"][0]["written"]["how"], "unresolved");
    let message =
        report["findings"].as_array().unwrap().iter().find(|f| f["class"] == "unresolved").unwrap()["message"]
            .as_str()
            .unwrap();
    assert!(message.contains("AL_FROM_CI"), "{message}");
}

#[test]
fn a_candidate_that_cannot_be_read_fails_the_check_naming_it() {
    let dir = scratch(&[("agentic/qwen.sh", &sglang_script("3.39"))]);
    let root = dir.path();
    std::fs::write(root.join("bin.sh"), b"#!/bin/sh\n\0\x01speculative").unwrap();
    std::fs::write(root.join("latin1.yaml"), b"speculative: \xe9\n").unwrap();
    std::fs::write(root.join("broken.yaml"), "SGLANG_SIMULATE_ACC_LEN: [\n").unwrap();
    // A YAML file with no pin spelling that no entry names is never parsed: it cannot hide a pin.
    std::fs::write(root.join("unrelated.yaml"), "matrix: [\n").unwrap();
    std::fs::File::create(root.join("huge.yaml")).unwrap().set_len(alsim::input::SMALL_FILE_LIMIT + 1).unwrap();
    #[cfg(unix)]
    {
        // A FIFO must not hang the walk, and a link back to an enclosing folder hides nothing.
        let made = std::process::Command::new("mkfifo").arg(root.join("launch.sh")).status().unwrap();
        assert!(made.success());
        std::os::unix::fs::symlink(".", root.join("agentic/loop")).unwrap();
    }
    let (code, report) = check_json(&["pins", "check", root.to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 1, "{report}");
    let found = classes(&report);
    let mut wanted = vec!["bin.sh", "latin1.yaml", "broken.yaml", "huge.yaml"];
    if cfg!(unix) {
        wanted.push("launch.sh");
    }
    for file in wanted {
        assert!(found.contains(&("unreadable".into(), "error".into(), file.into())), "{file}: {found:?}");
    }
    assert!(!found.iter().any(|(_, _, f)| f == "unrelated.yaml"), "{found:?}");
    #[cfg(unix)]
    assert!(found.contains(&("unreadable".into(), "note".into(), "agentic/loop".into())), "{found:?}");
    // The readable pin is still checked.
    assert!(
        report["pins"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["location"]["file"] == "agentic/qwen.sh" && p["verdict"] == "ok")
    );
}

#[cfg(unix)]
#[test]
fn links_leaving_the_repository_are_reported_never_followed_or_echoed() {
    // What a fork's pull request could hold: links to a runner's secrets and to a whole system directory.
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("environ"), "export SGLANG_SIMULATE_ACC_LEN=AWS_SECRET_hunter2\n").unwrap();
    std::fs::create_dir(outside.path().join("usr")).unwrap();
    std::fs::write(outside.path().join("usr/launch.sh"), sglang_script("2.0")).unwrap();
    let dir = scratch(&[("agentic/qwen.sh", &sglang_script("3.39"))]);
    let root = dir.path();
    std::os::unix::fs::symlink(outside.path().join("environ"), root.join("env.sh")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("usr"), root.join("usr")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("environ"), root.join("golden_al_distribution/x.yaml")).unwrap();
    for format in ["json", "table", "md", "csv", "github"] {
        let (code, stdout, stderr) = run(&["pins", "check", root.to_str().unwrap(), "--format", format]);
        assert_eq!(code, 1, "{format}: {stdout}{stderr}");
        let all = format!("{stdout}{stderr}");
        assert!(!all.contains("hunter2") && !all.contains(&*outside.path().to_string_lossy()), "{format}: {all}");
    }
    let (_, report) = check_json(&["pins", "check", root.to_str().unwrap(), "--format", "json"]);
    let found = classes(&report);
    for link in ["env.sh", "usr", "golden_al_distribution/x.yaml"] {
        assert!(found.contains(&("unreadable".into(), "error".into(), link.into())), "{link}: {found:?}");
    }
    // Only the repository's own pin was checked.
    let pins: Vec<&str> =
        report["pins"].as_array().unwrap().iter().map(|p| p["location"]["file"].as_str().unwrap()).collect();
    assert_eq!(pins, ["agentic/qwen.sh"]);
}

#[test]
fn exceptions_come_from_the_repository_allow_list_or_inline_comments() {
    let out_of_range = sglang_script("9.5");
    let inline_after = out_of_range.replace(
        "SGLANG_SIMULATE_ACC_LEN=9.5",
        "SGLANG_SIMULATE_ACC_LEN=9.5  # alsim: allow out-of-range -- a stress run, never published",
    );
    let inline_above = out_of_range.replace(
        "  export SGLANG_SIMULATE_ACC_LEN=9.5",
        "  # alsim: allow out-of-range -- a stress run, never published\n  export SGLANG_SIMULATE_ACC_LEN=9.5",
    );
    let no_reason =
        out_of_range.replace("SGLANG_SIMULATE_ACC_LEN=9.5", "SGLANG_SIMULATE_ACC_LEN=9.5  # alsim: allow out-of-range");
    let check = |script: &str| {
        let dir = scratch(&[("agentic/qwen.sh", script)]);
        let (code, stdout, stderr) = run(&["pins", "check", dir.path().to_str().unwrap(), "--format", "json"]);
        (code, serde_json::from_str::<Value>(&stdout).unwrap(), stderr, dir)
    };
    let (code, report, _, _) = check(&out_of_range);
    assert_eq!(code, 1);
    assert_eq!(report["summary"]["allowed"], 0);
    for script in [&inline_after, &inline_above] {
        let (code, report, stderr, _) = check(script);
        assert_eq!(code, 0, "{stderr}{report}");
        let allowed: Vec<&Value> =
            report["findings"].as_array().unwrap().iter().filter(|f| f["allowed"].is_string()).collect();
        assert_eq!(allowed.len(), 1, "{report}");
        assert_eq!(allowed[0]["allowed"], "a stress run, never published");
    }
    // Without a reason it sanctions nothing, and says so.
    let (code, report, _, _) = check(&no_reason);
    assert_eq!(code, 1);
    assert!(classes(&report).iter().any(|(c, _, f)| c == "stale-allow" && f == "agentic/qwen.sh"), "{report}");
    // The repository's own .alsim-allow.yaml is used without --allow, and the run names it.
    let (_, _, _, dir) = check(&out_of_range);
    std::fs::write(
        dir.path().join(".alsim-allow.yaml"),
        "- file: agentic/*\n  class: out-of-range\n  reason: stress runs\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["pins", "check", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("using the allow-list") && stderr.contains(".alsim-allow.yaml"), "{stderr}");
    // A named file takes its place.
    let other = dir.path().join("other.yaml");
    std::fs::write(&other, "[]\n").unwrap();
    let (code, _, stderr) = run(&["pins", "check", dir.path().to_str().unwrap(), "--allow", other.to_str().unwrap()]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("using the allow-list"), "{stderr}");
}

#[test]
fn a_directory_with_nothing_to_check_is_undecided_and_says_so() {
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.txt"), "nothing here\n").unwrap();
    let (code, stdout, stderr) = run(&["pins", "check", empty.path().to_str().unwrap()]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    assert!(stderr.contains("no candidate file"), "{stderr}");
    let (code, _, stderr) = run(&["pins", "check", empty.path().join("missing").to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn curve_problems_fail_only_where_a_pin_rests_on_them() {
    // k = 1 out of range, but no pin runs k = 1: a warning.
    let repo = fixture();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/golden_out_of_range");
    let (_, report) = check_json(&[
        "pins",
        "check",
        repo.to_str().unwrap(),
        "--golden",
        golden.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(report["golden_source"].as_str().unwrap().ends_with("(given)"));
    let on = |report: &Value, severity: &str| {
        classes(report).iter().any(|(c, s, f)| c == "curve-problem" && s == severity && f.ends_with("qwen3.5_mtp.yaml"))
    };
    assert!(on(&report, "warning") && !on(&report, "error"), "{:?}", classes(&report));
    // The k = 3 entry that the Qwen3.5 pins rest on accepts its third draft more often than its second:
    // an error there.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture().join("golden_al_distribution"), dir.path());
    let qwen = dir.path().join("qwen3.5_mtp.yaml");
    let text = std::fs::read_to_string(&qwen).unwrap();
    let bent: String = text
        .lines()
        .map(|l| if l.trim() == "2: 2.73" { l.replace("2.73", "2.20") } else { l.to_string() } + "\n")
        .collect();
    assert_ne!(bent, text, "the fixture's Qwen3.5 curve has k = 2 at 2.73");
    std::fs::write(&qwen, bent).unwrap();
    let (code, report) = check_json(&[
        "pins",
        "check",
        repo.to_str().unwrap(),
        "--golden",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    assert!(on(&report, "error"), "{:?}", classes(&report));
}

#[test]
fn formats_for_ci_logs_pr_comments_and_spreadsheets() {
    let repo = fixture();
    let repo = repo.to_str().unwrap();
    let wrong_k = line_of(MASTER, "SYNTHETIC_ACCEPTANCE_LENGTH=2.49");
    let (code, github, _) = run(&["pins", "check", repo, "--format", "github"]);
    assert_eq!(code, 1);
    assert!(github.contains(&format!("::error file={MASTER},line={wrong_k},")), "{github}");
    assert!(github.contains("::warning file="), "{github}");
    let (code, md, _) = run(&["pins", "check", repo, "--format", "md"]);
    assert_eq!(code, 1);
    assert!(md.starts_with("## alsim pins check: FAIL"), "{md}");
    assert!(md.contains("| errors by class | count |") && md.contains("<details"), "{md}");
    assert!(md.contains(&format!("`{MASTER}:{wrong_k}`")), "{md}");
    let (_, human, _) = run(&["pins", "check", repo]);
    let first = human.split("\n\n").next().unwrap_or_default();
    assert!(first.contains(" error[") && !first.starts_with(' '), "errors first, one block each: {human}");
    assert!(human.contains(&format!("{MASTER}:{wrong_k}: error[wrong-k]: ")), "{human}");
    assert!(human.contains("  help: pin the golden value for the k this role runs"), "{human}");
    assert!(human.contains("39 pins, 28 ok; 23 errors (") && human.contains("status fail"), "{human}");
    let (_, table, _) = run(&["pins", "check", repo, "--format", "table"]);
    assert!(table.contains("wrong-drafter") && table.contains("note: ") && table.contains("── 1 of 39"), "{table}");
    let (code, csv, _) = run(&["pins", "check", repo, "--format", "csv"]);
    assert_eq!(code, 1);
    assert!(csv.lines().any(|l| l.starts_with("where,role,engine,knob,written,")), "{csv}");
    let (code, list, _) = run(&["pins", "list", repo, "--format", "csv"]);
    assert_eq!(code, 0);
    assert!(list.contains(&format!("{SN}glm5.2_fp8_mi3x_mtp.sh")), "{list}");
}

#[test]
fn github_annotations_put_wrong_values_first_and_keep_every_finding() {
    let repo = fixture();
    let repo = repo.to_str().unwrap();
    let (code, github, _) = run(&["pins", "check", repo, "--format", "github"]);
    assert_eq!(code, 1);
    let (_, report) = check_json(&["pins", "check", repo, "--format", "json"]);
    // (level, class) of each annotation, in the order printed.
    let shown: Vec<(&str, &str)> = github
        .lines()
        .filter_map(|l| {
            let (level, rest) = l.strip_prefix("::")?.split_once(' ')?;
            let class = rest.split_once("title=alsim pins%3A ")?.1.split([' ', ':']).next()?;
            Some((level, class))
        })
        .collect();
    assert_eq!(shown.len(), report["findings"].as_array().unwrap().len(), "{github}");
    let level_rank = |level: &str| ["error", "warning", "notice"].iter().position(|l| *l == level).unwrap();
    let order = ["wrong-k", "mismatch", "wrong-drafter", "wrong-model", "wrong-thinking-mode", "out-of-range"];
    let order = [&order[..], &["spelling", "eval-leak"]].concat();
    let class_rank = |class: &str| order.iter().position(|c| *c == class).unwrap_or(order.len());
    let ranks: Vec<(usize, usize)> = shown.iter().map(|(l, c)| (level_rank(l), class_rank(c))).collect();
    assert!(ranks.is_sorted(), "{shown:?}");
    // In file order the fixture's first error is CHANGELOG.md's drift; its wrong-k errors come first now.
    assert_eq!(shown[..2], [("error", "wrong-k"), ("error", "wrong-k")], "{shown:?}");
    let leaks = shown.iter().position(|s| *s == ("error", "eval-leak")).unwrap();
    let drift = shown.iter().position(|s| *s == ("error", "drift")).unwrap();
    assert!(shown[..leaks].iter().all(|(_, c)| order[..7].contains(c)) && leaks < drift, "{shown:?}");
}

#[test]
fn the_github_format_appends_the_markdown_report_to_the_job_summary() {
    let repo = fixture();
    let repo = repo.to_str().unwrap();
    let (_, md, _) = run(&["pins", "check", repo, "--format", "md"]);
    let (_, annotations, _) = run(&["pins", "check", repo, "--format", "github"]);
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("step_summary.md");
    std::fs::write(&summary, "an earlier step's summary\n").unwrap();
    let with_summary = |format: &str, path: &Path| {
        let out = alsim().args(["pins", "check", repo, "--format", format]).env("GITHUB_STEP_SUMMARY", path).output();
        let out = out.unwrap();
        (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, stdout, stderr) = with_summary("github", &summary);
    assert_eq!((code, stdout.as_str()), (1, annotations.as_str()), "{stderr}");
    let appended = format!("an earlier step's summary\n{md}");
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), appended);
    // Only the github format writes it.
    let (code, _, _) = with_summary("json", &summary);
    assert_eq!(code, 1);
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), appended);
    // A summary that cannot be written is a warning; the check's own verdict and output stand.
    let (code, stdout, stderr) = with_summary("github", &dir.path().join("missing/step_summary.md"));
    assert_eq!((code, stdout.as_str()), (1, annotations.as_str()));
    assert!(stderr.contains("warning") && stderr.contains("GITHUB_STEP_SUMMARY"), "{stderr}");
    assert!(stderr.contains("missing/step_summary.md"), "{stderr}");
}

/// The changed lines of a unified diff, as (file, old, new).
fn changes(diff: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut file = String::new();
    let mut old = None;
    for line in diff.lines() {
        if let Some(f) = line.strip_prefix("+++ b/") {
            file = f.to_string();
        } else if line.starts_with("---") || line.starts_with("@@") {
        } else if let Some(o) = line.strip_prefix('-') {
            old = Some(o.to_string());
        } else if let Some(n) = line.strip_prefix('+') {
            out.push((file.clone(), old.take().unwrap(), n.to_string()));
        }
    }
    out
}

#[test]
fn fix_sets_each_wrong_literal_to_its_golden_value_and_nothing_else() {
    let repo = fixture();
    let allow = repo.join("alsim-allow.yaml");
    let args = ["pins", "fix", repo.to_str().unwrap(), "--allow", allow.to_str().unwrap()];
    let (code, diff, stderr) = run(&args);
    assert_eq!(code, 1, "{stderr}");
    let got = changes(&diff);
    for (file, from, to) in [
        (MASTER.to_string(), "SYNTHETIC_ACCEPTANCE_LENGTH=2.49", "SYNTHETIC_ACCEPTANCE_LENGTH=2.27"),
        (format!("{SN}kimik2.5_fp4_h100x_vllm_mtp.sh"), "3.39", "2.88"),
        (format!("{SN}minimaxm3_fp8_h100x_vllm_mtp.sh"), "2.83", "2.78"),
        (format!("{SN}minimaxm3_fp4_h100x_trt_mtp.sh"), "=2.78", "=1.78"),
        (format!("{RC}sglang/glm/disagg.yaml"), "'2.5'", "'1.84'"),
        // The thinking_on value where vLLM's documented default serves thinking_off.
        (format!("{SN}dsv4_fp4_h100x_vllm_mtp.sh"), "2.49", "2.97"),
    ] {
        assert!(
            got.iter().any(|(f, o, n)| *f == file && o.contains(from) && n.contains(to) && o.replace(from, to) == *n),
            "{file}: {from} → {to} not in {got:#?}"
        );
    }
    // Only the value changes, and the sanctioned exception is left as it is.
    assert_eq!(got.len(), 6, "{got:#?}");
    assert!(!diff.contains("trtllm/dsv4"), "{diff}");
    // Refused, with the reason: a literal two case arms need at different values, and a computed rate.
    assert!(stderr.contains("minimaxm3_bf16_h100x_vllm_mtp.sh") && stderr.contains("ambiguous"), "{stderr}");
    assert!(stderr.contains("minimaxm3_bf16_mi3x_mtp.sh") && stderr.contains("not one literal"), "{stderr}");
    let (_, plan) = check_json(&[&args[..], &["--format", "json"]].concat());
    assert_eq!(plan["changes"].as_array().unwrap().len(), 6);
}

#[test]
fn after_fix_write_every_fixed_pin_passes() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let repo = dir.path().to_str().unwrap();
    let allow = dir.path().join("alsim-allow.yaml");
    let allow = allow.to_str().unwrap();
    let (_, plan) = check_json(&["pins", "fix", repo, "--allow", allow, "--format", "json"]);
    let fixed: Vec<(String, u64)> = plan["changes"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| {
            c["pins"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p["file"].as_str().unwrap().to_string(), p["line"].as_u64().unwrap()))
        })
        .collect();
    assert!(!fixed.is_empty());
    let (code, _, stderr) = run(&["pins", "fix", repo, "--allow", allow, "--write"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("changes written"), "{stderr}");
    let (_, report) = check_json(&["pins", "check", repo, "--allow", allow, "--format", "json"]);
    for (file, line) in &fixed {
        for pin in report["pins"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["location"]["file"] == *file && p["location"]["line"] == *line)
        {
            assert_eq!(pin["verdict"], "ok", "{pin}");
        }
        let errors =
            report["findings"].as_array().unwrap().iter().filter(|f| {
                f["location"]["file"] == *file && f["location"]["line"] == *line && f["severity"] == "error"
            });
        assert_eq!(errors.count(), 0, "{file}:{line}");
    }
    // Nothing left to change; the refusals stay.
    let (code, diff, stderr) = run(&["pins", "fix", repo, "--allow", allow]);
    assert_eq!((code, diff.as_str()), (1, ""), "{stderr}");
    assert!(stderr.contains("ambiguous"));
}

#[test]
fn a_repository_with_nothing_wrong_has_nothing_to_fix() {
    let stated = sglang_script("3.39").replace(
        "--speculative-num-steps 3",
        "--speculative-num-steps 3 --default-chat-template-kwargs '{\"enable_thinking\": true}'",
    );
    let dir = scratch(&[("agentic/qwen.sh", &stated)]);
    let (code, diff, stderr) = run(&["pins", "fix", dir.path().to_str().unwrap()]);
    assert_eq!((code, diff.as_str(), stderr.as_str()), (0, "", ""));
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
        (vec!["pins", "fix", "/nonexistent/repo"], "/nonexistent/repo"),
        (vec!["pin", "--k", "3", "--engine", "tgi"], "unknown engine"),
        (vec!["pin", "--k", "9", "--engine", "atom"], "k = 9"),
        (vec!["pin", "--k", "3", "--engine", "vllm", "--rate"], "only ATOM"),
    ] {
        let (code, _, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: expected '{needle}' in {stderr}");
        // The cli's context and the library's error must not both name a path.
        if needle.starts_with('/') {
            assert_eq!(stderr.matches(needle).count(), 1, "{args:?}: '{needle}' named more than once in {stderr}");
        }
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// A tree that has only the MHA drafter's curve (as InferenceX before its GQA file): a GQA drafter's pin
/// cannot be judged, so it is unresolved naming the drafter, whether it holds the MHA value (which used to
/// pass) or the GQA one (which used to be a false mismatch).
#[test]
fn a_drafter_whose_curve_is_not_in_the_tree_is_unresolved_not_judged() {
    let plain = std::fs::read_to_string(fixture().join("golden_al_distribution/minimaxm3_eagle3.yaml")).unwrap();
    for value in ["2.83", "2.78"] {
        let script = format!(
            "#!/usr/bin/env bash\nif [ \"$EVAL_ONLY\" != \"true\" ]; then\n    SPEC='{{\"method\": \"eagle3\", \"model\": \"Org/MiniMax-M3-EAGLE3-GQA\", \"num_speculative_tokens\": 3, \"rejection_sample_method\": \"synthetic\", \"synthetic_acceptance_length\": {value}}}'\nfi\nvllm serve MiniMaxAI/MiniMax-M3 --default-chat-template-kwargs '{{\"thinking_mode\":\"enabled\"}}' --speculative-config \"$SPEC\"\n"
        );
        let repo = scratch(&[
            ("golden_al_distribution/minimaxm3_eagle3.yaml", &plain),
            ("benchmarks/single_node/minimaxm3_fp8_vllm_mtp.sh", &script),
        ]);
        let (code, report) = check_json(&["pins", "check", repo.path().to_str().unwrap(), "--format", "json"]);
        let found = classes(&report);
        assert_eq!(code, 3, "{value}: {found:?}");
        let unresolved = report["findings"].as_array().unwrap().iter().find(|f| f["class"] == "unresolved").unwrap();
        let message = unresolved["message"].as_str().unwrap();
        assert!(message.contains("Org/MiniMax-M3-EAGLE3-GQA") && message.contains("'gqa' variant"), "{message}");
        assert!(found.iter().all(|(class, _, _)| class != "mismatch" && class != "wrong-drafter"), "{found:?}");
    }
}

/// Reasoning effort is a fact: DeepSeek-V4's curve was collected at effort `high` (its header says so), so
/// a server run at `max` has no golden value, whatever it pins (InferenceX's AMD env.sh ran `max` until
/// a141bfc set `high`); a run at `high`, or one that states no effort, is judged as before.
#[test]
fn a_reasoning_effort_the_curve_was_not_collected_at_is_a_wrong_thinking_mode() {
    let golden = std::fs::read_to_string(fixture().join("golden_al_distribution/dsv4_mtp.yaml")).unwrap();
    let script = |effort: &str| {
        format!(
            "#!/usr/bin/env bash\n{effort}export SGLANG_DEFAULT_THINKING=1\nif [ \"$EVAL_ONLY\" != true ]; then\n  export SGLANG_SIMULATE_ACC_LEN=2.49\n  export SGLANG_SIMULATE_ACC_METHOD=match-expected\n  export SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token\nfi\npython3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Pro --speculative-num-steps 3\n"
        )
    };
    for (effort, wrong) in [
        ("export SGLANG_DSV4_REASONING_EFFORT=max\n", true),
        ("export SGLANG_DSV4_REASONING_EFFORT=high\n", false),
        ("", false),
    ] {
        let repo = scratch(&[
            ("golden_al_distribution/dsv4_mtp.yaml", &golden),
            ("benchmarks/single_node/dsv4_fp4_sglang_mtp.sh", &script(effort)),
        ]);
        let (code, report) = check_json(&["pins", "check", repo.path().to_str().unwrap(), "--format", "json"]);
        let findings = report["findings"].as_array().unwrap();
        let effort_finding = findings.iter().find(|f| f["message"].as_str().unwrap().contains("reasoning effort"));
        assert_eq!(effort_finding.is_some(), wrong, "{effort:?}: {findings:?}");
        if let Some(f) = effort_finding {
            assert_eq!(
                (f["class"].as_str(), f["severity"].as_str(), code),
                (Some("wrong-thinking-mode"), Some("error"), 1)
            );
            let message = f["message"].as_str().unwrap();
            assert!(
                message.contains("collected at reasoning effort high") && message.contains("runs reasoning effort max"),
                "{message}"
            );
        } else {
            assert_eq!(report["pins"][0]["verdict"], "ok", "{effort:?}: {findings:?}");
        }
    }
}

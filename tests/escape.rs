//! Output injection (issue 21): a file name or label that holds line breaks must not start a line of its own
//! in any output format, since a CI log obeys a line such as `::error …` as a workflow command. Each test
//! builds hostile names in a temp dir and runs every format of a command that shows them.

use std::path::Path;

use crate::util::run;

/// What a hostile name holds: a newline and a carriage return each followed by a workflow command, a Markdown
/// cell separator, a tab and a Unicode line separator.
const HOSTILE: &str = "a\n::error title=x::pwn|b\tc\r::warning y\u{2028}z";

/// The name as the human formats show it.
const SHOWN: &str = "a\\n::error title=x::pwn|b\\tc\\r::warning y\\u{2028}z";

const GOLDEN: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/benchrepo/golden_al_distribution/qwen3.5_mtp.yaml");

const EVIDENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/evidence/vllm_mtbench_after.prom");

/// Asserts that no line of `out` starts a workflow command other than the annotations `github` writes
/// itself (each naming its file), and that the human formats hold no raw control character or line
/// separator at all.
fn assert_safe(what: &str, format: &str, out: &str) {
    for line in out.split(['\n', '\r']) {
        if format == "github"
            && ["::error file=", "::warning file=", "::notice file="].iter().any(|a| line.starts_with(a))
        {
            continue;
        }
        assert!(!line.starts_with("::"), "{what} --format {format} starts a line with '::': {line:?}\n{out}");
    }
    if !["json", "github"].contains(&format) {
        let raw = out.chars().find(|&c| c != '\n' && (c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')));
        assert_eq!(raw, None, "{what} --format {format} prints a raw control character:\n{out}");
    }
}

/// A repository (itself under a hostile directory name) with the Qwen3.5 golden file and one SGLang
/// launch script with a hostile file name whose pin is out of range, so the name shows in pins and findings.
fn hostile_repo(root: &Path) -> String {
    let repo = root.join(format!("repo{HOSTILE}"));
    std::fs::create_dir_all(repo.join("golden_al_distribution")).unwrap();
    std::fs::copy(GOLDEN, repo.join("golden_al_distribution/qwen3.5_mtp.yaml")).unwrap();
    std::fs::write(
        repo.join(format!("{HOSTILE}.sh")),
        "#!/usr/bin/env bash\nif [ \"$EVAL_ONLY\" != true ]; then\n  export SGLANG_SIMULATE_ACC_LEN=9.5\n  export SGLANG_SIMULATE_ACC_METHOD=match-expected\nfi\npython3 -m sglang.launch_server --model-path Qwen/Qwen3.5-397B-A17B-FP4 --speculative-num-steps 3\n",
    )
    .unwrap();
    repo.to_str().unwrap().to_string()
}

#[test]
fn pins_check_escapes_a_hostile_file_name_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let repo = hostile_repo(dir.path());
    for format in ["table", "md", "csv", "github", "json"] {
        let (code, stdout, stderr) = run(&["pins", "check", &repo, "--format", format]);
        assert_eq!(code, 1, "--format {format}: the out-of-range pin fails the check: {stderr}");
        assert_safe("pins check", format, &stdout);
        // The walk shows the name escaped (one-to-one) before any format sees it; github then escapes its
        // own command characters.
        let shown = match format {
            "github" => "a\\n%3A%3Aerror title=x%3A%3Apwn",
            _ => "a\\n::error title=x::pwn",
        };
        assert!(stdout.contains(shown), "--format {format} does not show the name as {shown:?}:\n{stdout}");
    }
    let (_, md, _) = run(&["pins", "check", &repo, "--format", "md"]);
    assert!(md.contains("pwn\\|b"), "a '|' in a Markdown cell is escaped:\n{md}");
    let (_, table, _) = run(&["pins", "check", &repo, "--format", "table"]);
    assert!(table.contains(&format!("repo{SHOWN}")), "the repository's own name is escaped in the title:\n{table}");
}

#[test]
fn pins_list_escapes_a_hostile_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let repo = hostile_repo(dir.path());
    for format in ["table", "md", "csv", "json"] {
        let (code, stdout, stderr) = run(&["pins", "list", &repo, "--format", format]);
        assert_eq!(code, 0, "--format {format}: {stderr}");
        assert_safe("pins list", format, &stdout);
        assert!(stdout.contains("a\\n::error title=x::pwn"), "--format {format}:\n{stdout}");
    }
}

#[test]
fn curve_list_escapes_a_hostile_golden_file_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(GOLDEN, dir.path().join(format!("{HOSTILE}.yaml"))).unwrap();
    let golden = dir.path().to_str().unwrap();
    for format in ["table", "md", "csv", "json"] {
        let (code, stdout, stderr) = run(&["curve", "list", golden, "--format", format]);
        assert_eq!(code, 0, "--format {format}: {stderr}");
        assert_safe("curve list", format, &stdout);
        let shown = match format {
            "json" => "a\\n::error title=x::pwn|b\\tc\\r::warning y\u{2028}z".to_string(),
            "md" => SHOWN.replace('|', "\\|"),
            _ => SHOWN.to_string(),
        };
        assert!(stdout.contains(&shown), "--format {format} does not show the name as {shown:?}:\n{stdout}");
    }
}

#[test]
fn eval_escapes_a_hostile_file_name_and_metric_label_in_tables_and_notes() {
    let dir = tempfile::tempdir().unwrap();
    // The label value uses the exposition format's own `\n` escape, so the parsed label holds a newline.
    let scrape = std::fs::read_to_string(EVIDENCE)
        .unwrap()
        .replace(r#"MiniMax-M3 \"eval\" run"#, "m\\n::error title=label::pwn|\tq\u{2028}::notice r");
    let file = dir.path().join(format!("{HOSTILE}.prom"));
    std::fs::write(&file, scrape).unwrap();
    let file = file.to_str().unwrap();
    for format in ["table", "md", "csv", "github", "json"] {
        let (code, stdout, stderr) =
            run(&["eval", file, "--pin", "2.8", "--k", "3", "--split", "model_name", "--format", format]);
        assert_eq!(code, 1, "--format {format}: the pin is too high for this evidence: {stderr}");
        assert_safe("eval", format, &stdout);
        if !["json", "github"].contains(&format) {
            let label = if format == "md" {
                "m\\n::error title=label::pwn\\|\\tq"
            } else {
                "m\\n::error title=label::pwn|\\tq"
            };
            assert!(stdout.contains(label), "--format {format} does not show the label escaped:\n{stdout}");
        }
    }
    let (_, table, _) = run(&["eval", file, "--pin", "2.8", "--k", "3", "--split", "model_name"]);
    let notes: Vec<&str> = table.lines().filter(|l| l.starts_with("note: ")).collect();
    assert!(
        !notes.is_empty() && notes.iter().all(|n| n.contains(SHOWN)),
        "every note names the file escaped:\n{table}"
    );
}

#[test]
fn an_error_naming_a_hostile_path_stays_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join(HOSTILE);
    let (code, stdout, stderr) = run(&["pins", "check", missing.to_str().unwrap(), "--format", "github"]);
    assert_eq!(code, 2, "a missing repository is an input error: {stderr}");
    assert_eq!(stdout, "");
    assert_safe("pins check (error)", "stderr", &stderr);
    assert!(stderr.starts_with("alsim: error: ") && stderr.contains(SHOWN), "{stderr}");
}

//! The README's examples, run: every `alsim …` line of its `console` blocks runs in a sandbox laid out as
//! the README assumes (a benchmark repository as the working directory, evidence and measurement files
//! under the names it uses) and must not end in a usage or input error (exit 2); where a block shows
//! output under a `$ alsim …` line, the output must be exactly that. So the examples cannot drift from the
//! tool.

use std::path::PathBuf;

use crate::util::alsim;

/// Examples that cannot run here, each with why.
const NOT_RUN: [(&str, &str); 4] = [
    ("…", "arguments elided"),
    ("../shared/", "the team's shared data, which the tests never read"),
    ("--base origin/main", "a git remote"),
    ("my_models.csv", "the reader's own profile files"),
];

/// Files the examples name, from the project's fixtures (sandbox name, source).
const FILES: [(&str, &str); 13] = [
    ("my_labels.csv", "tests/fixtures/benchrepo_sweep_map.csv"),
    ("after.prom", "tests/fixtures/evidence/vllm_mtbench_after.prom"),
    ("before.prom", "tests/fixtures/evidence/vllm_mtbench_before.prom"),
    ("server.log", "tests/fixtures/evidence/vllm_mtbench.log"),
    ("vllm.log", "tests/fixtures/evidence/vllm_mtbench.log"),
    ("mtbench.prom", "tests/fixtures/evidence/vllm_mtbench_scrapes.prom"),
    ("gsm8k.json", "tests/fixtures/evidence/atom_gsm8k_mtp_stats.json"),
    ("runs.csv", "calibration/measured/h200-inferact-minimax-m3-eagle3.csv"),
    ("tests/data/speedbench_level.csv", "tests/data/speedbench_level.csv"),
    ("calibration/measured/h200-calibrated.csv", "calibration/measured/h200-calibrated.csv"),
    ("golden/minimaxm3_eagle3.yaml", "golden/minimaxm3_eagle3.yaml"),
    ("path/to/golden_al_distribution/dsv4_mtp.yaml", "tests/fixtures/inferencex_golden/dsv4_mtp.yaml"),
    ("path/to/golden_al_distribution/glm5.2_mtp.yaml", "tests/fixtures/inferencex_golden/glm5.2_mtp.yaml"),
];

/// One `alsim` command of the README, with the output it shows (if any).
#[derive(Debug)]
struct Example {
    line: usize,
    args: Vec<String>,
    shown: Option<String>,
}

/// The `alsim` commands of every `console` block: comments dropped, `\\` continuations joined, `a && b`
/// split, a `> FILE` redirection dropped; a `$ ` line's following lines are its shown output.
fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_console = false;
    let mut pending = String::new();
    let mut transcript = false;
    for (i, raw) in readme.lines().enumerate() {
        if let Some(info) = raw.strip_prefix("```") {
            in_console = !in_console && info.trim() == "console";
            transcript = false;
            continue;
        }
        if !in_console {
            continue;
        }
        let line = raw.trim_end();
        let command = line.strip_prefix("$ ");
        if command.is_none() && pending.is_empty() && transcript && !line.starts_with("alsim ") {
            let last = out.last_mut().expect("output follows a command");
            let shown = last.shown.get_or_insert_with(String::new);
            shown.push_str(line);
            shown.push('\n');
            continue;
        }
        transcript = command.is_some();
        let text = command.unwrap_or(line);
        if !text.starts_with("alsim ") && pending.is_empty() {
            continue;
        }
        let text = text.split(" #").next().unwrap_or(text).trim();
        if let Some(head) = text.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        let whole = std::mem::take(&mut pending) + text;
        for part in whole.split("&&") {
            let part = part.split(" > ").next().unwrap_or(part);
            assert!(!part.contains(['"', '\'']), "README line {}: quoted arguments are not split here", i + 1);
            let args: Vec<String> = part.split_whitespace().skip(1).map(str::to_string).collect();
            out.push(Example { line: i + 1, args, shown: None });
        }
    }
    out
}

fn sandbox() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    crate::pins_cli::copy_dir(&root.join("tests/fixtures/benchrepo"), dir.path());
    for (name, source) in FILES {
        let target = dir.path().join(name);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(root.join(source), target).unwrap();
    }
    dir
}

#[test]
fn every_readme_example_runs_and_shows_what_it_prints() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let all = examples(&readme);
    assert!(all.len() > 40, "the README's examples were found: {}", all.len());
    let dir = sandbox();
    let mut ran = 0;
    for example in &all {
        let joined = example.args.join(" ");
        if NOT_RUN.iter().any(|(what, _)| joined.contains(what)) {
            continue;
        }
        let out = alsim().current_dir(dir.path()).args(&example.args).output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(code, 0 | 1 | 3), "README line {}: alsim {joined} exited {code}:\n{stderr}", example.line);
        if let Some(shown) = &example.shown {
            assert_eq!(&String::from_utf8_lossy(&out.stdout), shown, "README line {}: alsim {joined}", example.line);
        }
        ran += 1;
    }
    assert!(ran * 10 >= all.len() * 8, "most examples run: {ran} of {}", all.len());
}

#[test]
fn examples_are_read_as_a_shell_would() {
    let readme = "```console\nalsim a --x 1   # why\nalsim b \\\n    --y 2 && alsim c > out.txt\n$ alsim d\n2.83\n```\n```sh\nalsim e\n```\n";
    let found: Vec<(usize, String, Option<String>)> =
        examples(readme).into_iter().map(|e| (e.line, e.args.join(" "), e.shown)).collect();
    assert_eq!(
        found,
        [
            (2, "a --x 1".into(), None),
            (4, "b --y 2".into(), None),
            (4, "c".into(), None),
            (5, "d".into(), Some("2.83\n".into())),
        ]
    );
}

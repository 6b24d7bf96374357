//! The README's examples, run as written: every `alsim …` line of its `console` blocks runs from a copy of
//! the checkout (the files it names are the ones the repository ships) and must not end in a usage or input
//! error (exit 2); where a block shows output under a `$ alsim …` line, the output must be exactly that, so
//! a stale number fails. `SNAPSHOTS=overwrite cargo test --test tests readme` writes each shown output as the
//! tool prints it now (the diff is the review). Its links are absolute, to the repository Cargo.toml names,
//! so they work on PyPI and crates.io, and each names a file the repository has.

use std::path::{Path, PathBuf};

use crate::util::alsim;

/// Examples that cannot run here, each with why.
const NOT_RUN: [(&str, &str); 2] =
    [("../shared/", "the team's shared data, which the tests never read"), ("--base origin/main", "a git remote")];

/// What of the checkout the examples read, copied into the sandbox they run in.
const CHECKOUT: [&str; 6] =
    ["tests/fixtures", "tests/data", "calibration/measured", "golden", "profiles", "pyproject.toml"];

/// One `alsim` command of the README, with the output it shows (if any).
#[derive(Debug)]
struct Example {
    line: usize,
    args: Vec<String>,
    shown: Option<String>,
}

impl Example {
    /// The README's lines (0-based, end excluded) that hold the shown output.
    fn shown_lines(&self) -> Option<(usize, usize)> {
        self.shown.as_ref().map(|shown| (self.line, self.line + shown.lines().count()))
    }
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
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The checkout's root is a git work tree: the examples find the same root and configuration.
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    for part in CHECKOUT {
        let (from, to) = (root.join(part), dir.path().join(part));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        if from.is_dir() {
            std::fs::create_dir_all(&to).unwrap();
            crate::pins_cli::copy_dir(&from, &to);
        } else {
            std::fs::copy(&from, &to).unwrap();
        }
    }
    dir
}

#[test]
fn every_readme_example_runs_and_shows_what_it_prints() {
    let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"));
    let readme = std::fs::read_to_string(&path).unwrap();
    let all = examples(&readme);
    assert!(all.len() > 40, "the README's examples were found: {}", all.len());
    let dir = sandbox();
    let overwrite = std::env::var("SNAPSHOTS").is_ok_and(|v| v == "overwrite");
    let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
    let mut stale = Vec::new();
    let mut rewrites = Vec::new();
    let mut ran = 0;
    let mut not_run = [0; NOT_RUN.len()];
    // In order: a later example may read what an earlier one wrote.
    for example in &all {
        let joined = example.args.join(" ");
        if let Some(at) = NOT_RUN.iter().position(|(what, _)| joined.contains(what)) {
            not_run[at] += 1;
            continue;
        }
        let out = alsim().current_dir(dir.path()).args(&example.args).output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(code, 0 | 1 | 3), "README line {}: alsim {joined} exited {code}:\n{stderr}", example.line);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let (Some(shown), Some((from, to))) = (&example.shown, example.shown_lines())
            && shown != &stdout
        {
            stale
                .push(format!("README line {}: alsim {joined}\n--- shown\n{shown}--- printed\n{stdout}", example.line));
            rewrites.push((from, to, stdout.lines().map(str::to_string).collect::<Vec<_>>()));
        }
        ran += 1;
    }
    // From the last, so that a rewritten output does not move the lines of those above it.
    for (from, to, printed) in rewrites.into_iter().rev() {
        lines.splice(from..to, printed);
    }
    if overwrite && !stale.is_empty() {
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    assert!(
        overwrite || stale.is_empty(),
        "{} shown outputs are stale (SNAPSHOTS=overwrite rewrites them):\n{}",
        stale.len(),
        stale.join("\n")
    );
    for ((what, why), count) in NOT_RUN.iter().zip(not_run) {
        assert!(count == 1, "NOT_RUN {what:?} ({why}) stands for one example, not {count}");
    }
    // The count a user can rely on: which of the README's commands run as written from a checkout.
    eprintln!("README: {ran} of {} alsim commands run as written", all.len());
}

#[test]
fn the_readmes_links_are_absolute_and_name_files_the_repository_has() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let base = format!("{}/blob/main/", env!("CARGO_PKG_REPOSITORY"));
    let mut files = 0;
    for (i, line) in readme.lines().enumerate() {
        for (at, _) in line.match_indices("](") {
            let target = &line[at + 2..];
            let target = &target[..target.find(')').unwrap_or(target.len())];
            assert!(
                target.starts_with("https://") || target.starts_with('#'),
                "README line {}: {target} is relative, a dead link on PyPI and crates.io",
                i + 1
            );
            if let Some(file) = target.strip_prefix(&base) {
                let file = file.split('#').next().unwrap();
                assert!(Path::new(env!("CARGO_MANIFEST_DIR")).join(file).exists(), "README line {}: no {file}", i + 1);
                files += 1;
            }
        }
    }
    assert!(files >= 10, "the README's links to the repository's own files were found: {files}");
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

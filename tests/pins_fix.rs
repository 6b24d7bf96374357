//! `alsim pins fix --write` as a transaction: a file reached by two names is edited once, a file changed
//! since the check is refused and left as its user left it, a crash or a refusal leaves every file old or
//! new, concurrent runs never corrupt a file, a link out of the repository and a read-only file are
//! refused with nothing changed; and the edit computation's property, for any text.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use alsim::pins::fix::{FixPlan, Replacement, TEMP_SUFFIX, prepare};
use alsim::pins::{CheckOptions, check, plan_fixes};
use proptest::prelude::*;

use crate::pins::fixture;
use crate::pins_cli::{copy_dir, scratch, sglang_script};
use crate::util::run;

const SCRIPT: &str = "agentic/qwen.sh";

/// A scratch repository whose one script pins 2.5 where the golden value is 3.39.
fn wrong_script() -> tempfile::TempDir {
    scratch(&[(SCRIPT, &sglang_script("2.5"))])
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// Every file under `dir` (links not followed), relative path → bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    tree(dir).into_iter().map(|(p, _)| p).filter(|p| p.to_string_lossy().ends_with(TEMP_SUFFIX)).collect()
}

fn fix(repo: &Path) -> (i32, String, String) {
    run(&["pins", "fix", repo.to_str().unwrap(), "--write"])
}

#[cfg(unix)]
#[test]
fn a_script_reached_through_a_symlink_is_edited_once_and_the_link_stays_a_link() {
    let dir = wrong_script();
    std::os::unix::fs::symlink("qwen.sh", dir.path().join("agentic/launch.sh")).unwrap();
    let (code, _, stderr) = fix(dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(read(&dir.path().join(SCRIPT)), sglang_script("3.39"));
    assert!(std::fs::symlink_metadata(dir.path().join("agentic/launch.sh")).unwrap().file_type().is_symlink());
    assert!(stderr.contains("alsim: wrote agentic/qwen.sh"), "{stderr}");
    assert!(stderr.contains("1 changes written to 1 files"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn hard_links_are_edited_once_and_stay_linked() {
    use std::os::unix::fs::MetadataExt;
    let dir = wrong_script();
    let other = dir.path().join("agentic/other.sh");
    std::fs::hard_link(dir.path().join(SCRIPT), &other).unwrap();
    let (code, _, stderr) = fix(dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert_eq!((read(&dir.path().join(SCRIPT)), read(&other)), (sglang_script("3.39"), sglang_script("3.39")));
    let (a, b) = (std::fs::metadata(dir.path().join(SCRIPT)).unwrap(), std::fs::metadata(&other).unwrap());
    assert_eq!((a.ino(), a.nlink()), (b.ino(), 2));
    assert!(stderr.contains("1 changes written to 1 files"), "{stderr}");
}

#[test]
fn a_file_edited_between_check_and_write_is_refused_and_left_as_edited() {
    let dir = wrong_script();
    let report = check(dir.path(), &CheckOptions::default()).unwrap();
    let plan = plan_fixes(&report, dir.path()).unwrap();
    let edited = sglang_script("2.6");
    std::fs::write(dir.path().join(SCRIPT), &edited).unwrap();
    let err = prepare(&plan, dir.path()).unwrap_err().to_string();
    assert!(err.starts_with("agentic/qwen.sh: it changed since it was checked: line 3 no longer reads"), "{err}");
    assert_eq!(read(&dir.path().join(SCRIPT)), edited);
    assert_eq!(temporaries(dir.path()), Vec::<PathBuf>::new());
    // Lines added above the pin move it, and are kept.
    let moved = format!("# tuned by hand\n{}", sglang_script("2.5"));
    std::fs::write(dir.path().join(SCRIPT), &moved).unwrap();
    prepare(&plan, dir.path()).unwrap().commit().unwrap();
    assert_eq!(read(&dir.path().join(SCRIPT)), moved.replace("=2.5", "=3.39"));
}

#[test]
fn a_file_changed_after_its_new_text_was_made_is_not_replaced() {
    let dir = wrong_script();
    let plan = plan_fixes(&check(dir.path(), &CheckOptions::default()).unwrap(), dir.path()).unwrap();
    let prepared = prepare(&plan, dir.path()).unwrap();
    let appended = format!("{}echo done\n", sglang_script("2.5"));
    std::fs::write(dir.path().join(SCRIPT), &appended).unwrap();
    let err = prepared.commit().unwrap_err().to_string();
    assert!(err.contains("agentic/qwen.sh: it changed while the fix was being written"), "{err}");
    assert_eq!(read(&dir.path().join(SCRIPT)), appended);
    assert_eq!(temporaries(dir.path()), Vec::<PathBuf>::new());
}

/// The fixture's allow-list, as `--allow` takes it, in a copy of the fixture.
fn fixture_copy() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixture(), dir.path());
    let allow = dir.path().join("alsim-allow.yaml").to_str().unwrap().to_string();
    (dir, allow)
}

#[test]
fn a_crash_between_the_temporary_files_and_the_renames_leaves_the_originals() {
    let (dir, allow) = fixture_copy();
    let options =
        CheckOptions { allow: Some(alsim::pins::AllowList::read(Path::new(&allow)).unwrap()), ..Default::default() };
    let plan = plan_fixes(&check(dir.path(), &options).unwrap(), dir.path()).unwrap();
    let before = tree(dir.path());
    let repo = dir.path().to_str().unwrap();
    let (_, report_before, _) = run(&["pins", "check", repo, "--allow", &allow, "--format", "json"]);
    // A failure before the renames (the prepared files dropped) removes every temporary file.
    drop(prepare(&plan, dir.path()).unwrap());
    assert_eq!(tree(dir.path()), before);
    // A crash (no destructor runs) leaves them, hidden, named for their file and for alsim, and never read
    // by the check.
    let prepared = prepare(&plan, dir.path()).unwrap();
    assert_eq!(prepared.temporary_files().len(), 6);
    std::mem::forget(prepared);
    let left = temporaries(dir.path());
    assert_eq!(left.len(), 6, "{left:?}");
    assert!(left.iter().all(|p| p.file_name().unwrap().to_string_lossy().starts_with('.')), "{left:?}");
    assert_eq!(tree(dir.path()).into_iter().filter(|(p, _)| !left.contains(p)).collect::<Vec<_>>(), before);
    let (_, report_after, _) = run(&["pins", "check", repo, "--allow", &allow, "--format", "json"]);
    assert_eq!(report_after, report_before);
}

#[test]
fn a_kill_at_any_moment_leaves_every_file_old_or_new() {
    let (fixed, allow) = fixture_copy();
    let (code, _, stderr) = fix_with_allow(fixed.path(), &allow);
    assert_eq!(code, 1, "{stderr}");
    let new = tree(fixed.path());
    let old = tree(&fixture());
    for delay_ms in (0..100).step_by(4) {
        let (dir, allow) = fixture_copy();
        let mut child = Command::new(env!("CARGO_BIN_EXE_alsim"))
            .args(["pins", "fix", dir.path().to_str().unwrap(), "--allow", &allow, "--write"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        let left = temporaries(dir.path());
        for (path, bytes) in tree(dir.path()).into_iter().filter(|(p, _)| !left.contains(p)) {
            let was = old.iter().find(|(p, _)| *p == path).map(|(_, b)| b);
            let fixed = new.iter().find(|(p, _)| *p == path).map(|(_, b)| b);
            assert!(was == Some(&bytes) || fixed == Some(&bytes), "{} after a kill at {delay_ms} ms", path.display());
        }
    }
}

fn fix_with_allow(repo: &Path, allow: &str) -> (i32, String, String) {
    run(&["pins", "fix", repo.to_str().unwrap(), "--allow", allow, "--write"])
}

#[test]
fn concurrent_runs_write_the_fixed_text_or_refuse() {
    for _ in 0..3 {
        let dir = wrong_script();
        let children: Vec<_> = (0..4)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_alsim"))
                    .args(["pins", "fix", dir.path().to_str().unwrap(), "--write"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut wrote = 0;
        for child in children {
            let out = child.wait_with_output().unwrap();
            let stderr = String::from_utf8(out.stderr).unwrap();
            match out.status.code() {
                Some(1) => {
                    assert!(stderr.contains("1 changes written"), "{stderr}");
                    wrote += 1;
                }
                // The check ran after another run's rename: nothing left to fix.
                Some(0) => assert_eq!(stderr, ""),
                // Another run renamed between this one's reads: refused, naming the file.
                Some(2) => assert!(stderr.contains("agentic/qwen.sh") && stderr.contains("changed"), "{stderr}"),
                other => panic!("exit {other:?}: {stderr}"),
            }
        }
        assert!(wrote >= 1);
        assert_eq!(read(&dir.path().join(SCRIPT)), sglang_script("3.39"));
        assert_eq!(temporaries(dir.path()), Vec::<PathBuf>::new());
    }
}

#[cfg(unix)]
#[test]
fn a_link_to_a_file_outside_the_repository_is_never_written() {
    let dir = wrong_script();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("launch.sh");
    let text = sglang_script("2.5");
    std::fs::write(&target, &text).unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("agentic/z.sh")).unwrap();
    // Writing refuses it whatever the check read.
    let start = text.find("2.5").unwrap();
    let change = Replacement::new("agentic/z.sh".into(), &text, (start, start + 3), "3.39".into(), vec![]).unwrap();
    let plan = FixPlan { changes: vec![change], ..Default::default() };
    let err = prepare(&plan, dir.path()).unwrap_err().to_string();
    assert!(err.starts_with("agentic/z.sh: a symbolic link that leads outside"), "{err}");
    assert!(!err.contains(&*outside.path().to_string_lossy()), "the target is not named: {err}");
    // The check never reads through the link, so no plan holds it; a write leaves the outside file alone.
    let repo = dir.path().to_str().unwrap();
    let (_, planned) = crate::pins::check_json(&["pins", "fix", repo, "--format", "json"]);
    assert!(!planned["changes"].as_array().unwrap().iter().any(|c| c["file"] == "agentic/z.sh"), "{planned}");
    fix(dir.path());
    assert_eq!(read(&target), text);
    assert_eq!(temporaries(outside.path()), Vec::<PathBuf>::new());
}

#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_written_and_never_confused_with_another() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden_al_distribution");
    std::fs::create_dir(&golden).unwrap();
    std::fs::copy(fixture().join("golden_al_distribution/qwen3.5_mtp.yaml"), golden.join("qwen3.5_mtp.yaml")).unwrap();
    // The byte 0xff, and the name a lossy decoding makes of it (U+FFFD), which held the fix before.
    let raw = dir.path().join(std::ffi::OsStr::from_bytes(b"run\xff.sh"));
    let lossy = dir.path().join("run\u{fffd}.sh");
    std::fs::write(&raw, sglang_script("2.5")).unwrap();
    std::fs::write(&lossy, "#!/usr/bin/env bash\necho unrelated\n").unwrap();
    let (code, _, stderr) = fix(dir.path());
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("run\\xff.sh"), "the name is shown escaped: {stderr}");
    assert_eq!(read(&raw), sglang_script("3.39"));
    assert_eq!(read(&lossy), "#!/usr/bin/env bash\necho unrelated\n");
    let (code, _, stderr) = run(&["pins", "check", dir.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
}

#[cfg(unix)]
#[test]
fn a_read_only_file_among_several_is_named_and_nothing_changes() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, allow) = fixture_copy();
    let locked = dir.path().join(format!("{}minimaxm3_fp4_h100x_trt_mtp.sh", crate::pins::SN));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = tree(dir.path());
    let (code, _, stderr) = fix_with_allow(dir.path(), &allow);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("minimaxm3_fp4_h100x_trt_mtp.sh: it is read-only"), "{stderr}");
    assert!(stderr.contains("nothing was changed") && !stderr.contains("panicked"), "{stderr}");
    assert_eq!(tree(dir.path()), before);
}

#[cfg(unix)]
#[test]
fn a_written_file_keeps_its_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = wrong_script();
    let script = dir.path().join(SCRIPT);
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    assert_eq!(fix(dir.path()).0, 1);
    assert_eq!(std::fs::metadata(&script).unwrap().permissions().mode() & 0o7777, 0o750);
    assert_eq!(read(&script), sglang_script("3.39"));
}

/// Lines from a small alphabet (so lines repeat and literals collide), some with a two-byte character.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec("[ab=1é]{0,5}", 1..8).prop_map(|lines| lines.join("\n"))
}

/// A change of the text: a line inserted or removed, a range replaced, or none.
#[derive(Debug, Clone)]
enum Mutation {
    None,
    Insert(usize, String),
    Remove(usize),
    Replace(usize, usize, String),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        Just(Mutation::None),
        (any::<usize>(), "[ab=1]{0,5}").prop_map(|(at, line)| Mutation::Insert(at, line)),
        any::<usize>().prop_map(Mutation::Remove),
        (any::<usize>(), 0usize..4, "[ab=1\n]{0,3}").prop_map(|(at, len, by)| Mutation::Replace(at, len, by)),
    ]
}

fn mutate(text: &str, mutation: &Mutation) -> String {
    let mut lines: Vec<&str> = text.split('\n').collect();
    match mutation {
        Mutation::None => text.to_string(),
        Mutation::Insert(at, line) => {
            lines.insert(at % (lines.len() + 1), line);
            lines.join("\n")
        }
        Mutation::Remove(at) => {
            lines.remove(at % lines.len());
            lines.join("\n")
        }
        Mutation::Replace(at, len, by) => {
            let start = at % (text.len() + 1);
            match text.get(start..(start + len).min(text.len())) {
                Some(_) => format!("{}{by}{}", &text[..start], &text[(start + len).min(text.len())..]),
                None => text.to_string(),
            }
        }
    }
}

proptest! {
    #[test]
    fn edits_change_only_the_planned_literals_or_are_refused(
        original in text(),
        raw in prop::collection::vec((any::<usize>(), 1usize..4, "[0-9]{1,3}"), 0..4),
        mutation in mutation(),
    ) {
        let spans: Vec<(usize, usize, String)> = raw
            .into_iter()
            .map(|(at, len, to)| {
                let start = at % (original.len() + 8);
                (start, start + len, to)
            })
            .collect();
        crate::fix_edits::check(&original, &spans, &mutate(&original, &mutation));
    }
}

/// The project's own test repositories, laid out as in this checkout (a git root holding alsim's
/// `pyproject.toml` and the fixtures), with or without that configuration.
fn checkout_copy(with_config: bool) -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    for fixture in ["benchrepo", "ratesrepo"] {
        let to = dir.path().join("tests/fixtures").join(fixture);
        std::fs::create_dir_all(&to).unwrap();
        copy_dir(&root.join("tests/fixtures").join(fixture), &to);
    }
    if with_config {
        std::fs::copy(root.join("pyproject.toml"), dir.path().join("pyproject.toml")).unwrap();
    }
    dir
}

#[test]
fn fix_write_at_the_checkout_root_leaves_alsims_own_fixtures_alone() {
    // Without the project's configuration the fixtures' wrong pins would be mended: the control that
    // shows the fixtures hold fixes to make.
    let bare = checkout_copy(false);
    let before = tree(bare.path());
    let out = crate::util::alsim().current_dir(bare.path()).args(["pins", "fix", ".", "--write"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_ne!(tree(bare.path()), before, "the fixtures hold wrong pins that a fix edits");

    // With it (`[tool.alsim] exclude` in pyproject.toml), nothing under tests/fixtures is read or written:
    // here they are all the copy holds, so nothing is checked (undecided, exit 3).
    let checkout = checkout_copy(true);
    let before = tree(checkout.path());
    let out = crate::util::alsim().current_dir(checkout.path()).args(["pins", "fix", ".", "--write"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("nothing was checked") && !stderr.contains("tests/fixtures"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(tree(checkout.path()), before);
}

#[test]
fn the_checkout_root_itself_has_nothing_to_fix() {
    let out = crate::util::alsim().current_dir(env!("CARGO_MANIFEST_DIR")).args(["pins", "fix", "."]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.is_empty(), "{stdout}");
}

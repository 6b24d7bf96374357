//! Every file alsim writes goes through one writer: what the path names decides how it is written, and
//! nothing the user has — an input, another output, a link, a device, the shell's redirection — is lost.
//! Each case in a temporary directory of its own: FIFOs stand in for devices, links to `/proc/self/fd/1`
//! for `/dev/stdout` (the tests run as root: a real `/dev` node must never be touched).

use std::io::Read as _;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::golden::vllm_run;
use crate::pins::fixture;
use crate::util::{alsim, run};

/// A FIFO at `path`.
fn fifo(path: &Path) {
    let made = std::process::Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(made.success());
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).unwrap().file_type().is_fifo()
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap()
}

/// `golden collect` of one short run at k = 3 written to `dir`, with `extra` arguments.
fn collect_args(dir: &Path, extra: &[&str]) -> Vec<String> {
    let run = vllm_run(dir, 3, 4_000, 1, "run").display().to_string();
    let mut args: Vec<String> =
        ["golden", "collect", "--model", "m", "--drafter", "org/m-EAGLE3", "--method", "eagle3"]
            .into_iter()
            .chain(["--draft-sampling", "greedy", "--mode", "thinking_on"])
            .map(String::from)
            .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args.push(run);
    args
}

fn run_strings(args: &[String]) -> (i32, String, String) {
    run(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn an_export_to_a_fifo_is_written_into_it_not_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let (_, json, _) = run(&["accept", "--format", "json"]);
    // The test's own end, open for reading and writing (which does not wait for the other end on Linux),
    // so a reader is there before alsim looks for one; it reads what the export is long.
    let end = std::fs::OpenOptions::new().read(true).write(true).open(&pipe).unwrap();
    let mut reading = end.try_clone().unwrap();
    let len = json.len();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0; len];
        reading.read_exact(&mut got).unwrap();
        String::from_utf8(got).unwrap()
    });
    let (code, _, stderr) = run(&["accept", "--export-json", pipe.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(reader.join().unwrap(), json, "the whole report came through the pipe");
    drop(end);
    assert!(is_fifo(&pipe), "the FIFO is still a FIFO");
}

#[test]
fn a_fifo_with_no_reader_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("pipe");
    fifo(&pipe);
    let out = alsim()
        .args(["accept", "--export-md", pipe.to_str().unwrap()])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a FIFO with no reader") && out.stdout.is_empty(), "{stderr}");
    assert!(is_fifo(&pipe));
}

#[test]
fn a_link_is_followed_and_kept_and_a_dangling_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (target, link) = (dir.path().join("real.json"), dir.path().join("link.json"));
    std::fs::write(&target, "old\n").unwrap();
    symlink("real.json", &link).unwrap();
    let (code, _, stderr) = run(&["accept", "--export-json", link.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert!(text(&target).starts_with('{'), "its target holds the export");

    // `golden collect -o` and the exports agree: both write through the link.
    let curve = dir.path().join("curve.yaml");
    std::fs::write(&curve, "old\n").unwrap();
    symlink("curve.yaml", dir.path().join("g.yaml")).unwrap();
    let g = dir.path().join("g.yaml").display().to_string();
    let (code, _, stderr) = run_strings(&collect_args(dir.path(), &["-o", &g, "--force"]));
    assert!(code != 2, "{stderr}");
    assert!(text(&curve).contains("m:\n  thinking_on:\n    3: "), "{}", text(&curve));

    let dangling = dir.path().join("dangling.yaml");
    symlink("elsewhere/new.yaml", &dangling).unwrap();
    let (code, _, stderr) = run_strings(&collect_args(dir.path(), &["-o", dangling.to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("which does not exist"), "{stderr}");
    assert!(!dir.path().join("elsewhere").exists(), "no file made where the link points");
}

#[test]
fn a_link_to_standard_output_writes_to_the_descriptor() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("stdout");
    symlink("/proc/self/fd/1", &link).unwrap();
    let (code, stdout, stderr) = run(&["accept", "--export-json", link.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    let (_, json, _) = run(&["accept", "--format", "json"]);
    assert_eq!(stdout, json, "stdout carries the export alone");
    assert!(stderr.contains("Real acceptance, k = 3"), "the human output moved to stderr: {stderr}");
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("/proc/self/fd/1"), "the link is untouched");

    let (code, stdout, _) = run(&["accept", "--export-md", "-"]);
    assert_eq!(code, 0);
    assert!(stdout.starts_with("### Real acceptance"), "{stdout}");
    let (code, stdout, stderr) = run(&["accept", "--export-md", "-", "--export-json", link.to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (2, ""), "two outputs to stdout: {stderr}");
    assert!(stderr.contains("is the same file as"), "{stderr}");
}

#[test]
fn an_input_named_as_an_export_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let evidence = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence/vllm_mtbench_scrapes.prom");
    let prom = dir.path().join("run.prom");
    std::fs::copy(&evidence, &prom).unwrap();
    let before = text(&prom);
    let prom_s = prom.to_str().unwrap();
    let (code, stdout, stderr) = run(&["eval", "--pin", "2.83", "--k", "3", prom_s, "--export-md", prom_s]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("which this run read"), "{stderr}");
    // Reached through a link, and by `golden collect`'s export beside its curve.
    let link = dir.path().join("link.prom");
    symlink(&prom, &link).unwrap();
    let (code, _, stderr) =
        run(&["eval", "--pin", "2.83", "--k", "3", prom_s, "--export-json", link.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(text(&prom), before);

    let out = dir.path().join("g.yaml").display().to_string();
    let mut args = collect_args(dir.path(), &["-o", &out]);
    let run_file = args.last().unwrap().clone();
    let run_before = text(Path::new(&run_file));
    args.extend(["--export-json".to_string(), run_file.clone()]);
    let (code, _, stderr) = run_strings(&args);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(text(Path::new(&run_file)), run_before);
    assert!(!Path::new(&out).exists(), "a clash writes nothing, the curve neither");
}

#[test]
fn two_outputs_onto_one_file_are_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.yaml");
    std::fs::write(&out, "the user's curve\n").unwrap();
    let out_s = out.display().to_string();
    let (code, stdout, stderr) =
        run_strings(&collect_args(dir.path(), &["-o", &out_s, "--force", "--export-json", &out_s]));
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("is the same file as"), "{stderr}");
    assert_eq!(text(&out), "the user's curve\n");
}

#[test]
fn a_forced_output_is_replaced_whole_by_rename_never_cut_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g.yaml");
    std::fs::write(&out, "the earlier golden file\n").unwrap();
    // A second name for the old file: were it truncated and rewritten in place, this would change too.
    let keep = dir.path().join("keep");
    std::fs::hard_link(&out, &keep).unwrap();
    let out_s = out.display().to_string();
    let (code, _, stderr) = run_strings(&collect_args(dir.path(), &["-o", &out_s]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("already exists") && stderr.contains("--force"), "{stderr}");
    let (code, _, stderr) = run_strings(&collect_args(dir.path(), &["-o", &out_s, "--force"]));
    assert!(code != 2, "{stderr}");
    assert_eq!(text(&keep), "the earlier golden file\n");
    assert!(text(&out).contains("thinking_on"));
    assert_ne!(std::fs::metadata(&out).unwrap().ino(), std::fs::metadata(&keep).unwrap().ino());
    let names: Vec<PathBuf> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(names.iter().all(|n| !n.to_string_lossy().ends_with(".alsim-tmp")), "{names:?}");
}

#[test]
fn a_job_summary_fifo_with_no_reader_is_a_warning_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let pipe = dir.path().join("summary");
    fifo(&pipe);
    let repo = fixture();
    let out = alsim()
        .args(["pins", "check", repo.to_str().unwrap(), "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &pipe)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "the check's own status stays: {stderr}");
    assert!(stderr.contains("warning: the report was not appended") && stderr.contains("no reader"), "{stderr}");

    // A file is appended to, as GitHub defines it.
    let file = dir.path().join("summary.md");
    std::fs::write(&file, "earlier step\n").unwrap();
    let out = alsim()
        .args(["pins", "check", repo.to_str().unwrap(), "--format", "github"])
        .env("GITHUB_STEP_SUMMARY", &file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let summary = text(&file);
    assert!(summary.starts_with("earlier step\n## alsim pins check: FAIL"), "{summary}");
}

#[test]
fn pins_list_and_fix_on_a_tree_with_nothing_to_check_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    for action in ["list", "fix", "check"] {
        let (code, _, stderr) = run(&["pins", action, dir.path().to_str().unwrap()]);
        assert_eq!(code, 3, "pins {action}: {stderr}");
        assert!(stderr.contains("nothing was checked"), "pins {action}: {stderr}");
    }
}

//! `alsim eval` on InferenceX eval-run artifacts as a benchmark engineer downloads them: one zip per engine
//! (tests/fixtures/artifacts, written by its make_artifacts.py and zipped here as GitHub zips an upload), the
//! pin found in tests/fixtures/benchrepo by the artifact's name and meta_env.json, and the verdict; the
//! multi-node tarballs read by role; and archives that try to leave, link or bloat refused.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::util::run;

const DIR: &str = "tests/fixtures/artifacts";
const REPO: &str = "tests/fixtures/benchrepo";

/// The fixture artifact whose name starts with `prefix`.
fn fixture(prefix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "one fixture starts with {prefix}: {found:?}");
    found.pop().unwrap()
}

/// A tarball as the multi-node launchers write it (`tar czf … -C "$LOGS_DIR" .`): members under `./`.
fn tarball(dir: &Path) -> Vec<u8> {
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default()));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    for file in files {
        tar.append_path_with_name(&file, Path::new(".").join(file.file_name().unwrap())).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap()
}

/// Zips the fixture folder `prefix…` into `into` as `<folder name>.zip`, as GitHub delivers the artifact; a
/// folder named `*.tar.gz` becomes that tarball.
fn zipped(prefix: &str, into: &Path) -> PathBuf {
    let dir = fixture(prefix);
    let path = into.join(format!("{}.zip", dir.file_name().unwrap().to_string_lossy()));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut stack = vec![dir.clone()];
    while let Some(folder) = stack.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for entry in entries {
            let name = entry.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
            if name.ends_with(".tar.gz") {
                zip.start_file(name, options).unwrap();
                zip.write_all(&tarball(&entry)).unwrap();
            } else if entry.is_dir() {
                stack.push(entry);
            } else {
                zip.start_file(name, options).unwrap();
                zip.write_all(&std::fs::read(&entry).unwrap()).unwrap();
            }
        }
    }
    zip.finish().unwrap();
    path
}

/// `alsim eval ARGS --format json`: exit code, report (null when it failed) and stderr.
fn eval(args: &[&Path], flags: &[&str]) -> (i32, serde_json::Value, String) {
    let mut all: Vec<String> = vec!["eval".into()];
    all.extend(flags.iter().map(|s| s.to_string()));
    all.extend(args.iter().map(|p| p.display().to_string()));
    all.extend(["--format".into(), "json".into()]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run(&all);
    (code, serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null), stderr)
}

fn members(report: &serde_json::Value, key: &str) -> Vec<String> {
    report["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a[key].as_array().unwrap().iter().map(|m| m["path"].as_str().unwrap().to_string()))
        .collect()
}

fn reasons(report: &serde_json::Value) -> Vec<String> {
    report["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["skipped"].as_array().unwrap().iter())
        .map(|m| format!("{}: {}", m["path"].as_str().unwrap(), m["reason"].as_str().unwrap()))
        .collect()
}

/// Every engine's artifact, zipped, against the pin its entry's throughput runs use: the entry found by the
/// artifact's name (and meta_env.json where the run uploaded one), the verdict the fixture was drawn for.
#[test]
fn each_engines_zip_is_judged_against_the_pin_its_entry_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // (artifacts, entry, pin AL, k, verdict, exit code)
    type Case<'a> = (&'a [&'a str], &'a str, f64, u64, &'a str, i32);
    let cases: [Case; 7] = [
        (
            &["eval_server_logs_minimaxm3_tp4_conc4_kvnone_spec-mtp_fp4_vllm", "eval_minimaxm3"],
            "mm3-fp4-h100x-vllm-agentic",
            2.78,
            3,
            "consistent",
            0,
        ),
        (
            &["eval_server_logs_qwen3.5_tp8_conc4_kvnone_spec-mtp_fp8_sglang"],
            "qwen-fp8-h100x-sglang-agentic",
            3.39,
            3,
            "pin_too_high",
            1,
        ),
        (
            &["eval_server_logs_dsv4_tp8_conc4_kvnone_spec-mtp_fp8_atom"],
            "dsv4-fp8-mi3x-atom-agentic",
            2.49,
            3,
            "consistent",
            0,
        ),
        (
            &["eval_server_logs_minimaxm3_tp4_conc4_kvnone_spec-mtp_fp4_trt", "agentic_minimaxm3"],
            "mm3-fp4-h100x-trt-agentic",
            3.78,
            3,
            "pin_too_high",
            1,
        ),
        (&["multinode_server_logs_glm5.2"], "glm-gbx-sglang-agentic", 2.5, 2, "consistent", 0),
        (&["multinode_server_logs_minimaxm3"], "mm3-gbx-vllm-agentic", 2.78, 3, "consistent", 0),
        (&["multinode_server_logs_qwen3.5", "agentic_qwen3.5"], "qwen-gbx-trt-agentic", 3.39, 3, "consistent", 0),
    ];
    for (prefixes, entry, pin, k, verdict, code) in cases {
        let zips: Vec<PathBuf> = prefixes.iter().map(|p| zipped(p, tmp.path())).collect();
        let paths: Vec<&Path> = zips.iter().map(PathBuf::as_path).collect();
        let (got, report, stderr) = eval(&paths, &["--repo", REPO]);
        assert_eq!(got, code, "{entry}: {stderr}{report}");
        assert_eq!(report["overall"], verdict, "{entry}");
        assert!((report["pin"]["al"].as_f64().unwrap() - pin).abs() < 1e-9, "{entry}: {}", report["pin"]);
        assert_eq!(report["pin"]["k"].as_u64().unwrap(), k, "{entry}");
        let source = report["pin"]["source"].as_str().unwrap();
        assert!(source.contains(&format!("entry {entry} at configs/demo-master.yaml")), "{source}");
        assert!(report["artifacts"].as_array().unwrap().iter().all(|a| a["container"] == "zip"));
    }
}

/// The multi-node tarball inside its zip: the decode workers' logs are read (two workers pooled after the
/// heterogeneity check, TP rank 1's repeats skipped), the prefill worker's never, and logs that name no role
/// are skipped.
#[test]
fn a_multinode_tarball_is_read_by_the_decode_role_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = zipped("multinode_server_logs_glm5.2", tmp.path());
    let (code, report, stderr) = eval(&[&zip], &["--pin", "2.5", "--k", "2"]);
    assert_eq!(code, 0, "{stderr}");
    let inner = "multinode_server_logs.tar.gz!";
    assert_eq!(
        members(&report, "read"),
        [format!("{inner}gbx-n02_decode_w0.err"), format!("{inner}gbx-n03_decode_w1.err")]
    );
    let skipped = reasons(&report);
    assert!(
        skipped.iter().any(|s| s.starts_with(&format!("{inner}gbx-n01_prefill_w0.err: a prefill worker"))),
        "{skipped:?}"
    );
    assert!(skipped.iter().any(|s| s.starts_with(&format!("{inner}log.out: names no worker role"))), "{skipped:?}");
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert_eq!(report["heterogeneity"]["pooled"], true);
    assert!(
        report["files"][0]["location"]["file"]
            .as_str()
            .unwrap()
            .ends_with(".zip!multinode_server_logs.tar.gz!gbx-n02_decode_w0.err")
    );

    // The vLLM prefill worker logs spec-decode lines of its own (AL 1.3): read, they would sink the pin.
    let zip = zipped("multinode_server_logs_minimaxm3", tmp.path());
    let (code, report, stderr) = eval(&[&zip], &["--pin", "2.78", "--k", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(members(&report, "read"), [format!("{inner}gbx-n02_decode_w0.out")]);
    let al = report["files"][0]["estimate"]["independent"]["point_estimate"].as_f64().unwrap();
    assert!((al - 2.78).abs() < 0.02, "{al}");

    // AMD's disaggregated launchers name logs by role first: SGLang and ATOM alike.
    for (prefix, decode) in [
        ("multinode_server_logs_dsv4_p1x8_d1x8_conc8kvnone_fp4_sglang", "decode_mi3x-02.log"),
        ("multinode_server_logs_dsv4_p1x8_d1x8_conc8kvnone_fp8_atom", "decode_mi3x-04.log"),
    ] {
        let zip = zipped(prefix, tmp.path());
        let (code, report, stderr) = eval(&[&zip], &["--pin", "2.49", "--k", "3"]);
        assert_eq!(code, 0, "{prefix}: {stderr}");
        assert_eq!(members(&report, "read"), [format!("{inner}{decode}")]);
        assert_eq!(report["artifacts"][0]["facts"]["multinode"], true);
    }
}

/// The folder the zip unpacks to reads as the zip does; the multi-node one holds the tarball itself.
#[test]
fn an_unpacked_artifact_reads_as_its_zip() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = fixture("eval_server_logs_dsv4_tp8_conc4_kvnone_spec-mtp_fp8_atom");
    let zip = zipped("eval_server_logs_dsv4_tp8_conc4_kvnone_spec-mtp_fp8_atom", tmp.path());
    let (_, from_folder, _) = eval(&[&folder], &["--repo", REPO]);
    let (_, from_zip, _) = eval(&[&zip], &["--repo", REPO]);
    assert_eq!(from_folder["overall"], "consistent");
    assert_eq!(from_folder["files"][0]["estimate"], from_zip["files"][0]["estimate"]);
    assert_eq!(from_folder["artifacts"][0]["container"], "folder");
    assert_eq!(from_folder["artifacts"][0]["facts"], from_zip["artifacts"][0]["facts"]);

    let unpacked = tmp.path().join("multinode_server_logs_x");
    std::fs::create_dir(&unpacked).unwrap();
    std::fs::write(
        unpacked.join("multinode_server_logs.tar.gz"),
        tarball(&fixture("multinode_server_logs_dsv4_p1x8_d1x8_conc8kvnone_fp4").join("multinode_server_logs.tar.gz")),
    )
    .unwrap();
    let (code, report, stderr) = eval(&[&unpacked], &["--pin", "2.49", "--k", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(members(&report, "read"), ["multinode_server_logs.tar.gz!decode_mi3x-02.log"]);
}

/// `--repo` reads the repository as `pins check` does: a folder inside it finds the root upward and the same
/// pin as the root itself.
#[test]
fn a_folder_inside_the_repository_finds_the_pin_the_root_finds() {
    let folder = fixture("eval_server_logs_dsv4_tp8_conc4_kvnone_spec-mtp_fp8_atom");
    let (_, from_root, _) = eval(&[&folder], &["--repo", REPO]);
    let (code, from_inside, stderr) = eval(&[&folder], &["--repo", "tests/fixtures/benchrepo/configs"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(from_inside["overall"], "consistent");
    // The root found upward is named by its full path; the entry, the pin and its golden value are the same.
    let here = format!("{}/", std::env::current_dir().unwrap().display());
    let pin = |report: &serde_json::Value| report["pin"].to_string().replace(&here, "");
    assert_eq!(pin(&from_inside), pin(&from_root));
    assert!(pin(&from_root).contains("entry dsv4-fp8-mi3x-atom-agentic at configs/demo-master.yaml:181"));
}

/// Where the facts name no entry, or several, the facts read are listed and --pin asked for; an artifact
/// with no acceptance in it says what each member was.
#[test]
fn an_entry_not_found_names_the_facts_read_and_asks_for_the_pin() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(
        "eval_server_logs_nomodel_1k1k_fp8_sglang_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-mtp_conc4_h100x_1",
    );
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(fixture("eval_server_logs_qwen3.5_tp8").join("server.log"), dir.join("server.log")).unwrap();
    let (code, _, stderr) = eval(&[&dir], &["--repo", REPO]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no master-config entry of tests/fixtures/benchrepo matches the run"), "{stderr}");
    assert!(stderr.contains("model-prefix=nomodel, precision=fp8, framework=sglang"), "{stderr}");
    assert!(stderr.contains("--pin AL --k K"), "{stderr}");

    let zip = zipped("eval_server_logs_minimaxm3_tp4_conc4_kvnone_spec-mtp_fp4_trt", tmp.path());
    let (code, _, stderr) = eval(&[&zip], &["--pin", "3.78", "--k", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no acceptance evidence in") && stderr.contains("server.log (no acceptance lines"),
        "{stderr}"
    );
}

/// A file neither text nor an archive is refused by name; so is an archive member that leaves the archive.
/// Links and special files are skipped unread, and nothing is written beside the user's files.
#[test]
fn archives_that_escape_link_or_are_not_archives_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let log =
        std::fs::read(fixture("eval_server_logs_dsv4_tp8_conc4_kvnone_spec-mtp_fp8_atom").join("server.log")).unwrap();

    let binary = tmp.path().join("artifact.bin");
    std::fs::write(&binary, [0x7f, b'E', b'L', b'F', 0, 0, 1, 2]).unwrap();
    let (code, _, stderr) = eval(&[&binary], &["--pin", "2.49", "--k", "3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("artifact.bin: neither text nor a known archive"), "{stderr}");

    // A stored (uncompressed) zip of a log is opened as a zip, not scanned as a log.
    let stored = tmp.path().join("stored.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&stored).unwrap());
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("server.log", options).unwrap();
    zip.write_all(&log).unwrap();
    zip.finish().unwrap();
    let (code, report, stderr) = eval(&[&stored], &["--pin", "2.49", "--k", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(report["artifacts"][0]["container"], "zip");

    // A tarball whose member climbs out, and one with a link and a FIFO beside the log.
    let escape = tmp.path().join("escape.tar");
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(log.len() as u64);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    // `append_data` refuses '..', as a well-behaved writer does; the name is written raw, as an attacker's is.
    header.as_gnu_mut().unwrap().name[..16].copy_from_slice(b"../../server.log");
    header.set_cksum();
    tar.append(&header, log.as_slice()).unwrap();
    std::fs::write(&escape, tar.into_inner().unwrap()).unwrap();
    let (code, _, stderr) = eval(&[&escape], &["--pin", "2.49", "--k", "3"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("member '../../server.log' names a path outside the archive"), "{stderr}");

    let linked = tmp.path().join("linked.tar");
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Symlink);
    header.set_size(0);
    tar.append_link(&mut header, "decode_a.log", "/etc/passwd").unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Fifo);
    header.set_size(0);
    tar.append_data(&mut header, "decode_b.log", std::io::empty()).unwrap();
    let mut header = tar::Header::new_gnu();
    header.set_size(log.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "decode_c.log", log.as_slice()).unwrap();
    std::fs::write(&linked, tar.into_inner().unwrap()).unwrap();
    let before: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    let (code, report, stderr) = eval(&[&linked], &["--pin", "2.49", "--k", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(members(&report, "read"), ["decode_c.log"]);
    assert_eq!(reasons(&report), ["decode_a.log: a link: not followed", "decode_b.log: not a regular file"]);
    let after: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(before, after, "nothing is extracted beside the user's files");
}

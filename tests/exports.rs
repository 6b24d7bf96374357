//! One run, several outputs: `--export-json|md|csv FILE` beside the main format, as hyperfine's exports.

use crate::pins::fixture;
use crate::util::run;

#[test]
fn predict_prints_a_table_and_exports_every_other_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("old.csv"), "a file the export replaces\n").unwrap();
    let (code, table, stderr) = run(&[
        "predict",
        "--concurrency",
        "4,16",
        "--export-json",
        &path("p.json"),
        "--export-md",
        &path("p.md"),
        "--export-csv",
        &path("old.csv"),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(table.contains("concurrency    k=1") && table.contains("best k"), "the main output is the grid: {table}");
    let (_, json, _) = run(&["predict", "--concurrency", "4,16", "--format", "json"]);
    assert_eq!(std::fs::read_to_string(path("p.json")).unwrap(), json, "the export is --format json");
    let md = std::fs::read_to_string(path("p.md")).unwrap();
    assert!(md.starts_with("### Predicted decode") && md.contains("x | "), "{md}");
    // CSV: numbers in full, the unit in the header, not in the cell.
    let csv = std::fs::read_to_string(path("old.csv")).unwrap();
    let header = csv.lines().find(|l| l.starts_with("concurrency,k,AL,")).unwrap();
    assert!(header.contains(",speedup (x),"), "{header}");
    let speedup_at = header.split(',').position(|h| h == "speedup (x)").unwrap();
    let row = csv.lines().find(|l| l.starts_with("4,3,")).unwrap();
    let speedup = row.split(',').nth(speedup_at).unwrap();
    assert!(speedup.parse::<f64>().unwrap() > 1.0 && speedup.len() > 5, "a raw number in full: {row}");
}

#[test]
fn the_pin_check_annotates_and_writes_its_pull_request_comment_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("summary.md");
    let repo = fixture();
    let (code, annotations, _) =
        run(&["pins", "check", repo.to_str().unwrap(), "--format", "github", "--export-md", md.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(annotations.starts_with("::error file="), "{annotations}");
    let (_, comment, _) = run(&["pins", "check", repo.to_str().unwrap(), "--format", "md"]);
    assert_eq!(std::fs::read_to_string(&md).unwrap(), comment);
    assert!(comment.starts_with("## alsim pins check: FAIL"), "{comment}");
}

#[test]
fn an_export_that_cannot_be_written_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/dir/out.json");
    let (code, stdout, stderr) = run(&["accept", "--export-json", missing.to_str().unwrap()]);
    assert_eq!((code, stdout.as_str()), (2, ""), "{stderr}");
    assert!(stderr.contains("out.json: its directory does not exist"), "{stderr}");
    let twice = dir.path().join("twice.csv");
    let twice = twice.to_str().unwrap();
    let (code, _, stderr) = run(&["accept", "--export-csv", twice, "--export-md", twice]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is the same file as"), "{stderr}");
    let (code, _, stderr) = run(&["accept", "--export-md", dir.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("is a directory"), "{stderr}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing was written");
}

/// An estimate shown `2.830 [2.826, 2.834]` is three numbers in CSV, each in a column of its own.
#[test]
fn csv_gives_an_interval_three_columns_of_numbers() {
    let (code, csv, stderr) = run(&["simulate", "--requests", "300", "--no-batch", "--format", "csv"]);
    assert_eq!(code, 0, "{stderr}");
    let header = csv.lines().find(|l| l.starts_with("source,")).unwrap();
    let names: Vec<&str> = header.split(',').collect();
    let at = names.iter().position(|h| h.ends_with(" low")).expect("a low column");
    assert!(names[at - 1].len() + 4 == names[at].len() && names[at + 1].ends_with(" high"), "{header}");
    let real = csv.lines().find(|l| l.starts_with("real,")).unwrap();
    let fields: Vec<f64> = real.split(',').skip(1).map(|f| f.parse().unwrap()).collect();
    let (point, low, high) = (fields[at - 2], fields[at - 1], fields[at]);
    assert!(low < point && point < high, "{real}");
}

/// The fields of one CSV record (RFC 4180: quoted fields may hold commas and doubled quotes).
fn fields(line: &str) -> usize {
    let (mut count, mut quoted) = (1, false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => count += 1,
            _ => {}
        }
    }
    count
}

/// Every command's CSV is one tidy table a file: one header, then records as wide as it, no titles or
/// blank lines between tables; a command with several tables writes each other beside the main file, named
/// after the file's stem and the table. Python's csv module reads each back as one table where python3 is
/// installed.
#[test]
fn every_csv_export_is_one_table_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let repo = fixture().display().to_string();
    let curve = dir.path().join("curve.yaml");
    std::fs::write(&curve, "minimax-m3:\n  thinking_on:\n    3: 3.6\n").unwrap();
    let curve = curve.display().to_string();
    let collected = dir.path().join("collected.yaml").display().to_string();
    let run_at_3 = "tests/fixtures/evidence/vllm_mtbench.log@k=3";
    let mut commands: Vec<Vec<&str>> = vec![
        vec!["golden", "check", &curve, run_at_3],
        vec!["golden", "collect", run_at_3, "--model", "m", "--drafter", "d", "--method", "mtp", "-o", &collected],
        vec!["accept"],
        vec!["convert", "2.83", "--k", "3"],
        vec!["simulate", "--requests", "200"],
        vec!["eval", "--pin", "2.9", "--k", "3", "tests/fixtures/evidence/vllm_mtbench.log"],
        vec!["predict", "--concurrency", "4,16"],
        vec!["sweep", &repo],
        vec!["calibrate", "tests/data/serving_pairs.csv", "--k", "3"],
        vec!["curve", "list"],
        vec!["curve", "show"],
        vec!["curve", "check", "tests/fixtures/curves/dip.yaml"],
        vec!["curve", "fit"],
        vec!["pins", "check", &repo],
        vec!["pins", "list", &repo],
    ];
    commands[1].extend(["--draft-sampling", "greedy", "--mode", "thinking_on"]);
    let mut several = 0;
    for (i, args) in commands.iter().enumerate() {
        let main = dir.path().join(format!("c{i}.csv"));
        let mut all = args.clone();
        all.extend(["--export-csv", main.to_str().unwrap()]);
        let (code, _, stderr) = run(&all);
        assert!(code != 2 && code != 101, "{all:?}: {stderr}");
        let files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with(&format!("c{i}.")))
            .collect();
        assert!(files.contains(&main), "{all:?}");
        several += usize::from(files.len() > 1);
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert!(!lines.is_empty() && !lines[0].starts_with('#'), "{file:?}: a header first: {text}");
            let width = fields(lines[0]);
            for line in &lines {
                assert!(!line.is_empty() && fields(line) == width, "{file:?}: one table, {width} columns: {line:?}");
            }
        }
        // Python's csv module, as pandas.read_csv would: every record as wide as the header.
        let script = "import csv,sys\nfor f in sys.argv[1:]:\n    rows = list(csv.reader(open(f, newline='')))\n    \
                      assert rows and all(len(r) == len(rows[0]) for r in rows), f\n";
        let mut python = std::process::Command::new("python3");
        python.arg("-c").arg(script).args(&files);
        if let Ok(out) = python.output() {
            assert!(out.status.success(), "{all:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    assert!(several >= 5, "commands with several tables write each beside the main file");
}

#[test]
fn a_table_beside_the_export_is_refused_where_it_is_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("p.csv");
    let beside = dir.path().join("p.pareto-frontier.csv");
    let evidence = std::fs::read_to_string("tests/fixtures/evidence/sglang_gsm8k.prom").unwrap();
    std::fs::write(&beside, &evidence).unwrap();
    // The evidence file the run reads is where a table would go: refused, nothing written.
    let args = ["predict", "--evidence", beside.to_str().unwrap(), "--export-csv", main.to_str().unwrap()];
    let (code, _, stderr) = run(&args);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("which this run read"), "{stderr}");
    assert!(!main.exists(), "{stderr}");
    assert_eq!(std::fs::read_to_string(&beside).unwrap(), evidence);
}

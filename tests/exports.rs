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

//! Every command that can fail a build prints its findings for CI: GitHub annotations, SARIF 2.1.0
//! (validated against the published schema, tests/data/sarif-schema-2.1.0.json) and reviewdog's rdjson,
//! each exiting as the command's other formats do.

use std::path::Path;

use serde_json::Value;

use crate::pins::fixture;
use crate::util::run;

const EVIDENCE: &str = "tests/fixtures/evidence";

/// Each checking command on a fixture where it finds something, and its exit status there.
fn checks(dir: &Path) -> Vec<(Vec<String>, i32)> {
    let repo = fixture().display().to_string();
    let map = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo_sweep_map.csv");
    let curve = dir.join("stale.yaml");
    std::fs::write(&curve, "minimax-m3:\n  thinking_on:\n    3: 3.6\n").unwrap();
    let out = dir.join("collected.yaml");
    let run_at_3 = format!("{EVIDENCE}/vllm_mtbench.log@k=3");
    let collect = [
        "golden",
        "collect",
        &run_at_3,
        "--model",
        "m",
        "--drafter",
        "d",
        "--method",
        "mtp",
        "--draft-sampling",
        "greedy",
        "--mode",
        "thinking_on",
        "-o",
    ];
    let owned = |args: &[&str]| args.iter().map(|a| a.to_string()).collect::<Vec<_>>();
    let mut collect = owned(&collect);
    collect.push(out.display().to_string());
    vec![
        (owned(&["pins", "check", &repo]), 1),
        (
            owned(&[
                "eval",
                "--pin",
                "2.9",
                "--k",
                "3",
                &format!("{EVIDENCE}/vllm_mtbench.log"),
                &format!("{EVIDENCE}/vllm_mtbench_scrapes.prom"),
            ]),
            1,
        ),
        (owned(&["sweep", &repo, "--map", &map.display().to_string(), "--strict"]), 1),
        (owned(&["curve", "check", "tests/fixtures/curves/dip.yaml", "tests/fixtures/curves/out_of_range.yaml"]), 1),
        (owned(&["golden", "check", &curve.display().to_string(), &run_at_3]), 1),
        (collect, 1),
    ]
}

fn run_in(args: &[String], format: &str) -> (i32, String, String) {
    let mut all: Vec<&str> = args.iter().map(String::as_str).collect();
    all.extend(["--format", format]);
    if all[..2] == ["golden", "collect"] {
        all.push("--force");
    }
    run(&all)
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string("tests/data/sarif-schema-2.1.0.json").unwrap();
    jsonschema::draft4::new(&serde_json::from_str(&text).unwrap()).expect("the SARIF schema compiles")
}

#[test]
fn sarif_is_valid_with_every_rule_described_from_the_docs() {
    let dir = tempfile::tempdir().unwrap();
    let validator = schema();
    for (args, code) in checks(dir.path()) {
        let (got, stdout, stderr) = run_in(&args, "sarif");
        assert_eq!(got, code, "{args:?}: {stderr}");
        let log: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"));
        let errors: Vec<String> =
            validator.iter_errors(&log).map(|e| format!("{e} at {}", e.instance_path())).collect();
        assert!(errors.is_empty(), "{args:?}: {errors:#?}");
        let mut broken = log.clone();
        broken["runs"][0]["results"][0]["level"] = "fatal".into();
        assert!(!validator.is_valid(&broken), "the schema is applied: a level SARIF lacks is refused");
        assert_eq!(log["version"], "2.1.0");
        let run = &log["runs"][0];
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{args:?} finds something on its fixture");
        for rule in rules {
            let id = rule["id"].as_str().unwrap();
            let documentation = rule["properties"]["documentation"].as_str().unwrap();
            assert!(documentation.starts_with("docs/") && documentation.contains('#'), "{args:?}: {rule}");
            assert_ne!(rule["shortDescription"]["text"], id, "{args:?}: {id} is described from its topic");
            let topic = run_explain(id).split_whitespace().collect::<Vec<_>>().join(" ");
            let short = rule["shortDescription"]["text"].as_str().unwrap();
            assert!(topic.contains(short), "{args:?}: `alsim explain {id}` says what SARIF does: {short}");
            assert!(rule["help"]["markdown"].as_str().unwrap().ends_with(&format!("Source: {documentation}")));
        }
        for result in results {
            // GitHub code scanning refuses the whole file for one result in no file (a pooled verdict too).
            assert!(result["locations"].as_array().is_some_and(|l| !l.is_empty()), "{args:?}: {result}");
            let index = result["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[index]["id"], result["ruleId"], "{args:?}");
            for location in result["locations"].as_array().into_iter().flatten() {
                let artifact = &location["physicalLocation"]["artifactLocation"];
                let uri = artifact["uri"].as_str().unwrap();
                if artifact["uriBaseId"] == "%SRCROOT%" {
                    assert!(!uri.starts_with('/') && !uri.contains(':'), "{args:?}: {uri}");
                } else {
                    assert!(uri.starts_with("file:///"), "{args:?}: {uri}");
                }
            }
        }
    }
}

fn run_explain(topic: &str) -> String {
    let (code, stdout, stderr) = run(&["explain", topic]);
    assert_eq!(code, 0, "{topic}: {stderr}");
    stdout
}

#[test]
fn pin_findings_keep_their_file_line_and_allowance_in_sarif() {
    let repo = fixture().display().to_string();
    let (_, stdout, _) = run(&["pins", "check", &repo, "--format", "sarif"]);
    let log: Value = serde_json::from_str(&stdout).unwrap();
    let (_, json, _) = run(&["pins", "check", &repo, "--format", "json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    let findings = json["findings"].as_array().unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len(), "every finding, where annotations stop at ten errors a step");
    for (f, r) in findings.iter().zip(results) {
        assert_eq!(r["ruleId"], f["class"]);
        let place = &r["locations"][0]["physicalLocation"];
        assert_eq!(place["artifactLocation"]["uri"].as_str().unwrap(), f["location"]["file"].as_str().unwrap());
        assert_eq!(place["region"]["startLine"], f["location"]["line"]);
        assert_eq!(r["suppressions"].is_array(), f["allowed"].is_string(), "{r}");
    }
}

#[test]
fn rdjson_and_github_carry_what_fails() {
    let dir = tempfile::tempdir().unwrap();
    for (args, code) in checks(dir.path()) {
        let (got, stdout, stderr) = run_in(&args, "rdjson");
        assert_eq!(got, code, "{args:?}: {stderr}");
        let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {stdout}"));
        assert_eq!(doc["source"]["name"], "alsim");
        let diagnostics = doc["diagnostics"].as_array().unwrap();
        if code == 1 {
            assert!(diagnostics.iter().any(|d| d["severity"] == "ERROR"), "{args:?} fails on an error: {stdout}");
        }
        for d in diagnostics {
            assert!(["ERROR", "WARNING", "INFO"].contains(&d["severity"].as_str().unwrap()), "{d}");
            assert!(!d["message"].as_str().unwrap().is_empty() && d["code"]["value"].is_string(), "{d}");
            if let Some(line) = d["location"]["range"]["start"]["line"].as_u64() {
                assert!(line >= 1 && d["location"]["path"].is_string(), "{d}");
            }
        }
        let (got, stdout, stderr) = run_in(&args, "github");
        assert_eq!(got, code, "{args:?}: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        let (last, commands) = lines.split_last().unwrap();
        assert!(last.starts_with("alsim "), "{args:?}: a closing count: {stdout}");
        assert!(
            commands
                .iter()
                .all(|l| l.starts_with("::error ") || l.starts_with("::warning ") || l.starts_with("::notice ")),
            "{args:?}: {stdout}"
        );
        if code == 1 {
            assert!(commands.iter().any(|l| l.starts_with("::error ")), "{args:?} fails on an error: {stdout}");
        }
    }
}

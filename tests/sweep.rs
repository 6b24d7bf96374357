//! `alsim sweep` on the fixture benchmark repository: entries covered, unmapped and not predicted, the k
//! an entry runs against its band, every format, the charts, and each exit status.

use std::path::PathBuf;

use serde_json::Value;

use crate::pins::{check_json, fixture};
use crate::util::run;

const SWEEP_MASTER: &str = "configs/sweep-master.yaml";

fn repo() -> String {
    fixture().to_str().unwrap().to_string()
}

/// The fixture's own labels and model names (`--map`): its clusters are named after no real GPU.
pub fn map() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo_sweep_map.csv").to_str().unwrap().into()
}

fn rows_of<'a>(report: &'a Value, entry: &str) -> Vec<&'a Value> {
    report["rows"].as_array().unwrap().iter().filter(|r| r["entry"] == entry).collect()
}

fn skipped_of<'a>(report: &'a Value, entry: &str) -> Vec<&'a Value> {
    report["skipped"].as_array().unwrap().iter().filter(|s| s["entry"] == entry).collect()
}

fn line_of(needle: &str) -> u64 {
    crate::pins::line_of_nth(SWEEP_MASTER, needle, 0) as u64
}

/// Every row's band holds its chosen k, and a verdict is given exactly where the entry's k is known.
fn rows_are_consistent(report: &Value) {
    for r in report["rows"].as_array().unwrap() {
        let band: Vec<u64> = r["band"].as_array().unwrap().iter().map(|k| k.as_u64().unwrap()).collect();
        assert!(band.windows(2).all(|w| w[0] < w[1]) && band.contains(&r["best_k"].as_u64().unwrap()), "{r}");
        match r["k"].as_u64() {
            Some(k) => {
                assert_eq!(r["in_band"].as_bool(), Some(band.contains(&k)), "{r}");
                assert!(r["k_from"]["file"].as_str().unwrap().starts_with("benchmarks/"), "the pin that states k: {r}");
            }
            None => assert!(r["in_band"].is_null() && r["k_from"].is_null(), "{r}"),
        }
    }
}

#[test]
fn the_committed_table_covers_real_labels_and_lists_the_rest_as_unmapped() {
    let (code, report) = check_json(&["sweep", &repo(), "--format", "json"]);
    assert_eq!(code, 0, "no entry's k is known without the fixture's map, so none is outside its band");
    rows_are_consistent(&report);
    // Concurrencies from conc-start to conc-end doubling, and a conc-list; ISL/OSL from each scenario item.
    let dsv4 = rows_of(&report, "dsv4-fp4-mi355x-sglang-mtp");
    let by_point = |line: u64| -> Vec<u64> {
        dsv4.iter().filter(|r| r["at"]["line"] == line).map(|r| r["concurrency"].as_u64().unwrap()).collect()
    };
    let doubling = line_of("conc-start: 4, conc-end: 64, spec-decoding: mtp");
    assert_eq!(by_point(doubling), [4, 8, 16, 32, 64]);
    assert_eq!(by_point(line_of("conc-list: [1, 32]")), [1, 32]);
    assert!(dsv4.iter().all(|r| r["hardware"] == "mi355x" && r["model"] == "deepseek-v4-pro" && r["tp"] == 8));
    let first = dsv4.iter().find(|r| r["at"]["line"] == doubling).unwrap();
    assert_eq!((first["workload"]["isl"].as_f64(), first["workload"]["osl"].as_f64()), (Some(1024.0), Some(1024.0)));
    assert_eq!(first["ep"], 8);
    let dp = dsv4.iter().find(|r| r["dp_attn"] == true).unwrap();
    assert_eq!(dp["workload"]["isl"].as_f64(), Some(8192.0));
    // The best k never rises with concurrency on one deployment (model.md §6: engines shorten k at large batch).
    let best: Vec<u64> =
        dsv4.iter().filter(|r| r["at"]["line"] == doubling).map(|r| r["best_k"].as_u64().unwrap()).collect();
    assert!(best.windows(2).all(|w| w[1] <= w[0]), "{best:?}");
    // The point without speculative decoding and the entry without any are not swept.
    assert!(
        rows_of(&report, "dsv4-fp4-b200-sglang").is_empty() && skipped_of(&report, "dsv4-fp4-b200-sglang").is_empty()
    );
    // Names no row of the table matches are listed, with the entry, never guessed.
    let unmapped = |entry: &str| -> Vec<(String, String)> {
        skipped_of(&report, entry)
            .iter()
            .filter(|s| s["skip"]["kind"] == "unmapped")
            .map(|s| (s["skip"]["what"].as_str().unwrap().into(), s["skip"]["name"].as_str().unwrap().into()))
            .collect()
    };
    assert_eq!(unmapped("qwen3.5-fp4-rtx6000pro-vllm-mtp"), [("runner".into(), "rtx6000pro-lat".into())]);
    assert_eq!(unmapped("glm5.1-fp8-b200-sglang-mtp"), [("model".into(), "zai-org/GLM-5.1-FP8".into())]);
    assert_eq!(unmapped("qwen-fp8-h100x-sglang-agentic"), [("runner".into(), "cluster:h100x".into())]);
    // A point whose concurrencies run backwards is named by its line and field; the entry's other point runs.
    let [bad] = skipped_of(&report, "qwen3.5-fp8-h200-sglang-mtp")[..] else { panic!("{report}") };
    assert_eq!(bad["at"]["line"].as_u64(), Some(line_of("conc-start: 64, conc-end: 4")));
    assert!(bad["skip"]["why"].as_str().unwrap().contains("conc-start 64 is above conc-end 4"));
    assert_eq!(rows_of(&report, "qwen3.5-fp8-h200-sglang-mtp").len(), 2);
    // A model with a profile but no golden curve is not priced on its family's (DeepSeek-V4's): its name
    // matches no golden key, by the rule `pins check` matches a pin's model by.
    let [dsr1] = skipped_of(&report, "dsr1-fp8-b200-sglang-mtp")[..] else { panic!("{report}") };
    assert_eq!(dsr1["skip"]["why"], "no golden curve for model 'deepseek-ai/DeepSeek-R1-0528'");
    let entries = report["entries"].as_u64().unwrap();
    assert_eq!(report["speculative"].as_u64(), Some(entries - 1), "every fixture entry but one runs spec decoding");
    assert_eq!(report["covered"].as_u64(), Some(2));
}

#[test]
fn the_k_an_entry_runs_comes_from_its_pins_and_some_lie_outside_their_band() {
    let args = ["sweep", &repo(), "--map", &map(), "--format", "json"];
    let (code, report) = check_json(&args);
    rows_are_consistent(&report);
    let rows = report["rows"].as_array().unwrap();
    let outside: Vec<&Value> = rows.iter().filter(|r| r["in_band"] == false).collect();
    let inside = rows.iter().filter(|r| r["in_band"] == true).count();
    assert!(!outside.is_empty() && inside > 0, "{report}");
    assert_eq!(code, 0, "an entry's k outside its band is a warning until the choice score holds");
    assert_eq!(report["status"], "pass");
    let warned =
        |r: &Value| r["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("--strict fails"));
    assert!(warned(&report), "{}", report["notes"]);
    let strict = ["sweep", &repo(), "--map", &map(), "--strict", "--format", "json"];
    let (code, failed) = check_json(&strict);
    assert_eq!((code, failed["status"].as_str()), (1, Some("fail")), "--strict fails on it");
    assert!(!warned(&failed) && failed["rows"] == report["rows"]);
    // Every row says where its hardware's efficiencies come from: the embedded rows are datasheet defaults.
    assert!(rows.iter().all(|r| r["hardware_from"] == "datasheet"), "{report}");
    let profile = concat!(env!("CARGO_MANIFEST_DIR"), "/calibration/measured/h200-calibrated.csv");
    let (_, calibrated) = check_json(&["sweep", &repo(), "--map", &map(), "--profile", profile, "--format", "json"]);
    for r in calibrated["rows"].as_array().unwrap() {
        let from = if r["hardware"] == "h200" { "measured" } else { "datasheet" };
        assert_eq!(r["hardware_from"], from, "{r}");
    }
    // The k is the one the pin check reads for the entry's launch script.
    let (_, pins) = check_json(&["pins", "check", &repo(), "--format", "json"]);
    for r in outside {
        let pin = pins["pins"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| {
                p["location"] == r["k_from"] && p["entries"].as_array().unwrap().iter().any(|e| e["name"] == r["entry"])
            })
            .unwrap_or_else(|| panic!("no pin at {}", r["k_from"]));
        assert_eq!(pin["k"]["value"], r["k"]);
    }
    // Branches of one script that run different k give rows without a verdict, and a note.
    let glm = rows_of(&report, "glm-fp8-mi3x-sglang-agentic");
    assert!(!glm.is_empty() && glm.iter().all(|r| r["k"].is_null()));
    assert!(
        report["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("glm-fp8-mi3x-sglang-agentic"))
    );
    // Agentic points state no ISL/OSL: predicted at predict's defaults, said in a note and in each row.
    let agentic = rows_of(&report, "mm3-fp4-h100x-vllm-agentic");
    assert!(!agentic.is_empty() && agentic.iter().all(|r| r["workload_stated"] == false));
    assert!(report["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("state no isl/osl")));
    // The fixture's map names its model spelling; the committed table alone leaves it unmapped.
    assert_eq!(rows_of(&report, "mm3-fp4-h100x-vllm-agentic")[0]["model"], "minimax-m3");
}

#[test]
fn the_terminal_counts_rows_by_verdict_and_names_the_entries_furthest_from_their_best_k() {
    let (_, report) = check_json(&["sweep", &repo(), "--map", &map(), "--format", "json"]);
    let rows = report["rows"].as_array().unwrap();
    let (code, out, _) = run(&["sweep", &repo(), "--map", &map()]);
    assert_eq!(code, 0);
    let count = |verdict: &str| -> usize {
        let line = out.lines().find(|l| l.contains(&format!("│ {verdict} "))).unwrap_or_else(|| panic!("{out}"));
        line.split('┆').nth(1).unwrap().trim().parse().unwrap()
    };
    let of = |in_band: Value| rows.iter().filter(|r| r["in_band"] == in_band).count();
    assert_eq!(count("k in the band"), of(Value::Bool(true)), "{out}");
    assert_eq!(count("k outside the band"), of(Value::Bool(false)), "{out}");
    assert_eq!(count("k not known from a pin"), rows.iter().filter(|r| r["k"].is_null()).count(), "{out}");
    // Every row outside the band is of an entry the list names (fewer than ten here), its location whole and
    // as it opens from the current directory (the tests run in the crate's root).
    let outside: std::collections::BTreeSet<String> = rows
        .iter()
        .filter(|r| r["in_band"] == false)
        .map(|r| format!("{}:{}: {}", r["at"]["file"].as_str().unwrap(), r["at"]["line"], r["entry"].as_str().unwrap()))
        .collect();
    assert!(!outside.is_empty());
    for entry in &outside {
        let from_here = format!("tests/fixtures/benchrepo/{entry}");
        assert!(out.lines().any(|l| l == from_here), "{from_here} is not listed:\n{out}");
    }
    assert!(out.contains("Every row: --long"), "{out}");
}

#[test]
fn every_format_carries_the_same_rows() {
    let (_, report) = check_json(&["sweep", &repo(), "--map", &map(), "--format", "json"]);
    let rows = report["rows"].as_array().unwrap().len();
    let skipped = report["skipped"].as_array().unwrap().len();
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("sweep.csv");
    let (code, csv, _) =
        run(&["sweep", &repo(), "--map", &map(), "--format", "csv", "--export-csv", export.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(csv.starts_with("entry,at,hardware,hw from,model,tp,ep,isl/osl,concurrency,k run"), "{csv}");
    assert_eq!(csv.lines().count(), rows + 1, "the header and one line per row");
    assert_eq!(std::fs::read_to_string(&export).unwrap(), csv, "the export's main file is --format csv");
    let not_predicted = std::fs::read_to_string(dir.path().join("sweep.not-predicted.csv")).unwrap();
    assert!(not_predicted.starts_with("entry,at,points,why\n"), "{not_predicted}");
    assert_eq!(not_predicted.lines().count(), skipped + 1);
    // Markdown is the pull-request comment: the rows outside the band (a point's concurrencies with one band
    // on one line), the unmapped names and the reasons points were left out, with how many share each.
    let (code, md, _) = run(&["sweep", &repo(), "--map", &map(), "--format", "md"]);
    assert_eq!(code, 0);
    assert!(md.starts_with("**alsim sweep**: ") && md.contains("outside the band"), "{md}");
    let section = |title: &str| -> Vec<Vec<String>> {
        let start = md.find(&format!("### {title}\n")).unwrap_or_else(|| panic!("no {title}: {md}"));
        md[start..]
            .lines()
            .skip(4)
            .take_while(|l| l.starts_with("| "))
            .map(|l| l.trim_matches('|').split(" | ").map(|c| c.trim().to_string()).collect())
            .collect()
    };
    let outside_rows = section("k outside the band (a warning; --strict fails on it)");
    assert!(outside_rows.iter().all(|r| r[3] == "datasheet"), "{md}");
    let concurrencies: usize = outside_rows.iter().map(|r| r[8].split(", ").count()).sum();
    let outside = report["rows"].as_array().unwrap().iter().filter(|r| r["in_band"] == false).count();
    assert_eq!(concurrencies, outside);
    let left_out: u64 = section("Not predicted").iter().map(|r| r[1].parse::<u64>().unwrap()).sum();
    let points: u64 = report["skipped"].as_array().unwrap().iter().map(|s| s["points"].as_u64().unwrap()).sum();
    assert_eq!(left_out, points);
    assert!(md.contains("- runner `cluster:gbx`: "), "{md}");
    let (code, table, _) = run(&["sweep", &repo(), "--map", &map(), "--long"]);
    assert_eq!(code, 0);
    assert!(table.contains("NO") && table.contains("yes") && table.contains("note: "), "{table}");
    assert_eq!(report["schema_version"], "3");
}

#[test]
fn plot_writes_one_chart_per_covered_entry_and_keeps_existing_ones() {
    let dir = tempfile::tempdir().unwrap();
    let charts = dir.path().join("charts");
    let charts_arg = charts.to_str().unwrap();
    let (code, report) = check_json(&["sweep", &repo(), "--plot", charts_arg, "--format", "json"]);
    assert_eq!(code, 0);
    let mut written: Vec<String> =
        std::fs::read_dir(&charts).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    written.sort();
    let mut covered: Vec<String> =
        report["rows"].as_array().unwrap().iter().map(|r| format!("{}.svg", r["entry"].as_str().unwrap())).collect();
    covered.sort();
    covered.dedup();
    assert_eq!(written, covered);
    let svg = std::fs::read_to_string(charts.join(&written[0])).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Pareto frontier"));
    let (code, _, stderr) = run(&["sweep", &repo(), "--plot", charts_arg]);
    assert_eq!(code, 2);
    assert!(stderr.contains("already exists; pass --force"), "{stderr}");
    assert_eq!(run(&["sweep", &repo(), "--plot", charts_arg, "--force"]).0, 0);
}

#[test]
fn nothing_predicted_is_undecided_and_bad_input_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("configs")).unwrap();
    std::fs::write(
        dir.path().join("configs/x-master.yaml"),
        "a:\n  model: zai-org/GLM-5.1-FP8\n  runner: b200\n  precision: fp8\n  scenarios:\n    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - { tp: 8, conc-list: [4], spec-decoding: mtp }\n",
    )
    .unwrap();
    let (code, report) = check_json(&["sweep", dir.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(code, 3, "every entry unmapped: nothing predicted");
    assert!(report["rows"].as_array().unwrap().is_empty());
    assert_eq!(report["status"], "undecided");

    let bad_map = dir.path().join("map.csv");
    std::fs::write(&bad_map, "kind,pattern,profile,source\n# ok\nrunner,b200,b200,s\ngpu,x,b200,s\n").unwrap();
    let (code, _, stderr) = run(&["sweep", &repo(), "--map", bad_map.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains(&format!("{}:4: column 'kind'", bad_map.display())), "{stderr}");
    let (code, _, stderr) = run(&["sweep", &repo(), "--map", "/nonexistent/map.csv"]);
    assert!(code == 2 && stderr.contains("/nonexistent/map.csv"), "{stderr}");
    let (code, _, stderr) = run(&["sweep", &repo(), "--model-error", "0"]);
    assert!(code == 2 && stderr.contains("--model-error"), "{stderr}");
    let (code, _, stderr) = run(&["sweep", "/nonexistent/repo"]);
    assert!(code == 2 && stderr.contains("/nonexistent/repo"), "{stderr}");
}

#[test]
fn the_configuration_found_upward_gives_golden_and_exclude_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    crate::pins_cli::copy_dir(&fixture(), root);
    let map_arg = map();
    let sweep = |args: &[&str]| {
        let from = root.join("configs");
        let mut all = vec!["sweep", from.to_str().unwrap(), "--map", &map_arg, "--format", "json"];
        all.extend(args);
        check_json(&all)
    };
    let (code, whole) = sweep(&[]);
    assert!(!whole["rows"].as_array().unwrap().is_empty() && code != 2, "{whole}");

    std::fs::write(root.join("alsim.toml"), "exclude = [\"configs/*-master.yaml\"]\n").unwrap();
    let (code, excluded) = sweep(&[]);
    assert_eq!(code, 3, "every master config is excluded: {}", excluded["status"]);
    assert!(excluded["rows"].as_array().unwrap().is_empty());
    let (_, flagged) = sweep(&["--exclude", "nothing/**"]);
    assert_eq!(flagged, whole, "--exclude replaces the configuration's list");

    // A golden folder with no curve the pins need: every pin's value has nothing to be checked against.
    std::fs::create_dir(root.join("empty-golden")).unwrap();
    std::fs::write(root.join("alsim.toml"), "golden = \"empty-golden\"\n").unwrap();
    let (_, by_file) = sweep(&[]);
    assert_ne!(by_file, whole, "the configuration's golden folder is read");
    let (_, by_flag) = sweep(&["--golden", root.join("golden_al_distribution").to_str().unwrap()]);
    assert_eq!(by_flag["rows"], whole["rows"], "--golden overrides it");
}

/// `tests/fixtures/served` in a scratch folder with `entry` given a runner and a tp, so that the sweep
/// predicts it (`--map` the returned file maps the runner and the DeepSeek-V4-Pro names); with `unpinned`,
/// its pin's settings are dropped.
fn served_entry_swept(entry: &str, unpinned: bool) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    crate::pins_cli::copy_dir(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/served"), &repo);
    let master = repo.join("configs/served-master.yaml");
    let text = std::fs::read_to_string(&master).unwrap();
    let start = text.find(&format!("\n{entry}:\n")).unwrap();
    let end = text[start + 1..].find("\n\n").map_or(text.len(), |e| start + 1 + e);
    for needed in ["\n  model:", "        prefill:\n"] {
        assert!(text[start..end].contains(needed), "{entry}: the fixture's entry has no {needed:?} to extend");
    }
    let block = text[start..end]
        .replacen("\n  model:", "\n  runner: cluster:served\n  model:", 1)
        .replacen("        prefill:\n", "        prefill:\n          tp: 8\n", 1)
        .lines()
        .filter(|l| !(unpinned && l.contains("SYNTHETIC_ACCEPTANCE")))
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&master, format!("{}{block}{}", &text[..start], &text[end..])).unwrap();
    let map = dir.path().join("map.csv");
    std::fs::write(
        &map,
        "kind,pattern,profile,source\nrunner,cluster:served,b200,test\nmodel,deepseek-ai/DeepSeek-V4-Pro*,deepseek-v4-pro,test\n",
    )
    .unwrap();
    let map = map.to_str().unwrap().to_string();
    (dir, map)
}

/// The sweep predicts a pinned point on the curve the check judged its pin on. The served fixture's DSpark
/// run is judged on alsim's embedded DSpark curve (its repository holds only the model's MTP one); the
/// sweep looked the curve up in the repository's set alone and skipped the point as "gone".
#[test]
fn a_pin_judged_on_alsims_embedded_curve_is_predicted_on_that_curve() {
    let (dir, map) = served_entry_swept("dsv4-dspark-right", false);
    let repo = dir.path().join("repo");
    let (_, report) = check_json(&["sweep", repo.to_str().unwrap(), "--map", &map, "--format", "json"]);
    let (_, pins) = check_json(&["pins", "check", repo.to_str().unwrap(), "--format", "json"]);
    let pin = pins["pins"].as_array().unwrap().iter().find(|p| p["entries"][0]["name"] == "dsv4-dspark-right").unwrap();
    let judged_on = pin["golden"]["file"].as_str().unwrap();
    assert_eq!(judged_on, "<embedded>/dsv4-pro-0813-dspark.yaml", "{pin}");
    let rows = rows_of(&report, "dsv4-dspark-right");
    assert!(!rows.is_empty(), "{}", report["skipped"]);
    for r in rows {
        assert!(r["acceptance"].as_str().unwrap().starts_with(&format!("{judged_on} deepseek-v4-pro-0813")), "{r}");
        assert_eq!((r["k"].as_u64(), r["k_from"]["line"].as_u64()), (Some(3), pin["location"]["line"].as_u64()), "{r}");
        assert!(r["in_band"].is_boolean(), "{r}");
    }
}

/// Without a pin, the thinking mode the curve is chosen by is the default the check would decide: who
/// renders as the recipe states it (`dyn-chat-processor: vllm`: vLLM 0.26.0, which serves non-thinking),
/// not the framework's Dynamo frontend the sweep assumed (which renders thinking).
#[test]
fn an_unpinned_point_takes_the_renderer_its_recipe_states() {
    let (dir, map) = served_entry_swept("dsv4-vllm-chat-processor", true);
    let repo = dir.path().join("repo");
    let (_, report) = check_json(&["sweep", repo.to_str().unwrap(), "--map", &map, "--format", "json"]);
    let rows = rows_of(&report, "dsv4-vllm-chat-processor");
    assert!(!rows.is_empty(), "{}", report["skipped"]);
    for r in rows {
        assert!(r["k"].is_null(), "no pin states k: {r}");
        assert!(r["acceptance"].as_str().unwrap().ends_with("deepseek-v4-pro thinking_off"), "{r}");
    }
    // The same entry without its recipe's renderer is Dynamo's: thinking.
    let (dir, map) = served_entry_swept("dsv4-dynamo-frontend", true);
    let repo = dir.path().join("repo");
    let (_, report) = check_json(&["sweep", repo.to_str().unwrap(), "--map", &map, "--format", "json"]);
    let rows = rows_of(&report, "dsv4-dynamo-frontend");
    assert!(
        !rows.is_empty() && rows.iter().all(|r| r["acceptance"].as_str().unwrap().ends_with("thinking_on")),
        "{report}"
    );
}

//! The choice of k on the committed calibration kit (`alsim calibrate calibration/measured --choice-al all`):
//! the measured best k and alsim's k of every cell, in sample and leaving one file out, must be what
//! `tests/data/kit_choice.csv` records — a model change that moves a cell fails here and says which.
//! `ALSIM_BLESS_CHOICE=1 cargo test choice` rewrites the record after a change that is meant (say which cells
//! moved, and the held-out figures, in the commit).

use std::fmt::Write as _;
use std::path::Path;

use alsim::perf::Band;
use alsim::perf::calibrate::choice_score::{ChoiceAl, ChoiceKit, KitFile, score_kit};
use alsim::perf::calibrate::{self, Measured};
use alsim::perf::profile::Profiles;

use crate::util::{json, run};

/// The kit files the record pins, with the H100's below every step-time file of `calibration/measured`, so the
/// record is what `alsim calibrate calibration/measured --choice-al all` prints: a new kit file changes the
/// held-out fits of these only when added here.
const PINNED: [&str; 5] = [
    "calibration/measured/h200-inferact-minimax-m3-eagle3-gqa.csv",
    "calibration/measured/h200-inferact-minimax-m3-eagle3.csv",
    "calibration/measured/h200-llama-3.3-70b-eagle3.csv",
    "calibration/measured/h200-llama-3.1-8b-eagle3.csv",
    "calibration/measured/h200-qwen3-8b-eagle3.csv",
];
/// The H100 files, on record too: issue 35's shapes (hybrid attention with MTP, a 32k draft vocabulary) the H200
/// files do not have, the H200 files' models measured again on the H100 and three models new to the kit (issue
/// 34), so a model change that moves their choice fails here as well.
const PINNED_H100: [&str; 8] = [
    "calibration/measured/h100-qwen3-235b-a22b-eagle3.csv",
    "calibration/measured/h100-qwen3.5-397b-a17b-mtp.csv",
    "calibration/measured/h100-inferact-minimax-m3-eagle3-gqa.csv",
    "calibration/measured/h100-inferact-minimax-m3-eagle3.csv",
    "calibration/measured/h100-llama-3.3-70b-eagle3.csv",
    "calibration/measured/h100-gpt-oss-120b-eagle3.csv",
    "calibration/measured/h100-llama-3.1-8b-eagle3.csv",
    "calibration/measured/h100-qwen3-8b-eagle3.csv",
];
const RECORD: &str = "tests/data/kit_choice.csv";
/// The AL(k) each file's cells were judged under, per AL source: what `calibration/ceiling.py`'s test reads
/// beside the record (the cells' `al` in JSON).
const AL_RECORD: &str = "tests/data/kit_choice_al.csv";

fn kit() -> ChoiceKit {
    let files: Vec<KitFile> = PINNED
        .iter()
        .chain(&PINNED_H100)
        .map(|origin| {
            let text = alsim::input::read_text(Path::new(origin), alsim::input::TABLE_FILE_LIMIT).expect("committed");
            let Measured::Steps(rows) = calibrate::read(text.as_bytes(), origin, None).expect("parses").0 else {
                panic!("{origin}: step-time rows")
            };
            KitFile { origin: origin.to_string(), rows }
        })
        .collect();
    score_kit(&Profiles::embedded(), "calibration/measured", &files, &ChoiceAl::All, Band::default()).expect("scores")
}

fn record(kit: &ChoiceKit) -> String {
    let mut out = String::from(
        "# alsim calibrate calibration/measured --choice-al all (tests/choice.rs): per cell, the measured best k and alsim's k\n\
         file,fit,acceptance,context,concurrency,measured_best_k,alsim_k,right\n",
    );
    for f in &kit.files {
        for (fit, score) in [("held_out", &f.held_out), ("in_sample", &f.in_sample)] {
            for c in &score.cells {
                let _ = writeln!(
                    out,
                    "{},{fit},{},{},{},{},{},{}",
                    f.origin, c.acceptance, c.context, c.concurrency, c.measured_best_k, c.alsim_k, c.right
                );
            }
        }
    }
    out
}

/// One row per file, AL source and k: the AL its cells were judged under. Every cell of a file under one source
/// must carry the same AL, or one row could not stand for them.
fn al_record(kit: &ChoiceKit) -> String {
    let mut out = String::from(
        "# alsim calibrate calibration/measured --choice-al all (tests/choice.rs): the AL(k) each file's cells were judged under\n\
         file,acceptance,k,al\n",
    );
    for f in &kit.files {
        let mut seen: Vec<(&str, &[Option<f64>])> = Vec::new();
        for c in f.held_out.cells.iter().chain(&f.in_sample.cells) {
            match seen.iter().find(|(a, _)| *a == c.acceptance) {
                Some((_, al)) => {
                    assert_eq!(*al, c.al.as_slice(), "{}: {} judged under two ALs", f.origin, c.acceptance)
                }
                None => seen.push((&c.acceptance, &c.al)),
            }
        }
        for (acceptance, al) in seen {
            for (k, al) in al.iter().enumerate() {
                if let Some(al) = al {
                    let _ = writeln!(out, "{},{acceptance},{k},{al}", f.origin);
                }
            }
        }
    }
    out
}

/// `got` against the committed `path`, line by line; `ALSIM_BLESS_CHOICE=1` rewrites it instead.
fn matches_record(path: &str, got: &str) {
    if std::env::var_os("ALSIM_BLESS_CHOICE").is_some() {
        std::fs::write(path, got).expect("writable record");
        return;
    }
    let want = std::fs::read_to_string(path).expect("the committed record");
    let moved: Vec<String> =
        want.lines().zip(got.lines()).filter(|(w, g)| w != g).map(|(w, g)| format!("  was {w}\n  now {g}")).collect();
    assert!(
        moved.is_empty() && want.lines().count() == got.lines().count(),
        "{} lines moved (ALSIM_BLESS_CHOICE=1 rewrites {path} when meant):\n{}",
        moved.len(),
        moved.join("\n")
    );
}

#[test]
fn every_kit_cell_picks_the_k_on_record() {
    let kit = kit();
    matches_record(RECORD, &record(&kit));
    matches_record(AL_RECORD, &al_record(&kit));
}

#[test]
fn a_kit_directory_is_scored_held_out_and_in_sample() {
    let out = json(&["calibrate", "calibration/measured", "--choice-al", "alpha=0.7"]);
    let files = out["files"].as_array().expect("files");
    assert!(files.len() >= PINNED.len(), "{out}");
    for key in ["choice", "choice_in_sample"] {
        let c = &out["summary"][key];
        let (cells, right) = (c["cells"].as_u64().unwrap(), c["right"].as_u64().unwrap());
        assert!(cells >= 24 * PINNED.len() as u64 && right <= cells, "{key}: {c}");
        assert!(c["regret_median"].as_f64().unwrap() <= c["regret_max"].as_f64().unwrap(), "{c}");
    }
    // The tables that are not step times are named, not scored.
    let notes = out["notes"].to_string();
    assert!(
        notes.contains("layers.csv: not step-time rows") && notes.contains("errors.csv: not step-time rows"),
        "{notes}"
    );
    // One file is scored in sample, its summary carrying the figures.
    let one = json(&["calibrate", PINNED[2], "--choice-al", "alpha=0.7"]);
    assert_eq!(one["summary"]["choice"]["cells"], 24, "{}", one["summary"]);
    assert_eq!(one["choice"]["cells"][0]["acceptance"], "alpha=0.7");
    // Each cell carries the AL it was judged under: the chain 1, 1 + 0.7, 1 + 0.7 + 0.49, …
    let al = &one["choice"]["cells"][0]["al"];
    assert!(al[0] == 1.0 && (al[2].as_f64().unwrap() - 2.19).abs() < 1e-12, "{al}");
}

#[test]
fn a_choice_source_that_cannot_apply_is_a_usage_error() {
    let (code, _, err) = run(&["calibrate", PINNED[2], "--choice-al", "golden"]);
    assert!(code == 2 && err.contains("llama-3.3-70b"), "{code}: {err}");
    let (code, _, err) = run(&["calibrate", PINNED[2], "--choice-al", "alpha=1.5"]);
    assert!(code == 2 && err.contains("--choice-al") && err.contains("(0, 1)"), "{code}: {err}");
    let (code, _, err) = run(&["calibrate", "tests/data/serving_pairs.csv", "--choice-al", "alpha=0.7", "--k", "3"]);
    assert!(code == 2 && err.contains("serving pairs"), "{code}: {err}");
    let (code, _, err) = run(&["calibrate", "calibration/measured"]);
    assert!(code == 2 && err.contains("directory"), "{code}: {err}");
    let (code, _, err) = run(&["calibrate", "calibration/measured", "--choice-al", "all", "--output", "x.csv"]);
    assert!(code == 2 && err.contains("--output"), "{code}: {err}");
}

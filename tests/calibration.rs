//! The calibration kit's committed results (calibration/README.md: the H200 and H100 files), re-derived from
//! the committed measurements with no GPU: each measured step-time file under `calibration/measured/` is
//! calibrated exactly as `alsim calibrate FILE` does (fit on its k = 0 rows, scored on its k ≥ 1 rows), held to
//! issue #14's targets, and its `-errors.csv` must be what the current model gives; the calibrated H200 profile
//! must be what `alsim calibrate … --output` writes. `ALSIM_BLESS_CALIBRATION=1 cargo test calibration` rewrites
//! both after a model change.
//!
//! Paths are relative to the package root (cargo runs tests there), as a user at the repository root types them,
//! so the origins written into the committed files are the CLI's.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

use alsim::perf::calibrate::steps::StepCalibration;
use alsim::perf::calibrate::{self, Calibration, Residual, write_profile};
use alsim::perf::csv::CsvTable;
use alsim::perf::profile::{ProfileKind, Profiles};

/// The measured files with committed error tables: the H200's (MiniMax-M3 B 1–256 and Llama-3.3-70B B 1–128 at
/// three contexts; the 8B models B 1–256 at two, as on the H100) and the H100's (issue #35 and #34: B 1–256, two contexts; MiniMax-M3's
/// MHA drafter B 1–128).
const MEASURED: [&str; 13] = [
    "h200-inferact-minimax-m3-eagle3",
    "h200-inferact-minimax-m3-eagle3-gqa",
    "h200-llama-3.3-70b-eagle3",
    "h200-llama-3.1-8b-eagle3",
    "h200-qwen3-8b-eagle3",
    "h100-qwen3-235b-a22b-eagle3",
    "h100-qwen3.5-397b-a17b-mtp",
    "h100-inferact-minimax-m3-eagle3",
    "h100-inferact-minimax-m3-eagle3-gqa",
    "h100-llama-3.3-70b-eagle3",
    "h100-gpt-oss-120b-eagle3",
    "h100-llama-3.1-8b-eagle3",
    "h100-qwen3-8b-eagle3",
];
const DIR: &str = "calibration/measured";

/// Issue #14's targets over the k ≥ 1 rows: median |error| and the worst row.
const TARGET_MEDIAN: f64 = 0.15;
const TARGET_WORST: f64 = 0.30;

/// The calibrated H200 profile for `alsim predict --profile`, and the file it is fitted on (the seed model's).
const PROFILE: &str = "calibration/measured/h200-calibrated.csv";
const PROFILE_FROM: &str = "h200-inferact-minimax-m3-eagle3";

fn bless() -> bool {
    std::env::var_os("ALSIM_BLESS_CALIBRATION").is_some()
}

/// `alsim calibrate calibration/measured/<name>.csv`, through the library as the CLI calls it.
fn calibrated(name: &str) -> Calibration {
    let origin = format!("{DIR}/{name}.csv");
    let text = alsim::input::read_text(Path::new(&origin), alsim::input::TABLE_FILE_LIMIT).expect("committed file");
    let (measured, _) = calibrate::read(text.as_bytes(), &origin, None).expect("committed measurements parse");
    calibrate::calibrate(&Profiles::embedded(), &measured, &origin, None).expect("committed measurements calibrate")
}

fn steps(cal: &Calibration) -> &StepCalibration {
    cal.steps.as_ref().expect("a step-time file")
}

/// The table as committed: the fit and the summary the library reports, the worst |error| per (B, k) over the
/// contexts, then every row.
fn render(cal: &Calibration) -> String {
    let steps = steps(cal);
    let [group] = steps.groups.as_slice() else { panic!("{}: one deployment per file", cal.origin) };
    let s = &cal.summary;
    let mut bound: Vec<&str> =
        group.fit.scales.iter().filter(|s| s.at_bound).flat_map(|s| s.groups.iter().map(|g| g.name())).collect();
    if group.fit.overlap_at_bound == Some(true) {
        bound.push("overlap");
    }
    let mut out = format!(
        "# alsim calibrate {}: fit on the {} k = 0 rows, scored on the {} k >= 1 rows (tests/calibration.rs)\n\
         # fitted: {}{}\n",
        cal.origin,
        group.spec_off_rows,
        group.spec_rows,
        group.fit.efficiency,
        if bound.is_empty() { String::new() } else { format!(" (at a bound: {})", bound.join(", ")) },
    );
    let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{:.1} %", v * 100.0));
    for l in &steps.routing_locality {
        let _ = writeln!(
            out,
            "# routing locality fitted to experts_touched at k = 0: {:.3} (profile {:.2}; E(λB) within {:.1} % median); k >= 1 experts predicted within {} median, {} largest",
            l.routing_locality,
            l.before,
            l.median_abs_rel_error * 100.0,
            pct(l.spec_median_abs_rel_error),
            pct(l.spec_max_abs_rel_error),
        );
    }
    let _ = writeln!(
        out,
        "# k = 0 (in sample) median |error| {}; k >= 1 median |error| {}, largest {}, rows over 30 % {} (targets: 15 %, none)",
        pct(s.spec_off_median_abs_rel_error),
        pct(s.step_time_median_abs_rel_error),
        pct(s.step_time_max_abs_rel_error),
        s.step_time_rows_over_30pct.map_or("-".into(), |n| n.to_string()),
    );
    out.push_str(
        "# worst |error| % over the contexts, by concurrency (rows) and k (columns; k = 0 in sample):\n#     B",
    );
    let rows = &steps.residuals;
    let max_k = rows.iter().map(|r| r.k).max().unwrap_or(0);
    for k in 0..=max_k {
        let _ = write!(out, " {k:>6}");
    }
    out.push('\n');
    for b in rows.iter().map(|r| r.concurrency).collect::<BTreeSet<_>>() {
        let _ = write!(out, "# {b:>5}");
        for k in 0..=max_k {
            let cell = rows.iter().filter(|r| r.concurrency == b && r.k == k).map(|r| r.residual_pct.abs());
            let _ = write!(out, " {:>6.1}", cell.fold(0.0, f64::max));
        }
        out.push('\n');
    }
    out.push_str("line,concurrency,k,context,measured_ms,predicted_ms,error_pct\n");
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{:.3},{:.3},{:.2}",
            r.line, r.concurrency, r.k, r.context, r.measured_ms, r.predicted_ms, r.residual_pct
        );
    }
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 }
}

#[test]
fn committed_error_tables_follow_from_the_measurements() {
    for name in MEASURED {
        let cal = calibrated(name);
        let residuals: &[Residual] = &steps(&cal).residuals;
        let settings: BTreeSet<(usize, u64)> = residuals.iter().map(|r| (r.concurrency, r.context.to_bits())).collect();
        assert_eq!(residuals.len(), settings.len() * 9, "{name}: every (B, context) at k 0..8, every row listed");
        let table = render(&cal);
        let committed = format!("{DIR}/{name}-errors.csv");
        if bless() {
            std::fs::write(&committed, &table).expect("write the error table");
        }
        let text = std::fs::read_to_string(&committed).expect("committed error table");
        assert_eq!(text, table, "{name}: the committed table differs; re-run with ALSIM_BLESS_CALIBRATION=1");
        // The committed rows, read back as a user would, give the summary the library reports.
        let parsed = CsvTable::parse(&text, &committed).expect("the table parses");
        let mut spec = Vec::new();
        for row in parsed.rows() {
            let (measured, predicted) = (row.f64("measured_ms").unwrap(), row.f64("predicted_ms").unwrap());
            // Each value is written to 0.001 ms and the error to 0.01 %: apart by no more than that rounding,
            // which grows as the step shrinks (an 8B model's step is a few ms).
            let rounding = 0.005 + 0.05 * (1.0 + predicted / measured) / measured + 1e-9;
            let error_pct = row.f64("error_pct").unwrap();
            assert!(((predicted / measured - 1.0) * 100.0 - error_pct).abs() <= rounding, "{name}: {error_pct}");
            if row.count("k", false).unwrap() > 0 {
                spec.push((predicted / measured - 1.0).abs());
            }
        }
        let s = &cal.summary;
        assert_eq!(spec.len(), settings.len() * 8);
        let close = |a: f64, b: Option<f64>| (a - b.unwrap()).abs() < 1e-4;
        assert!(close(median(spec.clone()), s.step_time_median_abs_rel_error), "{name}: {s:?}");
        assert!(close(spec.iter().copied().fold(0.0, f64::max), s.step_time_max_abs_rel_error), "{name}: {s:?}");
        assert_eq!(Some(spec.iter().filter(|e| **e > 0.3).count()), s.step_time_rows_over_30pct, "{name}");
    }
}

fn assert_within_targets(name: &str) {
    let cal = calibrated(name);
    let s = &cal.summary;
    let (median, worst) = (s.step_time_median_abs_rel_error.unwrap(), s.step_time_max_abs_rel_error.unwrap());
    assert!(median <= TARGET_MEDIAN && worst <= TARGET_WORST, "{name}: median {median:.3}, worst {worst:.3}");
    assert_eq!(s.step_time_rows_over_30pct, Some(0), "{name}");
}

#[test]
fn minimax_m3_eagle3_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h200-inferact-minimax-m3-eagle3");
}

#[test]
fn minimax_m3_eagle3_gqa_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h200-inferact-minimax-m3-eagle3-gqa");
}

#[test]
fn dense_70b_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h200-llama-3.3-70b-eagle3");
}

#[test]
fn moe_without_shared_expert_and_small_draft_vocabulary_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h100-qwen3-235b-a22b-eagle3");
}

#[test]
fn hybrid_attention_with_mtp_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h100-qwen3.5-397b-a17b-mtp");
}

#[test]
fn minimax_m3_eagle3_spec_steps_on_the_h100_are_predicted_within_the_targets() {
    assert_within_targets("h100-inferact-minimax-m3-eagle3");
    assert_within_targets("h100-inferact-minimax-m3-eagle3-gqa");
}

/// Three models no kit file had measured before (issue #34), fitted and scored as the others.
#[test]
fn models_new_to_the_kit_spec_steps_are_predicted_within_the_targets() {
    assert_within_targets("h100-gpt-oss-120b-eagle3");
    assert_within_targets("h100-llama-3.1-8b-eagle3");
    assert_within_targets("h100-qwen3-8b-eagle3");
}

/// The 70B on the H100 meets the median target but not the worst row's: at B = 64 and k = 6 (448 verify tokens)
/// its dense GEMMs measured 153 ms where 512 tokens (k = 7) took 106 ms, at both contexts, so the step is not
/// monotone in k there and no roofline follows it. The miss is held here as measured: one row past 30 %, that
/// one, so a model change that moves it, or a second row past the target, fails.
#[test]
fn dense_70b_spec_steps_on_the_h100_miss_the_worst_row_target_at_one_gemm_shape_only() {
    let name = "h100-llama-3.3-70b-eagle3";
    let cal = calibrated(name);
    let s = &cal.summary;
    assert!(s.step_time_median_abs_rel_error.unwrap() <= TARGET_MEDIAN, "{name}: {s:?}");
    let over: Vec<(usize, usize, f64)> = steps(&cal)
        .residuals
        .iter()
        .filter(|r| r.k > 0 && r.residual_pct.abs() > TARGET_WORST * 100.0)
        .map(|r| (r.concurrency, r.k, r.context))
        .collect();
    assert_eq!(over, [(64, 6, 1024.0)], "{name}: the rows past {} %", TARGET_WORST * 100.0);
}

/// `alsim calibrate calibration/measured/<seed file>.csv --output calibration/measured/h200-calibrated.csv`.
#[test]
fn committed_profile_is_what_calibrate_writes_for_the_seed_model() {
    let cal = calibrated(PROFILE_FROM);
    if bless() {
        write_profile(&cal, Path::new(PROFILE), true).expect("write the profile");
    }
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("h200-calibrated.csv");
    write_profile(&cal, &fresh, false).expect("write the profile");
    // The file names where it was written; written at PROFILE it names PROFILE.
    let want = std::fs::read_to_string(&fresh).unwrap().replace(&fresh.display().to_string(), PROFILE);
    let committed = std::fs::read_to_string(PROFILE).expect("committed profile");
    assert_eq!(committed, want, "the committed profile differs; re-run with ALSIM_BLESS_CALIBRATION=1");
    // predict --profile reads it as the H200, at the real H200's capacity, with the fitted efficiencies.
    let mut profiles = Profiles::embedded();
    let keys = profiles.load_file(ProfileKind::Hardware, Path::new(PROFILE)).expect("the profile loads");
    assert_eq!(keys, vec!["h200".to_string()]);
    let h200 = profiles.hardware("h200").unwrap();
    assert_eq!(h200.hbm_gb, Profiles::embedded().hardware("h200").unwrap().hbm_gb);
    let fitted = cal.pooled[0].profile.efficiency.values();
    for (got, want) in h200.efficiency.values().iter().zip(fitted) {
        assert!((got - want).abs() <= 1e-5 * want.abs().max(1.0), "committed {got} vs fitted {want}");
    }
}

/// Issue #23's target for the drafter's growth with batch: after a fit on two batch sizes, every batch's draft
/// forward within 15 %.
const DRAFTER_GROWTH_TARGET: f64 = 0.15;
/// The files issue #23's target was set on (the H200's, B 1–128 then); the other files' worst errors are printed.
const DRAFTER_GROWTH_SET_ON: [&str; 3] =
    ["h200-inferact-minimax-m3-eagle3", "h200-inferact-minimax-m3-eagle3-gqa", "h200-llama-3.3-70b-eagle3"];

/// The drafter's growth with batch (issue #23): for each kit file and each pair of its batch sizes, the draft
/// forwards measured at those two batches (every context) are fitted from the file's own k = 0 calibration
/// (what `alsim calibrate FILE` fits on its k = 0 rows) with the two scales two points identify
/// (memory and math together, fixed time), and every batch's draft forward is then predicted. The kit times
/// one draft forward of B tokens (`draft_forward_ms`); the model prices the same forward (k = 1 at AL 1: no
/// draft-extend tokens) with no verify and no per-step speculation work. `cargo test --test tests
/// drafter_growth -- --nocapture` prints the worst |error| per pair of fitted batches.
#[test]
fn drafter_growth_with_batch_follows_the_kit_after_a_fit_on_two_batches() {
    use alsim::perf::calibrate::fit::{Observation, fit_scales, target_groups};
    use alsim::perf::cost::{CostModel, Deployment, Workload};
    use alsim::perf::profile::Precision;
    use alsim::perf::terms::{ForwardTerms, StepTerms};

    let profiles = Profiles::embedded();
    let mut failures = String::new();
    for name in MEASURED {
        let start = steps(&calibrated(name)).groups[0].fit.efficiency;
        let origin = format!("{DIR}/{name}.csv");
        let text = std::fs::read_to_string(&origin).expect("committed file");
        let table = CsvTable::parse(&text, &origin).expect("the kit's file parses");
        // (batch, one draft forward), one per (batch, context): every k of a setting times the same forward.
        let mut forwards: Vec<(usize, Observation)> = Vec::new();
        let mut seen = BTreeSet::new();
        for row in table.rows() {
            let (batch, context) = (row.count("concurrency", true).unwrap(), row.f64("context").unwrap());
            if !seen.insert((batch, context.to_bits())) {
                continue;
            }
            let hardware = profiles.hardware(row.str("hardware").unwrap()).unwrap();
            let model = profiles.model(row.str("model").unwrap()).unwrap();
            let drafter = profiles.drafter(model, Some(row.str("drafter").unwrap()), None).unwrap();
            let deployment = Deployment::new(1, Precision::Bf16, Precision::Bf16);
            let cost = CostModel::for_measurements(hardware, model, Some(drafter), &deployment).unwrap();
            let step = cost.step_terms(batch, 1, 1.0, &Workload::Decode { context }).unwrap();
            let terms = StepTerms { verify: ForwardTerms::default(), draft: step.draft, ..StepTerms::default() };
            let measured_s = row.f64("draft_forward_ms").unwrap() / 1e3;
            forwards.push((batch, Observation { terms, measured_s, weight: 1.0, gemm_ceiling: 1.0 }));
        }
        let batches: BTreeSet<usize> = forwards.iter().map(|f| f.0).collect();
        assert!(batches.len() >= 8, "{name}: B = 1 … 128 at least");
        let mut worst_to_128 = 0.0_f64;
        let mut report = format!(
            "{name}: worst |error| of the draft forward over every batch and context, by the two batches fitted:\n"
        );
        for (i, &b1) in batches.iter().enumerate() {
            for &b2 in batches.iter().skip(i + 1) {
                let fitted: Vec<Observation> =
                    forwards.iter().filter(|f| f.0 == b1 || f.0 == b2).map(|f| f.1).collect();
                let fit = fit_scales(&start, &fitted, &target_groups(2)).expect("two batches fit");
                let worst = forwards
                    .iter()
                    .map(|(_, o)| (o.predicted(&fit.efficiency) / o.measured_s - 1.0).abs())
                    .fold(0.0, f64::max);
                let _ = writeln!(report, "  B = {b1:>3}, {b2:>3}: {:5.1} %", worst * 100.0);
                if b2 <= 128 {
                    worst_to_128 = worst_to_128.max(worst);
                }
            }
        }
        eprint!("{report}");
        // The target was set on the H200 files when they reached B = 128, and holds there for fits on two batches up
        // to 128 (their predictions at B = 256 included). The H200 MiniMax-M3 re-measure of 2026-12-06 23:13 UTC
        // added B = 256: fitted on B = 128 and 256 alone, the GQA drafter misses by 17.8 % (14.1 % at worst on any
        // other pair), an open finding like the H100's. On the H100 (B to 256) it holds for MiniMax-M3's MHA
        // drafter (2.6 %) and misses for the others: Qwen3-235B-A22B's EAGLE3 with a 32k vocabulary 43.1 %,
        // Qwen3.5's MoE MTP head 57.7 %, MiniMax-M3's GQA drafter 24.2 %, the 70B's 21.6 %, gpt-oss-120b's 50.2 %,
        // Llama-3.1-8B's 46.6 %, Qwen3-8B's 39.2 % (printed above): an open finding of issue #34, not yet a target
        // on that GPU. The same two 8B heads measured on the H200 (2026-12-06 23:15 UTC) miss it there too, 67.3 %
        // and 69.6 % (both fitted on B = 1 and 2).
        if DRAFTER_GROWTH_SET_ON.contains(&name) && worst_to_128 > DRAFTER_GROWTH_TARGET {
            let _ = writeln!(failures, "{name}: worst {:.1} % (fitted on two batches up to 128)", worst_to_128 * 100.0);
        }
    }
    assert!(failures.is_empty(), "over the target of {} %:\n{failures}", DRAFTER_GROWTH_TARGET * 100.0);
}

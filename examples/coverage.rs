//! Coverage of the AL interval when acceptance drifts in phases: the sweep behind `tests/evidence.rs`'s
//! fast checks. Each cell simulates runs of 200 verification steps per window (scrape or log interval)
//! that switch between an easy and a hard chain, phases lasting an exponential number of windows with the
//! mean in the row (0: independent steps), and counts how often the interval covers the true AL and how
//! often `alsim eval` leaves the run undecided because the series is too short for its own
//! autocorrelation.
//!
//! Then what `alsim eval` says over the same runs (100 windows): with the pin at the true AL, how often the
//! interval covers it, the pin is called wrong (exit 1) or left undecided (exit 3); with the pin 5 % above
//! or below the truth, how often it is called wrong (the power).
//!
//! `cargo run --release --example coverage [RUNS]` (default 2,000 runs per cell).

use alsim::evidence::coverage::{PhaseModel, coverage, verdicts};

fn main() -> Result<(), alsim::Error> {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    println!("95% intervals, {runs} runs per cell; the decisive interval is the one `alsim eval` judges by");
    println!(
        "| windows | mean phase (windows) | decisive | batch means, n^(1/3) batches | one batch per window | independent | undecided |"
    );
    println!("|---|---|---|---|---|---|---|");
    for windows in [30, 100, 400] {
        for (i, mean_phase) in [0.0, 0.5, 1.0, 5.0, 10.0, 20.0].into_iter().enumerate() {
            let model = phases(mean_phase, windows);
            let c = coverage(&model, runs, 1000 + 10 * windows as u64 + i as u64, 0.95)?;
            let phase = if mean_phase == 0.0 { "i.i.d. steps".to_string() } else { format!("{mean_phase}") };
            println!(
                "| {windows} | {phase} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
                100.0 * c.decisive,
                100.0 * c.design,
                100.0 * c.per_window,
                100.0 * c.independent,
                100.0 * c.undecided
            );
        }
    }
    println!("\nVerdicts of `alsim eval`, 100 windows, {runs} runs per cell (default tolerance, 95%)");
    println!(
        "| mean phase (windows) | pin = truth: covered | exit 1 | exit 3 | pin 5% high: exit 1 | pin 5% low: exit 1 |"
    );
    println!("|---|---|---|---|---|---|");
    for (i, mean_phase) in [0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 20.0].into_iter().enumerate() {
        let model = phases(mean_phase, 100);
        let truth = model.true_al();
        let seed = 5000 + 10 * i as u64;
        let right = verdicts(&model, truth, runs, seed, 0.95)?;
        let high = verdicts(&model, truth * 1.05, runs, seed + 1, 0.95)?;
        let low = verdicts(&model, truth * 0.95, runs, seed + 2, 0.95)?;
        println!(
            "| {mean_phase} | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% |",
            100.0 * right.covered,
            100.0 * right.wrong,
            100.0 * right.undecided,
            100.0 * high.wrong,
            100.0 * low.wrong
        );
    }
    Ok(())
}

/// The easy and hard chains of `tests/evidence.rs` (the golden MiniMax-M3 EAGLE3 shape), 200 steps a window.
fn phases(mean_phase: f64, windows: usize) -> PhaseModel {
    PhaseModel {
        easy: vec![0.9, 0.765, 0.612],
        hard: vec![0.45, 0.1575, 0.04725],
        mean_phase,
        steps_per_window: 200,
        windows,
    }
}

//! Coverage of the AL interval when acceptance drifts in phases: the sweep behind `tests/evidence.rs`'s
//! fast checks. Each cell simulates runs of 200 verification steps per window (scrape or log interval)
//! that switch between an easy and a hard chain, phases lasting an exponential number of windows with the
//! mean in the row (0: independent steps), and counts how often the interval covers the true AL and how
//! often `alsim eval` leaves the run undecided because the series is too short for its own
//! autocorrelation.
//!
//! `cargo run --release --example coverage [RUNS]` (default 2,000 runs per cell).

use alsim::evidence::coverage::{PhaseModel, coverage};

fn main() -> Result<(), alsim::Error> {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    println!("95% intervals, {runs} runs per cell; the decisive interval is the one `alsim eval` judges by");
    println!(
        "| windows | mean phase (windows) | decisive | batch means, n^(1/3) batches | one batch per window | independent | undecided |"
    );
    println!("|---|---|---|---|---|---|---|");
    for windows in [30, 100, 400] {
        for (i, mean_phase) in [0.0, 0.5, 1.0, 5.0, 10.0, 20.0].into_iter().enumerate() {
            let model = PhaseModel {
                easy: vec![0.9, 0.765, 0.612],
                hard: vec![0.45, 0.1575, 0.04725],
                mean_phase,
                steps_per_window: 200,
                windows,
            };
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
    Ok(())
}

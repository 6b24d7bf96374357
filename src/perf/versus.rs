//! Drafters compared on the same hardware and request shape, concurrency by concurrency (`alsim predict
//! --versus`): each drafter's best k and throughput, the winner and whether its margin is inside the model
//! error.

use serde::Serialize;

use super::sweep::Sweep;

/// One drafter's best at one concurrency, for a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterBest {
    /// Drafter key.
    pub drafter: String,
    /// Its recommended k (smallest in its band).
    pub best_k: Option<usize>,
    /// Its highest predicted throughput per GPU over k.
    pub throughput_per_gpu: Option<f64>,
}

/// Two or more drafters on the same hardware and workload at one concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DrafterComparison {
    /// Hardware key.
    pub hardware: String,
    /// The request shape.
    pub workload: String,
    /// Concurrent requests.
    pub concurrency: usize,
    /// Each drafter's best.
    pub drafters: Vec<DrafterBest>,
    /// The drafter with the highest throughput.
    pub winner: Option<String>,
    /// Its throughput over the next drafter's, minus 1, in percent.
    pub margin_pct: Option<f64>,
    /// The margin is inside the model error: either drafter will do.
    pub toss_up: bool,
}

/// Compares the drafters of `sweeps` that share hardware and workload, concurrency by concurrency.
pub fn compare_drafters(sweeps: &[Sweep], model_error: f64) -> Vec<DrafterComparison> {
    let mut out = Vec::new();
    for (i, first) in sweeps.iter().enumerate() {
        let same = |s: &&Sweep| s.hardware == first.hardware && s.workload == first.workload;
        if sweeps[..i].iter().any(|s| same(&s)) {
            continue; // this deployment's comparison was made at its first sweep
        }
        let group: Vec<&Sweep> = sweeps[i..].iter().filter(same).collect();
        if group.len() < 2 {
            continue;
        }
        for (c, choice) in first.best.iter().enumerate() {
            let drafters: Vec<DrafterBest> = group
                .iter()
                .map(|s| {
                    let best = &s.best[c];
                    DrafterBest {
                        drafter: s.drafter.clone().unwrap_or_default(),
                        best_k: best.best_k,
                        throughput_per_gpu: best
                            .top_k
                            .and_then(|k| s.prediction(best.concurrency, k))
                            .map(|p| p.throughput_per_gpu),
                    }
                })
                .collect();
            let mut ranked: Vec<&DrafterBest> = drafters.iter().filter(|d| d.throughput_per_gpu.is_some()).collect();
            ranked.sort_by(|a, b| b.throughput_per_gpu.unwrap_or(0.0).total_cmp(&a.throughput_per_gpu.unwrap_or(0.0)));
            let margin = ranked
                .first()
                .zip(ranked.get(1))
                .and_then(|(a, b)| Some((a.throughput_per_gpu? / b.throughput_per_gpu? - 1.0) * 100.0));
            out.push(DrafterComparison {
                hardware: first.hardware.clone(),
                workload: first.workload.label(),
                concurrency: choice.concurrency,
                winner: ranked.first().map(|d| d.drafter.clone()),
                margin_pct: margin,
                toss_up: margin.is_some_and(|m| m < model_error * 100.0),
                drafters,
            });
        }
    }
    out
}

//! The choice of k: per concurrency the k with the highest throughput, the runner-up, and the **band** of
//! k whose throughput lies within the model's own error of the best (docs/model.md §6: a margin inside the
//! model's error is not a decision). Which k of the band is chosen is the [`Objective`]'s call; by default the
//! top one, the objective with the least held-out regret on the calibration kit. Also InferenceX's view of a sweep, the Pareto frontier of throughput per
//! GPU against per-user speed, and the comparison of two drafters on the same deployment.

use serde::Serialize;

use super::prediction::Prediction;

/// The model's relative error on throughput and speedup when nothing better is known: the median error of
/// its predicted speedup on the measured DeepSeek-R1 serving pairs (`alsim calibrate
/// ../shared/data/serving/inferencex_dsr1_mtp_vs_off_b200_b300.csv`): 3.4 % with the defaults chosen on
/// them, 5.2 % with each group held out while choosing (`notebooks/serving_defaults.py`) — 5 %.
pub const DEFAULT_MODEL_ERROR: f64 = 0.05;

/// What the choice inside the band optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// The smallest k in the band: the smallest drafts least — least draft work wasted when the real
    /// acceptance falls below the pin, and the least variance in step time. It gives up up to the band's width
    /// of predicted throughput, and on the calibration kit that costs measured throughput: held out, 398 of 1,120
    /// cells right (regret under 1 %), median regret 2.1 %.
    SmallestK,
    /// The k of the highest predicted throughput per GPU (the default): the objective with the least
    /// held-out regret on the calibration kit (`alsim calibrate calibration/measured --choice-al all
    /// --objective …`, each file scored with a fit on the others' k = 0 rows: 967 of 1,120 cells right, median
    /// regret 0.0 %, against 398 and 2.1 % for the smallest k).
    #[default]
    Throughput,
    /// The k of the highest predicted per-user speed. At one concurrency per-user speed ranks the k exactly as
    /// throughput does, so it picks the same k; across concurrencies use `--min-user-tps`.
    PerUser,
}

/// The band and the choice inside it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Band {
    /// Relative throughput error within which k's are not told apart.
    pub error: f64,
    /// Which k of the band is chosen.
    pub objective: Objective,
}

impl Default for Band {
    fn default() -> Self {
        Band { error: DEFAULT_MODEL_ERROR, objective: Objective::default() }
    }
}

/// The choice of k at one concurrency.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Choice {
    /// Concurrent requests B.
    pub concurrency: usize,
    /// The k of the band the objective chooses: the recommendation. `None` when no k meets the per-user floor.
    pub best_k: Option<usize>,
    /// What chose it.
    pub objective: Objective,
    /// The relative throughput error that defines the band.
    pub band_error: f64,
    /// The k with the highest predicted throughput.
    pub top_k: Option<usize>,
    /// The k with the next highest throughput.
    pub runner_up: Option<usize>,
    /// Throughput of the top k over the runner-up, minus 1, in percent.
    pub margin_pct: Option<f64>,
    /// Every k whose throughput is within the model error of the top k's, ascending.
    pub band: Vec<usize>,
    /// More than one k in the band: the model cannot tell them apart.
    pub toss_up: bool,
    /// Speedup of `best_k` over spec off.
    pub speedup: Option<f64>,
}

/// Ranks one concurrency's predictions by throughput among those meeting `floor` and fitting in memory
/// (ties keep the smaller k), forms the band within the band's error of the top, and chooses in it by its
/// objective.
pub(crate) fn choose(rows: &[Prediction], concurrency: usize, floor: Option<f64>, band_of: Band) -> Choice {
    let model_error = band_of.error;
    let mut ranked: Vec<&Prediction> = rows.iter().filter(|p| floor.is_none_or(|f| p.per_user_tps >= f)).collect();
    ranked.sort_by(|a, b| b.throughput_per_gpu.total_cmp(&a.throughput_per_gpu).then(a.k.cmp(&b.k)));
    let top = ranked.first();
    let second = ranked.get(1);
    let mut band: Vec<usize> = top
        .map(|t| {
            ranked
                .iter()
                .filter(|p| p.throughput_per_gpu * (1.0 + model_error) >= t.throughput_per_gpu)
                .map(|p| p.k)
                .collect()
        })
        .unwrap_or_default();
    band.sort_unstable();
    let best_k = match band_of.objective {
        Objective::SmallestK => band.first().copied(),
        // Ranked by throughput already; per-user speed B·AL/T/B ranks the same at one concurrency.
        Objective::Throughput | Objective::PerUser => top.map(|p| p.k),
    };
    Choice {
        concurrency,
        best_k,
        objective: band_of.objective,
        band_error: model_error,
        top_k: top.map(|p| p.k),
        runner_up: second.map(|p| p.k),
        margin_pct: top.zip(second).map(|(a, b)| (a.throughput_per_gpu / b.throughput_per_gpu - 1.0) * 100.0),
        toss_up: band.len() > 1,
        band,
        speedup: best_k.and_then(|k| ranked.iter().find(|p| p.k == k)).map(|p| p.speedup),
    }
}

/// One point of the Pareto frontier.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FrontierPoint {
    /// Concurrent requests.
    pub concurrency: usize,
    /// Draft length.
    pub k: usize,
    /// Output tokens per second per GPU.
    pub throughput_per_gpu: f64,
    /// Output tokens per second per request.
    pub per_user_tps: f64,
}

/// The predictions no other prediction beats on both throughput per GPU and per-user speed (among those that
/// fit in memory), fastest per user first: the operating points worth considering at any interactivity target.
pub(crate) fn frontier(predictions: &[Prediction]) -> Vec<FrontierPoint> {
    let mut points: Vec<&Prediction> = predictions.iter().filter(|p| p.fits_memory).collect();
    points.sort_by(|a, b| {
        b.per_user_tps.total_cmp(&a.per_user_tps).then(b.throughput_per_gpu.total_cmp(&a.throughput_per_gpu))
    });
    let mut out: Vec<FrontierPoint> = Vec::new();
    let mut best_throughput = f64::NEG_INFINITY;
    for p in points {
        if p.throughput_per_gpu > best_throughput {
            best_throughput = p.throughput_per_gpu;
            out.push(FrontierPoint {
                concurrency: p.concurrency,
                k: p.k,
                throughput_per_gpu: p.throughput_per_gpu,
                per_user_tps: p.per_user_tps,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(k: usize, throughput: f64, user: f64) -> Prediction {
        Prediction {
            concurrency: 8,
            k,
            al: 1.0,
            step_ms: 1.0,
            verify_ms: 1.0,
            draft_ms: 0.0,
            prefill_ms: 0.0,
            speculation_ms: 0.0,
            throughput_per_gpu: throughput,
            per_user_tps: user,
            speedup: throughput / 100.0,
            dominant: "experts",
            fits_memory: true,
            marginal: None,
        }
    }

    #[test]
    fn the_band_holds_every_k_within_the_error_and_the_smallest_is_chosen() {
        let rows =
            [row(0, 100.0, 10.0), row(1, 153.0, 15.3), row(2, 160.0, 16.0), row(3, 158.0, 15.8), row(4, 140.0, 14.0)];
        let band = |error: f64| Band { error, objective: Objective::SmallestK };
        let c = choose(&rows, 8, None, band(0.05));
        assert_eq!(c.top_k, Some(2));
        assert_eq!(c.runner_up, Some(3));
        assert_eq!(c.band, vec![1, 2, 3]);
        assert_eq!(c.best_k, Some(1));
        assert!(c.toss_up);
        assert!((c.margin_pct.unwrap() - (160.0 / 158.0 - 1.0) * 100.0).abs() < 1e-9);
        assert_eq!(c.speedup, Some(1.53));
        let sure = choose(&rows, 8, None, band(0.001));
        assert_eq!((sure.best_k, sure.toss_up), (Some(2), false));
        let floored = choose(&rows, 8, Some(100.0), band(0.05));
        assert_eq!((floored.best_k, floored.band.len()), (None, 0));
        // The other objectives take the top of the same band; the band and its error are unchanged.
        for objective in [Objective::Throughput, Objective::PerUser] {
            let top = choose(&rows, 8, None, Band { error: 0.05, objective });
            assert_eq!((top.best_k, top.band.clone(), top.band_error), (Some(2), vec![1, 2, 3], 0.05));
            assert_eq!(top.objective, objective);
        }
    }

    #[test]
    fn the_frontier_drops_dominated_points() {
        let mut rows = vec![row(0, 100.0, 10.0), row(1, 90.0, 20.0), row(2, 80.0, 15.0), row(3, 120.0, 5.0)];
        rows[2].concurrency = 16;
        let f = frontier(&rows);
        let ks: Vec<usize> = f.iter().map(|p| p.k).collect();
        assert_eq!(ks, vec![1, 0, 3], "k = 2 is beaten by k = 1 on both axes");
        assert!(
            f.windows(2)
                .all(|w| w[0].per_user_tps > w[1].per_user_tps && w[0].throughput_per_gpu < w[1].throughput_per_gpu)
        );
    }
}

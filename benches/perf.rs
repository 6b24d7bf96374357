//! The whole `predict` sweep the issue times: k = 0..8 × 64 concurrencies × 7 hardware profiles for the seed's
//! model (MiniMax-M3 MXFP4, EAGLE3, thinking-on curve), including profile parsing and curve lookup.

use alsim::curve::{CurveQuery, CurveSet, ThinkingMode};
use alsim::perf::cost::{CostModel, Workload};
use alsim::perf::profile::{Precision, Profiles};
use alsim::perf::{AcceptanceSource, Sweep};
use criterion::{Criterion, criterion_group, criterion_main};

fn sweep_all_hardware() -> usize {
    let profiles = Profiles::embedded();
    let curves = CurveSet::embedded();
    let found = curves
        .lookup(&CurveQuery {
            model: "minimax-m3".into(),
            drafter: Some("Inferact/MiniMax-M3-EAGLE3".into()),
            mode: Some(ThinkingMode::On),
            ..Default::default()
        })
        .expect("the seed's curve is embedded");
    let acceptance = AcceptanceSource::from_curve(found.curve, &found.file.origin, 8).expect("k = 1..8 on the curve");
    let model = profiles.model("minimax-m3").expect("embedded");
    let drafter = profiles.drafter(model, Some("Inferact/MiniMax-M3-EAGLE3"), None).expect("embedded");
    let concurrency: Vec<usize> = (1..=64).collect();
    let workload = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
    profiles
        .hardware
        .iter()
        .map(|hw| {
            let cost =
                CostModel::new(hw, model, Some(drafter), 8, Precision::Fp4, Precision::Bf16).expect("fits at TP 8");
            Sweep::run(&cost, &acceptance, &concurrency, &workload, None).expect("valid sweep").predictions.len()
        })
        .sum()
}

fn bench(c: &mut Criterion) {
    assert_eq!(sweep_all_hardware(), 9 * 64 * 7);
    c.bench_function("predict sweep: k 0..8 x 64 concurrencies x 7 hardware", |b| b.iter(sweep_all_hardware));
}

criterion_group!(benches, bench);
criterion_main!(benches);

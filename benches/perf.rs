//! The two perf commands' work, timed: the whole `predict` sweep (k = 0..8 × 64 concurrencies × 7 hardware
//! profiles for the seed's model, profile parsing and curve lookup included), and `calibrate` over serving
//! pairs the size of the shared DeepSeek-R1 file (30 groups, 90 rows; read, fitted, scored).

use alsim::curve::{CurveQuery, CurveSet, ThinkingMode};
use alsim::perf::calibrate;
use alsim::perf::cost::{CostModel, Deployment, Workload};
use alsim::perf::profile::{Precision, Profiles};
use alsim::perf::{AcceptanceSource, Band, Sweep};
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
    let deployment = Deployment::new(8, Precision::Fp4, Precision::Bf16);
    profiles
        .hardware
        .iter()
        .map(|hw| {
            let cost = CostModel::new(hw, model, Some(drafter), &deployment).expect("fits at TP 8");
            Sweep::run(&cost, &acceptance, &concurrency, &workload, None, Band::default())
                .expect("valid sweep")
                .predictions
                .len()
        })
        .sum()
}

/// Serving pairs in the shared file's columns: 30 groups (ISL/OSL × TP × precision × hardware) at five
/// concurrencies, speedups from the model itself at AL 2.4 with a ±3 % wobble.
fn serving_pairs() -> String {
    let profiles = Profiles::embedded();
    let model = profiles.model("dsr1").expect("embedded");
    let drafter = profiles.drafter(model, None, None).expect("embedded MTP head");
    let mut csv = String::from(
        "hardware,framework,model,precision,tp,ep,dp_attention,isl,osl,conc,k,none_median_tpot,tput_ratio\n",
    );
    let mut wobble = 0.97;
    for hardware in ["b200", "b300"] {
        for (precision, tp) in [(Precision::Fp8, 8), (Precision::Fp4, 8), (Precision::Fp4, 4)] {
            for (isl, osl) in [(1024.0, 1024.0), (1024.0, 8192.0), (8192.0, 1024.0), (4096.0, 1024.0), (2048.0, 2048.0)]
            {
                let cost = CostModel::new(
                    profiles.hardware(hardware).expect("embedded"),
                    model,
                    Some(drafter),
                    &Deployment::new(tp, precision, Precision::Bf16),
                )
                .expect("fits");
                let w = Workload::Turns { isl, osl, prefix_hit: 0.0 };
                for b in [4, 8, 16, 32, 64] {
                    let ar = cost.step_time(b, 0, 1.0, &w).expect("valid").total;
                    let sd = cost.step_time(b, 3, 2.4, &w).expect("valid").total;
                    wobble = if wobble > 1.02 { 0.97 } else { wobble + 0.01 };
                    csv.push_str(&format!(
                        "{hardware},trt,dsr1,{precision},{tp},1,false,{isl},{osl},{b},3,{ar},{}\n",
                        2.4 * ar / sd * wobble
                    ));
                }
            }
        }
    }
    csv
}

fn calibrate_pairs(text: &str) -> f64 {
    let profiles = Profiles::embedded();
    let (measured, _) = calibrate::read(text.as_bytes(), "bench.csv", None).expect("valid pairs");
    calibrate::calibrate(&profiles, &measured, "bench.csv", None)
        .expect("calibrates")
        .summary
        .speedup_median_abs_rel_error
        .expect("serving pairs are scored")
}

fn bench(c: &mut Criterion) {
    assert_eq!(sweep_all_hardware(), 9 * 64 * 7);
    c.bench_function("predict sweep: k 0..8 x 64 concurrencies x 7 hardware", |b| b.iter(sweep_all_hardware));
    let pairs = serving_pairs();
    assert!(calibrate_pairs(&pairs) < 0.05, "a fit to the model's own speedups is close");
    c.bench_function("calibrate: 30 groups x 5 concurrencies of serving pairs", |b| b.iter(|| calibrate_pairs(&pairs)));
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! alsim as a library, its three jobs in one program, as a crate that depends on it with
//! `default-features = false` would write them (`cargo run --example library`):
//! 1. what the pin means — the golden curve's chain and distribution against an engine's forced schedule;
//! 2. is the pin honest — a real-verification run's Prometheus scrapes estimated and judged against the pin;
//! 3. which draft length — throughput per GPU and per user for every k, and the k chosen per concurrency.

use alsim::evidence::{self, PinUnderTest};
use alsim::{
    AcceptanceSource, Band, CostModel, CurveQuery, CurveSet, Deployment, Precision, Profiles, ReadOptions,
    ScheduleKind, Sweep, SyntheticSchedule, ThinkingMode, Verdict, Workload,
};

fn main() -> alsim::Result<()> {
    // 1. What does the pin mean? The seed: MiniMax-M3, EAGLE3 drafter, thinking on, k = 3, AL 2.83.
    let curves = CurveSet::embedded();
    let found = curves.lookup(&CurveQuery {
        model: "minimax-m3".into(),
        drafter: Some("Inferact/MiniMax-M3-EAGLE3".into()),
        mode: Some(ThinkingMode::On),
        ..Default::default()
    })?;
    let (k, pin_al) = (3, found.curve.al(3)?);
    let real = found.curve.chain(k)?.distribution();
    let forced = SyntheticSchedule::new(ScheduleKind::MinVariance, pin_al, k)?.distribution;
    println!(
        "1. pin AL {pin_al} at k = {k}: real P(a = 0) {:.2}, variance {:.2}; vLLM's forced schedule P(a = 0) {:.2}, variance {:.2}",
        real.p_zero(),
        real.variance(),
        forced.p_zero(),
        forced.variance()
    );

    // 2. Is the pin honest? Forty scrapes of a vLLM server's counters, 1,000 verify steps apart, whose
    //    windows accept 1,800 or 1,860 drafts in turn (a mean AL of 2.83).
    let mut page = String::new();
    let (mut drafts, mut accepted) = (0u64, 0u64);
    for scrape in 0..40u64 {
        drafts += 1000;
        accepted += if scrape % 2 == 0 { 1800 } else { 1860 };
        page.push_str(&format!(
            "vllm:spec_decode_num_drafts_total {drafts}\nvllm:spec_decode_num_draft_tokens_total {}\nvllm:spec_decode_num_accepted_tokens_total {accepted}\n",
            3 * drafts
        ));
    }
    let runs = evidence::read(page.as_bytes(), "server.prom", &ReadOptions { k: Some(k), ..Default::default() })?;
    let pin =
        PinUnderTest::new(pin_al, k, evidence::verdict::DEFAULT_TOLERANCE, 0.95, "golden minimax-m3.thinking_on.3")?;
    let report = evidence::evaluate(&pin, &runs)?;
    println!("2. the run measured AL {:.3}: {:?}", report.files[0].estimate.decisive().point_estimate, report.overall);
    assert_eq!(report.overall, Verdict::Consistent);

    // 3. Which draft length? MiniMax-M3 in FP4 on four MI355X, 1k/1k turns, concurrency 1 to 64.
    let profiles = Profiles::embedded();
    let model = profiles.model("minimax-m3")?;
    let drafter = profiles.drafter(model, Some("Inferact/MiniMax-M3-EAGLE3"), None)?;
    let deployment = Deployment::new(4, Precision::Fp4, Precision::Bf16);
    let cost = CostModel::new(profiles.hardware("mi355x")?, model, Some(drafter), &deployment)?;
    let acceptance = AcceptanceSource::from_curve(found.curve, &found.file.origin, 8)?;
    let workload = Workload::Turns { isl: 1024.0, osl: 1024.0, prefix_hit: 0.0 };
    let sweep = Sweep::run(&cost, &acceptance, &[1, 4, 16, 64], &workload, None, Band::default())?;
    for best in &sweep.best {
        println!(
            "3. concurrency {:>2}: best k {:?}, band {:?}, speedup {:.2}x",
            best.concurrency,
            best.best_k,
            best.band,
            best.speedup.unwrap_or(1.0)
        );
    }
    Ok(())
}

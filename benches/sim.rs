//! Speed of the simulator (issue 6): raw RNG, the step sampler, the per-request path on 1 thread and on all
//! threads (request-steps per second), and the exact steps-to-N distribution at N = 100,000, k = 3.
//!
//! Run with `cargo bench --bench sim`; `benches/numpy_sim.py` is the vectorised NumPy peer of the per-request
//! path, to run in the same sitting. Criterion settings are short so the shared machine is not tied up.

use std::hint::black_box;
use std::time::Duration;

use alsim::accept::Distribution;
use alsim::sim::{OutputLengths, RequestModel, RunConfig, StepSampler, request_rng, simulate_totals, steps_to_emit};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::Rng;

/// The seed case's real per-step law at k = 3 (p = 0.78, 0.60, 0.45).
fn seed_law() -> Distribution {
    Distribution::new(vec![0.22, 0.18, 0.15, 0.45], "bench").expect("a distribution")
}

const DRAWS: u64 = 1 << 20;

fn rng_and_sampler(c: &mut Criterion) {
    let mut group = c.benchmark_group("draws");
    group.throughput(Throughput::Elements(DRAWS));
    group.bench_function("chacha8_next_u32", |b| {
        let mut rng = request_rng(1, 0);
        b.iter(|| {
            let mut acc = 0u32;
            for _ in 0..DRAWS {
                acc = acc.wrapping_add(rng.next_u32());
            }
            black_box(acc)
        })
    });
    group.bench_function("chacha8_next_u64", |b| {
        let mut rng = request_rng(1, 0);
        b.iter(|| {
            let mut acc = 0u64;
            for _ in 0..DRAWS {
                acc = acc.wrapping_add(rng.next_u64());
            }
            black_box(acc)
        })
    });
    let sampler = StepSampler::new(&seed_law());
    group.bench_function("alias_step_sampler", |b| {
        let mut rng = request_rng(1, 0);
        b.iter(|| {
            let mut tokens = 0usize;
            for _ in 0..DRAWS {
                tokens += sampler.accepted(&mut rng) + 1;
            }
            black_box(tokens)
        })
    });
    group.finish();
}

fn per_request(c: &mut Criterion) {
    let law = seed_law();
    let model = RequestModel::iid(StepSampler::new(&law), OutputLengths::Fixed { tokens: 1024 });
    let config = RunConfig::new(8_192, 9).expect("valid");
    let steps = simulate_totals(&model, 3, config, &|_| {}).steps;
    let mut group = c.benchmark_group("request_steps");
    group.throughput(Throughput::Elements(steps));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for threads in [1, cores] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        group.bench_function(format!("simulate_totals_{threads}_threads"), |b| {
            b.iter(|| pool.install(|| black_box(simulate_totals(&model, 3, config, &|_| {}))))
        });
    }
    group.finish();
}

fn exact(c: &mut Criterion) {
    let law = seed_law();
    c.bench_function("exact_steps_to_emit_100000_k3", |b| {
        b.iter(|| black_box(steps_to_emit(&law, black_box(100_000)).expect("valid")))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = rng_and_sampler, per_request, exact
}
criterion_main!(benches);

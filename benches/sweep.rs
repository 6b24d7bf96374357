//! `alsim sweep` on the fixture benchmark repository, with and without the fixture's own name map: the pins
//! scan and check, the name mapping, and one cost-model sweep per speculative point (target for the whole
//! InferenceX snapshot: under a second).

use std::path::Path;
use std::time::Duration;

use alsim::matrix::map::NameMap;
use alsim::matrix::{self, Options};
use alsim::perf::Band;
use alsim::perf::profile::Profiles;
use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("tests/fixtures/benchrepo");
    let profiles = Profiles::embedded();
    let embedded = NameMap::embedded(&profiles).expect("the embedded map matches the embedded profiles");
    let fixture_map = NameMap::read(&root.join("tests/fixtures/benchrepo_sweep_map.csv"), &profiles)
        .expect("the fixture's map reads")
        .before(embedded.clone());
    let options = |map: NameMap| Options {
        golden: None,
        exclude: Default::default(),
        map,
        profiles: profiles.clone(),
        band: Band::default(),
        strict: true,
    };
    let (committed, with_fixture_map) = (options(embedded), options(fixture_map));
    let mut group = c.benchmark_group("sweep");
    group.sample_size(20).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    group.bench_function("the fixture repository, committed map", |b| {
        b.iter(|| matrix::sweep(&fixture, &committed).expect("fixture sweeps").rows.len())
    });
    group.bench_function("the fixture repository, its own map", |b| {
        b.iter(|| matrix::sweep(&fixture, &with_fixture_map).expect("fixture sweeps").rows.len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! `alsim pins check` on the fixture repository as it is, and over a generated benchmark repository of
//! ~1,300 files (target: well under a second).
//!
//! The tree is generated into a temporary directory from the fixture repository's scripts, recipes and
//! golden files (renamed copies), plus unrelated Python, Markdown and data files, as a benchmark repository
//! has. Set `ALSIM_BENCH_TREE=DIR` to generate into DIR and keep it (e.g. to time `rg` on the same tree).

use std::path::{Path, PathBuf};
use std::time::Duration;

use alsim::pins::{self, CheckOptions};
use criterion::{Criterion, criterion_group, criterion_main};

const COPIES: usize = 28;

fn generate(root: &Path) -> usize {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo");
    let mut count = 0;
    let mut write = |rel: PathBuf, text: &[u8]| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("generated paths have a parent")).expect("create dir");
        std::fs::write(path, text).expect("write file");
        count += 1;
    };
    let mut sources: Vec<PathBuf> = Vec::new();
    let mut stack = vec![fixture.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("fixture is readable") {
            let path = entry.expect("entry").path();
            if path.is_dir() { stack.push(path) } else { sources.push(path) }
        }
    }
    sources.sort();
    for source in &sources {
        let rel = source.strip_prefix(&fixture).expect("under fixture");
        let text = std::fs::read(source).expect("fixture file");
        if rel.starts_with("golden_al_distribution") || rel.starts_with("configs") {
            write(rel.to_path_buf(), &text);
            continue;
        }
        for copy in 0..COPIES {
            let name = format!("c{copy:02}_{}", rel.file_name().expect("file").to_string_lossy());
            write(rel.with_file_name(name), &text);
        }
    }
    for i in 0..300 {
        write(
            PathBuf::from(format!("utils/agentic/module_{i}.py")),
            format!("def f{i}(x):\n    return x * {i}\n").as_bytes(),
        );
    }
    for i in 0..100 {
        write(
            PathBuf::from(format!("docs/page_{i}.md")),
            format!("# Page {i}\n\nNothing about pins here.\n").as_bytes(),
        );
    }
    count
}

fn bench(c: &mut Criterion) {
    let keep = std::env::var_os("ALSIM_BENCH_TREE").map(PathBuf::from);
    let temp = tempfile::tempdir().expect("temp dir");
    let root = keep.clone().unwrap_or_else(|| temp.path().to_path_buf());
    let files = generate(&root);
    let mut group = c.benchmark_group("pins");
    group.sample_size(10).measurement_time(Duration::from_secs(5)).warm_up_time(Duration::from_secs(1));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/benchrepo");
    group.bench_function("check the fixture repository", |b| {
        b.iter(|| pins::check(&fixture, &CheckOptions::default()).expect("fixture checks"))
    });
    group.bench_function(format!("check {files} files"), |b| {
        b.iter(|| pins::check(&root, &CheckOptions::default()).expect("generated repository checks"))
    });
    group.bench_function(format!("scan {files} files"), |b| {
        b.iter(|| pins::scan(&root, &Default::default()).expect("scan"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

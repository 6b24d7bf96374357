//! Parsing speed of the evidence readers (target: ≥ 300 MB/s of Prometheus text or server logs in
//! release builds). The inputs are generated here: concatenated vLLM scrapes in which, as in a real
//! `/metrics` page, most lines belong to other families (histogram buckets, gauges), and a vLLM server log
//! in which one line in ten is a "SpecDecoding metrics" line.

use std::fmt::Write as _;
use std::hint::black_box;

use alsim::evidence::{ReadOptions, read};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// About `bytes` of concatenated scrapes.
fn prometheus_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 8192);
    let labels = r#"engine="0",model_name="MiniMax-M3""#;
    let mut scrape = 0u64;
    while out.len() < bytes {
        scrape += 1;
        let d = 1000 * scrape;
        out.push_str("# HELP vllm:e2e_request_latency_seconds Histogram of e2e request latency in seconds.\n");
        out.push_str("# TYPE vllm:e2e_request_latency_seconds histogram\n");
        for le in ["0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0", "30.0", "+Inf"] {
            for family in ["e2e_request_latency_seconds", "time_to_first_token_seconds", "inter_token_latency_seconds"]
            {
                let _ = writeln!(out, "vllm:{family}_bucket{{{labels},le=\"{le}\"}} {}.0", scrape * 7);
            }
        }
        let _ = writeln!(out, "vllm:num_requests_running{{{labels}}} 16.0");
        let _ = writeln!(out, "vllm:kv_cache_usage_perc{{{labels}}} 0.41");
        let _ = writeln!(out, "process_resident_memory_bytes 1.2345678e+10");
        let _ = writeln!(out, "vllm:spec_decode_num_drafts_total{{{labels}}} {d}.0");
        let _ = writeln!(out, "vllm:spec_decode_num_draft_tokens_total{{{labels}}} {}.0", 3 * d);
        let _ = writeln!(out, "vllm:spec_decode_num_accepted_tokens_total{{{labels}}} {}.0", 1698 * scrape);
        for (i, p) in [749u64, 547, 402].iter().enumerate() {
            let _ = writeln!(
                out,
                "vllm:spec_decode_num_accepted_tokens_per_pos_total{{{labels},position=\"{i}\"}} {}.0",
                p * scrape
            );
        }
    }
    out
}

/// About `bytes` of vLLM server log.
fn log_text(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 1024);
    let mut i = 0u64;
    while out.len() < bytes {
        i += 1;
        if i.is_multiple_of(10) {
            let _ = writeln!(
                out,
                "(APIServer pid=4242) INFO 12-02 18:00:{:02} [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.70, Accepted throughput: 169.80 tokens/s, Drafted throughput: 300.00 tokens/s, Accepted: 1698 tokens, Drafted: 3000 tokens, Per-position acceptance rate: 0.749, 0.547, 0.402, Avg Draft acceptance rate: 56.6%",
                i % 60
            );
        } else {
            let _ = writeln!(
                out,
                "(APIServer pid=4242) INFO 12-02 18:00:{:02} [loggers.py:123] Engine 000: Avg prompt throughput: 1234.5 tokens/s, Avg generation throughput: 456.7 tokens/s, Running: 16 reqs, Waiting: 0 reqs, GPU KV cache usage: 41.0%, Prefix cache hit rate: 87.5%",
                i % 60
            );
        }
    }
    out
}

fn parsing(c: &mut Criterion) {
    // Large enough to measure streaming throughput, small enough for `cargo test --benches` in debug.
    let size = if cfg!(debug_assertions) { 1 << 20 } else { 32 << 20 };
    let options = ReadOptions::default();
    let mut group = c.benchmark_group("evidence");
    for (name, text) in [("prometheus", prometheus_text(size)), ("vllm-log", log_text(size))] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| read(black_box(text.as_bytes()), "bench", &options).expect("generated input parses"))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = parsing
}
criterion_main!(benches);

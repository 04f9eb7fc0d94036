//! Platform splitter throughput (SPEC §14): whole documents split at 2000 and 4000 units in
//! chars and UTF-16, bytes per second; and a linearity check (the same text repeated 1×, 4×,
//! 16× must keep its bytes per second).
//!
//! Run with `cargo bench --bench splitter`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{LengthMetric, PlatformSplitter, SplitConfig};

mod common;

/// Documents long enough to need several pieces: real Markdown, fenced code, and the
/// reference notes (box drawing, tables, multi-byte text).
const TEXTS: &[(&str, &str)] = &[
    ("node-events", include_str!("../tests/data/node-events.md")),
    ("code-heavy", include_str!("../tests/data/code-heavy.md")),
    (
        "openclaw-notes",
        include_str!("../tests/data/openclaw-streaming-notes.md"),
    ),
];

fn splitter(limit: usize, metric: LengthMetric) -> PlatformSplitter {
    PlatformSplitter::new(SplitConfig {
        limit,
        metric,
        ..SplitConfig::default()
    })
    .expect("a valid split configuration")
}

fn documents(c: &mut Criterion) {
    let mut group = c.benchmark_group("splitter/document");
    for &(name, text) in TEXTS {
        group.throughput(Throughput::Bytes(text.len() as u64));
        for metric in [LengthMetric::Chars, LengthMetric::Utf16] {
            for limit in [2000, 4000] {
                let splitter = splitter(limit, metric);
                let mut out = Vec::new();
                group.bench_with_input(
                    BenchmarkId::new(format!("{metric}-{limit}"), name),
                    text,
                    |b, text| {
                        b.iter(|| {
                            out.clear();
                            splitter.split_into(black_box(text), &mut out);
                            out.len()
                        })
                    },
                );
            }
        }
    }
    group.finish();
}

/// Cost must be linear in the input: bytes per second stay flat as the text grows 16×.
fn linearity(c: &mut Criterion) {
    let mut group = c.benchmark_group("splitter/linearity");
    let base = include_str!("../tests/data/node-events.md");
    let splitter = splitter(4000, LengthMetric::Chars);
    for times in [1, 4, 16] {
        let text = base.repeat(times);
        group.throughput(Throughput::Bytes(text.len() as u64));
        let mut out = Vec::new();
        group.bench_with_input(
            BenchmarkId::new("node-events", format!("x{times}")),
            &text,
            |b, text| {
                b.iter(|| {
                    out.clear();
                    splitter.split_into(black_box(text), &mut out);
                    out.len()
                })
            },
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_runs();
    targets = documents, linearity
}
criterion_main!(benches);

//! Block chunker throughput (SPEC §14): corpus texts fed as 4-byte, 64-byte and whole-text
//! deltas, bytes per second; the cost of one small delta (4-byte deltas, deltas per second);
//! and a linearity check (the same text repeated 1×, 4×, 16× must keep its bytes per second).
//!
//! Run with `cargo bench --bench chunker`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Block, BlockChunker, ChunkerConfig};

mod common;
use common::deltas;

/// The corpus texts the chunker is measured on: prose, fenced code, long real Markdown and
/// multi-byte text.
const TEXTS: &[(&str, &str)] = &[
    (
        "prose-paragraphs",
        include_str!("../tests/data/prose-paragraphs.md"),
    ),
    ("code-heavy", include_str!("../tests/data/code-heavy.md")),
    ("node-events", include_str!("../tests/data/node-events.md")),
    ("unicode-mix", include_str!("../tests/data/unicode-mix.md")),
];

/// One full message through a reused chunker: every delta, then the forced drain. Returns
/// the number of blocks so the work cannot be optimised away.
fn chunk_message(chunker: &mut BlockChunker, deltas: &[&str], out: &mut Vec<Block>) -> usize {
    chunker.reset();
    let mut blocks = 0;
    for delta in deltas {
        chunker.push(black_box(delta), out);
        if !out.is_empty() {
            blocks += out.len();
            out.clear();
        }
    }
    chunker.flush(out);
    blocks += out.len();
    out.clear();
    blocks
}

const DELTA_SIZES: &[(&str, usize)] = &[("4B", 4), ("64B", 64), ("whole", usize::MAX)];

fn throughput(c: &mut Criterion) {
    let mut group = c.benchmark_group("chunker/throughput");
    for &(name, text) in TEXTS {
        group.throughput(Throughput::Bytes(text.len() as u64));
        for &(label, size) in DELTA_SIZES {
            let deltas = deltas(text, size);
            let mut chunker = BlockChunker::new(ChunkerConfig::default()).expect("valid config");
            let mut out = Vec::new();
            group.bench_with_input(BenchmarkId::new(label, name), &deltas, |b, deltas| {
                b.iter(|| chunk_message(&mut chunker, deltas, &mut out))
            });
        }
    }
    group.finish();
}

/// The same runs as `throughput` with 4-byte deltas, counted in deltas: criterion's
/// time per element is the average cost of one `push`, block emission included.
fn per_delta(c: &mut Criterion) {
    let mut group = c.benchmark_group("chunker/per-delta-4B");
    for &(name, text) in TEXTS {
        let deltas = deltas(text, 4);
        group.throughput(Throughput::Elements(deltas.len() as u64));
        let mut chunker = BlockChunker::new(ChunkerConfig::default()).expect("valid config");
        let mut out = Vec::new();
        group.bench_with_input(BenchmarkId::from_parameter(name), &deltas, |b, deltas| {
            b.iter(|| chunk_message(&mut chunker, deltas, &mut out))
        });
    }
    group.finish();
}

/// Cost must be linear in the input: bytes per second stay flat as the text grows 16×.
fn linearity(c: &mut Criterion) {
    let mut group = c.benchmark_group("chunker/linearity-64B");
    let base = include_str!("../tests/data/node-events.md");
    for times in [1, 4, 16] {
        let text = base.repeat(times);
        let deltas = deltas(&text, 64);
        group.throughput(Throughput::Bytes(text.len() as u64));
        let mut chunker = BlockChunker::new(ChunkerConfig::default()).expect("valid config");
        let mut out = Vec::new();
        group.bench_with_input(
            BenchmarkId::new("node-events", format!("x{times}")),
            &deltas,
            |b, deltas| b.iter(|| chunk_message(&mut chunker, deltas, &mut out)),
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = common::short_runs();
    targets = throughput, per_delta, linearity
}
criterion_main!(benches);

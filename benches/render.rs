//! Rendering throughput per platform format (SPEC §16): each sample reply rendered whole,
//! bytes of Markdown per second. Rendering runs once per send, so this bounds what a send
//! costs on top of today's.
//!
//! Run with `cargo bench --bench render`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Format, RenderOptions, render};

const TEXTS: &[(&str, &str)] = &[
    ("prose", include_str!("../tests/data/prose-paragraphs.md")),
    (
        "lists-tables",
        include_str!("../tests/data/lists-tables.md"),
    ),
    ("code-heavy", include_str!("../tests/data/code-heavy.md")),
    ("unicode-mix", include_str!("../tests/data/unicode-mix.md")),
    (
        "formatted-reply",
        include_str!("../tests/data/formatted-reply.md"),
    ),
];

fn formats(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    let options = RenderOptions::default();
    for &(name, text) in TEXTS {
        group.throughput(Throughput::Bytes(text.len() as u64));
        for format in Format::ALL {
            group.bench_with_input(BenchmarkId::new(format.name(), name), text, |b, text| {
                b.iter(|| render(black_box(text), format, &options).text.len())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, formats);
criterion_main!(benches);

//! A rough throughput probe of the text core (not a benchmark; criterion benches belong in
//! `benches/`). Run: `cargo test --release --test perf_probe -- --ignored --nocapture`.
#![allow(clippy::disallowed_methods)] // a probe reads the clock

use replystream::{BlockChunker, ChunkerConfig, LengthMetric, PlatformSplitter, SplitConfig};

#[test]
#[ignore = "timing probe; run in release"]
fn perf_probe() {
    let mut text = String::new();
    for f in [
        "prose-paragraphs.md",
        "code-heavy.md",
        "node-events.md",
        "node-readline.md",
    ] {
        text.push_str(
            &std::fs::read_to_string(format!("{}/tests/data/{f}", env!("CARGO_MANIFEST_DIR")))
                .unwrap(),
        );
    }
    let big: String = text.repeat(20);
    let mb = big.len() as f64 / 1e6;
    for metric in [
        LengthMetric::Chars,
        LengthMetric::Utf16,
        LengthMetric::Graphemes,
    ] {
        let cfg = ChunkerConfig {
            metric,
            ..Default::default()
        };
        let t = std::time::Instant::now();
        let mut c = BlockChunker::new(cfg).expect("valid config");
        let mut out = Vec::new();
        let mut at = 0;
        while at < big.len() {
            let mut e = (at + 65536).min(big.len());
            while !big.is_char_boundary(e) {
                e += 1;
            }
            c.push(&big[at..e], &mut out);
            at = e;
        }
        c.flush(&mut out);
        let dt = t.elapsed().as_secs_f64();
        println!(
            "chunker {metric} 64K deltas: {:.0} MB/s ({} blocks)",
            mb / dt,
            out.len()
        );
        let t = std::time::Instant::now();
        let mut c = BlockChunker::new(cfg).expect("valid config");
        out.clear();
        let mut at = 0;
        let mut n = 0;
        while at < big.len() {
            let mut e = (at + 4).min(big.len());
            while !big.is_char_boundary(e) {
                e += 1;
            }
            c.push(&big[at..e], &mut out);
            at = e;
            n += 1;
            if out.len() > 1000 {
                out.clear();
            }
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "chunker {metric} 4-byte deltas: {:.1} ns/delta",
            dt * 1e9 / n as f64
        );
        let s = PlatformSplitter::new(SplitConfig {
            metric,
            ..Default::default()
        })
        .unwrap();
        let t = std::time::Instant::now();
        let pieces = s.split(&big);
        let dt = t.elapsed().as_secs_f64();
        println!(
            "splitter {metric}: {:.0} MB/s ({} pieces)",
            mb / dt,
            pieces.len()
        );
    }
}

//! A fixed workload for instruction-count profiling of the block chunker (not a benchmark).
//!
//! Feeds one corpus text (`prose`, `code`, `node` or `unicode`) through a reused chunker with
//! the default settings, `N` times (default 1), in deltas of `SIZE` bytes (default: the whole
//! text), as the `chunker` bench does. Run it under callgrind, counting only inside the
//! chunker:
//!
//! ```sh
//! cargo build --release --example chunk_profile
//! valgrind --tool=callgrind --toggle-collect='*BlockChunker*push*' \
//!     --toggle-collect='*BlockChunker*flush*' target/release/examples/chunk_profile node
//! ```

use replystream::{BlockChunker, ChunkerConfig};

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "node".into());
    let times: usize = args.next().map_or(1, |n| n.parse().expect("a count"));
    let size: usize = args
        .next()
        .map_or(usize::MAX, |n| n.parse().expect("a size"));
    let text = match which.as_str() {
        "prose" => include_str!("../tests/data/prose-paragraphs.md"),
        "code" => include_str!("../tests/data/code-heavy.md"),
        "node" => include_str!("../tests/data/node-events.md"),
        "unicode" => include_str!("../tests/data/unicode-mix.md"),
        other => panic!("text {other:?}: prose, code, node or unicode"),
    };
    let mut deltas = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = at.saturating_add(size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        deltas.push(&text[at..end]);
        at = end;
    }
    let mut config = ChunkerConfig::default();
    if let Some(max) = args.next() {
        // One block of the whole text: the scanner reads it in one go at the flush.
        config.max = max.parse().expect("a max");
        config.min = config.max;
    }
    let mut chunker = BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    let mut blocks = 0;
    for _ in 0..times {
        chunker.reset();
        for delta in &deltas {
            chunker.push(delta, &mut out);
            blocks += out.len();
            out.clear();
        }
        chunker.flush(&mut out);
        blocks += out.len();
        out.clear();
    }
    println!(
        "{} bytes x {times}, {} deltas each, {blocks} blocks",
        text.len(),
        deltas.len()
    );
}

//! Fuzzes the text core: the chunker and the splitter on arbitrary text, configs and delta
//! splits. Checks the invariants of SPEC §13 that need no oracle: limits, no empty or
//! whitespace-only block, sources and separators that rebuild the text (up to dropped
//! whitespace), split-invariance, valid UTF-8 boundaries, and no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use replystream::{
    Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric, PlatformSplitter,
    SplitConfig, SplitMode,
};

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn check(text: &str, blocks: &[Block], metric: LengthMetric, max: usize) {
    let mut pos = 0;
    for b in blocks {
        assert!(metric.len(&b.text) <= max, "{:?} over {max}", b.text);
        assert!(!b.text.trim_matches(is_space).is_empty(), "empty block");
        assert_eq!(b.source.start, pos + b.lead.len(), "lost text");
        assert!(b.text.contains(&text[b.source.clone()]));
        assert!(text[b.source.end..].starts_with(&b.sep));
        pos = b.source.end + b.sep.len();
    }
    assert!(text[pos.min(text.len())..].chars().all(is_space), "lost the end");
}

fn chunk(config: ChunkerConfig, text: &str, sizes: &[u8]) -> Vec<Block> {
    let mut c = BlockChunker::new(config).expect("checked by the caller");
    let mut out = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < text.len() {
        let step = sizes.get(k % sizes.len().max(1)).map_or(usize::MAX, |&s| usize::from(s) + 1);
        let mut end = at.saturating_add(step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        c.push(&text[at..end], &mut out);
        at = end;
        k += 1;
    }
    c.flush(&mut out);
    out
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let (head, rest) = data.split_at(8);
    let metric = LengthMetric::ALL[usize::from(head[0] % 4)];
    let min = usize::from(head[1]);
    let max = min + usize::from(head[2]);
    let pref = [BreakPreference::Paragraph, BreakPreference::Newline, BreakPreference::Sentence]
        [usize::from(head[3] % 3)];
    let n_sizes = usize::from(head[4] % 8).min(rest.len());
    let (sizes, text) = rest.split_at(n_sizes);
    let text = String::from_utf8_lossy(text);

    let config = ChunkerConfig {
        min,
        max,
        break_preference: pref,
        flush_on_paragraph: head[5] & 1 == 1,
        metric,
    };
    let Ok(chunker) = BlockChunker::new(config) else {
        return;
    };
    let effective = *chunker.config();
    let whole = chunk(config, &text, &[]);
    check(&text, &whole, metric, effective.max);
    assert_eq!(whole, chunk(config, &text, &[0]), "1-char deltas");
    if !sizes.is_empty() {
        assert_eq!(whole, chunk(config, &text, sizes), "random deltas");
    }

    let split = SplitConfig {
        limit: usize::from(head[6]),
        metric,
        mode: if head[5] & 2 == 2 { SplitMode::Newline } else { SplitMode::Length },
        max_lines: (head[7] > 0).then_some(usize::from(head[7] % 20) + 1),
    };
    if let Ok(splitter) = PlatformSplitter::new(split) {
        let pieces = splitter.split(&text);
        check(&text, &pieces, metric, split.limit);
    }
});

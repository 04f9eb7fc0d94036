//! Independent checks of the text-core invariants (SPEC §13), shared by the chunker and
//! splitter property tests. Written against the public API only.
#![allow(dead_code)]

use replystream::{Block, FenceMarker, LengthMetric};
use unicode_segmentation::{GraphemeCursor, UnicodeSegmentation};

/// The sample replies in `tests/data`.
pub(crate) fn corpus() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Whether the fences in `text` are balanced, read on their own (CommonMark openers and
/// closers, via `FenceMarker`).
pub(crate) fn fences_balanced(text: &str) -> bool {
    fence_walk(text).0
}

/// (balanced, has a line that is neither a fence line nor blank).
fn fence_walk(text: &str) -> (bool, bool) {
    let mut open: Option<FenceMarker> = None;
    let mut content = false;
    for line in text.split('\n') {
        match open {
            Some(m) if m.is_closed_by(line) => open = None,
            Some(_) => content |= !line.trim_matches(is_space).is_empty(),
            None => match FenceMarker::parse_open(line) {
                Some(m) => open = Some(m),
                None => content |= !line.trim_matches(is_space).is_empty(),
            },
        }
    }
    (open.is_none(), content)
}

/// The cluster a cut at `pos` would split: (its start, its units), or None at a boundary.
fn split_cluster(text: &str, pos: usize, metric: LengthMetric) -> Option<(usize, usize)> {
    if pos == 0 || pos >= text.len() {
        return None;
    }
    let mut cursor = GraphemeCursor::new(pos, text.len(), true);
    if cursor.is_boundary(text, 0).unwrap_or(true) {
        return None;
    }
    let start = cursor.prev_boundary(text, 0).ok().flatten().unwrap_or(0);
    let mut cursor = GraphemeCursor::new(pos, text.len(), true);
    let end = cursor
        .next_boundary(text, 0)
        .ok()
        .flatten()
        .unwrap_or(text.len());
    Some((start, metric.len(&text[start..end])))
}

/// What a test run checks beyond the basics.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expect {
    pub metric: LengthMetric,
    pub max: usize,
    /// Every fence can be closed and reopened within `max`: check balance.
    pub balanced: bool,
    /// No whitespace may be dropped between blocks (only at the start and the end).
    pub strict_gaps: bool,
}

/// Checks invariants 1-4 for the blocks of one message `text`.
pub(crate) fn check_blocks(text: &str, blocks: &[Block], e: Expect) -> Result<(), String> {
    let mut pos = 0usize;
    for (k, b) in blocks.iter().enumerate() {
        let ctx = || format!("block {k} {:?} of {} blocks", b.text, blocks.len());
        // (1) length
        let len = e.metric.len(&b.text);
        if len > e.max {
            return Err(format!("{}: {len} > max {}", ctx(), e.max));
        }
        // (2) not empty, not whitespace only
        if b.text.trim_matches(is_space).is_empty() {
            return Err(format!("{}: empty or whitespace only", ctx()));
        }
        // (4) source, synthetic lines, separator
        if b.source.start < pos || b.source.end < b.source.start || b.source.end > text.len() {
            return Err(format!(
                "{}: source {:?} out of order (pos {pos})",
                ctx(),
                b.source
            ));
        }
        let gap = &text[pos..b.source.start];
        if !gap.chars().all(is_space) {
            return Err(format!("{}: lost text {gap:?}", ctx()));
        }
        if e.strict_gaps && k > 0 && !gap.is_empty() {
            return Err(format!("{}: dropped whitespace {gap:?}", ctx()));
        }
        let source = &text[b.source.clone()];
        let mut shown = b.text.as_str();
        if b.fence_reopened {
            let nl = shown
                .find('\n')
                .ok_or_else(|| format!("{}: no reopen line", ctx()))?;
            if FenceMarker::parse_open(&shown[..nl]).is_none() {
                return Err(format!("{}: bad reopen line", ctx()));
            }
            shown = &shown[nl + 1..];
        }
        if b.fence_closed {
            let nl = shown
                .rfind('\n')
                .ok_or_else(|| format!("{}: no close line", ctx()))?;
            shown = &shown[..nl];
        }
        if shown != source {
            return Err(format!("{}: shows {shown:?}, source {source:?}", ctx()));
        }
        if !text[b.source.end..].starts_with(b.sep.as_str()) {
            return Err(format!("{}: sep {:?} is not the source's", ctx(), b.sep));
        }
        if !b.sep.chars().all(is_space) {
            return Err(format!("{}: sep {:?} is not whitespace", ctx(), b.sep));
        }
        // (3) grapheme boundaries, unless one cluster alone is wider than the room
        let budget = e.max - (len - e.metric.len(source));
        // A block that starts inside a cluster (the previous cut had to split it) counts its
        // clusters from its own start: its end is not checked against the text's clusters.
        let ends = if split_cluster(text, b.source.start, e.metric).is_some() {
            vec![b.source.start]
        } else {
            vec![b.source.start, b.source.end]
        };
        for p in ends {
            if let Some((g, w)) = split_cluster(text, p, e.metric) {
                // Allowed only when the cluster could not fit: wider than the room, or with
                // nothing but whitespace before it in the block.
                let alone = text[b.source.start.min(g)..g].split('\n').all(|l| {
                    let body = l.trim_matches(is_space);
                    body.is_empty() || body.starts_with("```") || body.starts_with("~~~")
                });
                // In a fence, the cluster would need a block with both fence lines around it.
                let fenced =
                    b.fence_closed && w + 2 * (widest_fence_line(text, e.metric) + 1) > e.max;
                if w <= budget && !alone && !fenced && p == b.source.end {
                    return Err(format!("{}: cut at {p} splits a {w}-unit grapheme", ctx()));
                }
            }
        }
        // (2) fences
        if e.balanced {
            if !fences_balanced(&b.text) {
                return Err(format!("{}: unbalanced fences", ctx()));
            }
            let (_, content) = fence_walk(&b.text);
            let source_has_content = fence_walk(source).1;
            if !content
                && (b.fence_reopened || b.fence_closed)
                && !(source_has_content || k + 1 == blocks.len())
            {
                return Err(format!("{}: only fence lines", ctx()));
            }
        }
        pos = b.source.end + b.sep.len();
    }
    let rest = &text[pos.min(text.len())..];
    if !rest.chars().all(is_space) {
        return Err(format!("lost the end {rest:?}"));
    }
    Ok(())
}

/// Whether `max` leaves room to close and reopen every fence of `text` around one char: the
/// widest fence-like line twice (an opening line, and a closing line that may be longer
/// than the synthetic one), the whitespace after an opening line, one char, two newlines.
pub(crate) fn fences_repairable(text: &str, metric: LengthMetric, max: usize) -> bool {
    let room = match metric {
        LengthMetric::Bytes => 4,
        LengthMetric::Utf16 => 2,
        _ => 1,
    };
    let mut widest = 0;
    let mut ws_after = 0;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        // Known gap: a hard cut right before a run of 3+ backticks or tildes inside a line
        // starts the next block with that run, which then reads as a fence line.
        let body = bare.trim_start_matches(' ');
        let inner = body.char_indices().nth(1).map_or("", |(i, _)| &body[i..]);
        if inner.contains("```") || inner.contains("~~~") {
            return false;
        }
        if body.starts_with("```") || body.starts_with("~~~") {
            widest = widest.max(metric.len(bare));
        }
    }
    // Whitespace around fence lines must fit too (a block never shows only whitespace).
    for run in text.split(|c: char| !is_space(c)) {
        ws_after = ws_after.max(metric.len(run));
    }
    let cluster = text
        .graphemes(true)
        .map(|g| metric.len(g))
        .max()
        .unwrap_or(0);
    widest == 0 || 2 * widest + ws_after + room.max(cluster) + 2 <= max
}

/// Proptest case count: `default`, or `PROPTEST_CASES` for longer local runs.
pub(crate) fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The widest line that starts (after up to 3 spaces) with a fence marker run.
fn widest_fence_line(text: &str, metric: LengthMetric) -> usize {
    text.split('\n')
        .filter(|l| {
            let body = l.trim_start_matches(' ');
            body.starts_with("```") || body.starts_with("~~~")
        })
        .map(|l| metric.len(l))
        .max()
        .unwrap_or(0)
}

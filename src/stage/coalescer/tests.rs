//! Unit tests of the coalescer: timers, limits, joiners and split fences.

use std::ops::Range;

use crate::text::block::Block;
use crate::text::chunker::BreakPreference;
use crate::{Format, Lane, LengthMetric, ReplyTarget, Time};

use super::piece::*;
use super::*;

#[test]
fn a_quoted_reopen_followed_by_its_own_closer_is_seen() {
    // The reopening line and the fence's closing line carry the quote prefix (CRLF).
    let text = "   > ````\n   > ````\r\n\r\nafter";
    assert_eq!(reopened_then_closed(text, 10), 10 + "   > ````\r".len());
    assert_eq!(reopened_then_closed("```\n```\nafter", 4), 7);
    // Code after the reopening line: no closer.
    assert_eq!(reopened_then_closed("   > ````\n   > code\n", 10), 0);
    // The rest of a code line after the prefix again: no line of its own.
    assert_eq!(reopened_then_closed("> ```\n> ```", 8), 0);
}

fn cfg(min: usize, max: usize, pref: BreakPreference) -> CoalescerConfig {
    CoalescerConfig {
        min,
        max,
        idle_ms: 1000,
        break_preference: pref,
        flush_on_enqueue: false,
        metric: LengthMetric::Chars,
        max_lines: None,
        ..CoalescerConfig::default()
    }
}

fn meta(message: usize) -> BlockMeta {
    BlockMeta {
        message,
        ..BlockMeta::default()
    }
}

fn t(ms: u64) -> Time {
    Time::from_millis(ms)
}

fn texts(out: &[CoalescedText]) -> Vec<&str> {
    out.iter().map(|c| c.text.as_str()).collect()
}

/// The block showing `src[range]` (plain, no synthetic lines), with its separator up to
/// `next` (the next block's start).
fn block(src: &str, range: Range<usize>, next: usize) -> Block {
    Block {
        text: src[range.clone()].to_owned(),
        sep: src[range.end..next].to_owned(),
        source: range,
        fence_reopened: false,
        fence_closed: false,
        ..Block::default()
    }
}

/// Feeds blocks of `src` between consecutive `cuts` (byte offsets; each block runs to
/// the last non-whitespace byte before the next cut, the rest is its separator).
fn feed(c: &mut Coalescer, src: &str, cuts: &[usize], out: &mut Vec<CoalescedText>) {
    for w in cuts.windows(2) {
        let end = w[0] + src[w[0]..w[1]].trim_end().len();
        c.push_block(block(src, w[0]..end, w[1]), &meta(0), Some(src), t(0), out);
    }
}

/// A block known only by its text (no source to read separators from), starting a new
/// text each time: the configured joiner joins it.
fn loose(
    c: &mut Coalescer,
    text: &str,
    at: usize,
    m: &BlockMeta,
    now: Time,
    out: &mut Vec<CoalescedText>,
) {
    c.end_of_text();
    let b = Block {
        text: text.to_owned(),
        sep: String::new(),
        source: at..at + text.len(),
        fence_reopened: false,
        fence_closed: false,
        ..Block::default()
    };
    c.push_block(b, m, None, now, out);
}

/// A merge the coalescer had to render to measure hands that render on with the text
/// (the send posts it, not a second render); one it could prove without rendering (it
/// cannot grow, or its scanned bound is within the limit), or a text changed after it
/// was measured, hands none on.
#[test]
fn a_merged_text_carries_the_render_that_measured_it() {
    // 35 chars posted as 35: within 36, but a list's bound is not.
    let config = CoalescerConfig {
        format: Format::TelegramHtml,
        ..cfg(1, 36, BreakPreference::Paragraph)
    };
    let options = config.render;
    let mut c = Coalescer::new(config);
    let mut out = Vec::new();
    let src = "1. one & two\n\n2. three <four>\n\nfive\n\n";
    feed(&mut c, src, &[0, 14, 31, src.len()], &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["1. one & two\n\n2. three <four>\n\nfive"]);
    let measured = out[0]
        .measured
        .clone()
        .expect("a list is measured rendered");
    assert!(measured.renders(&out[0].text, Format::TelegramHtml, &options));
    assert_eq!(
        measured.into_rendered(),
        crate::render::render(&out[0].text, Format::TelegramHtml, &options)
    );

    // Far within the limit the list's bound proves it fits: no render, none handed on.
    let roomy = CoalescerConfig {
        format: Format::TelegramHtml,
        ..cfg(1, 400, BreakPreference::Paragraph)
    };
    let mut c = Coalescer::new(roomy);
    let mut out = Vec::new();
    feed(&mut c, src, &[0, 14, 31, src.len()], &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["1. one & two\n\n2. three <four>\n\nfive"]);
    assert_eq!(out[0].measured, None);

    // Plain paragraphs cannot grow: merged without a render, none handed on.
    let mut c = Coalescer::new(config);
    let mut out = Vec::new();
    let src = "one & two\n\nthree\n\n";
    feed(&mut c, src, &[0, 11, src.len()], &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["one & two\n\nthree"]);
    assert_eq!(out[0].measured, None);
}

#[test]
fn joiners() {
    assert_eq!(cfg(1, 9, BreakPreference::Paragraph).joiner(), "\n\n");
    assert_eq!(cfg(1, 9, BreakPreference::Newline).joiner(), "\n");
    assert_eq!(cfg(1, 9, BreakPreference::Sentence).joiner(), " ");
}

#[test]
fn sentence_blocks_merge_after_idle() {
    let src = "Hello world";
    let mut c = Coalescer::new(cfg(5, 100, BreakPreference::Sentence));
    let mut out = Vec::new();
    c.push_block(block(src, 0..5, 6), &meta(0), Some(src), t(0), &mut out);
    assert_eq!(c.deadline(), Some(t(1000)));
    c.push_block(block(src, 6..11, 11), &meta(0), Some(src), t(300), &mut out);
    assert!(out.is_empty());
    assert_eq!(c.deadline(), Some(t(1300)), "re-armed on enqueue");
    c.on_timer(t(1299), &mut out);
    assert!(out.is_empty(), "early timer is a no-op");
    c.on_timer(t(1300), &mut out);
    assert_eq!(texts(&out), ["Hello world"]);
    assert_eq!(out[0].sources.len(), 1, "the separator counts as shown");
    assert_eq!(out[0].covered(), 0..11);
    assert_eq!(c.deadline(), None);
    assert!(c.is_empty());
    c.on_timer(t(5000), &mut out);
    assert_eq!(out.len(), 1, "repeated timer is a no-op");
}

#[test]
fn below_min_the_timer_is_rearmed() {
    let mut c = Coalescer::new(cfg(50, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    loose(&mut c, "short", 0, &meta(0), t(10), &mut out);
    c.on_timer(t(1010), &mut out);
    assert!(out.is_empty());
    assert_eq!(c.deadline(), Some(t(2010)));
    c.on_timer(t(2500), &mut out);
    assert_eq!(c.deadline(), Some(t(3500)));
    c.flush(&mut out);
    assert_eq!(texts(&out), ["short"]);
    assert_eq!(c.deadline(), None);
}

#[test]
fn idle_zero_never_arms() {
    let mut c = Coalescer::new(CoalescerConfig {
        idle_ms: 0,
        ..cfg(1, 100, BreakPreference::Paragraph)
    });
    let mut out = Vec::new();
    loose(&mut c, "a", 0, &meta(0), t(0), &mut out);
    assert_eq!(c.deadline(), None);
    c.on_timer(t(1_000_000), &mut out);
    assert!(out.is_empty());
    c.flush(&mut out);
    assert_eq!(texts(&out), ["a"]);
}

#[test]
fn conflicts_flush() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    loose(&mut c, "a", 0, &meta(0), t(0), &mut out);
    let replying = BlockMeta {
        reply_to: Some(ReplyTarget::Id("42".into())),
        ..meta(0)
    };
    loose(&mut c, "b", 2, &replying, t(0), &mut out);
    assert_eq!(texts(&out), ["a"]);
    let voice = BlockMeta {
        audio_as_voice: true,
        ..replying.clone()
    };
    loose(&mut c, "c", 4, &voice, t(0), &mut out);
    let reasoning = BlockMeta {
        lane: Lane::Reasoning,
        ..voice.clone()
    };
    loose(&mut c, "d", 6, &reasoning, t(0), &mut out);
    loose(&mut c, "e", 8, &reasoning, t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["a", "b", "c", "d\n\ne"]);
    assert_eq!(out[1].meta, replying);
    assert_eq!(out[3].meta.lane, Lane::Reasoning);
    assert_eq!(
        out[3].sources.as_slice(),
        [6..7, 8..9],
        "a joiner starts a new range"
    );
}

#[test]
fn never_across_messages() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
    let mut out = Vec::new();
    let src = "one.";
    c.push_block(block(src, 0..4, 4), &meta(0), Some(src), t(0), &mut out);
    // The same offsets in the next message: never a continuation.
    c.push_block(
        block("two.", 0..4, 4),
        &meta(1),
        Some("two."),
        t(0),
        &mut out,
    );
    c.flush(&mut out);
    assert_eq!(texts(&out), ["one.", "two."]);
    assert_eq!((out[0].meta.message, out[1].meta.message), (0, 1));
}

#[test]
fn over_max_goes_alone_unsplit() {
    let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
    let mut out = Vec::new();
    loose(&mut c, "abc", 0, &meta(0), t(0), &mut out);
    loose(&mut c, "0123456789abc", 4, &meta(0), t(0), &mut out);
    assert_eq!(texts(&out), ["abc", "0123456789abc"]);
    assert!(c.is_empty());
    // Exactly max also goes alone.
    loose(&mut c, "0123456789", 18, &meta(0), t(0), &mut out);
    assert_eq!(out.len(), 3);
    assert!(c.is_empty());
}

#[test]
fn exceeding_max_flushes_then_starts_anew() {
    let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
    let mut out = Vec::new();
    let src = "abcd efgh ij";
    feed(&mut c, src, &[0, 5, 10], &mut out);
    assert!(out.is_empty(), "9 units fit");
    c.push_block(block(src, 10..12, 12), &meta(0), Some(src), t(0), &mut out);
    assert_eq!(texts(&out), ["abcd efgh"]);
    assert_eq!(c.buffered().map(|b| b.text.as_str()), Some("ij"));
    assert_eq!(c.deadline(), Some(t(1000)));
}

#[test]
fn reaching_max_flushes() {
    let mut c = Coalescer::new(cfg(1, 9, BreakPreference::Sentence));
    let mut out = Vec::new();
    feed(&mut c, "abcd efgh", &[0, 5, 9], &mut out);
    assert_eq!(texts(&out), ["abcd efgh"]);
    assert_eq!(c.deadline(), None);
}

#[test]
fn paragraph_mode_passes_through() {
    let mut c = Coalescer::new(CoalescerConfig {
        flush_on_enqueue: true,
        ..cfg(500, 1000, BreakPreference::Paragraph)
    });
    let mut out = Vec::new();
    feed(&mut c, "p1\n\np2", &[0, 4, 6], &mut out);
    assert_eq!(texts(&out), ["p1", "p2"]);
    assert_eq!(c.deadline(), None);
    assert!(c.is_empty());
}

#[test]
fn joiner_never_doubles_whitespace() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    loose(&mut c, "a\n\n", 0, &meta(0), t(0), &mut out);
    loose(&mut c, "\n\nb  ", 3, &meta(0), t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["a\n\nb"]);

    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
    loose(&mut c, "One. ", 0, &meta(0), t(0), &mut out);
    loose(&mut c, "  Two.", 5, &meta(0), t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(out[1].text, "One. Two.");
    assert_eq!(c.buffered_len(), 0);
}

#[test]
fn indentation_after_a_line_joiner_is_kept() {
    // "Intro:" ends one text block; the next starts with an indented code line. With the
    // sentence joiner the block lands mid-line: its indentation goes.
    let src = "Intro:\n\n    code()";
    let mut out = Vec::new();
    for pref in [BreakPreference::Paragraph, BreakPreference::Sentence] {
        let mut c = Coalescer::new(cfg(1, 100, pref));
        feed(&mut c, src, &[0, 6], &mut out);
        c.end_of_text();
        feed(&mut c, src, &[6, src.len()], &mut out);
        c.flush(&mut out);
    }
    assert_eq!(texts(&out), ["Intro:\n\n    code()", "Intro: code()"]);
}

#[test]
fn whitespace_blocks_are_ignored() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    loose(&mut c, " \n ", 0, &meta(0), t(0), &mut out);
    loose(&mut c, "", 3, &meta(0), t(0), &mut out);
    assert!(c.is_empty());
    assert_eq!(c.deadline(), None);
    c.flush(&mut out);
    assert!(out.is_empty());
}

#[test]
fn lengths_in_the_metric() {
    // "é" is 2 bytes and 1 UTF-16 unit; "🦀" is 4 bytes and 2 units.
    let mut c = Coalescer::new(CoalescerConfig {
        metric: LengthMetric::Utf16,
        ..cfg(1, 9, BreakPreference::Sentence)
    });
    let mut out = Vec::new();
    let src = "ééé 🦀🦀 é";
    feed(&mut c, src, &[0, 7, 16], &mut out);
    assert!(out.is_empty());
    assert_eq!(c.buffered_len(), 8);
    c.push_block(block(src, 16..18, 18), &meta(0), Some(src), t(0), &mut out);
    assert_eq!(texts(&out), ["ééé 🦀🦀"]);
}

#[test]
fn line_cap_stops_merging() {
    let mut c = Coalescer::new(CoalescerConfig {
        max_lines: Some(5),
        ..cfg(1, 1000, BreakPreference::Paragraph)
    });
    let mut out = Vec::new();
    let src = "l1\nl2\n\nl3\nl4\na\nb\nc\nd\ne\nf\ng";
    feed(&mut c, src, &[0, 7, 10], &mut out);
    assert!(out.is_empty(), "2 + blank + 1 = 4 lines");
    feed(&mut c, src, &[10, 13], &mut out);
    assert!(out.is_empty(), "joined by its line break: 5 lines");
    feed(&mut c, src, &[13, 25], &mut out);
    assert_eq!(texts(&out), ["l1\nl2\n\nl3\nl4"]);
    // A block over the cap alone stays whole; nothing joins it.
    feed(&mut c, src, &[25, src.len()], &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["l1\nl2\n\nl3\nl4", "a\nb\nc\nd\ne\nf", "g"]);
}

#[test]
fn take_hands_over_the_buffer() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    loose(&mut c, "caption  ", 0, &meta(0), t(0), &mut out);
    let taken = c.take().map(|b| b.text);
    assert_eq!(taken.as_deref(), Some("caption"), "no trailing separator");
    assert_eq!(c.deadline(), None);
    assert!(c.take().is_none());
}

#[test]
fn config_is_clamped() {
    let c = Coalescer::new(CoalescerConfig {
        min: 0,
        max: 0,
        ..CoalescerConfig::default()
    });
    assert_eq!((c.config().min, c.config().max), (1, 1));
    let c = Coalescer::new(CoalescerConfig {
        min: 50,
        max: 10,
        ..CoalescerConfig::default()
    });
    assert_eq!((c.config().min, c.config().max), (10, 10));
}

#[test]
fn contiguous_blocks_join_with_their_source_separator() {
    // Paragraph preference: the joiner would be a blank line, but these blocks were cut
    // at a sentence end, a hard cut, a line break and a CJK full stop.
    let src = "One two. Threefour.\n- tight\n句子。消息";
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    feed(&mut c, src, &[0, 9, 14, 20, 28, 37, src.len()], &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), [src]);
    assert_eq!(out[0].sources.len(), 1);
    assert_eq!(out[0].covered(), 0..src.len());
}

#[test]
fn separators_come_from_the_blocks_without_a_source_text() {
    let src = "One two. Three\nfour";
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    for (range, next) in [(0..8, 9), (9..14, 15), (15..19, 19)] {
        c.push_block(block(src, range, next), &meta(0), None, t(0), &mut out);
    }
    // A gap the separators do not account for: the joiner.
    let late = Block {
        text: "Later.".into(),
        source: 40..46,
        ..Block::default()
    };
    c.push_block(late, &meta(0), None, t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["One two. Three\nfour\n\nLater."]);
}

/// A fence cut in two at a line break, as the chunker cuts it: the first half ends with
/// a synthetic close, the second reopens.
const SPLIT_FENCE: &str = "```py\na = 1\nb = 2\n```";

fn split_fence_halves() -> [Block; 2] {
    let src = SPLIT_FENCE;
    [
        Block {
            text: "```py\na = 1\n```".into(),
            sep: "\n".into(),
            source: 0..11,
            fence_reopened: false,
            fence_closed: true,
            tail_len: 4,
            ..Block::default()
        },
        Block {
            text: "```py\nb = 2\n```".into(),
            sep: String::new(),
            source: 12..src.len(),
            fence_reopened: true,
            fence_closed: false,
            head_len: 6,
            ..Block::default()
        },
    ]
}

#[test]
fn a_fence_cut_in_two_is_one_code_block_in_one_message() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    for b in split_fence_halves() {
        c.push_block(b, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
    }
    c.flush(&mut out);
    assert_eq!(texts(&out), [SPLIT_FENCE]);

    // A hard cut inside one long code line: no separator at all.
    let src = "```\nxxxxyyyy\n```";
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
    let parts = [
        ("```\nxxxx\n```", 0..8, true, false),
        ("```\nyyyy\n```", 8..src.len(), false, true),
    ];
    for (text, source, closed, reopened) in parts {
        let b = Block {
            text: text.into(),
            sep: String::new(),
            source,
            fence_reopened: reopened,
            fence_closed: closed,
            head_len: if reopened { 4 } else { 0 },
            tail_len: if closed { 4 } else { 0 },
            ..Block::default()
        };
        c.push_block(b, &meta(0), Some(src), t(0), &mut out);
    }
    c.flush(&mut out);
    assert_eq!(texts(&out)[1], src);
}

#[test]
fn a_split_fence_keeps_its_edges_when_the_buffer_flushes_between() {
    let mut c = Coalescer::new(cfg(1, 12, BreakPreference::Paragraph));
    let mut out = Vec::new();
    for b in split_fence_halves() {
        c.push_block(b, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
    }
    c.flush(&mut out);
    assert_eq!(texts(&out), ["```py\na = 1\n```", "```py\nb = 2\n```"]);
}

#[test]
fn a_fence_spanning_a_text_boundary_is_joined_by_the_source() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
    let mut out = Vec::new();
    let [first, second] = split_fence_halves();
    c.push_block(first, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
    c.end_of_text();
    c.push_block(second, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), [SPLIT_FENCE], "no joiner inside code");
}

#[test]
fn the_sentence_joiner_never_shares_a_line_with_a_fence() {
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
    let mut out = Vec::new();
    loose(&mut c, "Intro.", 0, &meta(0), t(0), &mut out);
    loose(&mut c, "```python\nx = 1\n```", 6, &meta(0), t(0), &mut out);
    loose(&mut c, "After.", 25, &meta(0), t(0), &mut out);
    c.flush(&mut out);
    assert_eq!(texts(&out), ["Intro.\n```python\nx = 1\n```\nAfter."]);
}

#[test]
fn no_send_starts_with_a_separator() {
    // After media or a tool (a new text), " B" starts mid-line: the space was the
    // separator around what was removed.
    let src = "A B\n\n    code";
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    c.push_block(block(src, 0..1, 1), &meta(0), Some(src), t(0), &mut out);
    c.flush(&mut out);
    c.end_of_text();
    c.push_block(block(src, 1..3, 5), &meta(0), Some(src), t(0), &mut out);
    c.flush(&mut out);
    // A code line's indentation is not a separator.
    c.push_block(
        block(src, 5..src.len(), src.len()),
        &meta(0),
        Some(src),
        t(0),
        &mut out,
    );
    c.flush(&mut out);
    assert_eq!(texts(&out), ["A", "B", "    code"]);
    assert_eq!(out[1].sources.len(), 1);
    assert_eq!(out[1].covered(), 1..3, "the separator counts as shown");
}

#[test]
fn a_lazy_continuation_line_loses_its_indentation_at_a_send_start() {
    // Indented by 4 right after a paragraph line: the paragraph goes on (CommonMark),
    // so at the start of a send the spaces would turn it into a code block.
    let src = "A paragraph\n     goes on";
    let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
    let mut out = Vec::new();
    c.push_block(block(src, 0..11, 12), &meta(0), Some(src), t(0), &mut out);
    c.flush(&mut out);
    c.push_block(
        block(src, 12..src.len(), src.len()),
        &meta(0),
        Some(src),
        t(0),
        &mut out,
    );
    c.flush(&mut out);
    assert_eq!(texts(&out), ["A paragraph", "goes on"]);
}

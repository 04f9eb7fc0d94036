//! Reviewed output of the text core, pinned as readable snapshots (`tests/snapshots/`): the
//! blocks of the chunker and the pieces of the platform splitter for a few representative
//! inputs, in every metric, at the smallest accepted limits and at ordinary ones. Each
//! block is shown as its display text with its lead, separator, length and synthetic
//! lines, so a change of output shows up as a diff a reviewer can read.
//!
//! After an intended change, review the new output with `cargo insta review`, or write it
//! with `INSTA_UPDATE=always cargo test --test text_golden` and read the diff in git.

mod text_checks;

use replystream::{
    Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric, PlatformSplitter,
    SplitConfig, SplitMode,
};
use text_checks::{Expect, KISS, check_blocks};

/// Markdown that exercises every rule: paragraphs, a list with a stray backtick, a fence with
/// a long info string, a tilde fence with CRLF line ends, indented code, inline code,
/// combining marks after a space, a ZWJ family, flags, CJK sentences, and an empty unclosed
/// fence at the end.
fn sample() -> String {
    [
        "Intro paragraph with `inline code` and a sentence. Then another one!\n\n",
        "- a stray `backtick here.\n- item `one` and `two`\n- item three\n\n",
        "```javascript title=\"an info string that is rather long\"\n",
        "const answer = 42;\nconsole.log(answer);\n```\n\n",
        "~~~~py\r\nprint('crlf')\r\n~~~~\r\n\r\n",
        "Indented code follows:\n\n    let x = 1;\n\n    let y = 2;\n\n",
        "Marks: cafe\u{301} and a space with a mark: x \u{301}y. ",
        "Family 👨\u{200d}👩\u{200d}👧\u{200d}👦, flags 🇫🇷🇩🇪, kiss ",
        KISS,
        ".\n\n今日は晴れ。明日は雨！\n\n~~~~\n",
    ]
    .concat()
}

/// A long single line of code inside a fence: hard cuts inside a fence, reopened each time.
fn long_code_line() -> String {
    format!("```rust\nlet data = \"{}\";\n```", "x".repeat(120))
}

/// The blocks as a reviewer reads them.
fn render(blocks: &[Block], metric: LengthMetric) -> String {
    let mut out = String::new();
    for (k, b) in blocks.iter().enumerate() {
        let mut flags = Vec::new();
        if b.fence_reopened {
            flags.push("fence reopened");
        }
        if b.indent_reopened {
            flags.push("indent reopened");
        }
        if b.fence_closed {
            flags.push("fence closed");
        }
        out.push_str(&format!(
            "--- {k}: {} units, lead {:?}, sep {:?}{}{}\n{}\n",
            metric.len(&b.text),
            b.lead,
            b.sep,
            if flags.is_empty() { "" } else { ", " },
            flags.join(", "),
            b.text
        ));
    }
    out
}

fn chunk(text: &str, config: ChunkerConfig) -> String {
    let mut c = BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    // A few characters at a time, as a model streams.
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + 5).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        c.push(&text[at..end], &mut out);
        at = end;
    }
    c.flush(&mut out);
    let expect = Expect::for_text(text, config.metric, config.max, None);
    // Every snapshot also holds every invariant.
    check_blocks(text, &out, expect).expect("invariants");
    render(&out, config.metric)
}

fn split(text: &str, config: SplitConfig) -> String {
    let pieces = PlatformSplitter::new(config)
        .expect("valid config")
        .split(text);
    let expect = Expect::for_text(text, config.metric, config.limit, config.max_lines);
    check_blocks(text, &pieces, expect).expect("invariants");
    render(&pieces, config.metric)
}

#[test]
fn chunker_at_the_smallest_limits() {
    for metric in LengthMetric::ALL {
        let max = metric.min_limit();
        let config = ChunkerConfig {
            min: max / 2,
            max,
            metric,
            ..ChunkerConfig::default()
        };
        insta::assert_snapshot!(
            format!("chunker_smallest_{}", metric.name()),
            chunk(&sample(), config)
        );
    }
}

#[test]
fn chunker_at_ordinary_limits() {
    for (name, pref, flush_on_paragraph) in [
        ("paragraph", BreakPreference::Paragraph, false),
        ("newline", BreakPreference::Newline, true),
        ("sentence", BreakPreference::Sentence, false),
    ] {
        let config = ChunkerConfig {
            min: 120,
            max: 200,
            break_preference: pref,
            flush_on_paragraph,
            metric: LengthMetric::Chars,
        };
        insta::assert_snapshot!(format!("chunker_200_{name}"), chunk(&sample(), config));
    }
}

#[test]
fn chunker_cuts_a_long_code_line() {
    for metric in [LengthMetric::Utf16, LengthMetric::Bytes] {
        let config = ChunkerConfig {
            min: 30,
            max: 60,
            metric,
            ..ChunkerConfig::default()
        };
        insta::assert_snapshot!(
            format!("chunker_long_code_line_{}", metric.name()),
            chunk(&long_code_line(), config)
        );
    }
}

#[test]
fn splitter_at_the_smallest_limits() {
    for metric in LengthMetric::ALL {
        let config = SplitConfig {
            limit: metric.min_limit(),
            metric,
            mode: SplitMode::Length,
            max_lines: None,
            ..SplitConfig::default()
        };
        insta::assert_snapshot!(
            format!("splitter_smallest_{}", metric.name()),
            split(&sample(), config)
        );
    }
}

#[test]
fn splitter_with_a_line_cap_and_in_newline_mode() {
    let capped = SplitConfig {
        limit: 2000,
        metric: LengthMetric::Chars,
        mode: SplitMode::Length,
        max_lines: Some(4),
        ..SplitConfig::default()
    };
    insta::assert_snapshot!("splitter_4_lines", split(&sample(), capped));
    let newline = SplitConfig {
        limit: 4000,
        metric: LengthMetric::Utf16,
        mode: SplitMode::Newline,
        max_lines: None,
        ..SplitConfig::default()
    };
    insta::assert_snapshot!("splitter_newline_mode", split(&sample(), newline));
}

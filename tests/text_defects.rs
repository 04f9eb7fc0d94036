//! One test per defect of issue 7 (items 3 to 7) in the text core, through the public API:
//! `BlockChunker`, `PlatformSplitter` and `Config`. Each reproduces the report's example and
//! checks what a chat user would see, with the test's own fence reader.

mod text_checks;

use replystream::{
    Block, BlockChunker, ChannelProfile, ChunkerConfig, Config, ConfigOverrides, Error,
    LengthMetric, PlatformSplitter, SplitConfig,
};
use text_checks::{Expect, check_blocks, read_fences};

fn chunk_with(config: ChunkerConfig, text: &str) -> Vec<Block> {
    let mut c = BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    for ch in text.chars() {
        c.push(&ch.to_string(), &mut out);
    }
    c.flush(&mut out);
    let expect = Expect::for_text(text, config.metric, config.max, None);
    check_blocks(text, &out, expect).expect("invariants");
    out
}

fn chunk(text: &str, min: usize, max: usize) -> Vec<Block> {
    chunk_with(
        ChunkerConfig {
            min,
            max,
            ..ChunkerConfig::default()
        },
        text,
    )
}

fn split_with(config: SplitConfig, text: &str) -> Vec<Block> {
    let pieces = PlatformSplitter::new(config)
        .expect("valid config")
        .split(text);
    let expect = Expect::for_text(text, config.metric, config.limit, config.max_lines);
    check_blocks(text, &pieces, expect).expect("invariants");
    pieces
}

fn split(text: &str, limit: usize) -> Vec<Block> {
    split_with(
        SplitConfig {
            limit,
            ..SplitConfig::default()
        },
        text,
    )
}

fn texts(blocks: &[Block]) -> Vec<&str> {
    blocks.iter().map(|b| b.text.as_str()).collect()
}

fn rebuilt(text: &str, blocks: &[Block]) -> String {
    blocks
        .iter()
        .map(|b| format!("{}{}{}", b.lead, &text[b.source.clone()], b.sep))
        .collect()
}

fn assert_every_block_balanced(blocks: &[Block]) {
    for b in blocks {
        assert!(read_fences(&b.text).balanced, "unbalanced: {:?}", b.text);
    }
}

fn error_text(result: Result<impl Sized, Error>) -> String {
    match result {
        Err(Error::InvalidConfig(why)) => why.into_owned(),
        Err(other) => panic!("unexpected error {other}"),
        Ok(_) => panic!("accepted"),
    }
}

// ----- 3. Corrupted fences -----

/// 3a. A mid-line hard cut never leaves a block whose first line looks like a fence opener,
/// nor one whose last content line is a bare closing marker.
#[test]
fn defect_3a_mid_line_cuts_make_no_fence_look_alikes() {
    // Text whose only break is far away: the cut falls mid-line, right where "```rust"
    // (not a fence: it is in the middle of a line) would start the next block.
    let text = format!("{}```rust and more text after it", "a".repeat(21));
    for blocks in [chunk(&text, 1, 24), split(&text, 24)] {
        assert_every_block_balanced(&blocks);
        for b in &blocks[1..] {
            assert!(!b.text.starts_with("```"), "{:?}", texts(&blocks));
        }
    }
    // Inside a fence, "``` x" is code; cut after its marker it would read as a closer.
    let text = "```rust\n``` x and some more code here\nlet y = 2;\n```";
    for blocks in [chunk(text, 1, 24), split(text, 24)] {
        assert_every_block_balanced(&blocks);
        for b in &blocks {
            let lines: Vec<&str> = b.text.lines().collect();
            let content = &lines[1..lines.len().saturating_sub(1)];
            assert!(
                !content.iter().any(|l| l.trim_end() == "```"),
                "a bare marker inside {:?}",
                b.text
            );
        }
    }
}

/// 3b. An opening line longer than `max` (a long info string) is cut inside its info
/// string; the next block goes on with the bare marker and the rest of the line, so the rest
/// of the info string is read as an info string again, never as code or prose; the code
/// after it is reopened with a bare marker of the same kind, and every block is balanced.
#[test]
fn defect_3b_a_long_opening_line_is_reopened_bare() {
    let text = "```javascript title=\"an info string that is long\"\nlet a = 1;\nlet b = 2;\n```\n";
    for blocks in [chunk(text, 10, 40), split(text, 40)] {
        assert_every_block_balanced(&blocks);
        assert!(blocks.len() >= 2);
        assert!(blocks[0].text.starts_with("```javascript"));
        // The info string's words are only ever on an opening line.
        for b in &blocks {
            for line in b.text.lines() {
                if line.contains("long") || line.contains("info") {
                    assert!(
                        line.starts_with("```"),
                        "{line:?} shown as text: {:?}",
                        texts(&blocks)
                    );
                }
            }
        }
        assert!(blocks[1].text.starts_with("```") && !blocks[1].text.starts_with("```\n"));
        for b in &blocks[2..] {
            assert!(b.text.starts_with("```\n"), "bare reopen: {:?}", b.text);
        }
        assert!(texts(&blocks).concat().contains("let b = 2;"));
        assert_eq!(rebuilt(text, &blocks), text);
    }
}

/// 3c. An empty unclosed fence at the end never becomes a block of fence lines only.
#[test]
fn defect_3c_an_empty_fence_at_the_end_stays_with_the_text() {
    for text in [
        "Some text here.\n\n~~~~\n",
        "Some text here and more.\n~~~~\n",
    ] {
        for blocks in [chunk(text, 1, 24), split(text, 24)] {
            let last = blocks.last().unwrap();
            assert!(
                last.text.starts_with("Some")
                    || last.text.starts_with("here")
                    || last.text.starts_with("more"),
                "{:?}",
                texts(&blocks)
            );
            assert!(read_fences(&last.text).content);
            assert_every_block_balanced(&blocks);
        }
    }
}

/// 3d. Every metric repairs fences alike: a UTF-16 budget of 9 is refused, as in every
/// metric, and at each metric's smallest accepted limit a fence is closed and reopened.
#[test]
fn defect_3d_every_metric_repairs_fences() {
    for metric in LengthMetric::ALL {
        let small = ChunkerConfig {
            min: 1,
            max: 9,
            metric,
            ..ChunkerConfig::default()
        };
        assert!(BlockChunker::new(small).is_err(), "{metric}");
        let text = format!("```\n{}\n```", "abcdefghijkl ".repeat(6));
        let blocks = chunk_with(
            ChunkerConfig {
                max: metric.min_limit(),
                ..small
            },
            &text,
        );
        assert!(blocks.len() >= 2, "{metric}");
        assert!(
            blocks.iter().all(|b| b.text.starts_with("```\n")),
            "{metric}"
        );
        assert_every_block_balanced(&blocks);
    }
}

// ----- 4. Settings that cannot keep the invariants are refused -----

/// 4a. `chunk_max` at or below 8 (no room for a fence's two synthetic lines and a char) is
/// refused, by `Config` and by `BlockChunker`, naming the field and the smallest value.
#[test]
fn defect_4a_a_tiny_chunk_max_is_refused() {
    for max in [1, 8, 23] {
        let config = Config {
            chunk_min: 1,
            chunk_max: max,
            ..Config::default()
        };
        let e = error_text(config.validate());
        assert!(e.contains("chunk_max") && e.contains("at least 24"), "{e}");
        let e = error_text(BlockChunker::new(ChunkerConfig {
            min: 1,
            max,
            ..ChunkerConfig::default()
        }));
        assert!(e.contains("at least 24"), "{e}");
    }
    let ok = Config {
        chunk_min: 1,
        chunk_max: 24,
        ..Config::default()
    };
    assert!(ok.validate().is_ok());
}

/// 4b. `text_limit = 20, chunk_max = 10` (which split a family emoji across messages) is
/// refused; at the smallest accepted limits no emoji is split, inside a fence or not.
#[test]
fn defect_4b_limits_too_small_for_an_emoji_are_refused() {
    let config = Config {
        text_limit: 20,
        chunk_min: 5,
        chunk_max: 10,
        ..Config::default()
    };
    let e = error_text(config.validate());
    assert!(e.contains("text_limit") && e.contains("at least 24"), "{e}");
    let config = Config {
        text_limit: 100,
        ..config
    };
    let e = error_text(config.validate());
    assert!(e.contains("chunk_max") && e.contains("at least 24"), "{e}");
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let text = format!("{f}{f} x {f}\n   ```\n{f}{f}{f}\n   ```\n", f = family);
    for metric in LengthMetric::ALL {
        let blocks = chunk_with(
            ChunkerConfig {
                min: 1,
                max: metric.min_limit(),
                metric,
                ..ChunkerConfig::default()
            },
            &text,
        );
        for b in &blocks {
            let shown = &b.text[b.source_in_text()];
            assert_eq!(
                shown.matches('👨').count(),
                shown.matches('👦').count(),
                "{metric}: {:?}",
                b.text
            );
        }
    }
}

/// 4c. A platform limit that forces `max` down brings `min` down with it, so cuts stay at
/// breaks: `text_limit = 500` with the default 800/1200 gives 333/500, not 500/500.
#[test]
fn defect_4c_min_scales_down_with_a_forced_max() {
    let o = ConfigOverrides {
        text_limit: Some(500),
        ..ConfigOverrides::default()
    };
    let r = Config::resolve(&ChannelProfile::GENERIC, &[&o]).unwrap();
    assert_eq!((r.chunker().min, r.chunker().max), (333, 500));
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(60);
    let blocks = chunk_with(r.chunker(), &text);
    for b in &blocks[..blocks.len() - 1] {
        assert!(!b.sep.is_empty(), "a mid-word cut: {:?}", b.text);
        assert!(
            b.text.ends_with('.'),
            "not at a sentence end: {:?}",
            &b.text[b.text.len() - 10..]
        );
    }
}

/// 4d. The splitter refuses the same: a limit below the metric's smallest one, a line cap
/// below 3.
#[test]
fn defect_4d_the_splitter_refuses_alike() {
    for metric in LengthMetric::ALL {
        let config = SplitConfig {
            limit: metric.min_limit() - 1,
            metric,
            ..SplitConfig::default()
        };
        let e = error_text(PlatformSplitter::new(config));
        assert!(
            e.contains(&format!("at least {}", metric.min_limit())),
            "{e}"
        );
        assert!(
            PlatformSplitter::new(SplitConfig {
                limit: metric.min_limit(),
                ..config
            })
            .is_ok()
        );
    }
    for lines in [1, 2] {
        let e = error_text(PlatformSplitter::new(SplitConfig {
            max_lines: Some(lines),
            ..SplitConfig::default()
        }));
        assert!(e.contains("max_lines") && e.contains("at least 3"), "{e}");
    }
}

// ----- 5. Separators exact -----

/// 5a. Blank lines skipped at a block start are kept: in the previous separator, or in the
/// first block's lead.
#[test]
fn defect_5a_skipped_blank_lines_are_kept() {
    let text = "\n\n  \nFirst paragraph here.\n\n\n\nSecond paragraph, long enough.\n\n";
    for blocks in [chunk(text, 1, 30), split(text, 30)] {
        assert_eq!(blocks[0].lead, "\n\n  \n");
        assert_eq!(blocks[0].sep, "\n\n\n\n");
        assert_eq!(blocks.last().unwrap().sep, "\n\n");
        assert_eq!(rebuilt(text, &blocks), text);
    }
}

/// 5b. A block exactly `max` long followed by a paragraph break keeps the whole break.
#[test]
fn defect_5b_a_block_of_exactly_max_keeps_its_paragraph_break() {
    let text = "abcd efghi abcd efghi ab\n\nnext para";
    let blocks = chunk(text, 5, 24);
    assert_eq!(texts(&blocks), ["abcd efghi abcd efghi ab", "next para"]);
    assert_eq!(blocks[0].sep, "\n\n");
    assert_eq!(rebuilt(text, &blocks), text);
}

/// 5c. Around the splitter's fence repair the text between pieces is exactly the source.
#[test]
fn defect_5c_the_splitters_fence_repair_is_exact() {
    let text = "Intro.\n\n```py\n\nline one\n\n\nline two is longer\n```\n\n\nOutro.";
    let pieces = split(text, 24);
    assert!(pieces.iter().any(|p| p.fence_reopened));
    assert_eq!(rebuilt(text, &pieces), text);
}

/// 5d. A space joined to a prepended char (U+0600) is part of its cluster; the rest of the
/// whitespace run is the separator, line break included (a line cap forces the cut).
#[test]
fn defect_5d_whitespace_after_a_prepended_char() {
    let text = "a\nb\nword\u{600}  \nnext";
    let pieces = split_with(
        SplitConfig {
            limit: 100,
            max_lines: Some(3),
            ..SplitConfig::default()
        },
        text,
    );
    assert_eq!(texts(&pieces), ["a\nb\nword\u{600} ", "next"]);
    assert_eq!(pieces[0].sep, " \n");
    assert_eq!(rebuilt(text, &pieces), text);
}

/// 5d, at a hard cut: one that falls in the whitespace after a prepended char ends the
/// piece before the separator whitespace, and the space joined to the char stays with it
/// (chunker_props at seed 134 split that cluster).
#[test]
fn defect_5d_a_hard_cut_in_whitespace_after_a_prepended_char() {
    let text = "- item 中文句子。消息aaaa\u{600}    \n\n    indented code line\na";
    let blocks = chunk_with(
        ChunkerConfig {
            min: 11,
            max: 16,
            metric: LengthMetric::Graphemes,
            ..ChunkerConfig::default()
        },
        text,
    );
    let prepended = blocks.iter().find(|b| b.text.contains('\u{600}')).unwrap();
    assert!(prepended.text.ends_with("\u{600} "), "{:?}", texts(&blocks));
    assert_eq!(rebuilt(text, &blocks), text);
}

/// 5d, across a compaction: a CJK sentence end is read back over its marks (`…` after
/// `！` ends the sentence whatever follows it), so the chunker keeps them when it drops
/// emitted text from its buffer. It dropped the `！` before the `…` that starts a block, and
/// fed a byte at a time, found no cut after `…` where the whole text did
/// (chunker_props, at a random seed).
#[test]
fn defect_5d_a_sentence_end_is_read_back_across_a_compaction() {
    let text = ". \n```\n```\n今日は晴れ。明日は雨！…`\n| row | cell with words |";
    let config = ChunkerConfig {
        min: 18,
        max: 22,
        metric: LengthMetric::Graphemes,
        ..ChunkerConfig::default()
    };
    let by_char = chunk_with(config, text);
    let mut whole = Vec::new();
    let mut c = BlockChunker::new(config).unwrap();
    c.push(text, &mut whole);
    c.flush(&mut whole);
    assert_eq!(
        texts(&by_char),
        [
            ". \n```\n```\n今日は晴れ。明日は雨！",
            "…",
            "`",
            "| row | cell with word",
            "s |"
        ]
    );
    assert_eq!(by_char, whole);
}

/// 5e. A CR LF after a closing fence is a cut point, as a LF is.
#[test]
fn defect_5e_crlf_after_a_closing_fence_is_a_cut_point() {
    for eol in ["\n", "\r\n"] {
        let text = format!("```\ncode\n```{eol}after text that is long enough to cut");
        let blocks = chunk(&text, 5, 30);
        assert_eq!(blocks[0].text, "```\ncode\n```", "{eol:?}");
        assert_eq!(blocks[0].sep, eol);
    }
}

/// 5f. A space that carries a combining mark is one grapheme: no piece starts with a lone
/// combining mark.
#[test]
fn defect_5f_a_space_with_a_combining_mark_is_one_grapheme() {
    let text = format!("{}ab \u{301}cd efgh", "x".repeat(21));
    for blocks in [chunk(&text, 1, 24), split(&text, 24)] {
        for b in &blocks {
            assert!(!b.text.starts_with('\u{301}'), "{:?}", texts(&blocks));
        }
        assert_eq!(rebuilt(&text, &blocks), text);
    }
}

// ----- 6. Inline code per CommonMark -----

fn stray_backtick_list(first: &str) -> String {
    let mut text = format!("{first}\n");
    for i in 0..40 {
        text.push_str(&format!("- item {i} with `code {i}` and more words here\n"));
    }
    text
}

/// 6a/6b. An unmatched backtick is literal once its block ends (at the next list item, or
/// at a heading's end): the list is cut at line breaks between `min` and `max`, never
/// mid-word.
#[test]
fn defect_6a_a_stray_backtick_does_not_poison_the_paragraph() {
    for first in [
        "- a stray `backtick here.",
        "# A heading with a stray ` backtick",
    ] {
        let text = stray_backtick_list(first);
        let blocks = chunk(&text, 800, 1200);
        assert!(blocks.len() >= 2);
        for b in &blocks[..blocks.len() - 1] {
            let n = LengthMetric::Chars.len(&b.text);
            assert!((800..=1200).contains(&n), "{n} units");
            assert_eq!(b.sep, "\n", "cut at a line end");
        }
    }
}

/// 6c. An inline code span longer than `max` is cut at whitespace or a line break inside
/// it, not mid-word.
#[test]
fn defect_6c_a_long_code_span_is_cut_at_a_break_inside_it() {
    let span = format!("`{}`", "word ".repeat(40).trim_end());
    let text = format!("Before {span} after.");
    let blocks = chunk(&text, 20, 60);
    for b in &blocks[..blocks.len() - 1] {
        assert!(!b.sep.is_empty(), "a hard cut: {:?}", texts(&blocks));
    }
    assert_eq!(rebuilt(&text, &blocks), text);
}

// ----- 7. Indented code -----

/// 7a. An indented code block that fits `max` is not cut at its internal blank lines.
#[test]
fn defect_7a_indented_code_stays_whole_when_it_fits() {
    let text =
        "Intro paragraph.\n\n    code line 1\n\n    code line 2\n\n    code line 3\n\nAfter.";
    let blocks = chunk(text, 5, 60);
    assert!(
        texts(&blocks).contains(&"    code line 1\n\n    code line 2\n\n    code line 3"),
        "{:?}",
        texts(&blocks)
    );
}

/// 7b. When an indented code line must be cut in its middle, the continuation keeps its
/// indentation (4 synthetic spaces), and is never rewritten into a fenced block.
#[test]
fn defect_7b_a_cut_indented_line_keeps_its_indentation() {
    let text =
        "Intro.\n\n    let data = compute_something_long(with, many, arguments, here);\n\nAfter.";
    for blocks in [chunk(text, 5, 30), split(text, 30)] {
        let code: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.text.contains("data") || b.indent_reopened)
            .collect();
        assert!(code.len() >= 2, "{:?}", texts(&blocks));
        for b in &blocks {
            assert!(
                !b.text.contains("```"),
                "rewritten into a fence: {:?}",
                b.text
            );
            if b.text.starts_with(' ') {
                assert!(b.text.starts_with("    "), "{:?}", b.text);
            }
        }
        assert!(blocks.iter().any(|b| b.indent_reopened));
        assert_eq!(rebuilt(text, &blocks), text);
    }
}

#[test]
fn utf16_smallest_limit_never_splits_a_zwj_emoji_between_empty_fences() {
    // Found by the issue 8 work (then at min 1, max 50, now the smallest accepted UTF-16
    // limit, 29): empty fences, stray fence-like lines and an inline span before a family
    // emoji, fed one char at a time. No cut may split the emoji.
    let text = "\n~~~\n\n~~~\n\n```rust\n\n````\n\n  ```\n`code span`\n~~~\n\n````md\n````\t\n````md\n👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    for max in [29, 30, 35, 50] {
        let blocks = chunk_with(
            ChunkerConfig {
                min: 1,
                max,
                metric: LengthMetric::Utf16,
                ..ChunkerConfig::default()
            },
            text,
        );
        let with_family: Vec<&str> = texts(&blocks)
            .into_iter()
            .filter(|t| t.contains('\u{200d}'))
            .collect();
        assert_eq!(with_family.len(), 1, "max {max}: {:?}", texts(&blocks));
        assert!(
            with_family[0].contains(family),
            "max {max}: {:?}",
            texts(&blocks)
        );
        let pieces = split_with(
            SplitConfig {
                limit: max,
                metric: LengthMetric::Utf16,
                ..SplitConfig::default()
            },
            text,
        );
        assert_eq!(
            texts(&pieces).iter().filter(|t| t.contains(family)).count(),
            1,
            "split to {max}: {:?}",
            texts(&pieces)
        );
    }
}

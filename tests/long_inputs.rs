//! LONG inputs (several KiB) through the block chunker and the whole engine: the code that
//! only runs on long text (the chunker's buffer compaction, the cut planner on lines longer
//! than a block, the text stages' drops of decided text, the token gate's held head and
//! tail) must give the same result however the text was split (SPEC §3 split-invariance,
//! §13).
//!
//! - The chunker over long random hard Markdown (fences, indented code, stray backticks,
//!   spans across lines, CRLF, combining marks, ZWJ emoji, CJK, lines with no break longer
//!   than a block), every break preference and metric, limits down to the smallest: every
//!   invariant of `check_blocks`, and the same blocks for the whole text, one char at a time
//!   and random delta sizes.
//! - The platform splitter over the same Markdown, both modes, every metric, with and
//!   without a line cap: every invariant of `check_blocks`.
//! - The engine over the same Markdown decorated with what SPEC §2 strips or routes (thinking
//!   and final tags, bracket and `MEDIA:` directives, the silent and heartbeat tokens), put
//!   around the stages' drop points, inside and outside code, with `TextEnd` at a few fixed
//!   places: the same sends, byte for byte, for the whole text, one char at a time and random
//!   cuts.
//!
//! Fixed proptest seeds keep the suite deterministic; 16 cases each keep a debug run of the
//! file within about 15 s on 2 cores (well under 1 s in release); `PROPTEST_CASES` widens a
//! run and `LONG_INPUTS_SEED` moves it.

mod common;
mod text_checks;

use common::*;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use replystream::{ChannelProfile, Input, LengthMetric, PlatformSplitter, SplitConfig, SplitMode};
use text_checks::{Expect, cases, check_all, check_blocks, chunker_config, deltas, long_markdown};

// ---- the chunker ----------------------------------------------------------------------

// ---- the engine -----------------------------------------------------------------------

/// What SPEC §2 strips or routes, in forms the stages must get right wherever they land.
const DECORATIONS: &[&str] = &[
    "<think>hidden</think>",
    "<thinking>\nhidden\n</thinking>\n",
    "< think type=\"x\" >hidden</ think >",
    "<final>",
    "</final>",
    "<thinking/>",
    "`<think>`",
    "`",
    "``",
    "```",
    "[[reply_to_current]]",
    "[[reply_to: 12]]",
    "[[audio_as_voice]]",
    "[[media:https://example.com/m.png]]",
    "[[",
    "\nMEDIA: https://example.com/a.png\n",
    "\nMEDIA: ./x.txt\n",
    " NO_REPLY",
    "HEARTBEAT_OK",
    "\r\n",
    "é",
    "日本",
];

/// `markdown` with decorations spliced in at char boundaries, most near the multiples of
/// 256 bytes (where the stages drop decided text), and maybe a token at either edge.
fn decorate(markdown: &str, seed: u64) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = String::with_capacity(markdown.len() + 1024);
    if rng.u8(..4) == 0 {
        out.push_str(["HEARTBEAT_OK\n", "NO_REPLY ", "[[reply_to: 9]] "][rng.usize(..3)]);
    }
    let mut next = 256 - rng.usize(..32);
    let mut at = 0;
    for (i, c) in markdown.char_indices() {
        if i >= next {
            out.push_str(&markdown[at..i]);
            at = i;
            for _ in 0..rng.usize(1..4) {
                out.push_str(DECORATIONS[rng.usize(..DECORATIONS.len())]);
            }
            next = i + rng.usize(16..400);
        }
        let _ = c;
    }
    out.push_str(&markdown[at..]);
    if rng.u8(..4) == 0 {
        out.push_str([" NO_REPLY", " HEARTBEAT_OK", "</final>"][rng.usize(..3)]);
    }
    out
}

/// The sends of a whole message streamed in `segments` of deltas with a `TextEnd` between
/// segments (no timer fires in between), with the payload fields a user sees.
fn engine_sends(config: &replystream::Config, segments: &[Vec<&str>]) -> Vec<String> {
    let mut sim = Sim::new(engine(config.clone()));
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            sim.push(Input::TextEnd(None));
        }
        for p in segment {
            sim.push(Input::TextDelta(p));
        }
    }
    sim.push(Input::Finish).run_until_idle();
    assert!(sim.errors.is_empty(), "{:?}", sim.errors);
    sim.delivered
        .iter()
        .map(|(_, s)| {
            format!(
                "{:?} {:?} {:?} media {:?} voice {} to {:?}",
                s.kind,
                s.op,
                s.payload.text,
                s.payload.media,
                s.payload.audio_as_voice,
                s.payload.reply_to
            )
        })
        .collect()
}

fn engine_config(channel: usize, small: bool) -> replystream::Config {
    let mut c = replystream::Config::for_channel(&ChannelProfile::ALL[channel]);
    c.coalesce_idle_ms = 0;
    if small {
        c.chunk_min = 20;
        c.chunk_max = 90;
        c.coalesce_min = Some(20);
        c.coalesce_max = Some(90);
    }
    c
}

fn first_difference(a: &[String], b: &[String]) -> String {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    format!("send {i}:\n  {:?}\nvs whole\n  {:?}", a.get(i), b.get(i))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(16),
        rng_seed: RngSeed::Fixed(
            std::env::var("LONG_INPUTS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x10e9_2026),
        ),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn long_markdown_chunks_the_same_however_split(
        text in long_markdown(),
        config in chunker_config(),
        sizes in prop::collection::vec(1usize..600, 1..6),
    ) {
        if let Err(e) = check_all(&text, config, &sizes) {
            prop_assert!(false, "{}", e);
        }
    }

    #[test]
    fn long_markdown_splits_within_every_limit(
        text in long_markdown(),
        m in 0usize..4,
        extra in prop_oneof![3 => 0usize..60, 1 => 60usize..2000],
        newline in any::<bool>(),
        max_lines in prop::option::of(3usize..40),
    ) {
        let metric = LengthMetric::ALL[m];
        let config = SplitConfig {
            limit: metric.min_limit() + extra,
            metric,
            mode: if newline { SplitMode::Newline } else { SplitMode::Length },
            max_lines,
            ..SplitConfig::default()
        };
        let pieces = PlatformSplitter::new(config).expect("valid config").split(&text);
        let expect = Expect::for_text(&text, metric, config.limit, max_lines);
        if let Err(e) = check_blocks(&text, &pieces, expect) {
            prop_assert!(false, "{:?}: {}", config, e);
        }
    }

    #[test]
    fn long_decorated_replies_send_the_same_however_split(
        markdown in long_markdown(),
        seed in any::<u64>(),
        sizes in prop::collection::vec(1usize..300, 1..6),
        channel in 0..ChannelProfile::ALL.len(),
        small in any::<bool>(),
        text_ends in prop::collection::vec(any::<prop::sample::Index>(), 0..4),
    ) {
        let text = decorate(&markdown, seed);
        let config = engine_config(channel, small);
        // `TextEnd` boundaries at fixed places: the stages decide what they hold there, so
        // those decisions must not depend on the cuts either.
        let mut ends: Vec<usize> = text_ends
            .iter()
            .map(|ix| ix.index(text.len() + 1))
            .filter(|&p| text.is_char_boundary(p))
            .collect();
        ends.sort_unstable();
        ends.dedup();
        let mut segments: Vec<&str> = Vec::new();
        let mut at = 0;
        for &e in &ends {
            segments.push(&text[at..e]);
            at = e;
        }
        segments.push(&text[at..]);
        let split = |sizes: Option<&[usize]>| -> Vec<Vec<&str>> {
            segments
                .iter()
                .map(|s| match sizes {
                    None => vec![*s],
                    Some(sizes) => deltas(s, sizes),
                })
                .collect()
        };
        let whole = engine_sends(&config, &split(None));
        for sizes in [&[1][..], &sizes[..]] {
            let got = engine_sends(&config, &split(Some(sizes)));
            prop_assert!(
                got == whole,
                "deltas {:?}, text ends at {:?}: {}",
                sizes,
                &ends,
                first_difference(&got, &whole)
            );
        }
    }
}

/// A `TextEnd` right after a tag that sits in a still-open code span must not change how
/// the text after it is read: the thinking block below stays hidden, as it is with no tag
/// before the boundary. (The boundary ended the tag filter's line for good, so the next
/// block's backticks read as a fence opener and the thinking text was sent.)
#[test]
fn a_text_end_after_a_tag_in_an_open_span_does_not_leak_the_next_thinking_block() {
    for first in ["Use `x <final>y", "Use `x y"] {
        let mut sim = Sim::new(engine(small_config()));
        sim.push(Input::TextDelta(first))
            .push(Input::TextEnd(None))
            .push(Input::TextDelta("```\n<think>secret</think>\nz\n"))
            .push(Input::Finish)
            .run_until_idle();
        let sent = sim.delivered_texts().concat();
        assert!(!sent.contains("secret"), "{first:?}: sent {sent:?}");
        assert!(sent.contains("Use `x y"), "{first:?}: sent {sent:?}");
    }
}

/// A stray backtick earlier in the paragraph does not make a `MEDIA:` line code: the run
/// never closes, so it is literal (CommonMark) and the line is a directive. The media was
/// not sent and the line was shown as text.
#[test]
fn a_media_line_after_a_stray_backtick_sends_the_media() {
    let mut sim = Sim::new(engine(small_config()));
    sim.stream(
        "Price 5` each, chart below.\nMEDIA: https://example.com/chart.png\nThat is all.",
        3,
        0,
    )
    .push(Input::Finish)
    .run_until_idle();
    let media: Vec<String> = sim
        .delivered
        .iter()
        .flat_map(|(_, s)| s.payload.media.clone())
        .collect();
    assert_eq!(media, ["https://example.com/chart.png"]);
    let sent = sim.delivered_texts().concat();
    assert!(!sent.contains("MEDIA"), "sent {sent:?}");
    assert!(
        sent.contains("Price 5` each") && sent.contains("That is all."),
        "{sent:?}"
    );
}

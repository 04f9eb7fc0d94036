//! Property tests of the block chunker over the corpus and random hard Markdown: every block
//! within the limit, fences balanced (checked by the test's own reader), no block of fence
//! lines only, no cut inside a grapheme cluster, `lead + source + sep` rebuilding the text
//! exactly, and the same blocks whatever the deltas (SPEC §3, §13). Every break preference,
//! every metric, limits down to the smallest accepted ones.

mod text_checks;

use proptest::prelude::*;
use replystream::{BlockChunker, ChunkerConfig, LengthMetric};
use text_checks::{
    Expect, PREFS, cases, check_all, check_blocks, chunker_config, corpus, hard_markdown,
};

#[test]
fn corpus_files_hold_the_invariants() {
    for (name, text) in corpus() {
        let big = text.len() > 20_000;
        for metric in LengthMetric::ALL {
            let tiny = metric.min_limit();
            let sizes: &[(usize, usize)] = if big {
                &[(800, 1200)]
            } else {
                &[(800, 1200), (40, 120), (1, tiny), (tiny, tiny + 9)]
            };
            for &(min, max) in sizes {
                for (k, pref) in PREFS.into_iter().enumerate() {
                    if big && k > 0 && metric != LengthMetric::Chars {
                        continue;
                    }
                    let config = ChunkerConfig {
                        min,
                        max: max.max(tiny),
                        break_preference: pref,
                        flush_on_paragraph: k == 1,
                        metric,
                    };
                    if let Err(e) = check_all(&text, config, &[7, 1, 64, 3, 300]) {
                        panic!("{name}: {e}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn random_markdown_holds_the_invariants(
        text in hard_markdown(),
        config in chunker_config(),
        sizes in prop::collection::vec(1usize..40, 1..6),
    ) {
        if let Err(e) = check_all(&text, config, &sizes) {
            prop_assert!(false, "{:?}\n{}", text, e);
        }
    }

    /// A forced drain in the middle (a `TextEnd`) at a line start: the blocks of both parts
    /// still rebuild the whole text exactly, the whitespace after the drain in the next
    /// block's lead (whitespace alone after it has no block to go to).
    #[test]
    fn a_drain_in_the_middle_keeps_the_text_whole(
        text in hard_markdown(),
        config in chunker_config(),
        at in 0usize..1000,
    ) {
        let lines: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        let cut = if lines.is_empty() { text.len() } else { lines[at % lines.len()] };
        let mut c = BlockChunker::new(config).unwrap();
        let mut out = Vec::new();
        c.push(&text[..cut], &mut out);
        c.flush(&mut out);
        c.push(&text[cut..], &mut out);
        c.flush(&mut out);
        // A drain may leave fence lines alone (an opening line just before it): only the
        // other checks apply.
        let expect = Expect {
            content: false,
            ..Expect::for_text(&text, config.metric, config.max, None)
        };
        // Whitespace alone after the last drain has no block to go to.
        let whole = if text[cut..].trim_start_matches([' ', '\t', '\r', '\n']).is_empty() {
            &text[..cut]
        } else {
            &text[..]
        };
        if let Err(e) = check_blocks(whole, &out, expect) {
            prop_assert!(false, "{:?} cut at {}\n{:?}: {}", text, cut, config, e);
        }
    }
}

/// Found by the properties on random seeds: the blocks of 1-byte deltas and of the whole
/// text differed once a compaction drained the buffer mid-line or inside a code span (a `>`
/// at the drained buffer's start was taken for a quote marker, so the piece `>` seemed to
/// show nothing; a code span's opening run drained away moved where its code seemed to
/// start).
#[test]
fn split_invariance_cases_found_on_random_seeds() {
    let cases = [
        (
            "a a <https://a.b/aaaaaaaaaaa>\n<https://a.b/aabvjxxxxx>",
            7,
            24,
            LengthMetric::Chars,
            replystream::BreakPreference::Sentence,
        ),
        (
            "a a <https://a.b/aaaaaaa>\n<https://a.b/aabvj>",
            7,
            20,
            LengthMetric::Graphemes,
            replystream::BreakPreference::Sentence,
        ),
        (
            "`code span`a`code span`\n```rust\n",
            1,
            17,
            LengthMetric::Graphemes,
            replystream::BreakPreference::Paragraph,
        ),
    ];
    for (text, min, max, metric, break_preference) in cases {
        let config = ChunkerConfig {
            min,
            max,
            break_preference,
            flush_on_paragraph: false,
            metric,
        };
        let texts = |delta: usize| -> Vec<String> {
            let mut chunker = BlockChunker::new(config).expect("valid config");
            let mut out = Vec::new();
            for piece in text_checks::deltas(text, &[delta]) {
                chunker.push(piece, &mut out);
            }
            chunker.flush(&mut out);
            out.into_iter().map(|b| b.text).collect()
        };
        assert_eq!(texts(1), texts(text.len()), "{text:?}");
    }
}

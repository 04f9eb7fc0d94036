//! Property tests of the block chunker over the corpus and random hard Markdown: every block
//! within the limit, fences balanced (checked by the test's own reader), no block of fence
//! lines only, no cut inside a grapheme cluster, `lead + source + sep` rebuilding the text
//! exactly, and the same blocks whatever the deltas (SPEC §3, §13). Every break preference,
//! every metric, limits down to the smallest accepted ones.

mod text_checks;

use proptest::prelude::*;
use replystream::{Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric};
use text_checks::{Expect, cases, check_blocks, corpus, hard_markdown};

fn run(config: ChunkerConfig, deltas: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<Block> {
    let mut c = BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    for d in deltas {
        c.push(d.as_ref(), &mut out);
    }
    c.flush(&mut out);
    out
}

/// Splits `text` at char boundaries after the given sizes (cycled).
fn deltas<'a>(text: &'a str, sizes: &[usize]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut k = 0;
    while at < text.len() {
        let mut end = (at + sizes[k % sizes.len()].max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
        k += 1;
    }
    out
}

fn first_diff<'a>(a: &'a [Block], b: &'a [Block]) -> (Option<&'a Block>, Option<&'a Block>) {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (a.get(i), b.get(i))
}

/// Every invariant for one text and config: the checks of [`check_blocks`] on the whole text
/// as one delta, a lead only on the first block, and the same blocks from 1-char deltas and
/// from deltas of `sizes`.
fn check_all(text: &str, config: ChunkerConfig, sizes: &[usize]) -> Result<(), String> {
    let whole = run(config, [text]);
    let expect = Expect::for_text(text, config.metric, config.max, None);
    check_blocks(text, &whole, expect).map_err(|e| format!("{config:?}: {e}"))?;
    if let Some(b) = whole.iter().skip(1).find(|b| !b.lead.is_empty()) {
        return Err(format!("{config:?}: a lead on a later block: {b:?}"));
    }
    for split in [deltas(text, &[1]), deltas(text, sizes)] {
        let blocks = run(config, &split);
        if blocks != whole {
            let (a, b) = first_diff(&blocks, &whole);
            return Err(format!(
                "{config:?}: deltas of {:?} differ:\n{a:#?}\nvs whole\n{b:#?}",
                split.iter().take(4).map(|d| d.len()).collect::<Vec<_>>()
            ));
        }
    }
    Ok(())
}

const PREFS: [BreakPreference; 3] = [
    BreakPreference::Paragraph,
    BreakPreference::Newline,
    BreakPreference::Sentence,
];

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

fn config() -> impl Strategy<Value = ChunkerConfig> {
    (
        0usize..4,
        prop_oneof![6 => 0usize..40, 2 => 40usize..200, 1 => 200usize..1200],
        0u32..=100,
        0usize..3,
        any::<bool>(),
    )
        .prop_map(|(m, extra, min_pct, p, fop)| {
            let metric = LengthMetric::ALL[m];
            let max = metric.min_limit() + extra;
            ChunkerConfig {
                min: (max * min_pct as usize / 100).max(1),
                max,
                break_preference: PREFS[p],
                flush_on_paragraph: fop,
                metric,
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn random_markdown_holds_the_invariants(
        text in hard_markdown(),
        config in config(),
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
        config in config(),
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

//! Property tests of the block chunker over the corpus and random Markdown-ish text:
//! limits, fences, grapheme boundaries, reconstruction and split-invariance (SPEC §3, §13).

mod text_checks;

use proptest::prelude::*;
use replystream::{Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric};
use text_checks::{Expect, cases, check_blocks, corpus, fences_repairable};

fn run(config: ChunkerConfig, deltas: impl IntoIterator<Item = impl AsRef<str>>) -> Vec<Block> {
    let mut c = BlockChunker::new(config);
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

fn chars(text: &str) -> Vec<&str> {
    deltas(text, &[1])
}

fn check_all(
    text: &str,
    config: ChunkerConfig,
    sizes: &[usize],
    strict_gaps: bool,
) -> Result<(), String> {
    let c = *BlockChunker::new(config).config();
    let whole = run(config, [text]);
    let expect = Expect {
        metric: c.metric,
        max: c.max,
        balanced: fences_repairable(text, c.metric, c.max),
        strict_gaps,
    };
    check_blocks(text, &whole, expect).map_err(|e| format!("{config:?}: {e}"))?;
    let by_char = run(config, chars(text));
    if by_char != whole {
        return Err(format!(
            "{config:?}: 1-char deltas differ:\n{:#?}\nvs whole\n{:#?}",
            first_diff(&by_char, &whole).0,
            first_diff(&by_char, &whole).1
        ));
    }
    let random = run(config, deltas(text, sizes));
    if random != whole {
        return Err(format!(
            "{config:?}: deltas {sizes:?} differ:\n{:#?}\nvs whole\n{:#?}",
            first_diff(&random, &whole).0,
            first_diff(&random, &whole).1
        ));
    }
    Ok(())
}

fn first_diff<'a>(a: &'a [Block], b: &'a [Block]) -> (Option<&'a Block>, Option<&'a Block>) {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    (a.get(i), b.get(i))
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
        let sizes: &[(usize, usize)] = if big {
            &[(800, 1200)]
        } else {
            &[(800, 1200), (40, 120), (1, 30)]
        };
        for &(min, max) in sizes {
            for metric in LengthMetric::ALL {
                for (k, pref) in PREFS.into_iter().enumerate() {
                    if big && k > 0 && metric != LengthMetric::Chars {
                        continue;
                    }
                    let config = ChunkerConfig {
                        min,
                        max,
                        break_preference: pref,
                        flush_on_paragraph: k == 1,
                        metric,
                    };
                    if let Err(e) = check_all(&text, config, &[7, 1, 64, 3, 300], false) {
                        panic!("{name}: {e}");
                    }
                }
            }
        }
    }
}

/// Fragments of Markdown-ish text, chosen to hit every rule.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z]{1,8}".prop_map(|w| w),
        3 => Just(" ".to_string()),
        2 => Just("\n".to_string()),
        2 => Just("\n\n".to_string()),
        1 => Just("\n```rust\n".to_string()),
        1 => Just("\n```\n".to_string()),
        1 => Just("\n~~~\n".to_string()),
        1 => Just("\n````md\n".to_string()),
        1 => Just("\n````\n".to_string()),
        1 => Just("\n  ```\n".to_string()),
        1 => Just("`code span`".to_string()),
        1 => Just("``".to_string()),
        1 => Just("`".to_string()),
        1 => Just("👨‍👩‍👧‍👦".to_string()),
        1 => Just("🇫🇷🇩🇪".to_string()),
        1 => Just("e\u{301}\u{302}".to_string()),
        1 => Just("今日は晴れ。明日は雨！".to_string()),
        1 => Just("\r\n".to_string()),
        1 => Just(". ".to_string()),
        1 => Just("! ".to_string()),
        1 => Just("3.14".to_string()),
        1 => Just("…".to_string()),
        1 => Just("\n    indented code\n".to_string()),
        1 => Just("\t".to_string()),
        1 => Just("   ".to_string()),
        1 => "x{20,90}".prop_map(|w| w),
    ]
}

fn markdownish() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..60).prop_map(|v| v.concat())
}

fn config() -> impl Strategy<Value = ChunkerConfig> {
    (1usize..60, 0usize..80, 0usize..3, any::<bool>(), 0usize..4).prop_map(
        |(min, extra, p, fop, m)| ChunkerConfig {
            min,
            max: min + extra,
            break_preference: PREFS[p],
            flush_on_paragraph: fop,
            metric: LengthMetric::ALL[m],
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(384), ..ProptestConfig::default() })]

    #[test]
    fn random_text_holds_the_invariants(
        text in markdownish(),
        config in config(),
        sizes in prop::collection::vec(1usize..40, 1..6),
    ) {
        if let Err(e) = check_all(&text, config, &sizes, false) {
            prop_assert!(false, "{:?}\n{}", text, e);
        }
    }
}

//! Property tests of the platform splitter over the corpus and random Markdown-ish text:
//! limits, line caps, fences, grapheme boundaries and reconstruction (SPEC §9, §13).

mod text_checks;

use proptest::prelude::*;
use replystream::{Block, LengthMetric, PlatformSplitter, SplitConfig, SplitMode};
use text_checks::{Expect, cases, check_blocks, corpus, fences_repairable};

fn check(text: &str, config: SplitConfig) -> Result<Vec<Block>, String> {
    let pieces = PlatformSplitter::new(config)
        .map_err(|e| e.to_string())?
        .split(text);
    let expect = Expect {
        metric: config.metric,
        max: config.limit,
        balanced: fences_repairable(text, config.metric, config.limit)
            && config
                .max_lines
                .is_none_or(|m| m >= 3 + blank_run_lines(text)),
        strict_gaps: false,
    };
    check_blocks(text, &pieces, expect).map_err(|e| format!("{config:?}: {e}"))?;
    if let Some(max_lines) = config.max_lines {
        for p in &pieces {
            let lines = p.text.split('\n').count();
            if lines > max_lines {
                return Err(format!("{config:?}: {lines} lines in {:?}", p.text));
            }
        }
    }
    if text.trim().is_empty() != pieces.is_empty() {
        return Err(format!("{config:?}: {} pieces for {text:?}", pieces.len()));
    }
    Ok(pieces)
}

/// The most newlines in one whitespace run (blank lines that a piece may have to hold).
fn blank_run_lines(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_whitespace())
        .map(|run| run.matches('\n').count())
        .max()
        .unwrap_or(0)
}

#[test]
fn corpus_files_hold_the_invariants() {
    for (name, text) in corpus() {
        for metric in LengthMetric::ALL {
            for (limit, max_lines) in [(4000, None), (2000, Some(17)), (300, None), (64, Some(5))] {
                for mode in [SplitMode::Length, SplitMode::Newline] {
                    let config = SplitConfig {
                        limit,
                        metric,
                        mode,
                        max_lines,
                    };
                    if let Err(e) = check(&text, config) {
                        panic!("{name}: {e}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_huge_unbroken_line_in_a_fence_still_splits() {
    let text = format!("```\n{}\n```", "x".repeat(100_000));
    let config = SplitConfig {
        limit: 2000,
        ..SplitConfig::default()
    };
    let pieces = check(&text, config).unwrap();
    assert!(pieces.len() >= 50);
    assert!(
        pieces
            .iter()
            .all(|p| p.text.starts_with("```\n") && p.text.ends_with("\n```"))
    );
}

#[test]
fn newline_mode_splits_every_paragraph() {
    let text = "one\n\ntwo\n\n```\na\n\nb\n```\n\nthree";
    let config = SplitConfig {
        mode: SplitMode::Newline,
        ..SplitConfig::default()
    };
    let pieces = check(text, config).unwrap();
    let texts: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
    assert_eq!(texts, ["one", "two", "```\na\n\nb\n```", "three"]);
}

#[test]
fn line_cap_counts_reopened_fence_lines() {
    let code: String = (0..30).map(|i| format!("line {i}\n")).collect();
    let text = format!("```rust\n{code}```");
    let config = SplitConfig {
        max_lines: Some(17),
        ..SplitConfig::default()
    };
    let pieces = check(&text, config).unwrap();
    assert_eq!(pieces.len(), 3);
    assert!(pieces.iter().all(|p| p.text.starts_with("```rust\n")));
}

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
        1 => Just("`code span`".to_string()),
        1 => Just("``".to_string()),
        1 => Just("👨‍👩‍👧‍👦".to_string()),
        1 => Just("🇫🇷🇩🇪".to_string()),
        1 => Just("e\u{301}\u{302}".to_string()),
        1 => Just("今日は晴れ。明日は雨！".to_string()),
        1 => Just("\r\n".to_string()),
        1 => Just(". ".to_string()),
        1 => Just("\n    indented code\n".to_string()),
        1 => "x{20,200}".prop_map(|w| w),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(512), ..ProptestConfig::default() })]

    #[test]
    fn random_text_holds_the_invariants(
        text in prop::collection::vec(fragment(), 0..60).prop_map(|v| v.concat()),
        limit in 4usize..120,
        metric in 0usize..4,
        newline in any::<bool>(),
        max_lines in prop::option::of(1usize..8),
    ) {
        let config = SplitConfig {
            limit,
            metric: LengthMetric::ALL[metric],
            mode: if newline { SplitMode::Newline } else { SplitMode::Length },
            max_lines,
        };
        if let Err(e) = check(&text, config) {
            prop_assert!(false, "{:?}\n{}", text, e);
        }
    }
}

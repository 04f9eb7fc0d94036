//! Unit tests of the block chunker: break orders, fences, sentences, hard cuts, separators.

use crate::text::block::Block;
use crate::text::cut::{BreakClass, is_tail_char, is_ws};
use crate::text::metric::LengthMetric;

use super::config::*;
use super::scan::*;
use super::*;
#[test]
fn the_plain_byte_table_agrees_with_the_char_classes() {
    for b in 0..=255u8 {
        let plain = b < 0x80 && !is_ws(b) && !is_tail_char(b as char);
        assert_eq!(PLAIN[usize::from(b)], plain, "byte {b:#04x}");
    }
}

fn cfg(min: usize, max: usize) -> ChunkerConfig {
    ChunkerConfig {
        min,
        max,
        ..ChunkerConfig::default()
    }
}

fn chunk(config: ChunkerConfig, deltas: &[&str]) -> Vec<Block> {
    let mut c = BlockChunker::new(config).unwrap();
    let mut out = Vec::new();
    for d in deltas {
        c.push(d, &mut out);
    }
    c.flush(&mut out);
    out
}

fn texts(blocks: &[Block]) -> Vec<&str> {
    blocks.iter().map(|b| b.text.as_str()).collect()
}

#[test]
fn break_order_tables_follow_the_rule() {
    use BreakClass::{Line, Paragraph, Sentence};
    for preference in [
        BreakPreference::Paragraph,
        BreakPreference::Newline,
        BreakPreference::Sentence,
    ] {
        for flush in [false, true] {
            let mut eager = match preference {
                BreakPreference::Paragraph => vec![Paragraph, Line, Sentence],
                BreakPreference::Newline => vec![Paragraph, Line],
                BreakPreference::Sentence => vec![Sentence],
            };
            if flush && !eager.contains(&Paragraph) {
                eager.insert(0, Paragraph);
            }
            let mut forced = eager.clone();
            forced.extend(BreakClass::TEXT.iter().filter(|c| !eager.contains(c)));
            let (e, f) = break_orders(preference, flush);
            assert_eq!((e, f), (&eager[..], &forced[..]), "{preference:?} {flush}");
        }
    }
}

#[test]
fn fence_stays_whole_between_paragraphs() {
    let text = "Intro\n\n~~~sh\nline1\nline2\n~~~\n\nOutro";
    let blocks = chunk(cfg(5, 25), &[text]);
    assert_eq!(
        texts(&blocks),
        ["Intro", "~~~sh\nline1\nline2\n~~~", "Outro"]
    );
    assert_eq!(blocks[0].sep, "\n\n");
}

fn by_chars(config: ChunkerConfig, text: &str) -> Vec<Block> {
    let deltas: Vec<String> = text.chars().map(String::from).collect();
    let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
    chunk(config, &deltas)
}

#[test]
fn long_fence_is_closed_and_reopened_with_its_info_string() {
    let text = format!("```txt\n{}\n```", "a".repeat(80));
    let blocks = chunk(cfg(10, 30), &[&text]);
    assert!(blocks.len() > 3);
    for b in &blocks {
        assert!(b.text.starts_with("```txt\n"), "{:?}", b.text);
        assert!(b.text.ends_with("\n```"), "{:?}", b.text);
        assert!(b.text.chars().count() <= 30);
    }
    assert_eq!(blocks, by_chars(cfg(10, 30), &text));
}

#[test]
fn four_backtick_fence_with_inner_fence_stays_whole() {
    let text = "Before.\n\n````md\n```\ninner\n```\n````\n\nAfter.";
    let blocks = chunk(cfg(5, 40), &[text]);
    assert_eq!(
        texts(&blocks),
        ["Before.", "````md\n```\ninner\n```\n````", "After."]
    );
}

#[test]
fn indented_fence_stays_intact() {
    let text = "Text here.\n\n  ```\n  code\n  ```\n\nMore text.";
    let blocks = chunk(cfg(5, 30), &[text]);
    assert_eq!(
        texts(&blocks),
        ["Text here.", "  ```\n  code\n  ```", "More text."]
    );
}

#[test]
fn blank_lines_inside_a_fence_are_not_paragraph_breaks() {
    let text = "```\nfn a() {}\n\nfn b() {}\n```\n\ntail";
    let blocks = chunk(cfg(3, 40), &[text]);
    assert_eq!(texts(&blocks), ["```\nfn a() {}\n\nfn b() {}\n```", "tail"]);
}

#[test]
fn a_sentence_mark_at_the_end_waits() {
    let config = ChunkerConfig {
        break_preference: BreakPreference::Sentence,
        ..cfg(3, 100)
    };
    let mut c = BlockChunker::new(config).unwrap();
    let mut out = Vec::new();
    c.push("Pi is 3.", &mut out);
    assert!(out.is_empty(), "3. may become 3.14");
    c.push("14 exactly. Next", &mut out);
    assert_eq!(texts(&out), ["Pi is 3.14 exactly."]);
    assert_eq!(out[0].sep, " ");
}

#[test]
fn cjk_sentences_cut_without_spaces() {
    let config = ChunkerConfig {
        break_preference: BreakPreference::Sentence,
        ..cfg(3, 100)
    };
    let blocks = chunk(config, &["今日は晴れです。明日は雨でしょう！そうですか？"]);
    assert_eq!(
        texts(&blocks),
        ["今日は晴れです。", "明日は雨でしょう！", "そうですか？"]
    );
    assert!(blocks.iter().all(|b| b.sep.is_empty()));
}

#[test]
fn newline_preference_waits_for_a_line_break_until_max() {
    let config = ChunkerConfig {
        break_preference: BreakPreference::Newline,
        ..cfg(5, 30)
    };
    let mut c = BlockChunker::new(config).unwrap();
    let mut out = Vec::new();
    c.push("One sentence. Two sentences. Three", &mut out);
    assert_eq!(
        texts(&out),
        ["One sentence. Two sentences."],
        "cut at max only"
    );
    out.clear();
    c.push(" more\nNext", &mut out);
    assert_eq!(texts(&out), ["Three more"]);
    assert_eq!(out[0].sep, "\n");
}

#[test]
fn hard_cuts_never_split_graphemes() {
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let text = format!("{family}{family}🇫🇷🇩🇪🇯🇵e\u{301}{family}").repeat(3);
    for metric in LengthMetric::ALL {
        let max = metric.min_limit();
        let config = ChunkerConfig {
            metric,
            ..cfg(1, max)
        };
        let blocks = chunk(config, &[&text]);
        let mut at = 0;
        for b in &blocks {
            assert!(metric.len(&b.text) <= max);
            assert!(
                crate::text::metric::is_grapheme_boundary(&text, b.source.end),
                "{metric} {:?}",
                b.text
            );
            at = b.source.end;
        }
        assert_eq!(at, text.len());
        assert_eq!(blocks, by_chars(config, &text), "{metric}");
    }
}

#[test]
fn separators_and_sources_rebuild_the_text() {
    let text = "\n\nFirst line.\n  indented second\n\n\nThird para here.   Fourth.  \n";
    let blocks = chunk(cfg(5, 24), &[text]);
    let rebuilt: String = blocks
        .iter()
        .map(|b| format!("{}{}{}", b.lead, &text[b.source.clone()], b.sep))
        .collect();
    assert_eq!(rebuilt, text);
    assert_eq!(blocks[0].lead, "\n\n");
    assert!(blocks.iter().any(|b| b.text.starts_with("  indented")));
}

#[test]
fn long_fences_cut_the_same_for_any_deltas() {
    // Code lines that start with the marker char, a CR LF line, a line that looks like a
    // closer but is not, and the real closer: the bulk path must stop before each line
    // that might close the fence and leave the cut at max to the char-by-char path.
    let mut code = String::new();
    for i in 0..40 {
        code.push_str(&format!("    let v{i} = f({i}); // step {i}.\n"));
        if i % 7 == 0 {
            code.push_str("```` not a closer\r\n  `x` 👨\u{200d}👩 e\u{301}\n\n");
        }
    }
    let text = format!("Intro text. More.\n\n````rust\n{code}  ````  \n\nOutro. End.");
    for metric in LengthMetric::ALL {
        for (min, max) in [(20, 60), (100, 300), (250, 260)] {
            let config = ChunkerConfig {
                metric,
                ..cfg(min, max)
            };
            let whole = chunk(config, &[&text]);
            assert_eq!(whole, by_chars(config, &text), "{metric} {min} {max}");
            let sized: Vec<&str> = text.split_inclusive([';', '`']).collect();
            assert_eq!(whole, chunk(config, &sized), "{metric} {min} {max}");
            assert!(whole.iter().any(|b| b.fence_reopened));
        }
    }
}

#[test]
fn open_fence_is_closed_at_flush() {
    let blocks = chunk(cfg(20, 100), &["Look:\n```py\nprint(1)\n"]);
    assert_eq!(texts(&blocks), ["Look:\n```py\nprint(1)\n```"]);
    assert!(blocks[0].fence_closed);
}

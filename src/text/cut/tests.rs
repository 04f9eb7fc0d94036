//! Unit tests of the cut finder and the planner.

use crate::text::markdown::MarkdownScanner;

use super::bounds::*;
use super::candidate::*;
use super::find::*;
use super::hard::*;

fn scanned(text: &str) -> MarkdownScanner {
    let mut s = MarkdownScanner::new();
    s.finish(text);
    s
}

#[test]
fn classifies_candidates() {
    let t = "One. Two\n\n  three\nfour x";
    let c = candidate_at(t, 4, false).unwrap();
    assert!(c.has(BreakClass::Sentence) && c.has(BreakClass::Whitespace));
    assert_eq!((c.end, c.sep_end), (4, 5));
    let c = candidate_at(t, 8, false).unwrap();
    assert!(c.has(BreakClass::Paragraph) && c.has(BreakClass::Line));
    assert_eq!(
        &t[c.end..c.sep_end],
        "\n\n",
        "indentation stays with the next piece"
    );
    assert!(candidate_at("a ", 1, false).is_none(), "undecided run");
    assert!(candidate_at("a ", 1, true).is_some());
    assert!(candidate_at("3.14", 2, false).is_none());
}

#[test]
fn cjk_sentences_need_no_space() {
    let t = "今日は晴れ。明日は「雨？」です";
    let p = t.find('明').unwrap();
    let c = candidate_at(t, p, false).unwrap();
    assert_eq!((c.end, c.sep_end), (p, p));
    assert!(c.has(BreakClass::Sentence));
    let q = t.find('で').unwrap();
    assert!(candidate_at(t, q, false).is_some(), "closer after the mark");
    assert!(candidate_at(t, t.find('」').unwrap(), false).is_none());
}

#[test]
fn finds_best_class_last() {
    let t = "aa bb.\ncc. dd\n\nee ff. gg hh";
    let s = scanned(t);
    let order = BreakClass::TEXT;
    let cut = find_cut(t, &s, 0, 1, t.len(), &order, false, Safety::Strict, None).unwrap();
    assert_eq!(cut.class, BreakClass::Paragraph);
    assert_eq!(&t[..cut.end], "aa bb.\ncc. dd");
    let cut = find_cut(t, &s, 0, 1, 12, &order, false, Safety::Strict, None).unwrap();
    assert_eq!(cut.class, BreakClass::Line);
    let order = [BreakClass::Sentence];
    let cut = find_cut(t, &s, 0, 1, t.len(), &order, false, Safety::Strict, None).unwrap();
    assert_eq!(&t[..cut.end], "aa bb.\ncc. dd\n\nee ff.");
}

#[test]
fn skips_unsafe_candidates() {
    let t = "x `a b c` y\n```\nq r\n```\nz";
    let s = scanned(t);
    let cut = find_cut(
        t,
        &s,
        0,
        1,
        8,
        &BreakClass::TEXT,
        false,
        Safety::Strict,
        None,
    )
    .unwrap();
    assert_eq!(cut.end, 1);
    let inside = t.find("q r").unwrap() + 1;
    let cut = find_cut(
        t,
        &s,
        0,
        10,
        inside + 1,
        &BreakClass::TEXT,
        false,
        Safety::Strict,
        None,
    )
    .unwrap();
    assert_eq!(cut.end, 11, "the line break before the fence");
}

#[test]
fn hard_cut_keeps_graphemes() {
    let t = "ab👨‍👩‍👧cd";
    for hi in 3..10 {
        assert_eq!(hard_cut(t, 0, 0, hi), 2);
    }
    assert_eq!(
        hard_cut(t, 2, 2, 5),
        6,
        "a lone grapheme wider than the budget: limit wins"
    );
    assert_eq!(hard_cut("日本", 0, 0, 1), 3, "progress wins over the limit");
    assert_eq!(hard_cut(" 日本", 0, 0, 2), 4, "never whitespace alone");
}

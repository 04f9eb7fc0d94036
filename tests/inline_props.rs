//! Property tests of the inline repairs (issue 16, defects 3, 4, 5): random paragraphs of
//! links, bare URLs, bold, strikethrough, italics and inline code spans, short and longer than
//! the limit, with CRLF, CJK and emoji, through the chunker (every preference, tiny limits, any
//! deltas) and the splitter. Besides every invariant of `text_checks` (exact rebuild, limits,
//! split-invariance), each piece is checked with the test's own reading:
//! - no cut falls inside a link or URL that is at most half a piece long (a cut outside it
//!   always exists then), past a bare URL's `://` (a cut at max made while the scheme is still
//!   arriving cannot know a URL is coming);
//! - every piece shows balanced `**`, `~~` and backticks: emphasis and code cut by a cut are
//!   closed in the piece and reopened in the next.

mod text_checks;

use proptest::prelude::*;
use replystream::{Block, LengthMetric, PlatformSplitter, SplitConfig};
use text_checks::{Expect, cases, check_all, check_blocks, chunker_config, run_chunker};

/// A word: ASCII, CJK, an emoji, a CRLF-free accent.
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z]{1,7}".prop_map(|w| w),
        1 => Just("日本語".to_string()),
        1 => Just("👨\u{200d}👩\u{200d}👧".to_string()),
        1 => Just("e\u{301}te".to_string()),
    ]
}

fn words(n: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    prop::collection::vec(word(), n).prop_map(|w| w.join(" "))
}

/// A piece of a paragraph, with what it is.
#[derive(Clone, Debug)]
enum Piece {
    Plain(String),
    /// A link, image or URL: never cut while short.
    Atomic(String),
    /// Emphasis or code: cut only with delimiters repaired.
    Wrapped(String),
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => words(1..6).prop_map(Piece::Plain),
        1 => (words(1..5), "[a-z]{1,12}").prop_map(|(t, p)| Piece::Atomic(format!("[{t}](https://x.io/{p})"))),
        1 => (words(1..3), "[a-z]{1,8}").prop_map(|(t, p)| Piece::Atomic(format!("![{t}](i/{p}.png)"))),
        1 => "[a-z/]{1,30}".prop_map(|p| Piece::Atomic(format!("https://example.com/{p}"))),
        1 => "[a-z]{1,20}".prop_map(|p| Piece::Atomic(format!("<https://a.b/{p}>"))),
        2 => words(1..30).prop_map(|t| Piece::Wrapped(format!("**{t}**"))),
        1 => words(1..20).prop_map(|t| Piece::Wrapped(format!("~~{t}~~"))),
        1 => words(1..20).prop_map(|t| Piece::Wrapped(format!("**{t} ~~{t}~~ {t}**"))),
        2 => "[a-z=.-]{1,12}( [a-z=.-]{1,12}){0,12}".prop_map(|t| Piece::Wrapped(format!("`{t}`"))),
    ]
}

/// Paragraphs of pieces; the byte ranges of the atomic pieces.
fn reply() -> impl Strategy<Value = (String, Vec<std::ops::Range<usize>>)> {
    let para = prop::collection::vec(piece(), 1..12);
    let seps = prop_oneof![3 => Just(" "), 1 => Just("\n"), 1 => Just("\r\n")];
    prop::collection::vec((para, prop::collection::vec(seps, 12)), 1..5).prop_map(|paras| {
        let mut text = String::new();
        let mut atomic = Vec::new();
        for (k, (pieces, seps)) in paras.into_iter().enumerate() {
            if k > 0 {
                text.push_str("\n\n");
            }
            for (i, p) in pieces.into_iter().enumerate() {
                if i > 0 {
                    text.push_str(seps[i % seps.len()]);
                }
                match p {
                    Piece::Plain(s) | Piece::Wrapped(s) => text.push_str(&s),
                    Piece::Atomic(s) => {
                        atomic.push(text.len()..text.len() + s.len());
                        text.push_str(&s);
                    }
                }
            }
        }
        (text, atomic)
    })
}

/// The checks of the module docs on `blocks` of `text` cut to `max` units of `metric`.
fn check_spans(
    text: &str,
    atomic: &[std::ops::Range<usize>],
    blocks: &[Block],
    metric: LengthMetric,
    max: usize,
) -> Result<(), String> {
    for b in blocks {
        for p in [b.source.start, b.source.end] {
            for a in atomic {
                let short = 2 * metric.len(&text[a.clone()]) <= max;
                // A bare URL is known from its `://` (or `www.`) on: a cut made at max while
                // its scheme is still arriving cannot know it (the one lookahead limit).
                let span = &text[a.clone()];
                let scheme = match span.starts_with("http") {
                    true => span.find("://").map_or(0, |i| i + 3),
                    false => 0,
                };
                if short && p > a.start + scheme && p < a.end {
                    return Err(format!(
                        "cut at {p} inside {:?}: {:?}",
                        &text[a.clone()],
                        b.text
                    ));
                }
            }
        }
        let t = &b.text;
        if t.matches("**").count() % 2 != 0
            || t.matches("~~").count() % 2 != 0
            || t.matches('`').count() % 2 != 0
        {
            return Err(format!("unbalanced delimiters in {t:?} ({blocks:#?})"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    #[test]
    fn chunker_keeps_links_whole_and_repairs_emphasis_and_code(
        (text, atomic) in reply(),
        config in chunker_config(),
        size in 1usize..9,
    ) {
        check_all(&text, config, &[size, 3]).map_err(TestCaseError::fail)?;
        let blocks = run_chunker(config, [text.as_str()]);
        check_spans(&text, &atomic, &blocks, config.metric, config.max)
            .map_err(|e| TestCaseError::fail(format!("{config:?}: {e}")))?;
    }

    #[test]
    fn splitter_keeps_links_whole_and_repairs_emphasis_and_code(
        (text, atomic) in reply(),
        m in 0usize..4,
        extra in 0usize..120,
    ) {
        let metric = LengthMetric::ALL[m];
        let limit = metric.min_limit() + extra;
        let config = SplitConfig { limit, metric, ..SplitConfig::default() };
        let pieces = PlatformSplitter::new(config).expect("valid").split(&text);
        let expect = Expect::for_text(&text, metric, limit, None);
        check_blocks(&text, &pieces, expect).map_err(TestCaseError::fail)?;
        check_spans(&text, &atomic, &pieces, metric, limit)
            .map_err(|e| TestCaseError::fail(format!("{config:?}: {e}")))?;
    }
}

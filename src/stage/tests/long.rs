//! The text stages over LONG generated texts (several KiB), where the code paths that only
//! run on long input run: the trackers drop decided text in batches
//! ([`crate::stage::SETTLE_BATCH`]), the scanner drains, the token gate's head and tail holds
//! reach their bounds, directives and tags straddle the drop points.
//!
//! A long reply of prose, tables, lists, fences and indented code is generated and the hard
//! constructs are put around the batch edges: stray and unmatched backtick runs of every
//! length, inline spans across lines, fences opened and closed near the edge, indented code,
//! thinking and final tags, bracket and `MEDIA:` directives inside and outside code, the
//! silent and heartbeat tokens, CRLF and multi-byte characters. Checked exactly, with no
//! whitespace squashed:
//!
//! - every stage alone (tags, directives, tokens) and the three wired together give the same
//!   output for the whole text, for one char at a time and for random cuts;
//! - the token gate gives what [`normalize_text`] gives for the whole text;
//! - the tag filter's answer does not depend on how much plain text came before: a prefix of
//!   plain paragraphs (ending in a blank line, which ends every block) only prefixes the
//!   answer. The prefix moves every drop point, so this checks that a drop never changes a
//!   decision even when the whole text arrives in one piece.

use crate::stage::SETTLE_BATCH;
use crate::stage::directives::MAX_BRACKET_LEN;
use crate::stage::directives::media::MAX_MEDIA_LINE_LEN;
use crate::stage::directives::{DirectiveEvent, DirectiveOutput, DirectiveParser};
use crate::stage::tags::CODE_HOLD;
use crate::stage::tags::TagFilter;
use crate::stage::tests::wired;
use crate::stage::tokens::{TokenConfig, TokenGate, normalize_text};

/// Plain prose words (no stage syntax, no Markdown syntax).
const WORDS: &[&str] = &[
    "the",
    "quick",
    "brown",
    "fox",
    "jumps",
    "over",
    "lazy",
    "dog",
    "stream",
    "block",
    "naïve",
    "café",
    "日本語",
    "👍🏽",
    "e\u{301}tude",
    "x",
    "3.14",
    "don't",
];

/// Hard constructs, several of which the stages treat differently inside and outside code.
const HARD: &[&str] = &[
    "`",
    "``",
    "```",
    "````",
    "`````",
    " ` ",
    " `` ",
    "`code`",
    "``a ` b``",
    "`<think>`",
    "`</think>`",
    "``<think>``",
    "`[[reply_to_current]]`",
    "`[[audio_as_voice]]`",
    "`a\nb`",
    "`span\nacross <think>lines</think>`",
    "<think>hidden Σ</think>",
    "<thinking>\nhidden Θ\n</thinking>",
    "< think >Ψ</ think >",
    "<think type=\"x\">Ω</think>",
    "<think>",
    "</think>",
    "<final>",
    "</final>",
    "<thinking/>",
    "<thi",
    "</fin",
    "a < b > c",
    "[[reply_to_current]]",
    "[[reply_to: 77]]",
    "[[ reply_to : 78 ]]",
    "[[audio_as_voice]]",
    "[[media:https://example.com/a.png]]",
    "[[",
    "]]",
    "[[not a directive]]",
    "[x](y)",
    "\nMEDIA: https://example.com/b.png\n",
    "\nMEDIA: ./local/c.txt\n",
    "\n   MEDIA: https://example.com/d.png extra\n",
    "\nMEDIA: http://localhost/x.png\n",
    "\r\nMEDIA: https://example.com/crlf.png\r\n",
    "\r\n[[reply_to_current]]\r\n",
    "\nMEDIA: \"./with space.png\"\n",
    "The MEDIA: tag",
    "NO_REPLY",
    " NO_REPLY",
    "HEARTBEAT_OK",
    "**NO_REPLY**",
    "\r\n",
    "\r\n\r\n",
    "\n\n",
    "\n",
    "\n    indented <think>code</think> line\n",
    "\n\n    indented <think>code</think> [[audio_as_voice]]\n\n",
    "\n\n\tMEDIA: https://example.com/tab.png\n\n",
    "\n```\n<think>in fence</think>\n[[reply_to_current]]\nMEDIA: https://example.com/f.png\n```\n",
    "\n~~~ info `x`\n<final>fence</final>\n~~~\n",
    "\n````md\n```\n<think>\n```\n````\n",
    "\n```",
    "\n```\n",
    "\n~~~\n",
    "\n- item `open\n- next <think>t</think>\n",
    "\n# Heading `open\n",
    "\n> quote `open <think>q</think>\n",
    "\n| a | `b` | <think>c</think> |\n",
    "é",
    "日",
    "👨\u{200d}👩\u{200d}👧",
    "\u{301}",
];

/// A construct longer than the drop batch or a stage's hold: a long backtick run, a long
/// line that may still be a fence line, an unclosed `[[`, a long `MEDIA:` line or reply id,
/// a long inline code span, a long indented code block.
fn long_construct(rng: &mut fastrand::Rng) -> String {
    let n = rng.usize(SETTLE_BATCH / 2..SETTLE_BATCH * 3);
    let filler = |n: usize| "ab é ".repeat(n / 6 + 1);
    match rng.u8(..9) {
        0 => "`".repeat(rng.usize(1..n)),
        1 => format!("\n```{}", filler(n)),
        2 => format!("[[{}", filler(n)),
        3 => format!("\nMEDIA: https://example.com/{}.png\n", "p".repeat(n)),
        4 => format!("[[reply_to: {}]]", "9".repeat(n)),
        5 => format!("`<think>{}</think>`", filler(n)),
        6 => format!("\n\n{}\n", "    code <think> line\n".repeat(n / 20 + 1)),
        7 => match rng.u8(..4) {
            0 => format!("<think>{}", "`".repeat(rng.usize(1..5))) + &filler(n) + "</think>",
            // Tags around the tag length bound: long attributes, long blanks inside.
            1 => format!(
                "<think data=\"{}\">hidden</think>",
                "a".repeat(rng.usize(200..300))
            ),
            2 => format!("<final{}>kept</final >", " ".repeat(rng.usize(200..300))),
            _ => format!("hidden</{}think>", "\n".repeat(rng.usize(200..300))),
        },
        // Past the stages' own bounds: a `MEDIA:` line longer than a media line may be, a
        // bracket longer than a bracket directive, a tag after more than the code look-ahead
        // in an open span.
        _ => match rng.u8(..5) {
            3 => format!(
                "[[audio_as_voice{}",
                "z ".repeat(MAX_BRACKET_LEN / 2 + rng.usize(..64))
            ),
            4 => format!(
                "\n{}<think>x</think>\n",
                " ".repeat(SETTLE_BATCH * 2 + rng.usize(..64))
            ),
            0 => format!(
                "\nMEDIA: https://example.com/{}.png\n",
                "q".repeat(MAX_MEDIA_LINE_LEN + rng.usize(..64) - 40)
            ),
            1 => format!(
                "[[media:https://example.com/{}]]",
                "r".repeat(MAX_BRACKET_LEN + rng.usize(..64) - 48)
            ),
            _ => format!(
                "`{}<think>x</think>`",
                "s é".repeat(CODE_HOLD / 4 + rng.usize(..32) - 16)
            ),
        },
    }
}

/// A long text: paragraphs of prose with hard constructs sprinkled in, and a burst of hard
/// constructs around every multiple of the drop batch (where the drops happen).
fn long_text(seed: u64, len: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = String::new();
    if rng.u8(..4) == 0 {
        out.push_str(
            [
                "HEARTBEAT_OK ",
                "NO_REPLY",
                "  **HEARTBEAT_OK**\n",
                "<final>",
            ][rng.usize(..4)],
        );
    }
    if rng.u8(..8) == 0 {
        // A long undecided start: whitespace and markup past the token gate's head bound.
        let unit = [" ", "\n", "**", "\r\n", "<b>"][rng.usize(..5)];
        out.push_str(&unit.repeat(rng.usize(100..400)));
        out.push_str(["HEARTBEAT_OK", "NO_REPLY", "x"][rng.usize(..3)]);
    }
    let mut next_edge = SETTLE_BATCH - rng.usize(..48);
    while out.len() < len {
        if out.len() >= next_edge {
            // A burst of hard constructs straddling the edge.
            for _ in 0..rng.usize(2..10) {
                out.push_str(HARD[rng.usize(..HARD.len())]);
                if rng.bool() {
                    out.push(' ');
                }
            }
            next_edge = out.len() + SETTLE_BATCH - rng.usize(..96);
            continue;
        }
        match rng.u8(..20) {
            0 => out.push_str("\n\n"),
            1 => out.push('\n'),
            2 => out.push_str("\r\n"),
            3 | 4 => out.push_str(HARD[rng.usize(..HARD.len())]),
            7 if rng.u8(..6) == 0 => out.push_str(&long_construct(&mut rng)),
            5 => {
                // A table row.
                out.push_str("\n| ");
                for _ in 0..rng.usize(1..5) {
                    out.push_str(WORDS[rng.usize(..WORDS.len())]);
                    out.push_str(" | ");
                }
                out.push('\n');
            }
            6 => {
                // A fenced code block of a few lines, maybe long.
                let fence = ["```", "~~~", "````"][rng.usize(..3)];
                out.push('\n');
                out.push_str(fence);
                out.push_str(["", "rust", "js title=\"x\""][rng.usize(..3)]);
                out.push('\n');
                for _ in 0..rng.usize(0..8) {
                    out.push_str("let x = ");
                    out.push_str(WORDS[rng.usize(..WORDS.len())]);
                    if rng.u8(..4) == 0 {
                        out.push_str(HARD[rng.usize(..HARD.len())]);
                    }
                    out.push('\n');
                }
                if rng.u8(..6) != 0 {
                    out.push_str(fence);
                    out.push('\n');
                }
            }
            _ => {
                out.push_str(WORDS[rng.usize(..WORDS.len())]);
                out.push(' ');
            }
        }
    }
    if rng.u8(..4) == 0 {
        out.push_str(
            [
                " NO_REPLY",
                " NO_REPLY NO_REPLY",
                " HEARTBEAT_OK!!",
                "</final>",
                "\n\n",
                &" NO_REPLY".repeat(rng.usize(20..60)),
                &format!(" {}", "HEARTBEAT_OK ".repeat(rng.usize(15..40))),
            ][rng.usize(..7)],
        );
    }
    out
}

/// `text` cut into pieces: at every char boundary (`None`) or at the given byte offsets
/// (those that are char boundaries).
fn pieces<'a>(text: &'a str, cuts: Option<&[usize]>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut at = 0;
    match cuts {
        None => {
            for (i, c) in text.char_indices() {
                out.push(&text[i..i + c.len_utf8()]);
            }
        }
        Some(cuts) => {
            for &c in cuts {
                if c > at && c <= text.len() && text.is_char_boundary(c) {
                    out.push(&text[at..c]);
                    at = c;
                }
            }
            out.push(&text[at..]);
        }
    }
    out
}

fn tags_only(pieces: &[&str], require_final: bool) -> (String, String) {
    let mut tags = TagFilter::new(require_final);
    let (mut answer, mut reasoning) = (String::new(), String::new());
    for p in pieces {
        tags.push(p, &mut answer, &mut reasoning);
    }
    tags.finish(&mut answer, &mut reasoning);
    (answer, reasoning)
}

fn directives_only(pieces: &[&str]) -> (String, Vec<(usize, String)>) {
    let mut parser = DirectiveParser::new();
    let mut out = DirectiveOutput::new();
    let (mut text, mut events) = (String::new(), Vec::new());
    let mut collect = |out: &mut DirectiveOutput| {
        for e in &out.events {
            match e {
                DirectiveEvent::Text(r) => text.push_str(&out.text[r.clone()]),
                other => events.push((text.len(), format!("{other:?}"))),
            }
        }
        out.clear();
    };
    for p in pieces {
        parser.push(p, &mut out);
        collect(&mut out);
    }
    parser.finish(&mut out);
    collect(&mut out);
    (text, events)
}

fn tokens_only(pieces: &[&str]) -> String {
    let mut gate = TokenGate::new(&TokenConfig::default());
    let mut out = String::new();
    for p in pieces {
        gate.push(p, &mut out);
    }
    gate.finish(&mut out);
    out
}

/// The first byte where two strings differ, with some context, for failure messages.
fn diff_at(a: &str, b: &str) -> String {
    let i = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let lo = i.saturating_sub(60);
    let ctx = |s: &str| {
        let mut from = lo.min(s.len());
        while !s.is_char_boundary(from) {
            from -= 1;
        }
        let mut to = (i + 60).min(s.len());
        while !s.is_char_boundary(to) {
            to += 1;
        }
        s[from..to].to_string()
    };
    format!(
        "first difference at byte {i}:\n  {:?}\nvs\n  {:?}",
        ctx(a),
        ctx(b)
    )
}

/// Plain paragraphs (no syntax any stage or the scanner reacts to), ending in a blank line.
fn plain_prefix(seed: u64, len: usize) -> String {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x5eed);
    let mut out = String::new();
    while out.len() < len {
        out.push_str(WORDS[rng.usize(..WORDS.len())]);
        out.push_str([" ", " ", " ", "\n", "\n\n"][rng.usize(..5)]);
    }
    out.push_str("\n\n");
    out
}

/// Random cut points: a few anywhere, and many around the multiples of the drop batch.
fn random_cuts(seed: u64, len: usize) -> Vec<usize> {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0xc075);
    let mut cuts: Vec<usize> = (0..rng.usize(1..40)).map(|_| rng.usize(..=len)).collect();
    let mut edge = SETTLE_BATCH;
    while edge < len {
        for _ in 0..rng.usize(0..4) {
            cuts.push((edge + rng.usize(..16)).saturating_sub(8).min(len));
        }
        edge += SETTLE_BATCH;
    }
    cuts.sort_unstable();
    cuts
}

/// The seeds a test runs: `LONG_SEEDS=a..b` (or `=n` for `0..n`) overrides the default range,
/// so a long exploration can run the same code as the suite.
fn seeds(default: std::ops::Range<u64>) -> std::ops::Range<u64> {
    let Ok(v) = std::env::var("LONG_SEEDS") else {
        return default;
    };
    match v.split_once("..") {
        Some((a, b)) => a.parse().unwrap()..b.parse().unwrap(),
        None => 0..v.parse().unwrap(),
    }
}

/// Runs `check` on every seed and reports all failing seeds (the first message in full).
fn over_seeds(default: std::ops::Range<u64>, check: impl Fn(u64) -> Result<(), String>) {
    let mut failed = Vec::new();
    let mut first = None;
    for seed in seeds(default) {
        if let Err(e) = check(seed) {
            failed.push(seed);
            first.get_or_insert(e);
        }
    }
    if let Some(e) = first {
        panic!("seeds {failed:?} failed; seed {}: {e}", failed[0]);
    }
}

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(format!($($fmt)+));
        }
    };
}

fn check_split_invariance(seed: u64) -> Result<(), String> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let text = long_text(seed, rng.usize(2048..8192));
    let cuts = random_cuts(seed, text.len());
    let splits = [pieces(&text, None), pieces(&text, Some(&cuts))];
    let whole = [text.as_str()];
    for require_final in [false, true] {
        let w = tags_only(&whole, require_final);
        for (k, s) in splits.iter().enumerate() {
            let got = tags_only(s, require_final);
            ensure!(
                got.0 == w.0,
                "tags answer, split {k}, final {require_final}: {}",
                diff_at(&got.0, &w.0)
            );
            ensure!(
                got.1 == w.1,
                "tags reasoning, split {k}, final {require_final}: {}",
                diff_at(&got.1, &w.1)
            );
        }
    }
    let w = directives_only(&whole);
    for (k, s) in splits.iter().enumerate() {
        let got = directives_only(s);
        ensure!(
            got.0 == w.0,
            "directives text, split {k}: {}",
            diff_at(&got.0, &w.0)
        );
        ensure!(
            got.1 == w.1,
            "directive events, split {k}: {:?} vs {:?}",
            got.1,
            w.1
        );
    }
    let w = tokens_only(&whole);
    let normal = normalize_text(&TokenConfig::default(), &text);
    ensure!(
        w == normal,
        "token gate vs normalize_text: {}",
        diff_at(&w, normal)
    );
    for (k, s) in splits.iter().enumerate() {
        let got = tokens_only(s);
        ensure!(got == w, "tokens, split {k}: {}", diff_at(&got, &w));
    }
    let w = wired(&whole);
    for (k, s) in splits.iter().enumerate() {
        let got = wired(s);
        ensure!(
            got.answer == w.answer,
            "wired answer, split {k}: {}",
            diff_at(&got.answer, &w.answer)
        );
        ensure!(
            got.reasoning == w.reasoning,
            "wired reasoning, split {k}: {}",
            diff_at(&got.reasoning, &w.reasoning)
        );
        ensure!(
            got.events == w.events,
            "wired events, split {k}: {:?} vs {:?}",
            got.events,
            w.events
        );
    }
    Ok(())
}

fn check_plain_prefix(seed: u64) -> Result<(), String> {
    let mut rng = fastrand::Rng::with_seed(seed ^ 0x9e37);
    // Starts with a word, so the tag filter's tidying sees the same text before any tag.
    let text = format!("Start {}", long_text(seed, rng.usize(1024..6144)));
    let prefix = plain_prefix(seed, rng.usize(1..3 * SETTLE_BATCH));
    let padded = format!("{prefix}{text}");
    for require_final in [false, true] {
        let bare = tags_only(&[&text], require_final);
        let expected = if require_final {
            bare.0.clone()
        } else {
            format!("{prefix}{}", bare.0)
        };
        for (k, split) in [pieces(&padded, Some(&[])), pieces(&padded, None)]
            .iter()
            .enumerate()
        {
            let got = tags_only(split, require_final);
            let pad = prefix.len();
            ensure!(
                got.0 == expected,
                "answer, split {k}, final {require_final}, pad {pad}: {}",
                diff_at(&got.0, &expected)
            );
            ensure!(
                got.1 == bare.1,
                "reasoning, split {k}, final {require_final}, pad {pad}: {}",
                diff_at(&got.1, &bare.1)
            );
        }
    }
    // The directive parser's events do not move with the prefix either (the text around
    // them may be tidied differently at the seam, so only the events are compared).
    let bare = directives_only(&[&text]);
    let got = directives_only(&[&padded]);
    let events = |v: &[(usize, String)]| v.iter().map(|e| e.1.clone()).collect::<Vec<_>>();
    ensure!(
        events(&got.1) == events(&bare.1),
        "directive events, pad {}: {:?} vs {:?}",
        prefix.len(),
        got.1,
        bare.1
    );
    Ok(())
}

#[test]
fn long_texts_every_stage_is_split_invariant() {
    over_seeds(0..200, check_split_invariance);
}

#[test]
fn long_texts_a_plain_prefix_only_prefixes_the_tag_filter() {
    over_seeds(0..200, check_plain_prefix);
}

/// A tag inside an inline code span that is still open is decided by looking ahead at most
/// `CODE_HOLD` bytes; where that bound falls inside a multi-byte character, the look-ahead
/// must stop at the character before it (it sliced the text there and panicked).
#[test]
fn a_tag_in_an_open_span_with_a_multibyte_char_at_the_look_ahead_bound() {
    // The `<` is at byte 1, so the bound is byte 1 + CODE_HOLD: odd, inside an `é`.
    let text = format!("`<think>{}", "é".repeat(CODE_HOLD / 2 + 8));
    assert!(!text.is_char_boundary(1 + CODE_HOLD));
    let whole = tags_only(&[&text], false);
    // Still open after the look-ahead: undecided, so the opener fails closed and hides.
    assert_eq!(whole, ("`".to_string(), "é".repeat(CODE_HOLD / 2 + 8)));
    assert_eq!(tags_only(&pieces(&text, None), false), whole);
}

/// A text boundary inside the message (`TextEnd`, a tool call) decides held-back tags as if
/// nothing followed, but the text goes on: the boundary must not change how the text after
/// it is read. It did when a tag sat in an open code span at the boundary: deciding it ended
/// the scanner's line for good, so backticks that continue the line read as a fence opener
/// and the thinking block after them was shown as code (a leak); the same text without the
/// tag before the boundary hid it.
#[test]
fn a_boundary_after_a_tag_in_an_open_span_does_not_open_a_fence() {
    let second = "```\n<think>secret</think>\nz\n";
    for first in [
        "Use `x <final>y",
        "Use `x y",
        "Use `x </think>y",
        "Use `x <thi",
    ] {
        let mut tags = TagFilter::new(false);
        let (mut answer, mut reasoning) = (String::new(), String::new());
        tags.push(first, &mut answer, &mut reasoning);
        tags.release(&mut answer, &mut reasoning);
        tags.push(second, &mut answer, &mut reasoning);
        tags.finish(&mut answer, &mut reasoning);
        assert_eq!(reasoning, "secret", "{first:?}: answer {answer:?}");
        assert!(answer.ends_with("```\nz\n"), "{first:?}: answer {answer:?}");
        // The same as with no boundary at all.
        let whole = tags_only(&[&format!("{first}{second}")], false);
        assert_eq!((answer, reasoning), whole, "{first:?}");
    }
}

/// A backtick run that never closes is literal text (CommonMark): directives after it in the
/// same paragraph are outside code and apply. They were taken for code (an open span
/// counted as code), so a stray backtick earlier in the paragraph left a `MEDIA:` line as
/// visible text and sent no media. A run that does close still makes them code.
#[test]
fn directives_after_an_unmatched_backtick_apply() {
    let media = |url: &str| format!("{:?}", DirectiveEvent::Media(url.to_string()));
    type Case<'a> = (&'a str, &'a str, Vec<(usize, String)>);
    let cases: [Case; 5] = [
        (
            "Price 5` each\nMEDIA: https://example.com/a.png\nmore\n",
            "Price 5` each\nmore\n",
            vec![(14, media("https://example.com/a.png"))],
        ),
        (
            "Use `x [[reply_to_current]] y\n",
            "Use `x y\n",
            vec![(6, "ReplyTo(Current)".to_string())],
        ),
        (
            "A ` stray.\n[[audio_as_voice]] hi\n\nnext",
            "A ` stray.\nhi\n\nnext",
            vec![(11, "AudioAsVoice".to_string())],
        ),
        // Closed later in the paragraph: code, left as it is.
        (
            "Use `x [[audio_as_voice]] y` z\n",
            "Use `x [[audio_as_voice]] y` z\n",
            vec![],
        ),
        (
            "Price 5` each\nMEDIA: https://example.com/a.png\nmore` x\n",
            "Price 5` each\nMEDIA: https://example.com/a.png\nmore` x\n",
            vec![],
        ),
    ];
    for (text, answer, events) in cases {
        let expected = (answer.to_string(), events);
        assert_eq!(directives_only(&[text]), expected, "{text:?} whole");
        assert_eq!(
            directives_only(&pieces(text, None)),
            expected,
            "{text:?} chars"
        );
    }
}

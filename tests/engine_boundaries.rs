//! Text boundaries inside one assistant message (`TextEnd`, tool calls): what a stage holds
//! back, because it may still turn out to be a tag, a directive or a token, is let go at the
//! boundary, so it is sent before the boundary and the joiner lands after it (issues 7, 8).

mod common;

use common::*;
use replystream::{Input, SendKind};

/// The texts sent, in order, with their kinds.
fn sends(sim: &Sim) -> Vec<(SendKind, String)> {
    sim.sends()
        .into_iter()
        .map(|(_, s)| (s.kind, s.payload.text.clone()))
        .collect()
}

#[test]
fn the_tag_filter_lets_go_of_a_possible_tag_start_at_a_text_end() {
    // "</t" may be the start of "</think>": held, but the text block ends right after it.
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta("A table cell </t"))
        .push(Input::TextEnd(None))
        .push(Input::TextDelta("d> goes on."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["A table cell </t\n\nd> goes on."]);
}

#[test]
fn a_possible_directive_start_is_released_at_a_tool_start_in_order() {
    // "[" may start "[[reply_to_current]]": held, but a tool call comes right after it.
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta("See the list ["))
        .push(Input::ToolStart { name: "search" })
        .push(Input::ToolResult(replystream::Payload {
            text: "found 3".into(),
            ..Default::default()
        }))
        .push(Input::TextDelta("done."))
        .push(Input::Finish)
        .run_until_idle();
    let sent = sends(&sim);
    assert_eq!(
        sent,
        [
            (SendKind::Block, "See the list [".to_owned()),
            (SendKind::Tool, "found 3".to_owned()),
            (SendKind::Block, "done.".to_owned()),
        ]
    );
}

/// Every send of `sim` checked exactly against `text`, one assistant message with a
/// forced flush at `at` (a `TextEnd` there also puts the joiner there).
fn assert_exact(sim: &Sim, config: &replystream::Config, text: &str, at: usize, text_end: bool) {
    use common::reconstruct::{Rule, Source, check_answer, seen_sends};
    let delivered: std::collections::HashSet<_> =
        sim.delivered.iter().map(|(_, s)| s.send_id).collect();
    let log: Vec<_> = sim
        .sends()
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| s.kind != SendKind::Tool)
        .collect();
    let sends = seen_sends(log.iter(), &delivered);
    let rule = Rule {
        joiner: "\n\n",
        metric: config.metric,
        limit: config.text_limit,
        max_lines: config.max_lines,
        graphemes: true,
        all_fences_repairable: true,
    };
    let line = text[..at].rsplit('\n').next().unwrap_or("");
    let line_ends: Vec<usize> = if line.trim().is_empty() {
        vec![]
    } else {
        vec![at]
    };
    let seams = if text_end { vec![at] } else { vec![] };
    let source = Source::with_line_ends(text, seams, &line_ends);
    if let Err(e) = check_answer(&[source], &sends, &rule) {
        panic!("flush at {at}: {e}\nsends: {:#?}", sim.sent_texts());
    }
}

/// A generic channel whose blocks and merged texts are at most `max` chars.
fn blocks_of(max: usize) -> replystream::Config {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.chunk_max = max;
    c.coalesce_min = Some(1);
    c.coalesce_max = Some(max);
    c
}

/// `text` streamed as one message (one char per delta with `by_char`), with a tool call
/// (`tool`) or a `TextEnd` at `at`, and the turn finished.
fn flushed_at(
    config: &replystream::Config,
    text: &str,
    at: usize,
    tool: bool,
    by_char: bool,
) -> Sim {
    let mut sim = Sim::new(engine(config.clone()));
    sim.push(Input::MessageStart);
    if by_char {
        for ch in text[..at].chars() {
            sim.push(Input::TextDelta(&ch.to_string()));
        }
    } else {
        sim.push(Input::TextDelta(&text[..at]));
    }
    match tool {
        true => sim.push(Input::ToolStart { name: "t" }),
        false => sim.push(Input::TextEnd(None)),
    };
    sim.push(Input::TextDelta(&text[at..]))
        .push(Input::Finish)
        .run_until_idle();
    sim
}

#[test]
fn a_forced_flush_anywhere_in_a_cut_fence_adds_no_blank_line() {
    // Code with and without blank lines, a fenced and an indented block, cut at small
    // limits; a tool call or a `TextEnd` at every position: every send is an exact span
    // (a blank line after a reopened fence line, or before a synthetic close, would not be).
    let texts = [
        "Intro.\n\n```js\nlet a = 1; let b = 2; let c = 3;\nlet d = 4;\nlet e = 5;\nlet f = 6;\n```\nAfter.",
        "Intro.\n\n```js\nlet a = 1;\nlet b = 2;\n\nlet c = 3;\nlet d = 4;\n    let e = 5;\nlet f = 6;\n```\nAfter.",
        "Intro.\n\n    let a = 1;\n    let b = 2;\n\n    let c = 3;\n    let d = 4;\n\nAfter.",
    ];
    let crlf: Vec<String> = texts.iter().map(|t| t.replace('\n', "\r\n")).collect();
    for text in texts.iter().copied().chain(crlf.iter().map(String::as_str)) {
        for max in [24, 30, 40, 1000] {
            for at in 1..text.len() {
                for tool in [true, false] {
                    let c = blocks_of(max);
                    let sim = flushed_at(&c, text, at, tool, true);
                    assert_exact(&sim, &c, text, at, !tool);
                }
            }
        }
    }
}

#[test]
fn a_zwj_emoji_is_never_split_between_sends_at_the_smallest_limits() {
    // Each metric's smallest accepted text limit, chunk sizes forced down with it; the
    // family emoji next to fences and fence-like lines, fed one char at a time, with a
    // tool call and a text end in between.
    let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
    let text = format!(
        "\n~~~\n\n~~~\n\n```rust\n\n````\n\n  ```\n`code span`\n~~~\n\n````md\n````\t\n````md\n{family}\n````\n\nA {family} here, {family}{family} there, and {family}."
    );
    // Boundaries fall between clusters (the model does not split one by a tool call).
    let boundary = |p: usize| {
        use unicode_segmentation::UnicodeSegmentation;
        text.grapheme_indices(true)
            .map(|(i, _)| i)
            .find(|&i| i >= p)
            .unwrap_or(text.len())
    };
    let text_end = boundary(2 * text.len() / 3);
    for metric in replystream::LengthMetric::ALL {
        for tool_at in [boundary(text.len() / 3), boundary(text.len() / 2)] {
            let mut c = config("generic");
            c.metric = metric;
            c.text_limit = metric.min_limit();
            let mut sim = Sim::new(engine(c));
            sim.push(Input::MessageStart);
            for (i, ch) in text.char_indices() {
                if i == tool_at {
                    sim.push(Input::ToolStart { name: "t" });
                }
                if i == text_end {
                    sim.push(Input::TextEnd(None));
                }
                sim.push(Input::TextDelta(&text[i..i + ch.len_utf8()]));
            }
            sim.push(Input::Finish).run_until_idle();
            let sent = sim.sent_texts();
            let whole: usize = sent.iter().map(|s| s.matches(family).count()).sum();
            assert_eq!(whole, 5, "{metric:?}: {sent:#?}");
            for s in &sent {
                // A send holds whole families only: no ZWJ outside one.
                let rest = s.replace(family, "");
                assert!(!rest.contains('\u{200d}'), "{metric:?}: split in {s:?}");
            }
        }
    }
}

#[test]
fn the_final_after_a_permanent_failure_never_starts_with_separator_whitespace() {
    // Every block send fails for good in turn; the final carries what was not delivered.
    let texts = [
        "First sentence is here. Second sentence is here. Third sentence is here.",
        "A line of prose here\n  continued with two spaces\n\n\n   and three after blank lines.",
        "Some words then a tool call and more words after it, then the end.",
        "Para one is here.\n\n    indented code line\n    another code line\n\nPara two.",
        // Indented by 4 inside a paragraph: a lazy continuation line, not code.
        "A paragraph starts here\n     and goes on indented by five\n     and five again to the end.",
    ];
    let mut finals = 0;
    for text in texts {
        for failing in 0..6 {
            let c = blocks_of(24);
            let policy: AckPolicy = Box::new(move |send, n| {
                if send.kind != SendKind::Final && n == failing {
                    Ack::Fail {
                        after_ms: 0,
                        retry_after_ms: None,
                        permanent: true,
                    }
                } else {
                    Ack::Deliver { after_ms: 0 }
                }
            });
            let mut sim = Sim::with_policy(engine(c), policy);
            sim.push(Input::MessageStart);
            let mid = text.find(" tool").map(|i| i + 1).unwrap_or(text.len());
            sim.push(Input::TextDelta(&text[..mid]));
            if mid < text.len() {
                sim.push(Input::ToolStart { name: "t" });
                sim.push(Input::TextDelta(&text[mid..]));
            }
            sim.push(Input::Finish).run_until_idle();
            for (_, s) in sim.sends() {
                let t = &s.payload.text;
                let first = t.lines().next().unwrap_or("");
                let code = indented_code_lines(text).contains(&first);
                assert!(
                    code || !t.starts_with(char::is_whitespace),
                    "{:?} starts with whitespace (failing {failing}): {:#?}",
                    s.kind,
                    sim.sent_texts()
                );
            }
            finals += sim
                .sends()
                .iter()
                .filter(|(_, s)| s.kind == SendKind::Final)
                .count();
            // Nothing lost: every word arrives in a delivered send.
            let delivered = sim.delivered_texts().join(" ");
            for word in text.split_whitespace() {
                assert!(delivered.contains(word), "{word:?} lost: {delivered:?}");
            }
        }
    }
    assert!(finals >= 16, "the failures made finals: {finals}");
}

/// The lines of `text` that are indented code (CommonMark, read here): indented 4 or more
/// after a blank line or the start, and the indented lines that follow them.
fn indented_code_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut may_start, mut in_code) = (true, false);
    for line in text.split('\n') {
        let blank = line.trim().is_empty();
        let indented = line.starts_with("    ");
        if indented && !blank && (in_code || may_start) {
            in_code = true;
            out.push(line);
        } else if !blank {
            in_code = false;
        }
        may_start = blank;
    }
    out
}

#[test]
fn a_directive_at_a_line_start_leaves_the_lines_crlf_alone() {
    // Found by the decorated property test: the line that held a removed directive lost
    // the CR of its CRLF, although the directive was nowhere near it.
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(
            "[[reply_to_current]]First line here.\r\n\r\nNext one.",
        ))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["First line here.\r\n\r\nNext one."]);
}

#[test]
/// Discord: a code block over the 17-line cap, re-split by the line cap, with a tool call or a
/// `TextEnd` at every third position: every send stays an exact span.
fn a_forced_flush_in_a_line_capped_code_block_keeps_every_send_exact() {
    let mut text = String::from("Intro line.\n\n```js\n");
    for i in 0..30 {
        text.push_str(&format!("let v{i} = {i};\n"));
        if i % 7 == 3 {
            text.push('\n');
        }
    }
    text.push_str("```\n\nAfter.");
    for at in (1..text.len()).step_by(3) {
        for tool in [true, false] {
            let c = config("discord");
            let sim = flushed_at(&c, &text, at, tool, false);
            assert_exact(&sim, &c, &text, at, !tool);
        }
    }
}

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
    for text in texts {
        for max in [24, 30, 40, 1000] {
            for at in 1..text.len() {
                for tool in [true, false] {
                    let mut c = config("generic");
                    c.chunk_min = 1;
                    c.chunk_max = max;
                    c.coalesce_min = Some(1);
                    c.coalesce_max = Some(max);
                    let mut sim = Sim::new(engine(c.clone()));
                    sim.push(Input::MessageStart);
                    for ch in text[..at].chars() {
                        sim.push(Input::TextDelta(&ch.to_string()));
                    }
                    match tool {
                        true => sim.push(Input::ToolStart { name: "t" }),
                        false => sim.push(Input::TextEnd(None)),
                    };
                    sim.push(Input::TextDelta(&text[at..]))
                        .push(Input::Finish)
                        .run_until_idle();
                    assert_exact(&sim, &c, text, at, !tool);
                }
            }
        }
    }
}

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

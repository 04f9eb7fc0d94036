//! Ordered, serial delivery (SPEC §7): tool, block and final sends leave in production
//! order, one at a time, each after the previous ack.

mod common;

use common::*;
use replystream::{Input, Payload, SendKind};

#[test]
fn tool_block_final_in_production_order() {
    let mut c = small_config();
    c.coalesce_idle_ms = 0;
    let mut sim = Sim::with_latency(engine(c), 50);
    sim.push(Input::TextDelta("Let me look that up for you right now."))
        .push(Input::ToolStart { name: "search" })
        .push(Input::ToolResult(Payload::text(
            "🔎 searched: rust streaming",
        )))
        .push(Input::TextDelta("Here is what I found about streaming."))
        .push(Input::FinalReply(Payload {
            media: vec!["https://example.com/a.png".into()],
            ..Payload::default()
        }))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.sent_kinds(),
        [
            SendKind::Block,
            SendKind::Tool,
            SendKind::Block,
            SendKind::Final
        ]
    );
    assert_eq!(sim.max_in_flight, 1, "at most one send in flight");
    // Each send leaves only after the previous ack (50 ms latency).
    let times: Vec<u64> = sim.sends().iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [0, 50, 100, 150]);
    assert!(sim.is_idle());
}

#[test]
fn idle_once_after_every_ack() {
    let mut sim = Sim::with_latency(engine(config("generic")), 100);
    sim.push(Input::TextDelta("Hi there.")).push(Input::Finish);
    assert!(!sim.is_idle(), "the final is still in flight");
    sim.run_until_idle();
    let idles = sim
        .log
        .iter()
        .filter(|(_, a)| matches!(a, replystream::Action::Idle))
        .count();
    assert_eq!(idles, 1);
    assert_eq!(sim.log.last().map(|(t, _)| *t), Some(100));
}

//! Dedupe (SPEC §6): blocks are identified by where they came from, never by their text;
//! host payloads with a key already sent or pending are dropped.

mod common;

use common::*;
use replystream::{Input, Payload};

#[test]
fn genuine_repeated_blocks_are_delivered() {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.chunk_max = 40;
    c.coalesce_idle_ms = 0;
    let code = "```\nprintln!(\"hi\");\n```";
    let mut sim = Sim::new(engine(c));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(code))
        .push(Input::MessageEnd(None))
        .push(Input::MessageStart)
        .push(Input::TextDelta(code))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.delivered_texts(), [code, code]);
}

#[test]
fn repeated_tool_result_is_dropped() {
    let mut sim = Sim::with_latency(engine(config("generic")), 10);
    let p = Payload::text("📎 read file.txt");
    sim.push(Input::ToolResult(p.clone()))
        .push(Input::ToolResult(p.clone()))
        .run_until_idle();
    sim.push(Input::ToolResult(Payload::text("  📎 read file.txt ")))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["📎 read file.txt"]);
    assert_eq!(sim.engine.stats().payloads_deduped, 2);
}

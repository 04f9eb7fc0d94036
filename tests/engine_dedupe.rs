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

/// What the model wrote is delivered as often as it wrote it: a media directive repeated in
/// two messages, or twice in one, is sent each time.
#[test]
fn repeated_media_directives_are_delivered_each_time() {
    let line = "MEDIA: https://example.com/a.png\n";
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(line))
        .push(Input::MessageEnd(None))
        .push(Input::MessageStart)
        .push(Input::TextDelta(&format!("{line}{line}")))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let media: Vec<Vec<String>> = sim
        .sends()
        .into_iter()
        .map(|(_, s)| s.payload.media)
        .collect();
    assert_eq!(media.len(), 3, "{media:?}");
    assert!(media.iter().all(|m| m == &["https://example.com/a.png"]));
    assert_eq!(sim.engine.stats().payloads_deduped, 0);
}

/// Host payloads are deduplicated against what was delivered, is pending, or is buffered.
#[test]
fn host_media_repeated_by_the_host_is_sent_once() {
    let mut sim = Sim::with_latency(engine(config("generic")), 10);
    let media = Payload {
        media: vec!["https://example.com/chart.png".into()],
        ..Payload::default()
    };
    sim.push(Input::Media(media.clone()))
        .push(Input::Media(media.clone()))
        .run_until_idle();
    sim.push(Input::Media(media))
        // The model's own directive for the same file is still its own message.
        .push(Input::TextDelta("MEDIA: https://example.com/chart.png\n"))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sends().len(), 2);
    assert_eq!(sim.engine.stats().payloads_deduped, 2);
}

//! Coalescing in the engine (SPEC §4): small blocks merge until idle, never across
//! assistant messages or lanes.

mod common;

use common::*;
use replystream::{BreakPreference, Input};

#[test]
fn hello_world_merges_after_idle() {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.chunk_max = 40;
    c.coalesce_min = Some(5);
    c.coalesce_idle_ms = 1000;
    c.break_preference = BreakPreference::Sentence;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("Hello"))
        .push(Input::TextEnd(None))
        .at(200)
        .push(Input::TextDelta("world"))
        .push(Input::TextEnd(None));
    sim.at(1199);
    assert!(
        sim.sends().is_empty(),
        "idle timer re-armed at 200 must not fire before 1200"
    );
    sim.at(1200);
    assert_eq!(sim.sent_texts(), ["Hello world"]);
}

#[test]
fn below_min_waits_for_the_forced_flush() {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.coalesce_min = Some(50);
    c.coalesce_idle_ms = 1000;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("short"))
        .push(Input::TextEnd(None))
        .at(5000);
    assert!(
        sim.sends().is_empty(),
        "below min the idle timer only re-arms"
    );
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), ["short"]);
}

#[test]
fn never_merged_across_assistant_messages() {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.coalesce_min = Some(1);
    let mut sim = Sim::new(engine(c));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta("One."))
        .push(Input::MessageEnd(None))
        .push(Input::MessageStart)
        .push(Input::TextDelta("Two."))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["One.", "Two."]);
}

#[test]
fn tool_start_flushes_everything_first() {
    let mut c = config("generic");
    c.coalesce_idle_ms = 0;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("Let me check that."))
        .push(Input::ToolStart { name: "search" });
    assert_eq!(sim.sent_texts(), ["Let me check that."]);
}

#[test]
fn merged_blocks_keep_the_separators_of_the_source() {
    // Paragraph preference: the configured joiner is a blank line, but these blocks were cut
    // at sentence ends and line breaks, so the merged message must read exactly as written.
    let mut c = config("generic");
    c.chunk_min = 20;
    c.chunk_max = 60;
    c.coalesce_min = Some(400);
    c.coalesce_idle_ms = 1000;
    let text = "The first sentence is right here. The second sentence follows it.\n\
                A new line starts. And the last sentence ends the reply.";
    let mut sim = Sim::new(engine(c));
    sim.stream(text, 3, 0).push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), [text]);
}

#[test]
fn separate_text_blocks_use_the_joiner() {
    let mut c = config("generic");
    c.chunk_min = 1;
    c.coalesce_min = Some(400);
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("First text block."))
        .push(Input::TextEnd(None))
        .push(Input::TextDelta("Second text block."))
        .push(Input::TextEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(
        sim.sent_texts(),
        ["First text block.\n\nSecond text block."]
    );
}

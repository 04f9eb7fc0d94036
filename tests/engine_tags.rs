//! Thinking tags and reasoning modes (SPEC §2, §8).

mod common;

use common::*;
use replystream::{Input, Lane, ReasoningMode};

#[test]
fn thinking_split_across_deltas_is_hidden() {
    let mut sim = Sim::new(engine(config("generic")));
    for d in [
        "<thi",
        "nk>secret pla",
        "n</th",
        "ink>The answer ",
        "is 42.",
    ] {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), ["The answer is 42."]);
}

#[test]
fn tags_inside_code_are_text() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Use `<think>` like this."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Use `<think>` like this."]);
}

#[test]
fn reasoning_on_sends_one_reasoning_block_after_the_answer() {
    let mut c = config("generic");
    c.reasoning = ReasoningMode::On;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta("<think>weigh options</think>Pick B."))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 2, "{sends:#?}");
    assert_eq!(sends[0].1.payload.text, "Pick B.");
    assert_eq!(sends[1].1.payload.text, "Reasoning:\n_weigh options_");
    assert_eq!(sends[1].1.payload.lane, Lane::Reasoning);
}

#[test]
fn reasoning_stream_uses_its_own_lane() {
    let mut c = config("generic");
    c.reasoning = ReasoningMode::Stream;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::ThinkingDelta("Considering the question."))
        .push(Input::ThinkingEnd)
        .push(Input::TextDelta("Answer."))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 2, "{sends:#?}");
    assert_eq!(sends[0].1.payload.lane, Lane::Reasoning);
    assert_eq!(sends[1].1.payload.text, "Answer.");
}

#[test]
fn reasoning_off_drops_it() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::ThinkingDelta("hidden"))
        .push(Input::TextDelta("Shown."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Shown."]);
}

#[test]
fn reasoning_on_comes_first_in_message_end_mode() {
    let mut c = config("generic");
    c.reasoning = ReasoningMode::On;
    c.break_mode = replystream::BreakMode::MessageEnd;
    let mut sim = Sim::new(engine(c));
    sim.push(Input::MessageStart)
        .push(Input::TextDelta(
            "<think>check the units</think>It is 42 km.",
        ))
        .push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    let texts = sim.sent_texts();
    assert_eq!(texts, ["Reasoning:\n_check the units_", "It is 42 km."]);
}

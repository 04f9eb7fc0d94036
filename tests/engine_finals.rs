//! Final reconciliation (SPEC §6): streamed text is not sent again; media is.

mod common;

use common::*;
use replystream::{Input, Payload, SendKind};

#[test]
fn final_equal_to_streamed_text_ignoring_whitespace_is_dropped() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Hello there.\n\nHow are you?"))
        .push(Input::FinalReply(Payload::text(
            "Hello there. How are you?  ",
        )))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_kinds(), [SendKind::Block]);
    assert_eq!(sim.sent_texts(), ["Hello there.\n\nHow are you?"]);
}

#[test]
fn media_final_keeps_media_and_drops_streamed_text() {
    let mut sim = Sim::new(engine(config("generic")));
    let media = "https://example.com/chart.png".to_string();
    sim.push(Input::TextDelta("Here is the chart."))
        .push(Input::FinalReply(Payload {
            text: "Here is the chart.".into(),
            media: vec![media.clone()],
            ..Payload::default()
        }))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 2);
    assert_eq!(sends[1].1.kind, SendKind::Final);
    assert_eq!(sends[1].1.payload.text, "");
    assert_eq!(sends[1].1.payload.media, [media]);
}

#[test]
fn block_streaming_off_sends_finals_split_to_the_limit() {
    let mut c = config("discord");
    c.block_streaming = false;
    let text = "word ".repeat(900); // 4500 chars
    let mut sim = Sim::new(engine(c));
    sim.push(Input::TextDelta(&text))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert!(sends.len() >= 3);
    assert!(sends.iter().all(|(_, s)| s.kind == SendKind::Final));
    assert!(
        sends
            .iter()
            .all(|(_, s)| s.payload.text.chars().count() <= 2000)
    );
    assert_eq!(squash(&sim.delivered_texts().concat()), squash(&text));
}

#[test]
fn fail_delivers_what_was_produced_then_the_error() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Partial answer"))
        .push(Input::Fail {
            error: "model overloaded",
        })
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 2);
    assert_eq!(sends[0].1.payload.text, "Partial answer");
    assert!(sends[1].1.payload.is_error);
    assert_eq!(sends[1].1.payload.text, "model overloaded");
}

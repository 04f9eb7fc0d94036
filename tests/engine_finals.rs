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

fn host_final(streamed: &[&str], final_text: &str) -> Vec<(SendKind, String)> {
    let mut sim = Sim::new(engine(config("generic")));
    for (i, m) in streamed.iter().enumerate() {
        if i > 0 {
            sim.push(Input::MessageEnd(None)).push(Input::MessageStart);
        }
        sim.push(Input::TextDelta(m));
    }
    sim.push(Input::FinalReply(Payload::text(final_text)))
        .push(Input::Finish)
        .run_until_idle();
    sim.sends()
        .into_iter()
        .map(|(_, s)| (s.kind, s.payload.text))
        .collect()
}

#[test]
fn a_final_that_extends_the_streamed_text_sends_only_the_extension() {
    let sends = host_final(
        &["Hello, here is the first part."],
        "Hello, here is the first part. And here is more.",
    );
    assert_eq!(
        sends,
        [
            (
                SendKind::Block,
                "Hello, here is the first part.".to_string()
            ),
            (SendKind::Final, "And here is more.".to_string()),
        ]
    );
}

#[test]
fn a_final_that_only_occurs_inside_different_text_is_sent() {
    let sends = host_final(&["TOKEN"], "OK");
    assert_eq!(
        sends,
        [
            (SendKind::Block, "TOKEN".to_string()),
            (SendKind::Final, "OK".to_string()),
        ]
    );
    // A prefix of a word is not an extension either.
    let sends = host_final(&["OK"], "OKAY then");
    assert_eq!(sends[1], (SendKind::Final, "OKAY then".to_string()));
}

#[test]
fn a_final_equal_to_the_last_message_sends_nothing() {
    let sends = host_final(&["Let me check.", "The answer is 42."], "The answer is 42.");
    assert_eq!(sends.len(), 2, "{sends:?}");
    assert!(sends.iter().all(|(k, _)| *k == SendKind::Block));
    let sends = host_final(
        &["Let me check.", "The answer is 42."],
        "Let me check.\n\nThe answer is 42.",
    );
    assert_eq!(sends.len(), 2, "{sends:?}");
}

/// A caption with a reply target and a host media item without one: one message, in the
/// thread.
#[test]
fn media_without_a_target_joins_a_caption_that_has_one() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("[[reply_to: 42]] Here is the chart."))
        .push(Input::Media(Payload {
            media: vec!["https://example.com/chart.png".into()],
            ..Payload::default()
        }))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1, "{sends:#?}");
    let p = &sends[0].1.payload;
    assert_eq!(p.text, "Here is the chart.");
    assert_eq!(p.media, ["https://example.com/chart.png"]);
    assert_eq!(p.reply_to, Some(replystream::ReplyTarget::Id("42".into())));
    // A different target is a real conflict: two messages.
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("[[reply_to: 42]] Here is the chart."))
        .push(Input::Media(Payload {
            media: vec!["https://example.com/chart.png".into()],
            reply_to: Some(replystream::ReplyTarget::Id("7".into())),
            ..Payload::default()
        }))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sends().len(), 2);
}

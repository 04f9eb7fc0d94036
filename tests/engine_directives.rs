//! Reply directives and media (SPEC §2, §5).

mod common;

use common::*;
use replystream::{Input, ReplyTarget};

#[test]
fn reply_to_split_across_deltas_is_sticky() {
    let mut sim = Sim::new(engine(small_config()));
    for d in [
        "[[repl",
        "y_to: abc]] First part of the answer here. ",
        "Second part of the answer follows.",
    ] {
        sim.push(Input::TextDelta(d));
    }
    sim.push(Input::Finish).run_until_idle();
    let sends = sim.sends();
    assert!(!sends.is_empty());
    for (_, s) in &sends {
        assert_eq!(
            s.payload.reply_to,
            Some(ReplyTarget::Id("abc".into())),
            "{s:?}"
        );
        assert!(!s.payload.text.contains("[["));
    }
}

#[test]
fn media_line_becomes_a_media_payload_with_caption() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta(
        "Here you go:\nMEDIA: https://example.com/cat.png\n",
    ))
    .push(Input::Finish)
    .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1, "{sends:#?}");
    assert_eq!(sends[0].1.payload.media, ["https://example.com/cat.png"]);
    assert_eq!(sends[0].1.payload.text, "Here you go:");
}

#[test]
fn private_url_stays_text() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("MEDIA: https://localhost/x.png"))
        .push(Input::Finish)
        .run_until_idle();
    let sends = sim.sends();
    assert_eq!(sends.len(), 1);
    assert!(sends[0].1.payload.media.is_empty());
}

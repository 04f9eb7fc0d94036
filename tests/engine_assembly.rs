//! Delta assembly (SPEC §1): snapshots, resends at text_end, sequence numbers, time.

mod common;

use common::*;
use replystream::{Input, Time};

#[test]
fn repeated_full_content_text_end_adds_nothing() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Hello "))
        .push(Input::TextDelta("world."))
        .push(Input::TextEnd(Some("Hello world.")))
        .push(Input::TextEnd(Some("Hello world.")))
        .push(Input::MessageEnd(Some("Hello world.")))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.sent_texts(), ["Hello world."]);
}

#[test]
fn cumulative_snapshots_yield_each_part_once() {
    let mut sim = Sim::new(engine(config("generic")));
    for s in [
        "Str",
        "Stream",
        "Streaming ",
        "Streaming text.",
        "Streaming text.",
    ] {
        sim.push(Input::TextSnapshot(s));
    }
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), ["Streaming text."]);
}

#[test]
fn sequence_numbers_drop_repeats_and_count_gaps() {
    let mut e = engine(config("generic"));
    let t = Time::ZERO;
    let _ = e.push_seq(1, Input::TextDelta("a"), t).unwrap().count();
    let _ = e.push_seq(1, Input::TextDelta("a"), t).unwrap().count();
    let _ = e.push_seq(3, Input::TextDelta("b"), t).unwrap().count();
    let _ = e.push_seq(2, Input::TextDelta("late"), t).unwrap().count();
    let stats = e.stats();
    assert_eq!(stats.duplicates_ignored, 2);
    assert_eq!(stats.gaps, 1);
    let mut sim = Sim::new(e);
    sim.push(Input::Finish).run_until_idle();
    assert_eq!(sim.sent_texts(), ["ab"]);
}

#[test]
fn time_going_backwards_is_clamped() {
    let mut c = config("generic");
    c.delivery_timeout_ms = 1000;
    let mut e = engine(c);
    let actions: Vec<_> = e
        .push(Input::TextDelta("x"), Time::from_millis(5000))
        .unwrap()
        .collect();
    assert!(actions.is_empty());
    let actions: Vec<_> = e
        .push(Input::Finish, Time::from_millis(10))
        .unwrap()
        .collect();
    // The send leaves at the clamped time 5000, so its timeout is 6000, not 1010.
    assert!(actions.iter().any(|a| matches!(a, replystream::Action::ArmTimer { deadline: Some(deadline) } if deadline.as_millis() == 6000)), "{actions:?}");
}

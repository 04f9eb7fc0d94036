//! Caller misuse gets a clear error and changes nothing (SPEC §13 invariant 9).

mod common;

use common::*;
use replystream::{AbortReason, Config, Error, Input, SendId, Time};

#[test]
fn unknown_ack_is_an_error_and_counted() {
    let mut e = engine(config("generic"));
    let err = e
        .push(
            Input::Delivered {
                send_id: SendId(99),
                message_ref: None,
            },
            Time::ZERO,
        )
        .err();
    assert_eq!(err, Some(Error::UnknownSend(SendId(99))));
    assert_eq!(e.stats().unknown_acks, 1);
}

#[test]
fn text_after_finish_is_refused() {
    let mut sim = Sim::new(engine(config("generic")));
    sim.push(Input::TextDelta("Hi."))
        .push(Input::Finish)
        .run_until_idle();
    sim.push(Input::TextDelta("more"));
    assert_eq!(sim.errors.len(), 1, "{:?}", sim.errors);
    assert_eq!(sim.sent_texts(), ["Hi."]);
}

#[test]
fn cancel_aborts_and_sends_nothing_more() {
    let mut sim = Sim::with_latency(engine(small_config()), 100);
    sim.stream(
        "A reply long enough to make a couple of blocks of text, surely.",
        5,
        0,
    );
    sim.push(Input::Cancel).run_until_idle();
    assert_eq!(sim.aborts(), [AbortReason::Cancelled]);
    let sent = sim.sends().len();
    sim.push(Input::TextDelta("ignored")).wait(10_000);
    assert_eq!(sim.sends().len(), sent);
    assert!(sim.engine.is_done());
}

#[test]
fn invalid_config_is_an_error_not_a_panic() {
    let c = Config {
        text_limit: 0,
        ..Config::default()
    };
    assert!(matches!(
        replystream::Engine::new(c, 1),
        Err(Error::InvalidConfig(_))
    ));
}

#[test]
fn early_and_repeated_timers_do_nothing() {
    let mut e = engine(config("generic"));
    for t in [0, 1, 1, 2] {
        let actions: Vec<_> = e
            .push(Input::Timer, Time::from_millis(t))
            .unwrap()
            .collect();
        assert!(actions.is_empty());
    }
}

//! Time at the edge of its range (SPEC §1, DESIGN §2): "no deadline" is `None`, arithmetic
//! saturates, so a deadline that saturates at `Time::MAX` is still a deadline and fires when
//! the clock gets there, and nothing is sent twice for it.

mod common;

use common::{Ack, Sim, config, engine};
use replystream::{AbortReason, Action, Config, Input, SendKind, Time};

const NEAR_END: u64 = u64::MAX - 10;

#[test]
fn a_delivery_timeout_that_saturates_still_fires() {
    let mut engine = engine(Config {
        delivery_timeout_ms: 15_000,
        ..config("generic")
    });
    let mut actions: Vec<Action> = engine
        .push(Input::TextDelta("Hello."), Time::from_millis(NEAR_END))
        .unwrap()
        .collect();
    actions.extend(
        engine
            .push(Input::Finish, Time::from_millis(NEAR_END))
            .unwrap(),
    );
    assert!(actions.iter().any(|a| matches!(a, Action::Send(_))));
    // now + 15 000 saturates at the end of time: armed, not forgotten.
    assert_eq!(engine.poll_timeout(), Some(Time::MAX));
    let before: Vec<Action> = engine
        .push(Input::Timer, Time::from_millis(u64::MAX - 1))
        .unwrap()
        .collect();
    assert!(before.is_empty(), "not due yet: {before:?}");
    let fired: Vec<Action> = engine.push(Input::Timer, Time::MAX).unwrap().collect();
    assert_eq!(
        fired.first(),
        Some(&Action::Abort {
            reason: AbortReason::DeliveryTimeout
        }),
        "{fired:?}"
    );
}

#[test]
fn acks_that_never_come_in_time_send_the_final_once() {
    // The platform answers after 2^64 - 1 ms (what `demo --ack-ms 18446744073709551615` once
    // asked for): the block times out, the final carries its text again (it was never
    // confirmed), once, and nothing counts as delivered.
    let mut sim = Sim::with_policy(
        engine(config("generic")),
        Box::new(|_, _| Ack::Deliver { after_ms: u64::MAX }),
    );
    sim.push(Input::TextDelta("One paragraph of text."))
        .push(Input::Finish)
        .run_until_idle();
    assert!(sim.is_idle());
    let sends: Vec<(u64, SendKind, String)> = sim
        .sends()
        .into_iter()
        .map(|(t, s)| (t, s.kind, s.payload.text))
        .collect();
    let text = "One paragraph of text.".to_owned();
    assert_eq!(
        sends,
        [
            (0, SendKind::Block, text.clone()),
            (15_000, SendKind::Final, text)
        ]
    );
    assert!(sim.delivered.is_empty(), "nothing was confirmed");
    assert_eq!(sim.aborts(), [AbortReason::DeliveryTimeout]);
}

#[test]
fn a_retry_after_at_the_end_of_time_is_retried_there() {
    let mut sim = Sim::with_policy(
        engine(config("generic")),
        Box::new(|_, n| {
            if n == 0 {
                Ack::Fail {
                    after_ms: 0,
                    retry_after_ms: Some(u64::MAX),
                    permanent: false,
                }
            } else {
                Ack::Deliver { after_ms: 0 }
            }
        }),
    );
    sim.at(NEAR_END);
    sim.push(Input::TextDelta("Rate limited."))
        .push(Input::Finish);
    assert_eq!(sim.engine.poll_timeout(), Some(Time::MAX));
    sim.at(u64::MAX).run_until_idle();
    assert!(sim.is_idle());
    assert_eq!(sim.delivered_texts(), ["Rate limited."]);
    let retry_at = sim.sends()[1].0;
    assert_eq!(retry_at, u64::MAX, "not before the retry_after");
}

#[test]
fn the_virtual_clock_saturates_instead_of_wrapping() {
    let mut sim = Sim::with_latency(engine(config("generic")), 100);
    sim.at(NEAR_END);
    sim.stream("Some words to stream near the end of time.", 5, 7)
        .push(Input::Finish)
        .wait(u64::MAX)
        .run_until_idle();
    assert_eq!(sim.now, u64::MAX);
    assert!(
        sim.log.iter().all(|(t, _)| *t >= NEAR_END),
        "no time wrapped to zero"
    );
}

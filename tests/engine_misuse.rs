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

#[test]
fn a_late_timer_acts_when_it_comes_and_loses_nothing() {
    // The host oversleeps: the coalescer's idle deadline (1000 ms) is only noticed at 9000 ms,
    // and the retry asked for at 1500 ms only at 20 000 ms.
    let mut c = config("generic");
    c.chunk_min = 1;
    c.coalesce_min = Some(1);
    let mut e = engine(c);
    let t = |ms| Time::from_millis(ms);
    let _ = e
        .push(Input::TextDelta("Late but whole."), t(0))
        .unwrap()
        .count();
    let _ = e.push(Input::TextEnd(None), t(0)).unwrap().count();
    assert_eq!(e.poll_timeout(), Some(t(1000)));
    let sends: Vec<_> = e
        .push(Input::Timer, t(9000))
        .unwrap()
        .filter_map(|a| match a {
            replystream::Action::Send(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].payload.text, "Late but whole.");
    let failed = Input::DeliveryFailed {
        send_id: sends[0].send_id,
        retry_after_ms: Some(1500),
        permanent: false,
    };
    let _ = e.push(failed, t(9000)).unwrap().count();
    assert_eq!(e.poll_timeout(), Some(t(10_500)));
    let retried: Vec<_> = e.push(Input::Timer, t(20_000)).unwrap().collect();
    assert!(
        retried
            .iter()
            .any(|a| matches!(a, replystream::Action::Send(s) if s.send_id == sends[0].send_id))
    );
}

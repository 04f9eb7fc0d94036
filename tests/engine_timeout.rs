//! Delivery timeout (SPEC §7): a send not acked in time aborts streaming; later blocks are
//! skipped; at Finish exactly the undelivered text is sent as the final.

mod common;

use common::*;
use replystream::{AbortReason, Input, SendKind};

const REPLY: &str = "First paragraph is here and it is long enough.\n\n\
Second paragraph follows with more words in it.\n\n\
Third paragraph closes the reply with a flourish.";

#[test]
fn timeout_aborts_and_the_final_carries_the_rest() {
    let mut c = small_config();
    c.delivery_timeout_ms = 1000;
    c.coalesce_idle_ms = 0;
    // The second send hangs.
    let mut sim = Sim::with_policy(
        engine(c),
        Box::new(|_, n| {
            if n == 1 {
                Ack::Hang
            } else {
                Ack::Deliver { after_ms: 10 }
            }
        }),
    );
    sim.stream(REPLY, 7, 5).push(Input::Finish).run_until_idle();
    assert_eq!(sim.aborts(), [AbortReason::DeliveryTimeout]);
    let kinds = sim.sent_kinds();
    assert!(kinds.contains(&SendKind::Final), "{kinds:?}");
    // Nothing lost, nothing duplicated: what was delivered reproduces the reply.
    let delivered: String = sim.delivered_texts().concat();
    assert_eq!(
        squash(&delivered),
        squash(REPLY),
        "{:#?}",
        sim.delivered_texts()
    );
    assert!(sim.is_idle());
}

#[test]
fn late_ack_counts_and_does_not_restart_streaming() {
    let mut c = small_config();
    c.delivery_timeout_ms = 500;
    c.coalesce_idle_ms = 0;
    let mut sim = Sim::with_policy(
        engine(c),
        Box::new(|_, n| {
            if n == 0 {
                Ack::Deliver { after_ms: 800 }
            } else {
                Ack::Deliver { after_ms: 0 }
            }
        }),
    );
    sim.stream(REPLY, 200, 0);
    sim.at(2000);
    assert_eq!(sim.aborts(), [AbortReason::DeliveryTimeout]);
    let before = sim.sends().len();
    sim.push(Input::Finish).run_until_idle();
    // After the late ack, the first block is in the ledger: the final carries only the rest.
    let finals: Vec<String> = sim
        .sends()
        .into_iter()
        .filter(|(_, s)| s.kind == SendKind::Final)
        .map(|(_, s)| s.payload.text)
        .collect();
    assert!(sim.sends().len() > before);
    let all: String = sim.delivered_texts().concat();
    assert_eq!(squash(&all), squash(REPLY), "finals: {finals:#?}");
}

#[test]
fn retry_after_is_honoured_exactly() {
    let mut sim = Sim::with_policy(
        engine(config("generic")),
        Box::new(|_, n| {
            if n == 0 {
                Ack::Fail {
                    after_ms: 0,
                    retry_after_ms: Some(1500),
                    permanent: false,
                }
            } else {
                Ack::Deliver { after_ms: 0 }
            }
        }),
    );
    sim.push(Input::TextDelta("Rate limited text."))
        .push(Input::Finish);
    sim.at(1499);
    assert_eq!(sim.sends().len(), 1);
    sim.at(1500);
    assert_eq!(sim.sends().len(), 2, "retried at exactly +1500 ms");
    sim.run_until_idle();
    assert_eq!(sim.delivered_texts(), ["Rate limited text."]);
    assert_eq!(sim.engine.stats().dispatch.retries, 1);
}

#[test]
fn permanent_failure_moves_on_and_the_final_resends_the_text() {
    let mut c = small_config();
    c.coalesce_idle_ms = 0;
    let mut sim = Sim::with_policy(
        engine(c),
        Box::new(|_, n| {
            if n == 0 {
                Ack::Fail {
                    after_ms: 0,
                    retry_after_ms: None,
                    permanent: true,
                }
            } else {
                Ack::Deliver { after_ms: 0 }
            }
        }),
    );
    sim.stream(REPLY, 50, 0)
        .push(Input::Finish)
        .run_until_idle();
    // The failed block cannot be delivered in its place; the final carries it after the
    // blocks that did get through. Every paragraph arrives exactly once.
    let all = squash(&sim.delivered_texts().concat());
    assert_eq!(all.len(), squash(REPLY).len());
    for paragraph in REPLY.split("\n\n") {
        assert_eq!(all.matches(&squash(paragraph)).count(), 1, "{paragraph:?}");
    }
    assert_eq!(sim.sends().last().unwrap().1.kind, SendKind::Final);
    assert_eq!(sim.engine.stats().dispatch.dropped, 1);
}

//! The turn's outcome (`Engine::outcome`, the driver's `StreamEvent::Idle`): a host learns
//! that a final reply was not delivered, and what it was, without decoding `stats()`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::sim::{Ack, Sim};
use replystream::{
    Config, Engine, Input, Payload, SendKind, SendRequest, TurnEnding, UndeliveredReason,
};

/// Block streaming off: the whole reply goes out as finals at `Finish`.
fn finals_only() -> Config {
    Config {
        block_streaming: false,
        delivery_timeout_ms: 1000,
        ..Config::default()
    }
}

/// Small blocks streamed while the model writes.
fn streaming() -> Config {
    Config {
        chunk_min: 10,
        chunk_max: 40,
        coalesce_min: Some(10),
        coalesce_max: Some(40),
        coalesce_idle_ms: 0,
        delivery_timeout_ms: 1000,
        ..Config::default()
    }
}

/// A sim whose sends of `kind` get `ack`; the others are delivered after 10 ms.
fn sim_failing(config: Config, kind: SendKind, ack: Ack) -> Sim {
    let engine = Engine::new(config, 1).unwrap();
    Sim::with_policy(
        engine,
        Box::new(move |send, _| {
            if send.kind == kind {
                ack
            } else {
                Ack::Deliver { after_ms: 10 }
            }
        }),
    )
}

const PERMANENT: Ack = Ack::Fail {
    after_ms: 10,
    retry_after_ms: None,
    permanent: true,
};

#[test]
fn none_while_running_then_all_delivered() {
    let mut sim = Sim::with_latency(Engine::new(streaming(), 1).unwrap(), 10);
    sim.stream("One sentence here. Another sentence there. ", 5, 10);
    assert_eq!(sim.engine.outcome(), None);
    sim.push(Input::Finish).run_until_idle();
    let outcome = sim.engine.outcome().expect("idle");
    assert_eq!(outcome.ending, TurnEnding::Finished);
    assert!(
        outcome.all_delivered() && outcome.final_delivered(),
        "{outcome:?}"
    );
    assert!(outcome.undelivered.is_empty());
}

#[test]
fn a_final_that_fails_for_good_is_reported_with_its_text() {
    let mut sim = sim_failing(finals_only(), SendKind::Final, PERMANENT);
    sim.push(Input::TextDelta("The answer is 42."))
        .push(Input::Finish)
        .run_until_idle();
    let outcome = sim.engine.outcome().expect("idle");
    assert!(!outcome.all_delivered());
    assert!(!outcome.final_delivered());
    assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
    let lost = &outcome.undelivered[0];
    assert_eq!(lost.kind, SendKind::Final);
    assert_eq!(lost.payload.text, "The answer is 42.");
    assert_eq!(lost.reason, UndeliveredReason::Failed);
    assert_eq!(sim.engine.stats().dispatch.dropped, 1);
}

#[test]
fn a_final_that_times_out_is_reported_until_a_late_ack_arrives() {
    let mut sim = sim_failing(finals_only(), SendKind::Final, Ack::Hang);
    sim.push(Input::TextDelta("Slow platform."))
        .push(Input::Finish)
        .run_until_idle();
    let outcome = sim.engine.outcome().expect("idle");
    assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
    let lost = outcome.undelivered[0].clone();
    assert_eq!(lost.reason, UndeliveredReason::TimedOut);
    assert_eq!(lost.payload.text, "Slow platform.");
    // The platform answers after all: the outcome says so.
    let now = replystream::Time::from_millis(sim.now + 5000);
    let _ = sim
        .engine
        .push(
            Input::Delivered {
                send_id: lost.send_id,
                message_ref: None,
            },
            now,
        )
        .unwrap()
        .count();
    assert!(sim.engine.outcome().unwrap().all_delivered());
}

#[test]
fn a_lost_block_is_healed_by_the_final_but_its_media_is_reported() {
    // Every block fails for good; its text comes back in the final, which is delivered.
    let mut sim = sim_failing(streaming(), SendKind::Block, PERMANENT);
    sim.stream("First part of the reply. Second part of the reply. ", 4, 10)
        .push(Input::Finish)
        .run_until_idle();
    let outcome = sim.engine.outcome().unwrap();
    assert!(outcome.all_delivered(), "{outcome:?}");
    assert!(sim.engine.stats().dispatch.dropped >= 1);
    let finals: String = sim
        .delivered
        .iter()
        .filter(|(_, s)| s.kind == SendKind::Final)
        .map(|(_, s)| s.payload.text.clone())
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(finals, "First part of the reply. Second part of the reply.");

    // A host media item sent as a block is not sent again: it is reported.
    let mut sim = sim_failing(streaming(), SendKind::Block, PERMANENT);
    let media = Payload {
        media: vec!["https://example.com/chart.png".to_owned()],
        ..Payload::default()
    };
    sim.push(Input::Media(media))
        .push(Input::Finish)
        .run_until_idle();
    let outcome = sim.engine.outcome().unwrap();
    assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
    assert_eq!(outcome.undelivered[0].kind, SendKind::Block);
    assert_eq!(
        outcome.undelivered[0].payload.media,
        ["https://example.com/chart.png"]
    );
    assert!(outcome.final_delivered());
    assert!(!outcome.all_delivered());
}

#[test]
fn a_tool_result_that_fails_is_reported() {
    let mut sim = sim_failing(streaming(), SendKind::Tool, PERMANENT);
    sim.push(Input::ToolResult(Payload::text("ran 3 tests, all passed")))
        .push(Input::TextDelta("Done."))
        .push(Input::Finish)
        .run_until_idle();
    let outcome = sim.engine.outcome().unwrap();
    assert_eq!(outcome.undelivered.len(), 1, "{outcome:?}");
    assert_eq!(outcome.undelivered[0].kind, SendKind::Tool);
    assert_eq!(
        outcome.undelivered[0].payload.text,
        "ran 3 tests, all passed"
    );
    assert!(outcome.final_delivered());
}

#[test]
fn failed_and_cancelled_turns_say_so() {
    let mut sim = Sim::new(Engine::new(finals_only(), 1).unwrap());
    sim.push(Input::TextDelta("Partial answer"))
        .push(Input::Fail {
            error: "model overloaded",
        })
        .run_until_idle();
    let outcome = sim.engine.outcome().unwrap();
    assert_eq!(outcome.ending, TurnEnding::Failed);
    assert!(
        outcome.all_delivered(),
        "the text and the error were delivered"
    );

    let mut sim = Sim::new(Engine::new(finals_only(), 1).unwrap());
    sim.push(Input::TextDelta("Never sent")).push(Input::Cancel);
    let outcome = sim.engine.outcome().unwrap();
    assert_eq!(outcome.ending, TurnEnding::Cancelled);
    assert!(!outcome.all_delivered());
}

/// A sink that fails every final for good and records the events.
struct FailFinals(Arc<Mutex<Vec<StreamEvent>>>);

impl Sink for FailFinals {
    fn deliver(&mut self, _: StreamId, send: &SendRequest, _: &AckHandle) -> Delivery {
        if send.kind == SendKind::Final {
            Delivery::Failed {
                retry_after_ms: None,
                permanent: true,
            }
        } else {
            Delivery::Delivered { message_ref: None }
        }
    }

    fn event(&mut self, _: StreamId, event: &StreamEvent) {
        self.0.lock().unwrap().push(event.clone());
    }
}

#[test]
fn the_driver_reports_the_outcome_with_idle() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let driver = Driver::spawn(FailFinals(events.clone()), DriverOptions::default());
    let stream = driver.open("chat", finals_only(), 1).unwrap();
    stream.text("The final reply.").unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.unfinished.is_empty());
    let events = events.lock().unwrap();
    let outcome = events
        .iter()
        .find_map(|e| match e {
            StreamEvent::Idle(outcome) => Some(outcome),
            _ => None,
        })
        .expect("an Idle event");
    assert!(!outcome.final_delivered());
    assert_eq!(outcome.undelivered[0].payload.text, "The final reply.");
}

/// `Action::Idle` means every send was answered or given up on, not that every send was
/// acknowledged: a host that never answers still gets `Idle` once the delivery timeouts
/// (and the wait for late acks) ran out, with nothing acknowledged, and the outcome lists
/// what did not arrive. After `Idle` nothing more is sent, and there is no second `Idle`.
#[test]
fn idle_comes_when_every_send_is_answered_or_given_up_on_not_only_acked() {
    let mut engine = Engine::new(finals_only(), 1).unwrap();
    let mut now = replystream::Time::from_millis(0);
    let mut sends = Vec::new();
    let mut idles = 0;
    let mut inputs = vec![Input::TextDelta("Nobody answers."), Input::Finish];
    inputs.reverse();
    // Never an ack: only text, `Finish` and timers at the engine's deadlines.
    loop {
        let input = inputs.pop().unwrap_or(Input::Timer);
        for action in engine.push(input, now).unwrap() {
            match action {
                replystream::Action::Send(send) => sends.push(send),
                replystream::Action::Idle => idles += 1,
                _ => {}
            }
        }
        if idles > 0 || inputs.is_empty() && engine.poll_timeout().is_none() {
            break;
        }
        if inputs.is_empty() {
            now = engine.poll_timeout().unwrap();
        }
    }
    assert_eq!(idles, 1, "Idle although no send was acknowledged");
    assert_eq!(sends.len(), 1, "{sends:?}");
    assert_eq!(sends[0].payload.text, "Nobody answers.");
    let outcome = engine.outcome().expect("idle");
    assert!(!outcome.all_delivered());
    assert_eq!(outcome.undelivered[0].reason, UndeliveredReason::TimedOut);
    // The turn is over: a late ack updates the outcome and emits nothing, not a second Idle.
    let later = now.plus_millis(5000);
    let after: Vec<_> = engine
        .push(
            Input::Delivered {
                send_id: sends[0].send_id,
                message_ref: None,
            },
            later,
        )
        .unwrap()
        .collect();
    assert_eq!(after, []);
    assert!(engine.outcome().unwrap().all_delivered());
}

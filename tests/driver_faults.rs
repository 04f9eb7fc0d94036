//! The thread driver at its edges, with real threads: panicking callbacks, calls from inside
//! callbacks, ids before events, full queues and absurd times.
// The driver's own tests run on real time, so they may read the clock.
#![allow(clippy::disallowed_methods)]

#[path = "common/driver_sink.rs"]
mod driver_sink;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use driver_sink::{delivered, join_then_shut_down, sink};
use replystream::driver::{
    BusyChat, Delivery, Driver, DriverError, DriverOptions, StreamEvent, StreamId, WhenFull,
};
use replystream::{Config, OwnedInput};

/// Waits until `done` holds, failing the test after 10 s.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "never happened: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

type Events = Arc<Mutex<Vec<(StreamId, StreamEvent)>>>;

#[test]
fn a_panic_in_every_callback_is_contained_and_counted() {
    let events: Events = Arc::default();
    let texts = Arc::new(Mutex::new(Vec::new()));
    let (seen, sent) = (events.clone(), texts.clone());
    let driver = Driver::spawn(
        sink(
            move |_, send, _| {
                sent.lock().unwrap().push(send.payload.text.clone());
                delivered()
            },
            move |stream, event| {
                seen.lock().unwrap().push((stream, event.clone()));
                // Every kind of event panics: Started, InputRefused, Idle.
                panic!("event callback failure on {event:?}");
            },
        ),
        DriverOptions::default(),
    );
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Delivered in spite of the panics.").unwrap();
    // Refused by the engine (no such send): an InputRefused event, which panics too.
    stream
        .push(OwnedInput::Delivered {
            send_id: replystream::SendId(42),
            message_ref: None,
        })
        .unwrap();
    stream.finish().unwrap();
    eventually("the first turn is idle", || {
        events
            .lock()
            .unwrap()
            .iter()
            .any(|(s, e)| *s == stream.id() && matches!(e, StreamEvent::Idle(_)))
    });
    // The driver still works for the next turn.
    let next = driver.open("chat", Config::default(), 2).unwrap();
    next.text("And the next turn too.").unwrap();
    next.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.completed, 2);
    let events = events.lock().unwrap();
    assert_eq!(report.sink_panics, events.len() as u64, "{events:?}");
    assert!(report.sink_panics >= 5, "{events:?}");
    assert_eq!(
        *texts.lock().unwrap(),
        [
            "Delivered in spite of the panics.",
            "And the next turn too."
        ]
    );
}

#[test]
fn a_panic_in_deliver_is_a_permanent_failure_and_the_text_comes_back() {
    let events: Events = Arc::default();
    let seen = events.clone();
    let calls = Arc::new(AtomicUsize::new(0));
    let n = calls.clone();
    let driver = Driver::spawn(
        sink(
            move |_, send, _| {
                if n.fetch_add(1, Ordering::SeqCst) == 0 {
                    panic!("deliver failure");
                }
                assert_eq!(send.payload.text, "Will the panic lose this?");
                delivered()
            },
            move |stream, event| seen.lock().unwrap().push((stream, event.clone())),
        ),
        DriverOptions::default(),
    );
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Will the panic lose this?").unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.sink_panics, 1);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "sent again as the final");
    assert!(
        events
            .lock()
            .unwrap()
            .iter()
            .any(|(_, e)| matches!(e, StreamEvent::SinkPanicked(_)))
    );
}

/// A panic payload whose own destructor panics: dropping it must not kill the driver.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload's destructor panics too");
    }
}

#[test]
fn a_panic_payload_that_panics_when_dropped_is_contained() {
    let driver = Driver::spawn(
        sink(|_, _, _| std::panic::panic_any(Bomb), |_, _| {}),
        DriverOptions::default(),
    );
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Sent into a sink that always panics.").unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert_eq!(report.failure, None, "the driver thread survived");
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.sink_panics, 2, "the block and the final");
}

/// The driver, reachable from inside its own sink once it exists.
type DriverSlot = Arc<OnceLock<Weak<Driver>>>;

fn driver_in(slot: &DriverSlot) -> Arc<Driver> {
    slot.get()
        .and_then(Weak::upgrade)
        .expect("the driver is alive")
}

#[test]
fn a_callback_can_open_the_next_turn_and_later_opens_keep_working() {
    const TURNS: usize = 5;
    let slot: DriverSlot = Arc::default();
    let idle: Arc<Mutex<Vec<StreamId>>> = Arc::default();
    let texts: Arc<Mutex<Vec<String>>> = Arc::default();
    let (from_event, idle_seen, sent) = (slot.clone(), idle.clone(), texts.clone());
    let driver = Arc::new(Driver::spawn(
        sink(
            move |_, send, _| {
                sent.lock().unwrap().push(send.payload.text.clone());
                delivered()
            },
            move |stream, event| {
                if !matches!(event, StreamEvent::Idle(_)) {
                    return;
                }
                let mut idle = idle_seen.lock().unwrap();
                idle.push(stream);
                if idle.len() < TURNS {
                    // Opening the next turn of the same chat from inside the callback, and
                    // feeding it, neither blocks nor deadlocks.
                    let next = driver_in(&from_event)
                        .open("chat", Config::default(), idle.len() as u64)
                        .expect("an open from a callback works");
                    next.text(&format!("Turn {}.", idle.len() + 1)).unwrap();
                    next.finish().unwrap();
                }
            },
        ),
        DriverOptions::default(),
    ));
    slot.set(Arc::downgrade(&driver)).unwrap();
    let first = driver.open("chat", Config::default(), 0).unwrap();
    first.text("Turn 1.").unwrap();
    first.finish().unwrap();
    eventually("every turn is idle", || idle.lock().unwrap().len() == TURNS);
    // Opens from other threads still work.
    let other = driver.clone();
    std::thread::spawn(move || {
        let s = other.open("chat", Config::default(), 99).unwrap();
        s.text("From another thread.").unwrap();
        s.finish().unwrap();
    })
    .join()
    .unwrap();
    eventually("the last turn is idle", || {
        idle.lock().unwrap().len() == TURNS + 1
    });
    let report = Arc::into_inner(driver)
        .expect("no callback holds the driver")
        .shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(
        *texts.lock().unwrap(),
        [
            "Turn 1.",
            "Turn 2.",
            "Turn 3.",
            "Turn 4.",
            "Turn 5.",
            "From another thread."
        ]
    );
}

#[test]
fn a_callback_gets_full_at_once_when_the_chat_cannot_take_another_waiting_turn() {
    let slot: DriverSlot = Arc::default();
    let outcome: Arc<Mutex<Option<Result<(), DriverError>>>> = Arc::default();
    let (from_deliver, result) = (slot.clone(), outcome.clone());
    let driver = Arc::new(Driver::spawn(
        sink(
            move |_, _, _| {
                let driver = driver_in(&from_deliver);
                // The chat's turn is active and no turn may wait: waiting here for a slot
                // would wait forever, so the call says Full at once.
                let r = driver.open("chat", Config::default(), 2).map(|_| ());
                *result.lock().unwrap() = Some(r);
                delivered()
            },
            |_, _| {},
        ),
        DriverOptions::default().with_max_waiting_turns(0),
    ));
    slot.set(Arc::downgrade(&driver)).unwrap();
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Hello.").unwrap();
    stream.finish().unwrap();
    eventually("the callback ran", || outcome.lock().unwrap().is_some());
    assert_eq!(
        outcome.lock().unwrap().clone(),
        Some(Err(DriverError::Full))
    );
    let report = Arc::into_inner(driver)
        .unwrap()
        .shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn ids_are_known_before_any_event_names_them() {
    let known: Arc<Mutex<HashSet<StreamId>>> = Arc::default();
    let unknown: Arc<Mutex<Vec<String>>> = Arc::default();
    let firsts: Arc<Mutex<Vec<(StreamId, StreamEvent)>>> = Arc::default();
    let (k1, k2, u1, u2, f) = (
        known.clone(),
        known.clone(),
        unknown.clone(),
        unknown.clone(),
        firsts.clone(),
    );
    let driver = Arc::new(Driver::spawn(
        sink(
            move |stream, _, _| {
                if !k1.lock().unwrap().contains(&stream) {
                    u1.lock().unwrap().push(format!("deliver for {stream}"));
                }
                delivered()
            },
            move |stream, event| {
                if !k2.lock().unwrap().contains(&stream) {
                    u2.lock().unwrap().push(format!("{event:?} for {stream}"));
                }
                let mut firsts = f.lock().unwrap();
                if !firsts.iter().any(|(s, _)| *s == stream) {
                    firsts.push((stream, event.clone()));
                }
            },
        ),
        DriverOptions::default(),
    ));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let (driver, known) = (driver.clone(), known.clone());
            std::thread::spawn(move || {
                for i in 0..100 {
                    // Two turns per chat: the second waits and starts when the first ends.
                    let s = driver
                        .open(&format!("chat-{t}-{}", i / 2), Config::default(), i)
                        .unwrap();
                    known.lock().unwrap().insert(s.id());
                    s.text("Hi.").unwrap();
                    s.finish().unwrap();
                }
            })
        })
        .collect();
    join_then_shut_down(threads, driver);
    assert!(
        unknown.lock().unwrap().is_empty(),
        "{:?}",
        unknown.lock().unwrap()
    );
    let firsts = firsts.lock().unwrap();
    assert_eq!(firsts.len(), 400);
    assert!(
        firsts.iter().all(|(_, e)| *e == StreamEvent::Started),
        "Started comes first"
    );
}

/// A sink whose deliveries wait until the test opens a gate, to fill the driver's queue.
fn gated_driver(options: DriverOptions) -> (Driver, Arc<AtomicBool>, Arc<AtomicBool>) {
    gated_driver_with_events(options, |_, _| {})
}

/// [`gated_driver`], with the sink's events going to `event`.
fn gated_driver_with_events(
    options: DriverOptions,
    event: impl FnMut(StreamId, &StreamEvent) + Send + 'static,
) -> (Driver, Arc<AtomicBool>, Arc<AtomicBool>) {
    let (gate, entered) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicBool::new(false)),
    );
    let (g, e) = (gate.clone(), entered.clone());
    let driver = Driver::spawn(
        sink(
            move |_, _, _| {
                e.store(true, Ordering::SeqCst);
                while !g.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                delivered()
            },
            event,
        ),
        options,
    );
    (driver, gate, entered)
}

/// Opens a stream and makes the driver thread wait inside the sink.
fn stall(driver: &Driver, entered: &AtomicBool) -> replystream::driver::StreamHandle {
    let stream = driver.open("busy chat", Config::default(), 1).unwrap();
    stream.text("Blocks the driver thread.").unwrap();
    // A tool call flushes the text: its send reaches the sink, which waits, and the channel
    // is then empty.
    stream
        .push(OwnedInput::ToolStart { name: "x".into() })
        .unwrap();
    eventually("the sink is entered", || entered.load(Ordering::SeqCst));
    stream
}

#[test]
fn a_full_command_queue_refuses_at_once_under_the_refuse_policy() {
    let options = DriverOptions::default()
        .with_command_capacity(8)
        .with_when_full(WhenFull::Refuse);
    let (driver, gate, entered) = gated_driver(options);
    let stream = stall(&driver, &entered);
    let mut accepted = 0;
    let refused = loop {
        match stream.text("x ") {
            Ok(()) => accepted += 1,
            Err(e) => break e,
        }
        assert!(accepted <= 8, "the queue holds at most 8 commands");
    };
    assert_eq!(refused, DriverError::Full);
    assert_eq!(accepted, 8);
    assert!(matches!(
        driver.open("another chat", Config::default(), 2),
        Err(DriverError::Full)
    ));
    // An ack is never refused: it waits for room.
    let acks = driver.acks();
    let id = stream.id();
    let ack = std::thread::spawn(move || acks.delivered(id, replystream::SendId(99), None));
    std::thread::sleep(Duration::from_millis(50));
    assert!(!ack.is_finished(), "the ack waits for room");
    gate.store(true, Ordering::SeqCst);
    assert_eq!(ack.join().unwrap(), Ok(()));
    eventually("room again", || stream.text("more ").is_ok());
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
}

/// The thread gives back the room of the inputs it took before it calls the sink: a sink
/// may wait for a thread that waits for room. (The thread gives room back in batches; a
/// batch still open when the sink is called would hold that room for as long as the sink
/// runs.)
#[test]
fn the_room_of_taken_inputs_is_free_while_the_sink_runs() {
    let started = Arc::new(AtomicBool::new(false));
    let s = started.clone();
    let options = DriverOptions::default()
        .with_command_capacity(4)
        .with_when_full(WhenFull::Refuse);
    let (driver, gate, entered) = gated_driver_with_events(options, move |_, event| {
        if *event == StreamEvent::Started {
            s.store(true, Ordering::SeqCst);
        }
    });
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Some text.").unwrap();
    eventually("the stream started", || started.load(Ordering::SeqCst));
    // Taken on its own, after `Started`: its send reaches the sink, which waits.
    stream
        .push(OwnedInput::ToolStart { name: "x".into() })
        .unwrap();
    eventually("the sink is entered", || entered.load(Ordering::SeqCst));
    let mut accepted = 0;
    while accepted <= 4 && stream.text("x ").is_ok() {
        accepted += 1;
    }
    // The gate opens before any assertion: a failing test must not leave the thread waiting.
    gate.store(true, Ordering::SeqCst);
    assert_eq!(
        accepted, 4,
        "all the room (and no more) is free while the sink runs"
    );
    eventually("room again", || stream.text("more ").is_ok());
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn a_full_command_queue_blocks_the_caller_under_the_block_policy() {
    let options = DriverOptions::default().with_command_capacity(4);
    let (driver, gate, entered) = gated_driver(options);
    let stream = stall(&driver, &entered);
    let pusher = {
        let stream = stream.clone();
        std::thread::spawn(move || {
            for _ in 0..20 {
                stream.text("x ").unwrap();
            }
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!pusher.is_finished(), "the pusher waits for room");
    gate.store(true, Ordering::SeqCst);
    pusher.join().unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
}

#[test]
fn a_full_waiting_turn_queue_refuses_or_blocks() {
    // Refuse: one turn active, one waiting, the third is refused.
    let options = DriverOptions::default()
        .with_max_waiting_turns(1)
        .with_when_full(WhenFull::Refuse);
    let driver = Driver::spawn(sink(|_, _, _| Delivery::Pending, |_, _| {}), options);
    let _active = driver.open("chat", Config::default(), 1).unwrap();
    let _waiting = driver.open("chat", Config::default(), 2).unwrap();
    assert_eq!(
        driver.open("chat", Config::default(), 3).err(),
        Some(DriverError::Full)
    );
    assert!(driver.open("another chat", Config::default(), 4).is_ok());
    drop(driver);

    // Block: the third open waits until the active turn ends.
    let options = DriverOptions::default().with_max_waiting_turns(1);
    let driver = Arc::new(Driver::spawn(
        sink(|_, _, _| delivered(), |_, _| {}),
        options,
    ));
    let active = driver.open("chat", Config::default(), 1).unwrap();
    let _waiting = driver.open("chat", Config::default(), 2).unwrap();
    let third = {
        let driver = driver.clone();
        std::thread::spawn(move || driver.open("chat", Config::default(), 3).map(|s| s.id()))
    };
    std::thread::sleep(Duration::from_millis(100));
    assert!(!third.is_finished(), "the third turn waits for a slot");
    active.finish().unwrap();
    assert!(third.join().unwrap().is_ok());
}

#[test]
fn busy_chat_rejection_still_works() {
    let driver = Driver::spawn(
        sink(|_, _, _| Delivery::Pending, |_, _| {}),
        DriverOptions::default().with_busy_chat(BusyChat::Reject),
    );
    let _first = driver.open("chat", Config::default(), 1).unwrap();
    assert_eq!(
        driver.open("chat", Config::default(), 2).err(),
        Some(DriverError::ChatBusy)
    );
}

#[test]
fn absurd_times_do_not_kill_the_driver() {
    // A 429 asking to wait 2^64 - 1 ms, and a delivery timeout of as long: the deadlines
    // saturate far beyond any instant and simply never come.
    let driver = Driver::spawn(
        sink(
            |_, send, _| {
                if send.payload.text.starts_with("Rate") {
                    Delivery::Failed {
                        retry_after_ms: Some(u64::MAX),
                        permanent: false,
                    }
                } else {
                    delivered()
                }
            },
            |_, _| {},
        ),
        DriverOptions::default(),
    );
    let limited = driver.open("a", Config::default(), 1).unwrap();
    limited.text("Rate limited for ever.").unwrap();
    limited.finish().unwrap();
    let config = Config {
        delivery_timeout_ms: u64::MAX,
        ..Config::default()
    };
    let slow = driver.open("b", config, 2).unwrap();
    slow.text("Fine.").unwrap();
    slow.finish().unwrap();
    let report = driver.shutdown(Duration::from_millis(300));
    assert_eq!(report.failure, None, "the driver thread survived");
    assert_eq!(report.unfinished, vec![(limited.id(), "a".to_owned())]);
    assert_eq!(report.completed, 1);
}

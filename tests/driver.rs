//! The thread driver with real threads and real time (SPEC §11). Timing assertions are
//! tolerant: they check order and lower bounds, never exact sleeps.
// The driver's own tests run on real time, so they may read the clock.
#![allow(clippy::disallowed_methods)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use replystream::driver::{
    AckHandle, BusyChat, Delivery, Driver, DriverError, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::{ChannelProfile, Config, HumanDelay, OwnedInput, SendRequest};

/// What a recording sink saw.
#[derive(Default)]
struct Record {
    sends: Vec<(StreamId, SendRequest, Instant)>,
    events: Vec<(StreamId, StreamEvent)>,
}

/// How the recording sink answers.
#[derive(Clone, Copy)]
enum Mode {
    Sync,
    /// Ack from another thread after this many ms.
    Async(u64),
    /// The first send of each stream gets a 429 with this retry_after.
    RateLimitFirst(u64),
    /// Panics on the first send.
    PanicFirst,
}

struct Recorder {
    record: Arc<Mutex<Record>>,
    mode: Mode,
}

impl Sink for Recorder {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        let n = {
            let mut r = self.record.lock().unwrap();
            r.sends.push((stream, send.clone(), Instant::now()));
            r.sends.iter().filter(|(s, _, _)| *s == stream).count()
        };
        match self.mode {
            Mode::Sync => Delivery::Delivered {
                message_ref: Some(format!("m{}", send.send_id.0)),
            },
            Mode::Async(ms) => {
                let acks = acks.clone();
                let id = send.send_id;
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(ms));
                    let _ = acks.delivered(stream, id, None);
                });
                Delivery::Pending
            }
            Mode::RateLimitFirst(ms) if n == 1 => Delivery::Failed {
                retry_after_ms: Some(ms),
                permanent: false,
            },
            Mode::RateLimitFirst(_) => Delivery::Delivered { message_ref: None },
            Mode::PanicFirst if n == 1 => panic!("sink failure"),
            Mode::PanicFirst => Delivery::Delivered { message_ref: None },
        }
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        self.record
            .lock()
            .unwrap()
            .events
            .push((stream, event.clone()));
    }
}

fn spawn(mode: Mode, options: DriverOptions) -> (Driver, Arc<Mutex<Record>>) {
    let record = Arc::new(Mutex::new(Record::default()));
    let driver = Driver::spawn(
        Recorder {
            record: record.clone(),
            mode,
        },
        options,
    );
    (driver, record)
}

fn small() -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name("generic").unwrap());
    c.chunk_min = 20;
    c.chunk_max = 60;
    c.coalesce_min = Some(20);
    c.coalesce_idle_ms = 50;
    c
}

const TEXT: &str = "The first sentence is here. The second one follows it. \
A third sentence ends the paragraph.\n\nA new paragraph starts now and ends.";

fn texts_of(record: &Record, stream: StreamId) -> String {
    record
        .sends
        .iter()
        .filter(|(s, _, _)| *s == stream)
        .map(|(_, send, _)| send.payload.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn one_stream_delivers_everything_in_order() {
    let (driver, record) = spawn(Mode::Sync, DriverOptions::default());
    let stream = driver.open("chat", small(), 1).unwrap();
    for piece in TEXT.split_inclusive(' ') {
        stream.text(piece).unwrap();
    }
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.unfinished.is_empty());
    let r = record.lock().unwrap();
    assert_eq!(squash(&texts_of(&r, stream.id())), squash(TEXT));
    let idle = r
        .events
        .iter()
        .find_map(|(id, e)| match e {
            StreamEvent::Idle(outcome) if *id == stream.id() => Some(outcome.clone()),
            _ => None,
        })
        .expect("an Idle event");
    assert!(idle.all_delivered(), "{idle:?}");
}

#[test]
fn idle_timer_fires_on_real_time() {
    let (driver, record) = spawn(Mode::Sync, DriverOptions::default());
    let mut c = small();
    c.coalesce_idle_ms = 100;
    c.chunk_min = 1;
    let stream = driver.open("chat", c, 1).unwrap();
    let start = Instant::now();
    stream.text("Hello there, friend.").unwrap();
    stream.push(OwnedInput::TextEnd(None)).unwrap();
    // The idle timer sends the coalesced text without any further input.
    let deadline = start + Duration::from_secs(10);
    loop {
        if !record.lock().unwrap().sends.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "the idle timer never fired");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent_at = record.lock().unwrap().sends[0].2;
    assert!(
        sent_at.duration_since(start) >= Duration::from_millis(100),
        "not before the idle time"
    );
    drop(driver);
}

#[test]
fn human_delay_spaces_blocks_on_real_time() {
    let (driver, record) = spawn(Mode::Sync, DriverOptions::default());
    let mut c = small();
    c.human_delay = HumanDelay::Custom {
        min_ms: 150,
        max_ms: 150,
    };
    let stream = driver.open("chat", c, 1).unwrap();
    stream.push(OwnedInput::MessageStart).unwrap();
    stream.text("First message text.").unwrap();
    stream.push(OwnedInput::MessageEnd(None)).unwrap();
    stream.push(OwnedInput::MessageStart).unwrap();
    stream.text("Second message text.").unwrap();
    stream.finish().unwrap();
    driver.shutdown(Duration::from_secs(10));
    let r = record.lock().unwrap();
    assert_eq!(r.sends.len(), 2);
    assert!(r.sends[1].2.duration_since(r.sends[0].2) >= Duration::from_millis(150));
}

#[test]
fn async_acks_from_another_thread() {
    let (driver, record) = spawn(Mode::Async(20), DriverOptions::default());
    let stream = driver.open("chat", small(), 1).unwrap();
    for piece in TEXT.split_inclusive(". ") {
        stream.text(piece).unwrap();
    }
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.unfinished.is_empty(), "{report:?}");
    let r = record.lock().unwrap();
    assert_eq!(squash(&texts_of(&r, stream.id())), squash(TEXT));
}

#[test]
fn retry_after_is_honoured() {
    let (driver, record) = spawn(Mode::RateLimitFirst(200), DriverOptions::default());
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Rate limited.").unwrap();
    stream.finish().unwrap();
    driver.shutdown(Duration::from_secs(10));
    let r = record.lock().unwrap();
    assert_eq!(r.sends.len(), 2);
    assert!(r.sends[1].2.duration_since(r.sends[0].2) >= Duration::from_millis(200));
    assert_eq!(r.sends[0].1.send_id, r.sends[1].1.send_id);
}

#[test]
fn a_panicking_sink_is_contained() {
    let (driver, record) = spawn(Mode::PanicFirst, DriverOptions::default());
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Will the panic lose this?").unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.unfinished.is_empty());
    let r = record.lock().unwrap();
    assert!(
        r.events
            .iter()
            .any(|(_, e)| matches!(e, StreamEvent::SinkPanicked(_)))
    );
    // The permanently failed block is re-sent as the final: nothing lost.
    assert_eq!(
        r.sends.last().unwrap().1.payload.text,
        "Will the panic lose this?"
    );
    assert!(
        r.events
            .iter()
            .any(|(_, e)| matches!(e, StreamEvent::Idle(outcome) if outcome.all_delivered()))
    );
}

#[test]
fn second_turn_for_a_busy_chat_waits() {
    let (driver, record) = spawn(Mode::Async(30), DriverOptions::default());
    let first = driver.open("chat", Config::default(), 1).unwrap();
    let second = driver.open("chat", Config::default(), 2).unwrap();
    second.text("Second turn.").unwrap();
    second.finish().unwrap();
    first.text("First turn.").unwrap();
    first.finish().unwrap();
    driver.shutdown(Duration::from_secs(10));
    let r = record.lock().unwrap();
    let order: Vec<&str> = r
        .sends
        .iter()
        .map(|(_, s, _)| s.payload.text.as_str())
        .collect();
    assert_eq!(order, ["First turn.", "Second turn."]);
}

#[test]
fn second_turn_for_a_busy_chat_can_be_rejected() {
    let (driver, _) = spawn(
        Mode::Sync,
        DriverOptions::default().with_busy_chat(BusyChat::Reject),
    );
    let _first = driver.open("chat", Config::default(), 1).unwrap();
    assert!(matches!(
        driver.open("chat", Config::default(), 2),
        Err(DriverError::ChatBusy)
    ));
    assert!(driver.open("other chat", Config::default(), 3).is_ok());
}

#[test]
fn invalid_config_is_refused_at_open() {
    let (driver, _) = spawn(Mode::Sync, DriverOptions::default());
    let c = Config {
        text_limit: 0,
        ..Config::default()
    };
    assert!(matches!(
        driver.open("chat", c, 1),
        Err(DriverError::Config(_))
    ));
}

#[test]
fn shutdown_reports_what_was_not_delivered() {
    // Acks take 10 s: a 100 ms shutdown cannot wait for them.
    let (driver, _) = spawn(Mode::Async(10_000), DriverOptions::default());
    let stream = driver.open("slow chat", Config::default(), 1).unwrap();
    stream.text("Never acknowledged in time.").unwrap();
    let start = Instant::now();
    let report = driver.shutdown(Duration::from_millis(100));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "the wait is bounded"
    );
    assert_eq!(
        report.unfinished,
        vec![(stream.id(), "slow chat".to_string())]
    );
}

#[test]
fn a_thousand_concurrent_streams_lose_nothing() {
    let (driver, record) = spawn(Mode::Sync, DriverOptions::default());
    let driver = Arc::new(driver);
    let mut threads = Vec::new();
    for t in 0..4 {
        let driver = driver.clone();
        threads.push(std::thread::spawn(move || {
            let mut ids = Vec::new();
            for i in 0..250 {
                let chat = format!("chat-{t}-{i}");
                let stream = driver.open(&chat, small(), i).unwrap();
                for piece in TEXT.split_inclusive(' ') {
                    stream.text(piece).unwrap();
                }
                stream.finish().unwrap();
                ids.push(stream.id());
            }
            ids
        }));
    }
    let ids: Vec<StreamId> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let driver = Arc::into_inner(driver).expect("threads are done");
    let report = driver.shutdown(Duration::from_secs(30));
    assert!(
        report.unfinished.is_empty(),
        "{} unfinished",
        report.unfinished.len()
    );
    assert_eq!(report.completed, 1000);
    let r = record.lock().unwrap();
    for id in ids {
        assert_eq!(squash(&texts_of(&r, id)), squash(TEXT), "{id}");
    }
}

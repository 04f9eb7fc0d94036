//! The thread driver's timers on real time: nothing fires early. Deadlines are counted from
//! when an input was handled, rounded up to the millisecond, and acted on only once the real
//! clock reaches them, even when other inputs arrive in the deadline's last millisecond.
// The driver's own tests run on real time, so they may read the clock.
#![allow(clippy::disallowed_methods)]

#[path = "common/driver_sink.rs"]
mod driver_sink;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use driver_sink::{delivered, join_then_shut_down, sink};
use replystream::driver::{Delivery, Driver, DriverOptions, StreamEvent, StreamId};
use replystream::{AbortReason, ChannelProfile, Config, OwnedInput, SendId};

fn small() -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name("generic").unwrap());
    c.chunk_min = 10;
    c.chunk_max = 30;
    c.coalesce_min = Some(10);
    c.coalesce_max = Some(30);
    c.coalesce_idle_ms = 3;
    c
}

#[test]
fn retries_never_leave_before_retry_after() {
    // Every first attempt gets a 429 with a retry_after of 1 to 7 ms; meanwhile the streams
    // keep receiving text, so inputs land in the last fraction of a retry's millisecond.
    #[derive(Default)]
    struct Seen {
        /// When the 429 was answered, and the retry_after it asked for, per send.
        refused: HashMap<(StreamId, SendId), (Instant, u64)>,
        /// (retry_after asked, time actually waited) per retry.
        retries: Vec<(u64, Duration)>,
    }
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let record = seen.clone();
    let driver = Arc::new(Driver::spawn(
        sink(
            move |stream, send, _| {
                let mut seen = record.lock().unwrap();
                let key = (stream, send.send_id);
                if let Some((at, after)) = seen.refused.get(&key).copied() {
                    seen.retries.push((after, at.elapsed()));
                    return delivered();
                }
                let after = 1 + (stream.0 + send.send_id.0) % 7;
                seen.refused.insert(key, (Instant::now(), after));
                Delivery::Failed {
                    retry_after_ms: Some(after),
                    permanent: false,
                }
            },
            |_, _| {},
        ),
        DriverOptions::default(),
    ));
    let threads: Vec<_> = (0..2)
        .map(|t| {
            let driver = driver.clone();
            std::thread::spawn(move || {
                let streams: Vec<_> = (0..100)
                    .map(|i| driver.open(&format!("chat-{t}-{i}"), small(), i).unwrap())
                    .collect();
                for round in 0..40 {
                    for s in &streams {
                        s.text(&format!("Word {round} of the text. ")).unwrap();
                    }
                    std::thread::sleep(Duration::from_micros(700));
                }
                for s in &streams {
                    s.finish().unwrap();
                }
            })
        })
        .collect();
    join_then_shut_down(threads, driver);
    let seen = seen.lock().unwrap();
    assert!(seen.retries.len() >= 1000, "{} retries", seen.retries.len());
    let early: Vec<_> = seen
        .retries
        .iter()
        .filter(|(after, waited)| *waited < Duration::from_millis(*after))
        .collect();
    assert!(
        early.is_empty(),
        "{} of {} retries left early, e.g. {:?}",
        early.len(),
        seen.retries.len(),
        &early[..early.len().min(5)]
    );
}

#[test]
fn idle_timers_never_fire_before_the_idle_time() {
    // Each stream gets one short text, ended; the coalescer sends it after its idle time.
    // Measured from when the last input was handed to the driver (before it is handled).
    let sent: Arc<Mutex<HashMap<StreamId, Instant>>> = Arc::default();
    let record = sent.clone();
    let driver = Driver::spawn(
        sink(
            move |stream, _, _| {
                record
                    .lock()
                    .unwrap()
                    .entry(stream)
                    .or_insert_with(Instant::now);
                delivered()
            },
            |_, _| {},
        ),
        DriverOptions::default(),
    );
    let mut config = small();
    config.coalesce_min = Some(25);
    config.coalesce_idle_ms = 5;
    let mut pushed = Vec::new();
    for i in 0..300 {
        let s = driver
            .open(&format!("chat-{i}"), config.clone(), i)
            .unwrap();
        s.text("Short text.").unwrap();
        let at = Instant::now();
        s.push(OwnedInput::TextEnd(None)).unwrap();
        pushed.push((s.id(), at));
        std::thread::sleep(Duration::from_micros(230));
    }
    std::thread::sleep(Duration::from_millis(50));
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
    let sent = sent.lock().unwrap();
    for (id, at) in pushed {
        let waited = sent[&id].duration_since(at);
        assert!(
            waited >= Duration::from_millis(5),
            "{id}: sent after {waited:?}"
        );
    }
    assert!(report.timer_lateness.count >= 300);
}

#[test]
fn a_delivery_timeout_fires_on_real_time_and_not_before() {
    let events: Arc<Mutex<Vec<(StreamEvent, Instant)>>> = Arc::default();
    let sent_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let (e, s) = (events.clone(), sent_at.clone());
    let driver = Driver::spawn(
        sink(
            move |_, _, _| {
                s.lock().unwrap().get_or_insert_with(Instant::now);
                Delivery::Pending // never acknowledged
            },
            move |_, event| e.lock().unwrap().push((event.clone(), Instant::now())),
        ),
        DriverOptions::default(),
    );
    let config = Config {
        delivery_timeout_ms: 40,
        ..Config::default()
    };
    let stream = driver.open("chat", config, 1).unwrap();
    stream.text("Nobody answers.").unwrap();
    stream.finish().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let aborted_at = loop {
        let found = events.lock().unwrap().iter().find_map(|(e, at)| {
            (*e == StreamEvent::Aborted(AbortReason::DeliveryTimeout)).then_some(*at)
        });
        if let Some(at) = found {
            break at;
        }
        assert!(Instant::now() < deadline, "the timeout never fired");
        std::thread::sleep(Duration::from_millis(5));
    };
    let sent_at = sent_at.lock().unwrap().expect("sent");
    assert!(aborted_at.duration_since(sent_at) >= Duration::from_millis(40));
    drop(driver);
}

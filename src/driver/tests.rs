//! The driver thread's death, which no public input can cause (every sink callback is
//! guarded and the engine never panics), so a test-only command injects it.
#![allow(clippy::disallowed_methods)] // real threads, real time

use std::time::Duration;

use super::*;
use crate::action::SendRequest;

struct Quiet;

impl Sink for Quiet {
    fn deliver(&mut self, _: StreamId, _: &SendRequest, _: &AckHandle) -> Delivery {
        Delivery::Pending
    }
}

#[test]
fn a_dead_worker_is_reported_by_every_later_call_and_by_shutdown() {
    let driver = Driver::spawn(Quiet, DriverOptions::default());
    let acks = driver.acks();
    let first = driver.open("first chat", Config::default(), 1).unwrap();
    first
        .text("Some text that will never be delivered.")
        .unwrap();
    let second = driver.open("second chat", Config::default(), 2).unwrap();
    driver.crash();
    // The death is visible to every handle as soon as the thread has reported it.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let error = loop {
        match first.text("more") {
            Err(e) => break e,
            Ok(()) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the death was never reported"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    };
    assert!(
        matches!(&error, DriverError::WorkerPanicked(why) if why.contains("crash requested by a test")),
        "{error:?}"
    );
    assert!(matches!(
        second.finish(),
        Err(DriverError::WorkerPanicked(_))
    ));
    assert!(matches!(
        acks.delivered(first.id(), crate::input::SendId(1), None),
        Err(DriverError::WorkerPanicked(_))
    ));
    assert!(matches!(
        driver.open("third chat", Config::default(), 3),
        Err(DriverError::WorkerPanicked(_))
    ));
    let report = driver.shutdown(Duration::from_secs(1));
    assert!(!report.is_clean());
    assert!(
        report
            .failure
            .as_deref()
            .is_some_and(|f| f.contains("panicked")),
        "{report:?}"
    );
    assert_eq!(
        report.unfinished,
        vec![
            (first.id(), "first chat".to_owned()),
            (second.id(), "second chat".to_owned())
        ]
    );
}

#[test]
fn a_crash_while_shutting_down_is_reported_by_the_shutdown() {
    let driver = Driver::spawn(Quiet, DriverOptions::default());
    let stream = driver.open("chat", Config::default(), 1).unwrap();
    stream.text("Never acknowledged.").unwrap();
    driver.crash();
    let report = driver.shutdown(Duration::from_secs(1));
    assert!(report.failure.is_some(), "{report:?}");
    assert_eq!(report.unfinished, vec![(stream.id(), "chat".to_owned())]);
}

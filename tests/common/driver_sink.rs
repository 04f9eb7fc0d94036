//! A sink made of two closures, so each driver test says only what its sink does.

use replystream::SendRequest;
use replystream::driver::{AckHandle, Delivery, Sink, StreamEvent, StreamId};

/// Delivers with `deliver`, reports events to `event`.
pub(crate) struct FnSink<D, E> {
    pub(crate) deliver: D,
    pub(crate) event: E,
}

impl<D, E> Sink for FnSink<D, E>
where
    D: FnMut(StreamId, &SendRequest, &AckHandle) -> Delivery + Send + 'static,
    E: FnMut(StreamId, &StreamEvent) + Send + 'static,
{
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        (self.deliver)(stream, send, acks)
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        (self.event)(stream, event)
    }
}

/// A sink from two closures.
pub(crate) fn sink<D, E>(deliver: D, event: E) -> FnSink<D, E>
where
    D: FnMut(StreamId, &SendRequest, &AckHandle) -> Delivery + Send + 'static,
    E: FnMut(StreamId, &StreamEvent) + Send + 'static,
{
    FnSink { deliver, event }
}

/// Every send delivered at once.
pub(crate) fn delivered() -> Delivery {
    Delivery::Delivered { message_ref: None }
}

/// Waits for the producer `threads`, then shuts the shared driver down (it must be the last
/// reference) and returns the report, which must be clean.
pub(crate) fn join_then_shut_down(
    threads: Vec<std::thread::JoinHandle<()>>,
    driver: std::sync::Arc<replystream::driver::Driver>,
) -> replystream::driver::ShutdownReport {
    for t in threads {
        t.join().unwrap();
    }
    let report = std::sync::Arc::into_inner(driver)
        .expect("the threads held the last other references")
        .shutdown(std::time::Duration::from_secs(30));
    assert!(report.is_clean(), "{report:?}");
    report
}

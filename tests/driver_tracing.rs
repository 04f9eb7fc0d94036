//! The driver's tracing hooks (feature `tracing`): a span per stream, and events for sends,
//! failures, retries, timers, aborts and the outcome, recorded by a small subscriber.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use replystream::driver::{AckHandle, Delivery, Driver, DriverOptions, Sink, StreamId};
use replystream::{Config, SendKind, SendRequest};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// One recorded event: its message, its fields as `name=value`, and the `stream` field of
/// the span it happened in.
#[derive(Clone, Debug)]
struct Seen {
    message: String,
    fields: Vec<String>,
    stream: Option<u64>,
}

#[derive(Default)]
struct Recorder {
    next: AtomicU64,
    /// Span id → its `stream` field.
    spans: Mutex<Vec<(u64, u64)>>,
    /// The span each thread is in (the driver has one thread; a stack is enough).
    current: Mutex<Vec<u64>>,
    events: Mutex<Vec<Seen>>,
}

#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<String>,
    stream: Option<u64>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        } else {
            self.fields.push(format!("{}={value:?}", field.name()));
        }
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "stream" {
            self.stream = Some(value);
        }
        self.fields.push(format!("{}={value}", field.name()));
    }
}

impl Subscriber for &'static Recorder {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.target().starts_with("replystream")
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut f = Fields::default();
        attrs.record(&mut f);
        assert_eq!(attrs.metadata().name(), "replystream.stream");
        assert!(
            f.fields.iter().any(|x| x.starts_with("chat=")),
            "{:?}",
            f.fields
        );
        self.spans
            .lock()
            .unwrap()
            .push((id, f.stream.expect("stream field")));
        Id::from_u64(id)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let span = self.current.lock().unwrap().last().copied();
        let stream = span.and_then(|s| {
            self.spans
                .lock()
                .unwrap()
                .iter()
                .find(|(id, _)| *id == s)
                .map(|(_, stream)| *stream)
        });
        self.events.lock().unwrap().push(Seen {
            message: f.message,
            fields: f.fields,
            stream,
        });
    }
    fn enter(&self, span: &Id) {
        self.current.lock().unwrap().push(span.into_u64());
    }
    fn exit(&self, _: &Id) {
        self.current.lock().unwrap().pop();
    }
}

fn recorder() -> &'static Recorder {
    static RECORDER: OnceLock<&'static Recorder> = OnceLock::new();
    RECORDER.get_or_init(|| {
        let r: &'static Recorder = Box::leak(Box::default());
        tracing::subscriber::set_global_default(r).expect("the only subscriber");
        r
    })
}

/// Fails the first send with a 429 (retry after 50 ms), the block of the second sentence
/// for good, and then the final that carries it for good too.
struct Flaky(Arc<Mutex<u32>>);

impl Sink for Flaky {
    fn deliver(&mut self, _: StreamId, send: &SendRequest, _: &AckHandle) -> Delivery {
        let mut n = self.0.lock().unwrap();
        *n += 1;
        let second = send.payload.text.trim_start().starts_with("And");
        match (*n, send.kind) {
            (1, _) => Delivery::Failed {
                retry_after_ms: Some(50),
                permanent: false,
            },
            (_, SendKind::Final) | (_, SendKind::Block) if second => Delivery::Failed {
                retry_after_ms: None,
                permanent: true,
            },
            _ => Delivery::Delivered { message_ref: None },
        }
    }
}

#[test]
fn spans_and_events_tell_what_happened_to_each_stream() {
    let rec = recorder();
    let driver = Driver::spawn(Flaky(Arc::default()), DriverOptions::default());
    let config = Config {
        chunk_min: 10,
        chunk_max: 40,
        coalesce_max: Some(30),
        coalesce_idle_ms: 0,
        ..Config::default()
    };
    let stream = driver.open("chat-7", config, 1).unwrap();
    stream.text("A first sentence to send. ").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    stream.text("And a second one at the end.").unwrap();
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.unfinished.is_empty());

    let events = rec.events.lock().unwrap().clone();
    let of_stream: Vec<&Seen> = events
        .iter()
        .filter(|e| e.stream == Some(stream.id().0))
        .collect();
    let messages: Vec<&str> = of_stream.iter().map(|e| e.message.as_str()).collect();
    let has = |m: &str, field: &str| {
        of_stream
            .iter()
            .any(|e| e.message == m && e.fields.iter().any(|f| f == field))
    };
    // The first send fails with a 429, is retried (same id), then delivered.
    assert!(has("send failed", "retry_after_ms=50"), "{events:#?}");
    assert!(has("send", "retry=true"), "{events:#?}");
    assert!(
        of_stream.iter().any(|e| e.message == "timer"),
        "{messages:?}"
    );
    assert!(messages.contains(&"delivered"), "{messages:?}");
    // The final fails for good, and the outcome says the final was not delivered.
    assert!(has("send failed", "permanent=true"), "{events:#?}");
    assert!(has("idle", "final_delivered=false"), "{events:#?}");
    assert!(has("send", "kind=\"final\""), "{events:#?}");
    // Every event of the driver happened inside a stream's span.
    assert!(events.iter().all(|e| e.stream.is_some()), "{events:#?}");
}

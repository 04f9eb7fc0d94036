//! A live preview through the thread driver, on real time: the sink gets the preview's
//! create, its edits and the final edit, each edit carrying the id the sink gave the create;
//! the sink's simulated chat ends showing exactly the reply, with no cursor.
// The driver runs on real time, so this test may read the clock.
#![allow(clippy::disallowed_methods)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::sim::{Chat, ChatAnswer};
use replystream::{ChannelProfile, Config, PreviewMode, SendKind, SendRequest};

#[derive(Default)]
struct Seen {
    sends: Vec<(SendRequest, Instant)>,
    chat: Chat,
    idle: bool,
}

/// A sink in front of a simulated chat, answering at once.
struct ChatSink(Arc<Mutex<Seen>>);

impl Sink for ChatSink {
    fn deliver(&mut self, _stream: StreamId, send: &SendRequest, _acks: &AckHandle) -> Delivery {
        let mut seen = self.0.lock().unwrap();
        seen.sends.push((send.clone(), Instant::now()));
        match seen.chat.apply(send) {
            ChatAnswer::Done { message_ref } => Delivery::Delivered { message_ref },
            ChatAnswer::NotModified => Delivery::Delivered { message_ref: None },
            _ => Delivery::Failed {
                retry_after_ms: None,
                permanent: true,
            },
        }
    }

    fn event(&mut self, _stream: StreamId, event: &StreamEvent) {
        if let StreamEvent::Idle(outcome) = event {
            assert!(outcome.all_delivered(), "{outcome:?}");
            self.0.lock().unwrap().idle = true;
        }
    }
}

#[test]
fn the_driver_passes_edits_and_refs_through_its_sink() {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let driver = Driver::spawn(ChatSink(seen.clone()), DriverOptions::default());
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = PreviewMode::Partial;
    config.preview_throttle_ms = 250;
    let stream = driver.open("chat", config, 1).unwrap();
    let reply = "Streaming through the driver: the preview grows while the model writes, \
                 and the final replaces it in place when the turn is done.";
    for word in reply.split_inclusive(' ') {
        stream.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(40));
    }
    stream.finish().unwrap();
    let started = Instant::now();
    while !seen.lock().unwrap().idle {
        assert!(started.elapsed() < Duration::from_secs(10), "never idle");
        std::thread::sleep(Duration::from_millis(10));
    }
    let report = driver.shutdown(Duration::from_secs(5));
    assert!(report.unfinished.is_empty());

    let seen = seen.lock().unwrap();
    assert_eq!(seen.chat.texts(), [reply]);
    let sends = &seen.sends;
    assert!(
        sends.len() >= 3,
        "a create, an edit and the final: {}",
        sends.len()
    );
    assert_eq!(sends[0].0.kind, SendKind::Preview);
    assert_eq!(sends[0].0.op.name(), "create");
    let id = seen.chat.messages[0].id.clone();
    for (s, _) in &sends[1..] {
        assert_eq!(s.op.name(), "edit");
        assert_eq!(s.message_ref.as_deref(), Some(id.as_str()));
    }
    assert_eq!(sends.last().unwrap().0.kind, SendKind::Final);
    let previews: Vec<_> = sends
        .iter()
        .filter(|(s, _)| s.kind == SendKind::Preview)
        .collect();
    assert!(
        previews
            .windows(2)
            .all(|p| p[1].1 - p[0].1 >= Duration::from_millis(245)),
        "one update per window (the driver's clock is in whole ms)"
    );
}

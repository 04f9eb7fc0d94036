//! The sink is told the chat each stream was opened for (`Sink::started`), once, before the
//! `Started` event and before any send of that stream.
#![allow(clippy::disallowed_methods)] // real threads, real time

use std::sync::{Arc, Mutex};
use std::time::Duration;

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::{Config, SendRequest};

/// Everything the sink was told, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seen {
    Chat(StreamId, String),
    Started(StreamId),
    Send(StreamId, String),
}

struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Sink for Recorder {
    fn started(&mut self, stream: StreamId, chat: &str) {
        self.0
            .lock()
            .unwrap()
            .push(Seen::Chat(stream, chat.to_owned()));
    }

    fn deliver(&mut self, stream: StreamId, send: &SendRequest, _: &AckHandle) -> Delivery {
        let text = send.payload.text.clone();
        self.0.lock().unwrap().push(Seen::Send(stream, text));
        Delivery::Delivered { message_ref: None }
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        if *event == StreamEvent::Started {
            self.0.lock().unwrap().push(Seen::Started(stream));
        }
    }
}

#[test]
fn each_stream_is_introduced_with_its_chat_before_it_starts_and_sends() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let driver = Driver::spawn(Recorder(seen.clone()), DriverOptions::default());
    // Two turns of one chat (the second waits for the first) and one of another chat.
    let a1 = driver.open("chat A", Config::default(), 1).unwrap();
    let a2 = driver.open("chat A", Config::default(), 2).unwrap();
    let b = driver.open("chat B ✓", Config::default(), 3).unwrap();
    for (handle, text) in [(&a2, "second in A"), (&b, "only in B"), (&a1, "first in A")] {
        handle.text(text).unwrap();
        handle.finish().unwrap();
    }
    let report = driver.shutdown(Duration::from_secs(10));
    assert!(report.is_clean(), "{report:?}");
    let seen = seen.lock().unwrap().clone();
    for (handle, chat, text) in [
        (&a1, "chat A", "first in A"),
        (&a2, "chat A", "second in A"),
        (&b, "chat B ✓", "only in B"),
    ] {
        let id = handle.id();
        let mine: Vec<&Seen> = seen
            .iter()
            .filter(
                |s| matches!(s, Seen::Chat(i, _) | Seen::Started(i) | Seen::Send(i, _) if *i == id),
            )
            .collect();
        assert_eq!(
            mine,
            [
                &Seen::Chat(id, chat.to_owned()),
                &Seen::Started(id),
                &Seen::Send(id, text.to_owned())
            ],
            "{seen:?}"
        );
    }
    // The waiting turn of chat A is introduced only once the first turn is done with.
    let pos = |s: &Seen| seen.iter().position(|x| x == s).unwrap();
    assert!(
        pos(&Seen::Chat(a2.id(), "chat A".into())) > pos(&Seen::Send(a1.id(), "first in A".into()))
    );
}

//! Embedding replystream in a plain-thread program: a fake chat API with network latency
//! that rate-limits one message, driven by the thread driver.
//!
//! Run: `cargo run --example thread_sink`
#![allow(clippy::disallowed_methods)] // an example host reads its own clock

use std::time::{Duration, Instant};

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::{ChannelProfile, Config, HumanDelay, SendRequest};

/// A pretend chat API: each call takes 80 ms on a worker thread; the second message gets a
/// 429 asking to retry after 700 ms.
struct FakeChatApi {
    started: Instant,
    calls: u32,
}

impl Sink for FakeChatApi {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        self.calls += 1;
        let call = self.calls;
        let t = self.started.elapsed().as_millis();
        let preview: String = send.payload.text.chars().take(60).collect();
        println!(
            "[{t:>5} ms] {} {:<5} #{} {:?}",
            stream,
            send.kind.name(),
            send.send_id.0,
            preview
        );
        // Deliver asynchronously, as a real HTTP client would, and ack from that thread.
        let acks = acks.clone();
        let id = send.send_id;
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(80));
            if call == 2 {
                println!("          429 Too Many Requests: retry after 700 ms");
                let _ = acks.failed(stream, id, Some(700), false);
            } else {
                let _ = acks.delivered(stream, id, Some(format!("msg-{call}")));
            }
        });
        Delivery::Pending
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        let t = self.started.elapsed().as_millis();
        println!("[{t:>5} ms] {stream} event {event:?}");
    }
}

fn main() {
    let driver = Driver::spawn(
        FakeChatApi {
            started: Instant::now(),
            calls: 0,
        },
        DriverOptions::default(),
    );
    let mut config = Config::for_channel(&ChannelProfile::by_name("discord").unwrap());
    config.chunk_min = 120;
    config.chunk_max = 300;
    config.coalesce_min = Some(120);
    config.human_delay = HumanDelay::Custom {
        min_ms: 300,
        max_ms: 600,
    };
    let stream = driver.open("demo-chat", config, 42).expect("valid config");

    // The "model": a reply streamed word by word at about 200 words a second.
    let reply = include_str!("../tests/data/prose-paragraphs.md");
    for word in reply.split_inclusive(' ') {
        stream.text(word).unwrap();
        std::thread::sleep(Duration::from_millis(5));
    }
    stream.finish().unwrap();
    let report = driver.shutdown(Duration::from_secs(30));
    println!(
        "done: {} stream(s) completed, {} unfinished",
        report.completed,
        report.unfinished.len()
    );
}

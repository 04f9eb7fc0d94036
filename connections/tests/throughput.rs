//! How many sends per second a platform sink delivers: 1 000 chats at once against the
//! fake Bot API with 20 ms per call. A measurement, not a check: run it with
//! `cargo test --release -p replystream-connections --test throughput -- --ignored --nocapture`
//! (`THROUGHPUT_WORKERS=8,64,256` picks the pool sizes).
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake::telegram::FakeTelegram;
use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{ChannelProfile, Config};
use replystream_connections::HttpOptions;
use replystream_connections::sink::PlatformSink;
use replystream_connections::telegram::Telegram;

const CHATS: usize = 1000;
const TOKEN: &str = "1:throughput";

#[test]
#[ignore = "a measurement of real time: run it by hand (see the module docs)"]
fn sends_per_second_for_1000_chats_at_20_ms_per_call() {
    let sizes = std::env::var("THROUGHPUT_WORKERS").unwrap_or_else(|_| "8,64,256".into());
    for workers in sizes.split(',').map(|w| w.trim().parse::<usize>().unwrap()) {
        let names: Vec<String> = (0..CHATS).map(|i| (1000 + i).to_string()).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let fake = FakeTelegram::start(TOKEN, &refs);
        fake.set_latency(Duration::from_millis(20));
        let idle = Arc::new(Mutex::new(0usize));
        let seen = idle.clone();
        let bot = Telegram::with_options(TOKEN, &fake.url(), &HttpOptions::default());
        let sink = PlatformSink::new(bot)
            .with_workers(workers)
            .on_event(move |_, e| {
                if matches!(e, StreamEvent::Idle(_)) {
                    *seen.lock().unwrap() += 1;
                }
            });
        let driver = Driver::spawn(sink, DriverOptions::default());
        let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
        config.chunk_min = 40;
        config.chunk_max = 80;
        config.coalesce_min = Some(40);
        config.coalesce_max = Some(80);
        let began = Instant::now();
        for (i, chat) in names.iter().enumerate() {
            let stream = driver.open(chat, config.clone(), i as u64).unwrap();
            stream
                .text("The first paragraph of a short reply, long enough for a block.\n\n")
                .unwrap();
            stream
                .text("And a second paragraph, which goes out as the final message.")
                .unwrap();
            stream.finish().unwrap();
        }
        while *idle.lock().unwrap() < CHATS {
            assert!(began.elapsed() < Duration::from_secs(600), "stuck");
            std::thread::sleep(Duration::from_millis(5));
        }
        let took = began.elapsed();
        let report = driver.shutdown(Duration::from_secs(5));
        assert!(report.is_clean());
        let calls = fake.calls().len();
        let ok = fake.calls().iter().filter(|c| c.2 == 200).count();
        assert_eq!(ok, calls);
        let connections = fake
            .server
            .connections
            .load(std::sync::atomic::Ordering::Relaxed);
        println!(
            "{workers:>4} workers: {calls} sends to {CHATS} chats in {:.2} s = {:.0} sends/s \
             (ideal {} at 20 ms), {connections} connections",
            took.as_secs_f64(),
            calls as f64 / took.as_secs_f64(),
            workers * 50
        );
    }
}

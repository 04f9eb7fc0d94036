//! One driver thread under load (SPEC §14): 10 000 concurrent streams at 20 deltas/s each.
//! Reports the pushes per second the driver handled, whether the producer kept its pace, and
//! how late timers fired (p50/p99). A custom harness: this is a load test, not a loop to time.
//!
//! `cargo bench --bench driver` (set `REPLYSTREAM_BENCH_SECS` to change the 5 s run and
//! `REPLYSTREAM_BENCH_STREAMS` the 10 000 streams).
#![allow(clippy::disallowed_methods)] // a load test reads the clock to pace itself

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use replystream::driver::{AckHandle, Delivery, Driver, DriverOptions, Sink, StreamId};
use replystream::{ChannelProfile, Config, SendRequest};

struct CountingSink {
    sends: Arc<AtomicU64>,
}

impl Sink for CountingSink {
    fn deliver(&mut self, _stream: StreamId, _send: &SendRequest, _acks: &AckHandle) -> Delivery {
        self.sends.fetch_add(1, Ordering::Relaxed);
        Delivery::Delivered { message_ref: None }
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let seconds = env("REPLYSTREAM_BENCH_SECS", 5);
    let streams = env("REPLYSTREAM_BENCH_STREAMS", 10_000) as usize;
    let rate_hz = 20u64;
    let words = include_str!("../tests/data/prose-paragraphs.md");
    let pieces: Vec<&str> = words.split_inclusive(' ').collect();

    let sends = Arc::new(AtomicU64::new(0));
    let driver = Driver::spawn(
        CountingSink {
            sends: sends.clone(),
        },
        DriverOptions::default(),
    );
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
    config.chunk_min = 200;
    config.chunk_max = 400;
    config.coalesce_min = Some(200);
    config.coalesce_idle_ms = 300;
    let handles: Vec<_> = (0..streams)
        .map(|i| {
            driver
                .open(&format!("chat-{i}"), config.clone(), i as u64)
                .unwrap()
        })
        .collect();

    let tick = Duration::from_millis(1000 / rate_hz);
    let start = Instant::now();
    let mut next = start;
    let mut pushed = 0u64;
    let mut behind_ticks = 0u64;
    let ticks = seconds * rate_hz;
    for k in 0..ticks as usize {
        for h in &handles {
            h.text(pieces[k % pieces.len()]).unwrap();
            pushed += 1;
        }
        next += tick;
        let now = Instant::now();
        if now > next {
            behind_ticks += 1;
        } else {
            std::thread::sleep(next - now);
        }
    }
    let produced_in = start.elapsed();
    for h in &handles {
        h.finish().unwrap();
    }
    let report = driver.shutdown(Duration::from_secs(60));
    let total = start.elapsed();
    let l = report.timer_lateness;
    println!("driver load: {streams} streams x {rate_hz} deltas/s for {seconds} s");
    println!(
        "  deltas pushed        {pushed} in {:.2} s ({:.0}/s offered)",
        produced_in.as_secs_f64(),
        pushed as f64 / produced_in.as_secs_f64()
    );
    println!(
        "  engine inputs        {} (deltas, acks, timers) in {:.2} s: {:.0}/s",
        report.pushes,
        total.as_secs_f64(),
        report.pushes as f64 / total.as_secs_f64()
    );
    println!("  producer ticks late  {behind_ticks} of {ticks}");
    println!("  sends delivered      {}", sends.load(Ordering::Relaxed));
    println!(
        "  streams completed    {} (unfinished {})",
        report.completed,
        report.unfinished.len()
    );
    println!(
        "  timer lateness       n={} p50={} us p99={} us max={} us",
        l.count, l.p50_us, l.p99_us, l.max_us
    );
    println!(
        "  drain after finish   {:.2} s",
        (total - produced_in).as_secs_f64()
    );
}

//! One driver thread under load (SPEC §14): by default 100 000 concurrent streams at 20
//! deltas/s each for 10 s, one producer thread, a synchronous sink. Reports whether the
//! producer kept its pace, how late timers fired (p50/p99/max, the budget is p99 ≤ 5 ms),
//! how busy the driver thread was, its CPU time per delta and per engine input, the
//! producer's CPU time per delta, how many deltas were merged into the one before them,
//! and the resident memory per stream.
//!
//! A custom harness (this is a load test, not a loop to time); `cargo test` only builds it.
//! Run it with `cargo bench --bench driver`; `REPLYSTREAM_BENCH_STREAMS`,
//! `REPLYSTREAM_BENCH_SECS` and `REPLYSTREAM_BENCH_RATE` change the 100 000 streams, the
//! 10 s and the 20 deltas/s.
//!
//! Memory and the driver thread's CPU time are read from `/proc` (Linux only; elsewhere they
//! print as n/a): VmRSS before the streams are opened, after each got its first delta, and
//! when the producer stops, and VmHWM (the peak) at the end.
#![allow(clippy::disallowed_methods)] // a load test reads the clock to pace itself

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::{ChannelProfile, Config, SendRequest};

struct CountingSink {
    sends: Arc<AtomicU64>,
    started: Arc<AtomicU64>,
    idle: Arc<AtomicU64>,
}

impl Sink for CountingSink {
    fn deliver(&mut self, _stream: StreamId, _send: &SendRequest, _acks: &AckHandle) -> Delivery {
        self.sends.fetch_add(1, Ordering::Relaxed);
        Delivery::Delivered { message_ref: None }
    }

    fn event(&mut self, _stream: StreamId, event: &StreamEvent) {
        match event {
            StreamEvent::Started => {
                self.started.fetch_add(1, Ordering::Relaxed);
            }
            StreamEvent::Idle(_) => {
                self.idle.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A `/proc/self/status` field in KiB (Linux).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The driver thread's scheduler times so far (Linux: `/proc/self/task/*/schedstat` of the
/// thread named `replystream-dri…`): time on a CPU, and time runnable but waiting for one
/// (which says how much a busy machine, not the driver, delayed it).
#[derive(Clone, Copy)]
struct SchedTimes {
    on_cpu: Duration,
    waiting: Duration,
}

fn driver_sched() -> Option<SchedTimes> {
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let path = task.ok()?.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if comm.starts_with("replystream-dri") {
            return sched_of(&path);
        }
    }
    None
}

/// The producer's (this, the main thread's) scheduler times.
fn producer_sched() -> Option<SchedTimes> {
    sched_of(std::path::Path::new(&format!(
        "/proc/self/task/{}",
        std::process::id()
    )))
}

fn sched_of(task: &std::path::Path) -> Option<SchedTimes> {
    let stat = std::fs::read_to_string(task.join("schedstat")).ok()?;
    let mut fields = stat.split_whitespace().map(|f| f.parse::<u64>().ok());
    let on_cpu = Duration::from_nanos(fields.next()??);
    let waiting = Duration::from_nanos(fields.next()??);
    Some(SchedTimes { on_cpu, waiting })
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("n/a".to_owned(), |k| {
        format!("{:.0} MiB", k as f64 / 1024.0)
    })
}

fn per_stream(after: Option<u64>, before: Option<u64>, streams: usize) -> String {
    match (after, before) {
        (Some(a), Some(b)) => format!("{:.1} KiB", a.saturating_sub(b) as f64 / streams as f64),
        _ => "n/a".to_owned(),
    }
}

fn main() {
    // `cargo test --benches` runs the harness with `--list`-style flags; only `cargo bench`
    // (which passes `--bench`) runs the load.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let seconds = env("REPLYSTREAM_BENCH_SECS", 10);
    let streams = env("REPLYSTREAM_BENCH_STREAMS", 100_000) as usize;
    let rate_hz = env("REPLYSTREAM_BENCH_RATE", 20).max(1);
    let in_step = env("REPLYSTREAM_BENCH_IN_STEP", 0) != 0;
    let words = include_str!("../tests/data/prose-paragraphs.md");
    let pieces: Vec<&str> = words.split_inclusive(' ').collect();

    let rss_start = status_kib("VmRSS:");
    let sends = Arc::new(AtomicU64::new(0));
    let started = Arc::new(AtomicU64::new(0));
    let idle = Arc::new(AtomicU64::new(0));
    let driver = Driver::spawn(
        CountingSink {
            sends: sends.clone(),
            started: started.clone(),
            idle: idle.clone(),
        },
        DriverOptions::default(),
    );
    // The thread is named once it runs; its CPU time from here on is the whole run's.
    let sched_spawned = loop {
        if let Some(t) = driver_sched() {
            break Some(t);
        }
        if std::fs::metadata("/proc/self/task").is_err() {
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
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

    // A short first delta for every stream, then the memory: `Started` is reported as a
    // stream's first input is handled, so once every stream has started, the driver is at
    // most one delta away from having handled them all.
    for h in &handles {
        h.text(pieces[0]).unwrap();
    }
    while started.load(Ordering::Relaxed) < streams as u64 {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(Duration::from_millis(10));
    let rss_first_delta = status_kib("VmRSS:");

    // Each stream has its own phase: the tick is cut into 1 ms slots and every slot feeds its
    // share of the streams, as independent replies would arrive (all streams at the same
    // instant would make every timer due in the same millisecond).
    let tick = Duration::from_nanos(1_000_000_000 / rate_hz);
    let slots = (tick.as_millis() as usize).max(1);
    let per_slot = streams.div_ceil(slots);
    let slot = tick / slots as u32;
    let ticks = seconds * rate_hz;
    let sched_start = driver_sched();
    let producer_start = producer_sched();
    let start = Instant::now();
    let mut next = start;
    let mut pushed = 0u64;
    let mut behind_slots = 0u64;
    let mut worst_lag = Duration::ZERO;
    let mut worst_lag_at = Duration::ZERO;
    for k in 1..=ticks as usize {
        for (g, group) in handles.chunks(per_slot).enumerate() {
            for (j, h) in group.iter().enumerate() {
                // Each stream reads the text from its own starting word, so that streams
                // finish their blocks (and arm their idle timers) at different moments, as
                // independent replies do; `REPLYSTREAM_BENCH_IN_STEP=1` gives every stream
                // the same word at the same tick.
                let offset = if in_step {
                    0
                } else {
                    (g * per_slot + j) * 7919
                };
                h.text(pieces[(k + offset) % pieces.len()]).unwrap();
                pushed += 1;
            }
            next += slot;
            let now = Instant::now();
            if now > next {
                behind_slots += 1;
                if now - next > worst_lag {
                    worst_lag = now - next;
                    worst_lag_at = now - start;
                }
            } else {
                std::thread::sleep(next - now);
            }
        }
    }
    let produced_in = start.elapsed();
    let sched_produced = driver_sched();
    let producer_produced = producer_sched();
    let rss_steady = status_kib("VmRSS:");
    for h in &handles {
        h.finish().unwrap();
    }
    // Every stream idle (or two minutes), then the thread's CPU time, while it still exists.
    let drain_limit = Instant::now() + Duration::from_secs(120);
    while idle.load(Ordering::Relaxed) < streams as u64 && Instant::now() < drain_limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    let sched_end = driver_sched();
    let report = driver.shutdown(Duration::from_secs(120));
    let total = start.elapsed();
    let hwm = status_kib("VmHWM:");
    let l = report.timer_lateness;
    let busy = match (sched_start, sched_produced) {
        (Some(a), Some(b)) => {
            let share = |d: Duration| 100.0 * d.as_secs_f64() / produced_in.as_secs_f64();
            format!(
                "on a CPU {:.0}% of the time, waiting for one {:.0}% (while the producer ran)",
                share(b.on_cpu - a.on_cpu),
                share(b.waiting - a.waiting)
            )
        }
        _ => "n/a".to_owned(),
    };
    println!(
        "driver load: {streams} streams x {rate_hz} deltas/s for {seconds} s, one driver thread"
    );
    println!(
        "  deltas pushed        {pushed} in {:.2} s ({:.0}/s offered, {:.0}/s asked)",
        produced_in.as_secs_f64(),
        pushed as f64 / produced_in.as_secs_f64(),
        (streams as u64 * rate_hz) as f64,
    );
    println!(
        "  producer slots late  {behind_slots} of {} (worst {:.1} ms, {:.2} s into the run)",
        ticks * handles.chunks(per_slot).len() as u64,
        worst_lag.as_secs_f64() * 1000.0,
        worst_lag_at.as_secs_f64()
    );
    println!(
        "  engine inputs        {} (deltas, acks, timers) in {:.2} s: {:.0}/s; {} deltas merged into the one before",
        report.pushes,
        total.as_secs_f64(),
        report.pushes as f64 / total.as_secs_f64(),
        report.merged_deltas,
    );
    println!("  driver thread        {busy}");
    let per =
        |cpu: Duration, n: u64| format!("{:.2} us", cpu.as_secs_f64() * 1e6 / n.max(1) as f64);
    if let (Some(a), Some(b)) = (producer_start, producer_produced) {
        println!(
            "  producer CPU         {} per delta (pacing sleeps excluded)",
            per(b.on_cpu - a.on_cpu, pushed)
        );
    }
    if let (Some(a), Some(b), Some(c)) = (sched_start, sched_produced, sched_spawned) {
        println!(
            "  driver CPU           {} per delta while the producer ran; {} per delta offered in the whole run",
            per(b.on_cpu - a.on_cpu, pushed),
            per(
                sched_end.map_or(b.on_cpu, |e| e.on_cpu) - c.on_cpu,
                pushed + 2 * streams as u64
            ),
        );
        println!(
            "                       {} per engine input in the whole run (opens and drain included)",
            per(
                sched_end.map_or(b.on_cpu, |e| e.on_cpu) - c.on_cpu,
                report.pushes
            ),
        );
    }
    println!("  sends delivered      {}", sends.load(Ordering::Relaxed));
    println!(
        "  streams completed    {} (unfinished {})",
        report.completed,
        report.unfinished.len()
    );
    println!(
        "  timer lateness       n={} p50={} us p99={} us max={} us (budget p99 <= 5000 us)",
        l.count, l.p50_us, l.p99_us, l.max_us
    );
    println!(
        "  drain after finish   {:.2} s",
        (total - produced_in).as_secs_f64()
    );
    println!(
        "  resident memory      {} before, {} after the first delta ({} per stream), {} after {seconds} s ({} per stream), peak {}",
        mib(rss_start),
        mib(rss_first_delta),
        per_stream(rss_first_delta, rss_start, streams),
        mib(rss_steady),
        per_stream(rss_steady, rss_start, streams),
        mib(hwm),
    );
}

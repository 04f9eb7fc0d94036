//! A fixed many-stream workload for cache profiling of `Engine::push` (not a benchmark).
//!
//! The driver bench keeps 100 000 engines busy on one thread, and there no engine is in the
//! CPU's caches when its next delta comes: the cost of a push is mostly the cache lines it
//! touches. This reproduces that without threads or a clock: `STREAMS` engines (default
//! 20 000, with the driver bench's configuration) each get one word at a time, round robin,
//! for `ROUNDS` rounds (default 60), every send acked at once and every deadline fired when
//! it passes (each round is 50 ms of virtual time). Each stream starts at its own word of the
//! text, as in the driver bench.
//!
//! Run it under callgrind with the cache simulator, counting only inside `push`:
//!
//! ```sh
//! cargo build --release --example scale_profile
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*Engine*push*' \
//!     target/release/examples/scale_profile 20000 60
//! ```
//!
//! and divide the instruction count (Ir) and the last-level misses (DLmr + DLmw) by the
//! number of pushes it prints. The simulated last-level cache is the host's, so with
//! 20 000 engines (hundreds of megabytes) the misses are those of the real driver.

use replystream::{Action, ChannelProfile, Config, Engine, Input, SendId, Time};

fn main() {
    let mut args = std::env::args().skip(1);
    let streams: usize = args.next().map_or(20_000, |a| a.parse().expect("STREAMS"));
    let rounds: u64 = args.next().map_or(60, |a| a.parse().expect("ROUNDS"));
    let text = include_str!("../tests/data/prose-paragraphs.md");
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    let mut config = Config::for_channel(&ChannelProfile::by_name("telegram").expect("channel"));
    config.chunk_min = 200;
    config.chunk_max = 400;
    config.coalesce_min = Some(200);
    config.coalesce_idle_ms = 300;
    let mut engines: Vec<(Engine, Option<Time>)> = (0..streams)
        .map(|i| (Engine::new(config.clone(), i as u64).expect("config"), None))
        .collect();
    let mut pushes = 0u64;
    let mut acks: Vec<SendId> = Vec::new();
    for round in 0..rounds {
        let now = Time::from_millis(round * 50);
        for (i, (engine, armed)) in engines.iter_mut().enumerate() {
            if armed.is_some_and(|t| t <= now) {
                *armed = None;
                run(engine, Input::Timer, now, armed, &mut acks, &mut pushes);
            }
            let word = words[(round as usize + i * 7919) % words.len()];
            run(
                engine,
                Input::TextDelta(word),
                now,
                armed,
                &mut acks,
                &mut pushes,
            );
        }
    }
    println!("{pushes} pushes");
}

/// Pushes `input` and then the ack of every send it causes, noting the latest deadline.
fn run(
    engine: &mut Engine,
    input: Input<'_>,
    now: Time,
    armed: &mut Option<Time>,
    acks: &mut Vec<SendId>,
    pushes: &mut u64,
) {
    let mut next = Some(input);
    while let Some(input) = next.take().or_else(|| {
        acks.pop().map(|send_id| Input::Delivered {
            send_id,
            message_ref: Some("1001"),
        })
    }) {
        *pushes += 1;
        for action in engine.push(input, now).expect("input") {
            match action {
                Action::Send(s) => acks.push(s.send_id),
                Action::ArmTimer { deadline } => *armed = deadline,
                _ => {}
            }
        }
    }
}

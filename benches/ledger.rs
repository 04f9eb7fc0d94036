//! The delivery ledger's cost per acknowledged block, through the public API: one assistant
//! message of 2 000, 8 000 and 32 000 small paragraphs, each sent as its own block. Every
//! other block fails for good, so the ledger holds one range per delivered block (the
//! worst case: nothing merges) and the finals resend the failed half. Linear cost shows as
//! a flat time per block across the three sizes; a ledger that re-sorts on every record
//! grows with the message.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Action, ChannelProfile, ChunkMode, Config, Engine, Input, Time};

/// One paragraph per block: `p000001 ok.` and a blank line.
fn message(blocks: usize) -> String {
    (0..blocks).map(|i| format!("p{i:06} ok.\n\n")).collect()
}

fn config() -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name("generic").unwrap());
    c.chunk_min = 4;
    c.chunk_max = 32;
    c.chunk_mode = ChunkMode::Newline;
    c.coalesce_idle_ms = 0;
    c
}

/// Streams the message in 64-byte deltas; acks every send, failing every other one for
/// good; then finishes the turn and acks the finals.
fn run_turn(engine: &mut Engine, text: &str) {
    let mut sends = 0usize;
    let mut queue: Vec<Action> = Vec::new();
    let t = Time::from_millis(1);
    let mut drain = |engine: &mut Engine, queue: &mut Vec<Action>| {
        while let Some(action) = queue.pop() {
            if let Action::Send(s) = action {
                sends += 1;
                let ack = if sends.is_multiple_of(2) {
                    Input::DeliveryFailed {
                        send_id: s.send_id,
                        retry_after_ms: None,
                        permanent: true,
                    }
                } else {
                    Input::Delivered {
                        send_id: s.send_id,
                        message_ref: None,
                    }
                };
                queue.extend(engine.push(ack, t).unwrap());
            }
        }
    };
    let mut at = 0;
    while at < text.len() {
        let end = (at + 64).min(text.len());
        queue.extend(engine.push(Input::TextDelta(&text[at..end]), t).unwrap());
        drain(engine, &mut queue);
        at = end;
    }
    queue.extend(engine.push(Input::Finish, t).unwrap());
    drain(engine, &mut queue);
    assert!(engine.is_done());
}

fn ledger(c: &mut Criterion) {
    let mut group = c.benchmark_group("ledger/blocks in one message, half failed");
    group.sample_size(10);
    for blocks in [2_000usize, 8_000, 32_000] {
        let text = message(blocks);
        group.throughput(Throughput::Elements(blocks as u64));
        group.bench_function(format!("{blocks}"), |b| {
            b.iter_batched_ref(
                || Engine::new(config(), 1).unwrap(),
                |engine| run_turn(engine, &text),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, ledger);
criterion_main!(benches);

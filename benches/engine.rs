//! ns per push through the whole engine: 4-byte deltas, with and without block emission,
//! per channel profile. Sends are acked at once, as a fast host would.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Action, ChannelProfile, Config, Engine, Input, Time};

mod common;
use common::{MIXED_REPLY as TEXT, deltas};

/// Pushes every delta, acking each send at once, then finishes the turn.
fn run_turn(engine: &mut Engine, deltas: &[&str]) {
    let mut now = 0u64;
    for d in deltas {
        now += 1;
        push_and_ack(engine, Input::TextDelta(d), now);
    }
    push_and_ack(engine, Input::Finish, now);
}

/// Pushes `input`, then acks every send it causes (and every send those acks cause).
fn push_and_ack(engine: &mut Engine, input: Input<'_>, now: u64) {
    let t = Time::from_millis(now);
    let mut acks: Vec<_> = engine.push(input, t).unwrap().filter_map(send_id).collect();
    while let Some(id) = acks.pop() {
        let ack = Input::Delivered {
            send_id: id,
            message_ref: None,
        };
        acks.extend(engine.push(ack, t).unwrap().filter_map(send_id));
    }
}

fn send_id(a: Action) -> Option<replystream::SendId> {
    match a {
        Action::Send(s) => Some(s.send_id),
        _ => None,
    }
}

fn config(channel: &str) -> Config {
    Config::for_channel(&ChannelProfile::by_name(channel).unwrap())
}

fn with_emission(c: &mut Criterion) {
    let d = deltas(TEXT, 4);
    let mut group = c.benchmark_group("engine/4-byte deltas, blocks emitted");
    group
        .sample_size(20)
        .throughput(Throughput::Elements(d.len() as u64));
    for channel in ["telegram", "discord", "slack", "generic"] {
        group.bench_function(channel, |b| {
            b.iter_batched_ref(
                || Engine::new(config(channel), 1).unwrap(),
                |engine| run_turn(engine, &d),
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

fn without_emission(c: &mut Criterion) {
    // 2 KB of 4-byte deltas into an engine whose blocks are larger than that: every push
    // is absorbed without output (the hot path the allocation test pins).
    let d = deltas(&TEXT[..2000], 4);
    let mut group = c.benchmark_group("engine/4-byte deltas, nothing emitted");
    group
        .sample_size(30)
        .throughput(Throughput::Elements(d.len() as u64));
    for channel in ["telegram", "discord", "generic"] {
        group.bench_function(channel, |b| {
            b.iter_batched_ref(
                || {
                    let mut c = config(channel);
                    c.chunk_min = 3000;
                    c.chunk_max = 3500;
                    Engine::new(c, 1).unwrap()
                },
                |engine| {
                    for (i, delta) in d.iter().enumerate() {
                        let mut actions = engine
                            .push(Input::TextDelta(delta), Time::from_millis(i as u64))
                            .unwrap();
                        debug_assert!(actions.next().is_none());
                    }
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

/// One assistant message of 1, 4 and 16 MB (the sample texts repeated), in 64-byte deltas,
/// acked at once and finished: the cost per byte must not grow with the message (SPEC §14).
fn long_message(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine/one long message, 64-byte deltas");
    group.sample_size(10);
    for mb in [1, 4, 16] {
        let len = mb << 20;
        let mut text = TEXT.repeat(len / TEXT.len() + 1);
        let mut end = len;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        let d = deltas(&text, 64);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{mb} MB"), |b| {
            b.iter_batched_ref(
                || Engine::new(config("telegram"), 1).unwrap(),
                |engine| run_turn(engine, &d),
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, with_emission, without_emission);
criterion_group!(long_messages, long_message);
criterion_main!(benches, long_messages);

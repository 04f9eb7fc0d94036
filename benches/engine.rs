//! ns per push through the whole engine: 4-byte deltas, with and without block emission,
//! per channel profile. Sends are acked at once, as a fast host would.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Action, ChannelProfile, Config, Engine, Input, Time};

const TEXT: &str = concat!(
    include_str!("../tests/data/prose-paragraphs.md"),
    include_str!("../tests/data/code-heavy.md"),
    include_str!("../tests/data/lists-tables.md"),
);

/// `text` cut into deltas of about `size` bytes, on char boundaries.
fn deltas(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

/// Pushes every delta, acking each send at once, then finishes the turn.
fn run_turn(engine: &mut Engine, deltas: &[&str]) {
    let mut now = 0u64;
    let mut acks = Vec::new();
    for d in deltas {
        now += 1;
        acks.extend(
            engine
                .push(Input::TextDelta(d), Time::from_millis(now))
                .unwrap()
                .filter_map(send_id),
        );
        while let Some(id) = acks.pop() {
            let input = Input::Delivered {
                send_id: id,
                message_ref: None,
            };
            acks.extend(
                engine
                    .push(input, Time::from_millis(now))
                    .unwrap()
                    .filter_map(send_id),
            );
        }
    }
    acks.extend(
        engine
            .push(Input::Finish, Time::from_millis(now))
            .unwrap()
            .filter_map(send_id),
    );
    while let Some(id) = acks.pop() {
        let input = Input::Delivered {
            send_id: id,
            message_ref: None,
        };
        acks.extend(
            engine
                .push(input, Time::from_millis(now))
                .unwrap()
                .filter_map(send_id),
        );
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

criterion_group!(benches, with_emission, without_emission);
criterion_main!(benches);

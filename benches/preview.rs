//! Live previews (SPEC §10, §14): the cost of a push that produces no update (it must stay
//! within the block-streaming push budget), the cost of one update as the reply grows (it
//! must be O(window), not O(reply)), and a whole turn with updates.

// A bench measures its own loop (`iter_custom`), so it reads the clock.
#![allow(clippy::disallowed_methods)]

use std::time::Instant;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use replystream::{Action, ChannelProfile, Config, Engine, Input, PreviewMode, SendId, Time};

mod common;
use common::{MIXED_REPLY as TEXT, deltas};

fn send_id(a: Action) -> Option<SendId> {
    match a {
        Action::Send(s) => Some(s.send_id),
        _ => None,
    }
}

/// Pushes `input` at `now` and acks every send it causes at once; returns how many sends.
fn push_and_ack(engine: &mut Engine, input: Input<'_>, now: u64) -> usize {
    let t = Time::from_millis(now);
    let mut acks: Vec<_> = engine.push(input, t).unwrap().filter_map(send_id).collect();
    let mut sends = acks.len();
    while let Some(id) = acks.pop() {
        let ack = Input::Delivered {
            send_id: id,
            message_ref: Some("m1"),
        };
        let more: Vec<_> = engine.push(ack, t).unwrap().filter_map(send_id).collect();
        sends += more.len();
        acks.extend(more);
    }
    sends
}

fn config(channel: &str, preview: PreviewMode) -> Config {
    let mut c = Config::for_channel(&ChannelProfile::by_name(channel).unwrap());
    c.preview = preview;
    c
}

/// An engine whose preview was just created at time 0 (its throttle window runs to 1000).
fn engine_with_preview(config: Config) -> Engine {
    let mut engine = Engine::new(config, 1).unwrap();
    push_and_ack(&mut engine, Input::MessageStart, 0);
    push_and_ack(
        &mut engine,
        Input::TextDelta("A first line long enough to show a preview. "),
        0,
    );
    engine
}

/// 4-byte pushes inside the throttle window: no update is due, nothing is rendered.
fn push_without_update(c: &mut Criterion) {
    let ds = deltas(TEXT, 4);
    let mut group = c.benchmark_group("preview/push_without_update");
    group.throughput(Throughput::Elements(ds.len() as u64));
    for channel in ["telegram", "generic"] {
        for (name, preview) in [
            ("partial", PreviewMode::Partial),
            ("block", PreviewMode::Block),
        ] {
            group.bench_function(format!("{channel}/{name}"), |b| {
                b.iter_batched_ref(
                    || engine_with_preview(config(channel, preview)),
                    |engine| {
                        for d in &ds {
                            let _ = engine.push(Input::TextDelta(d), Time::from_millis(1));
                        }
                    },
                    BatchSize::LargeInput,
                );
            });
        }
        // The reference: block streaming with nothing emitted (no preview).
        group.bench_function(format!("{channel}/no-preview"), |b| {
            let mut c = config(channel, PreviewMode::Off);
            c.chunk_min = 100_000;
            c.chunk_max = 200_000;
            c.text_limit = 200_000;
            b.iter_batched_ref(
                || Engine::new(c.clone(), 1).unwrap(),
                |engine| {
                    for d in &ds {
                        let _ = engine.push(Input::TextDelta(d), Time::from_millis(1));
                    }
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

/// One update (a 4-byte delta, then the timer at the end of the throttle window renders and
/// sends the preview, acked at once) with replies of growing length: the cost must not grow
/// with the reply.
fn update_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("preview/update");
    group.throughput(Throughput::Elements(1));
    // Prose repeated: the window shows the same kind of text at every size, so only the
    // reply's length differs.
    let body = include_str!("../tests/data/prose-paragraphs.md");
    for kib in [8usize, 64, 1024] {
        let mut reply = String::new();
        while reply.len() < kib * 1024 {
            reply.push_str(body);
        }
        let mut end = kib * 1024;
        while !reply.is_char_boundary(end) {
            end -= 1;
        }
        reply.truncate(end);
        // What the model writes next: real text (whitespace alone shows nothing new).
        let more: Vec<&str> = deltas(body, 4)
            .into_iter()
            .filter(|d| !d.trim().is_empty())
            .collect();
        group.bench_function(format!("telegram/{kib}KiB"), |b| {
            let mut engine = engine_with_preview(config("telegram", PreviewMode::Partial));
            let mut now = 0;
            for d in deltas(&reply, 4096) {
                push_and_ack(&mut engine, Input::TextDelta(d), now);
            }
            let mut next = more.iter().cycle();
            // Count updates, not loop turns: a delta a stage still holds (a `[` that may open
            // a directive) shows nothing new, so that turn sends nothing.
            b.iter_custom(|updates| {
                let start = Instant::now();
                let mut sent = 0;
                while sent < updates {
                    let delta = next.next().expect("cycles");
                    sent += push_and_ack(&mut engine, Input::TextDelta(delta), now) as u64;
                    now += 1000;
                    sent += push_and_ack(&mut engine, Input::Timer, now) as u64;
                }
                start.elapsed()
            });
        });
    }
    group.finish();
}

/// A whole turn with updates: 4-byte deltas 1 ms apart, an update every second, each acked
/// at once, then the final edit.
fn whole_turn(c: &mut Criterion) {
    let ds = deltas(TEXT, 4);
    let mut group = c.benchmark_group("preview/turn");
    group.throughput(Throughput::Elements(ds.len() as u64));
    for (name, preview) in [
        ("partial", PreviewMode::Partial),
        ("block", PreviewMode::Block),
    ] {
        group.bench_function(format!("telegram/{name}"), |b| {
            b.iter_batched_ref(
                || Engine::new(config("telegram", preview), 1).unwrap(),
                |engine| {
                    let mut now = 0;
                    for d in &ds {
                        now += 1;
                        push_and_ack(engine, Input::TextDelta(d), now);
                    }
                    push_and_ack(engine, Input::Finish, now);
                },
                BatchSize::LargeInput,
            );
        });
    }
    group.finish();
}

criterion_group!(benches, push_without_update, update_cost, whole_turn);
criterion_main!(benches);

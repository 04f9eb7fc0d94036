//! A fixed workload for instruction-count profiling of `Engine::push` (not a benchmark).
//!
//! Pushes about 2000 4-byte deltas of the bench text through one engine, acking every send
//! at once. `quiet` uses blocks larger than the text, so nothing is emitted; `emit` uses the
//! channel's own sizes; `preview` and `preview-block` turn a live preview on (partial, block)
//! with the clock standing still after its create, so no push produces an update;
//! `preview-turn` and `preview-block-turn` let the clock run 1 ms per push, so an update goes
//! out every second. `turn` is the engine bench's turn: the whole text with the channel's own
//! sizes, the clock running 1 ms per push, and `Finish` at the end (the final counted too).
//! Run it under callgrind, counting only inside `push`:
//!
//! ```sh
//! cargo build --release --example push_profile
//! valgrind --tool=callgrind --toggle-collect='*Engine*push*' \
//!     target/release/examples/push_profile quiet
//! ```
//!
//! and divide the total instruction count by the number of pushes it prints.

use replystream::{Action, ChannelProfile, Config, Engine, Input, PreviewMode, Time};

const TEXT: &str = concat!(
    include_str!("../tests/data/prose-paragraphs.md"),
    include_str!("../tests/data/code-heavy.md"),
    include_str!("../tests/data/lists-tables.md"),
);

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "quiet".into());
    let channel = std::env::args().nth(2).unwrap_or_else(|| "generic".into());
    let mut config = Config::for_channel(&ChannelProfile::by_name(&channel).expect("channel"));
    let text = match mode.as_str() {
        "quiet" => {
            config.chunk_min = 9000;
            config.chunk_max = 9500;
            &TEXT[..8000]
        }
        "emit" | "preview-turn" | "preview-block-turn" => &TEXT[..8000],
        "turn" => TEXT,
        "preview" | "preview-block" => {
            config.chunk_min = 9000;
            config.chunk_max = 9500;
            &TEXT[..8000]
        }
        other => panic!(
            "mode {other:?}: quiet, emit, turn, preview, preview-block, preview-turn or \
             preview-block-turn"
        ),
    };
    config.preview = match mode.as_str() {
        "preview" | "preview-turn" => PreviewMode::Partial,
        "preview-block" | "preview-block-turn" => PreviewMode::Block,
        _ => PreviewMode::Off,
    };
    // With the clock standing still, the preview is created once and then throttled.
    let clock_runs = !matches!(mode.as_str(), "preview" | "preview-block");
    let mut engine = Engine::new(config, 1).expect("config");
    let mut pushes = 0u64;
    let mut at = 0;
    let mut acks = Vec::new();
    while at < text.len() {
        let mut end = (at + 4).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let now = Time::from_millis(if clock_runs { pushes } else { 0 });
        acks.extend(
            engine
                .push(Input::TextDelta(&text[at..end]), now)
                .unwrap()
                .filter_map(send_id),
        );
        pushes += 1;
        while let Some(id) = acks.pop() {
            let ack = Input::Delivered {
                send_id: id,
                message_ref: None,
            };
            acks.extend(engine.push(ack, now).unwrap().filter_map(send_id));
            pushes += 1;
        }
        at = end;
    }
    if mode == "turn" {
        let now = Time::from_millis(pushes);
        acks.extend(engine.push(Input::Finish, now).unwrap().filter_map(send_id));
        pushes += 1;
        while let Some(id) = acks.pop() {
            let ack = Input::Delivered {
                send_id: id,
                message_ref: None,
            };
            acks.extend(engine.push(ack, now).unwrap().filter_map(send_id));
            pushes += 1;
        }
    }
    println!("{pushes} pushes");
}

fn send_id(a: Action) -> Option<replystream::SendId> {
    match a {
        Action::Send(s) => Some(s.send_id),
        _ => None,
    }
}

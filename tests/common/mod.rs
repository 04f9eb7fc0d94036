//! Test helpers: the library's virtual-clock host plus small config shortcuts.
#![allow(dead_code, unused_imports)]

pub(crate) mod containers;
pub(crate) mod defects;
pub(crate) mod reconstruct;
pub(crate) mod render_judge;

use replystream::Engine;
pub(crate) use replystream::sim::{Ack, AckPolicy, Sim};

/// The channel's configuration.
pub(crate) fn config(channel: &str) -> replystream::Config {
    replystream::Config::for_channel(
        &replystream::ChannelProfile::by_name(channel).expect("channel"),
    )
}

/// A generic-channel configuration with small blocks, so short texts make several blocks.
pub(crate) fn small_config() -> replystream::Config {
    let mut c = config("generic");
    c.chunk_min = 20;
    c.chunk_max = 60;
    c.coalesce_min = Some(20);
    c.coalesce_max = Some(60);
    c
}

/// An engine with seed 7.
pub(crate) fn engine(config: replystream::Config) -> Engine {
    Engine::new(config, 7).expect("valid config")
}

/// Whitespace removed: for "the same text apart from separators" comparisons.
pub(crate) fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `text` in deltas of `size` bytes, in order, each ending at a char boundary (so a delta
/// may be a few bytes longer): the text as a model streams it.
pub(crate) fn deltas(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut at = 0;
    std::iter::from_fn(move || {
        if at >= text.len() {
            return None;
        }
        let mut end = at.saturating_add(size.max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let delta = &text[at..end];
        at = end;
        Some(delta)
    })
}

/// The blocks of a chunker made with `config`, fed `text` in deltas of `delta` bytes, then
/// flushed.
pub(crate) fn chunk_with(
    config: replystream::ChunkerConfig,
    text: &str,
    delta: usize,
) -> Vec<replystream::Block> {
    let mut chunker = replystream::BlockChunker::new(config).expect("valid config");
    let mut out = Vec::new();
    for d in deltas(text, delta) {
        chunker.push(d, &mut out);
    }
    chunker.flush(&mut out);
    out
}

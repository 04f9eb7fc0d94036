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

/// The chunker's blocks of `text` (no `min`, paragraph breaks preferred, `max` chars), fed
/// whole and byte by byte: the two must be the same.
pub(crate) fn chunked_both_ways(text: &str, max: usize) -> Vec<replystream::Block> {
    let config = replystream::ChunkerConfig {
        min: 1,
        max,
        break_preference: replystream::BreakPreference::Paragraph,
        flush_on_paragraph: false,
        metric: replystream::LengthMetric::Chars,
    };
    let whole = chunk_with(config, text, text.len());
    assert_eq!(chunk_with(config, text, 1), whole, "1-byte deltas differ");
    whole
}

/// Streams `text` to `sim` as one assistant message in `delta`-byte deltas, ends the turn
/// and runs until idle; no push may fail.
pub(crate) fn stream_reply(sim: &mut Sim, text: &str, delta: usize) {
    sim.push(replystream::Input::MessageStart);
    for d in deltas(text, delta) {
        sim.push(replystream::Input::TextDelta(d));
    }
    sim.push(replystream::Input::MessageEnd(None))
        .push(replystream::Input::Finish)
        .run_until_idle();
    assert!(sim.errors.is_empty(), "push errors: {:?}", sim.errors);
}

/// The answer messages the chat shows for `text` sent to an engine with `config` (seed 7)
/// in `delta`-byte deltas, in one assistant message, the turn ended and every send acked.
pub(crate) fn answer_messages(
    config: replystream::Config,
    text: &str,
    delta: usize,
) -> Vec<String> {
    let mut sim = Sim::new(engine(config));
    stream_reply(&mut sim, text, delta);
    sim.chat
        .lane_texts(replystream::Lane::Answer)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Checks that `blocks` rebuild `text` exactly (`lead + source + sep`), that each shows
/// [`containers::expected_shown`] between its synthetic edges, and that each renders alone as its
/// stretch of the reply renders (the rendering judge). `what` names the case in a failure.
pub(crate) fn blocks_hold(text: &str, blocks: &[replystream::Block], what: &str) {
    let mut rebuilt = String::new();
    for b in blocks {
        rebuilt.push_str(&b.lead);
        rebuilt.push_str(&text[b.source.clone()]);
        rebuilt.push_str(&b.sep);
        assert_eq!(
            b.text[b.source_in_text()],
            containers::expected_shown(text, b),
            "{what}: block {b:#?}"
        );
    }
    assert_eq!(rebuilt, text, "{what}");
    let shown: Vec<String> = blocks.iter().map(|b| b.text.clone()).collect();
    let allow = render_judge::Allow::default();
    if let Err(e) = render_judge::check_messages(text, &shown, &allow) {
        panic!("{what}: {e}\nblocks: {shown:#?}");
    }
}

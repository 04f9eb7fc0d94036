//! Shared helpers of the live preview tests: configurations, the reference reply a chat must
//! end up showing, and checks written in the tests (an own fence checker, exact text
//! comparison), never the library's own scanner.
#![allow(dead_code)]

mod fences;
pub(crate) use fences::fences_balanced;

use replystream::sim::Sim;
use replystream::{
    Action, Config, Engine, Input, Lane, LengthMetric, PreviewMode, SendKind, SendOp, SendRequest,
};

/// The Telegram profile with a live preview in `mode`.
pub(crate) fn preview_config(channel: &str, mode: PreviewMode) -> Config {
    let mut c = Config::for_channel(&replystream::ChannelProfile::by_name(channel).unwrap());
    c.preview = mode;
    c
}

/// Streams `text` as one assistant message in deltas of `size` chars, `gap_ms` apart, then
/// finishes the turn and runs until idle.
pub(crate) fn stream_reply(sim: &mut Sim, text: &str, size: usize, gap_ms: u64) {
    sim.push(Input::MessageStart);
    sim.stream(text, size, gap_ms);
    sim.push(Input::MessageEnd(None));
    sim.push(Input::Finish);
    sim.run_until_idle();
}

/// What a chat must show after the turn: the final texts the same configuration delivers
/// with no preview and no block streaming (every text as finals, split to the limit), acked
/// at once. Answer lane only.
pub(crate) fn reference_reply(config: &Config, text: &str) -> Vec<String> {
    let mut c = config.clone();
    c.preview = PreviewMode::Off;
    c.block_streaming = false;
    let mut sim = Sim::new(Engine::new(c, 7).unwrap());
    stream_reply(&mut sim, text, 64, 0);
    assert!(sim.is_idle());
    answer_texts(&sim)
}

/// The answer-lane texts a chat shows.
pub(crate) fn answer_texts(sim: &Sim) -> Vec<String> {
    sim.chat
        .messages
        .iter()
        .filter(|m| m.lane == Lane::Answer)
        .map(|m| m.text.clone())
        .collect()
}

/// The preview updates (create, edit, draft of kind `Preview`), with their times.
pub(crate) fn preview_ops(sim: &Sim) -> Vec<(u64, SendRequest)> {
    sim.sends()
        .into_iter()
        .filter(|(_, s)| s.kind == SendKind::Preview && !matches!(s.op, SendOp::Delete { .. }))
        .collect()
}

/// Every check a finished turn must pass: idle, no push error, at most one send in flight,
/// the chat shows exactly `expected` (answer lane), no message and no draft bubble shows the
/// cursor, no draft bubble is left, every preview text is within the preview limit with
/// balanced fences.
pub(crate) fn check_turn(sim: &Sim, config: &Config, expected: &[String]) -> Result<(), String> {
    if !sim.is_idle() {
        return Err(format!("not idle; log tail: {:?}", sim.log.last()));
    }
    if !sim.errors.is_empty() {
        return Err(format!("push errors: {:?}", sim.errors));
    }
    if sim.max_in_flight > 1 {
        return Err(format!("{} sends in flight at once", sim.max_in_flight));
    }
    let shown = answer_texts(sim);
    if shown != expected {
        return Err(format!(
            "the chat shows\n{shown:#?}\nbut the reply is\n{expected:#?}"
        ));
    }
    if let Some(cursor) = config.preview_cursor.as_deref()
        && let Some(m) = sim.chat.messages.iter().find(|m| m.text.contains(cursor))
    {
        return Err(format!("a message still shows the cursor: {:?}", m.text));
    }
    if !sim.chat.drafts.is_empty() {
        return Err(format!("draft bubbles left: {:?}", sim.chat.drafts));
    }
    for (t, op) in preview_ops(sim) {
        let len = config.metric.len(&op.payload.text);
        if len > config.preview_limit {
            return Err(format!("preview at {t} is {len} units long"));
        }
        if !fences_balanced(&op.payload.text) {
            return Err(format!(
                "preview at {t} leaves a fence open: {:?}",
                op.payload.text
            ));
        }
    }
    Ok(())
}

/// The times at which `Idle` was emitted.
pub(crate) fn idle_time(sim: &Sim) -> Option<u64> {
    sim.log
        .iter()
        .find(|(_, a)| matches!(a, Action::Idle))
        .map(|(t, _)| *t)
}

/// The length of `text` in UTF-16 units, counted here.
pub(crate) fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `metric`'s name, for messages.
pub(crate) fn metric_name(metric: LengthMetric) -> &'static str {
    metric.name()
}

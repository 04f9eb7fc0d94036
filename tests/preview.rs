//! Live previews (SPEC §10), one scenario per rule, on the virtual clock, against the
//! simulated Telegram-like chat: after every turn the chat shows exactly the reply.

mod preview_checks;

use preview_checks::*;
use replystream::sim::{Ack, Chat, Sim};
use replystream::{
    Config, Engine, Input, Lane, LengthMetric, MessageKey, PreviewMode, PreviewTransport,
    ReasoningMode, SendKind, SendOp, SendRequest,
};

const PROSE: &str = include_str!("data/prose-paragraphs.md");
const CODE: &str = include_str!("data/code-heavy.md");
const LONG: &str = include_str!("data/node-events.md");

fn engine(config: &Config) -> Engine {
    Engine::new(config.clone(), 7).expect("valid config")
}

/// A chat that refuses what the platform would: texts over the larger of the message and
/// the preview limits (Telegram: 4096 UTF-16 units for both).
fn telegram_chat(config: &Config) -> Chat {
    Chat::with_limit(config.preview_limit.max(config.text_limit), config.metric)
}

/// A sim acking after `latency` ms behind a Telegram-like chat.
fn chat_sim(config: &Config, latency: u64) -> Sim {
    let mut sim = Sim::with_latency(engine(config), latency);
    sim.chat = telegram_chat(config);
    sim
}

fn ok(result: Result<(), String>) {
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn kinds_ops(sends: &[(u64, SendRequest)]) -> Vec<String> {
    sends
        .iter()
        .map(|(_, s)| format!("{} {}", s.kind.name(), s.op.name()))
        .collect()
}

#[test]
fn partial_preview_grows_then_becomes_the_final() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 80);
    stream_reply(&mut sim, PROSE, 4, 20);
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let sends = sim.sends();
    assert!(
        sends.iter().all(|(_, s)| s.kind != SendKind::Block),
        "no block streaming"
    );
    let ops = kinds_ops(&sends);
    assert_eq!(ops[0], "preview create");
    assert!(ops[1..ops.len() - 1].iter().all(|o| o == "preview edit"));
    assert_eq!(
        ops.last().unwrap(),
        "final edit",
        "the preview becomes the final"
    );
    assert_eq!(sim.chat.messages.len(), 1, "one message, edited in place");
    // Each update shows the latest text at its time (the latest wins: what was pushed in
    // between is skipped), then the cursor. Delta i (4 chars) was pushed at 20 * i ms; an
    // update at t comes before or after the delta pushed at t.
    let chars: Vec<usize> = PROSE
        .char_indices()
        .map(|(i, _)| i)
        .chain([PROSE.len()])
        .collect();
    let streamed = |t: u64, with_delta_at_t: bool| {
        let n = (t / 20) as usize + usize::from(with_delta_at_t || !t.is_multiple_of(20));
        PROSE[..chars[(4 * n).min(chars.len() - 1)]].trim_end()
    };
    let mut last = 0;
    for (t, op) in preview_ops(&sim) {
        let content = op
            .payload
            .text
            .strip_suffix('█')
            .expect("the cursor while streaming");
        assert!(
            content == streamed(t, false) || content == streamed(t, true),
            "the update at {t} is not the latest text: {content:?}"
        );
        assert!(content.len() > last, "every update shows more");
        last = content.len();
    }
}

#[test]
fn block_preview_advances_by_preview_blocks() {
    let config = preview_config("telegram", PreviewMode::Block);
    let mut sim = chat_sim(&config, 50);
    stream_reply(&mut sim, PROSE, 4, 20);
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    // Block ends of the preview chunker (min 200, max 800) over the reply.
    let mut chunker = replystream::BlockChunker::new(replystream::ChunkerConfig {
        min: 200,
        max: 800,
        metric: LengthMetric::Utf16,
        ..Default::default()
    })
    .expect("a valid configuration");
    let mut blocks = Vec::new();
    for piece in PROSE.as_bytes().chunks(4) {
        chunker.push(std::str::from_utf8(piece).unwrap(), &mut blocks);
    }
    let ends: Vec<usize> = blocks.iter().map(|b| b.source.end).collect();
    let ops = preview_ops(&sim);
    assert!(ops.len() >= 3, "{} updates", ops.len());
    for (t, op) in ops {
        let content = op.payload.text.strip_suffix('█').unwrap();
        assert!(PROSE.starts_with(content));
        assert!(
            ends.contains(&content.len()),
            "update at {t} ends at {} which is no block end ({ends:?})",
            content.len()
        );
    }
}

#[test]
fn every_later_operation_carries_the_create_s_message_ref() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 30);
    stream_reply(&mut sim, PROSE, 8, 20);
    let sends = sim.sends();
    let (_, create) = &sends[0];
    assert_eq!(
        create.op,
        SendOp::Create {
            key: Some(MessageKey(1))
        }
    );
    assert_eq!(create.message_ref, None);
    let id = sim.chat.messages[0].id.clone();
    for (_, s) in &sends[1..] {
        assert_eq!(s.op.key(), Some(MessageKey(1)));
        assert_eq!(s.message_ref.as_deref(), Some(id.as_str()), "{:?}", s.op);
    }
}

#[test]
fn throttle_one_update_per_window_never_in_flight_latest_wins() {
    for throttle in [250, 1000, 2500] {
        let mut config = preview_config("telegram", PreviewMode::Partial);
        config.preview_throttle_ms = throttle;
        // Acks slower than a short window: the window then runs from ack to ack.
        let mut sim = chat_sim(&config, 400);
        stream_reply(&mut sim, CODE, 4, 10);
        ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
        let ops = preview_ops(&sim);
        for pair in ops.windows(2) {
            let gap = pair[1].0 - pair[0].0;
            assert!(gap >= throttle.max(400), "throttle {throttle}: gap {gap}");
            assert_ne!(pair[0].1.payload.text, pair[1].1.payload.text);
        }
        let duration = idle_time(&sim).unwrap();
        let bound = duration / throttle.max(400) + 2;
        assert!(ops.len() as u64 <= bound, "{} updates > {bound}", ops.len());
        assert_eq!(sim.max_in_flight, 1);
    }
    // Below the floor: 250 ms.
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.preview_throttle_ms = 10;
    let mut sim = chat_sim(&config, 0);
    stream_reply(&mut sim, CODE, 4, 10);
    let ops = preview_ops(&sim);
    assert!(ops.windows(2).all(|p| p[1].0 - p[0].0 >= 250));
    assert!(
        ops.windows(2).any(|p| p[1].0 - p[0].0 == 250),
        "the floor is used"
    );
}

#[test]
fn the_first_preview_waits_for_30_units_unless_the_turn_ends_first() {
    let config = preview_config("telegram", PreviewMode::Partial);
    // A short reply: no preview at all, one ordinary final.
    let mut sim = chat_sim(&config, 20);
    stream_reply(&mut sim, "Sure, on it.", 2, 100);
    ok(check_turn(&sim, &config, &["Sure, on it.".to_owned()]));
    assert_eq!(kinds_ops(&sim.sends()), ["final create"]);

    // 29 units, a long pause: still nothing; the 30th unit creates the preview.
    let mut sim = sim_at(&config);
    sim.push(Input::TextDelta("abcdefghij abcdefghij abcdefg"));
    sim.wait(5000);
    assert!(sim.sends().is_empty());
    sim.push(Input::TextDelta("h"));
    let sends = sim.sends();
    assert_eq!(sends.len(), 1);
    assert_eq!(sends[0].1.payload.text, "abcdefghij abcdefghij abcdefgh█");
    // The threshold is in the channel's units: 15 emoji are 30 UTF-16 units.
    let mut sim = sim_at(&config);
    sim.push(Input::TextDelta(&"😀".repeat(14)));
    assert!(sim.sends().is_empty());
    sim.push(Input::TextDelta("😀"));
    assert_eq!(sim.sends().len(), 1);
}

fn sim_at(config: &Config) -> Sim {
    let mut sim = chat_sim(config, 10);
    sim.push(Input::MessageStart);
    sim
}

#[test]
fn cursor_while_streaming_never_in_the_final() {
    for cursor in [Some("█"), Some("▌"), None] {
        let mut config = preview_config("telegram", PreviewMode::Partial);
        config.preview_cursor = cursor.map(str::to_owned);
        let mut sim = chat_sim(&config, 60);
        stream_reply(&mut sim, CODE, 6, 15);
        ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
        for (_, op) in preview_ops(&sim) {
            match cursor {
                Some(c) => assert!(op.payload.text.contains(c)),
                None => assert!(!op.payload.text.contains('█')),
            }
        }
        let finals: Vec<_> = sim
            .sends()
            .into_iter()
            .filter(|(_, s)| s.kind == SendKind::Final)
            .collect();
        for (_, f) in finals {
            assert!(cursor.is_none_or(|c| !f.payload.text.contains(c)));
        }
    }
}

#[test]
fn past_the_limit_a_tail_window_keeps_moving() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 80);
    stream_reply(&mut sim, LONG, 64, 10);
    let expected = reference_reply(&config, LONG);
    assert!(expected.len() > 10);
    ok(check_turn(&sim, &config, &expected));
    let ops = preview_ops(&sim);
    let tails: Vec<_> = ops
        .iter()
        .filter(|(_, s)| s.payload.text.starts_with("…\n"))
        .collect();
    assert!(tails.len() > 5, "the preview keeps moving past the limit");
    for (_, s) in &tails {
        let units = utf16_len(&s.payload.text);
        assert!(units <= 4096, "{units}");
        assert!(units > 3000, "a tail window is nearly full: {units}");
    }
    // The final: the preview is edited into the first piece, the rest are new messages.
    let finals: Vec<_> = sim
        .sends()
        .into_iter()
        .filter(|(_, s)| s.kind == SendKind::Final)
        .collect();
    assert_eq!(finals[0].1.op, SendOp::Edit { key: MessageKey(1) });
    assert!(finals[1..].iter().all(|(_, s)| s.op == SendOp::CREATE));
    assert_eq!(sim.chat.messages.len(), expected.len());
}

#[test]
fn a_tail_window_in_code_reopens_the_fence() {
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.preview_limit = 600;
    let mut sim = chat_sim(&config, 40);
    stream_reply(&mut sim, CODE, 8, 10);
    ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
    let reopened = preview_ops(&sim)
        .into_iter()
        .filter(|(_, s)| {
            s.payload
                .text
                .strip_prefix("…\n")
                .is_some_and(|w| w.starts_with("```") || w.starts_with("~~~"))
        })
        .count();
    assert!(
        reopened > 0,
        "some window starts inside a fence and reopens it"
    );
}

#[test]
fn reasoning_heads_the_preview_then_goes_its_own_way() {
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.reasoning = ReasoningMode::Stream;
    let mut sim = chat_sim(&config, 40);
    let thinking = "Let me think about the question carefully. ".repeat(40);
    sim.push(Input::MessageStart);
    for piece in thinking.split_inclusive(' ') {
        sim.push(Input::ThinkingDelta(piece));
        sim.wait(10);
    }
    sim.push(Input::ThinkingEnd);
    sim.stream(PROSE, 4, 10);
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let ops = preview_ops(&sim);
    assert!(
        ops[0].1.payload.text.starts_with("**> "),
        "Telegram: an expandable quote"
    );
    for (_, s) in &ops {
        let text = &s.payload.text;
        let (quote, _) = text
            .split_once("||\n\n")
            .expect("the quote, then the answer");
        let shown = quote.trim_start_matches("**> ").trim_start_matches("… ");
        assert!(utf16_len(shown) <= 600, "{}", utf16_len(shown));
        assert!(thinking.contains(shown), "{text:?}");
    }
    // The reasoning is delivered as its own message on the reasoning lane.
    assert_eq!(sim.chat.lane_texts(Lane::Reasoning), [thinking.trim()]);

    // A channel without expandable quotes gets a plain block quote.
    let mut config = preview_config("generic", PreviewMode::Partial);
    config.reasoning = ReasoningMode::On;
    let mut sim = chat_sim(&config, 40);
    sim.push(Input::MessageStart);
    sim.push(Input::ThinkingDelta(
        "Short plan: answer with the facts first.",
    ));
    sim.wait(10);
    let ops = preview_ops(&sim);
    assert_eq!(
        ops[0].1.payload.text,
        "> Short plan: answer with the facts first.\n\n█"
    );
}

/// Fails the sends for which `fail` says so with a 429, acks the others after `latency`.
fn limited(
    config: &Config,
    latency: u64,
    fail: impl Fn(&SendRequest, usize) -> Option<u64> + 'static,
) -> Sim {
    let mut sim = Sim::with_policy(
        engine(config),
        Box::new(move |s, n| match fail(s, n) {
            Some(retry_after_ms) => Ack::Fail {
                after_ms: latency,
                retry_after_ms: Some(retry_after_ms),
                permanent: false,
            },
            None => Ack::Deliver { after_ms: latency },
        }),
    );
    sim.chat = telegram_chat(config);
    sim
}

#[test]
fn a_rate_limit_pauses_until_exactly_retry_after_and_doubles_the_window() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = limited(&config, 50, |_, n| (n == 2).then_some(3000));
    stream_reply(&mut sim, CODE, 4, 10);
    ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
    let sends = sim.sends();
    let failed_at = sends[2].0 + 50;
    assert_eq!(
        sends[3].0,
        failed_at + 3000,
        "the next send leaves exactly when the pause ends"
    );
    let ops = preview_ops(&sim);
    let after: Vec<_> = ops.iter().filter(|(t, _)| *t > failed_at).collect();
    for pair in after.windows(2) {
        assert!(pair[1].0 - pair[0].0 >= 2000, "the window doubled");
    }
}

#[test]
fn a_rate_limit_holds_the_final_edit_too() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = limited(&config, 20, |s, _| {
        (s.kind == SendKind::Preview && s.op.name() == "edit").then_some(5000)
    });
    sim.push(Input::MessageStart);
    sim.stream(PROSE, 8, 10);
    let end = sim.now;
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let sends = sim.sends();
    let (t, last_preview_fail) = sends
        .iter()
        .rfind(|(_, s)| s.kind == SendKind::Preview)
        .map(|(t, s)| (*t, s.clone()))
        .unwrap();
    let (final_at, final_edit) = sends.last().unwrap();
    assert_eq!(last_preview_fail.op.name(), "edit");
    assert_eq!(final_edit.kind, SendKind::Final);
    assert!(
        *final_at >= (t + 20 + 5000).max(end),
        "{final_at} < {}",
        t + 5020
    );
}

#[test]
fn three_failures_stop_the_preview_and_the_final_is_still_delivered() {
    // Every preview update fails: three creates, then no more preview.
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = limited(&config, 20, |s, _| {
        (s.kind == SendKind::Preview).then_some(100)
    });
    stream_reply(&mut sim, CODE, 4, 10);
    ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
    assert_eq!(preview_ops(&sim).len(), 3);
    assert!(
        sim.sends()
            .iter()
            .skip(3)
            .all(|(_, s)| s.kind == SendKind::Final)
    );

    // The create goes through, the edits fail: the final still replaces the preview.
    let mut sim = limited(&config, 20, |s, _| {
        (s.kind == SendKind::Preview && s.op.name() == "edit").then_some(100)
    });
    stream_reply(&mut sim, CODE, 4, 10);
    ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
    assert_eq!(
        preview_ops(&sim).len(),
        4,
        "a create and three failed edits"
    );
    assert_eq!(
        sim.chat.counts.creates as usize,
        reference_reply(&config, CODE).len()
    );
}

#[test]
fn not_modified_counts_as_delivered() {
    // No cursor: the last preview update already shows the whole reply when the turn ends
    // while it is in flight, so the final edit changes nothing and the chat says so.
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.preview_cursor = None;
    let mut sim = chat_sim(&config, 300);
    let text = "A short answer that is long enough to get a preview.";
    sim.push(Input::MessageStart);
    sim.push(Input::TextDelta(text));
    sim.wait(10);
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    ok(check_turn(&sim, &config, &[text.to_owned()]));
    assert_eq!(kinds_ops(&sim.sends()), ["preview create", "final edit"]);
    assert_eq!(sim.chat.counts.not_modified, 1);

    // Once the preview is known to show the final text, nothing is sent again.
    let mut sim = sim_at(&config);
    sim.push(Input::TextDelta(text));
    sim.wait(100);
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    ok(check_turn(&sim, &config, &[text.to_owned()]));
    assert_eq!(kinds_ops(&sim.sends()), ["preview create"]);
}

#[test]
fn a_failed_final_edit_deletes_the_preview_and_sends_the_final_anew() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = Sim::with_policy(
        engine(&config),
        Box::new(|s, _| {
            if s.kind == SendKind::Final && s.op.name() == "edit" {
                Ack::Fail {
                    after_ms: 30,
                    retry_after_ms: None,
                    permanent: true,
                }
            } else {
                Ack::Deliver { after_ms: 30 }
            }
        }),
    );
    sim.chat = telegram_chat(&config);
    stream_reply(&mut sim, PROSE, 8, 20);
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let ops = kinds_ops(&sim.sends());
    let n = ops.len();
    assert_eq!(
        ops[n - 3..],
        ["final edit", "preview delete", "final create"]
    );
}

#[test]
fn a_final_over_the_limit_keeps_the_preview_as_its_first_piece() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let text = PROSE.repeat(3);
    let mut sim = chat_sim(&config, 40);
    stream_reply(&mut sim, &text, 16, 10);
    let expected = reference_reply(&config, &text);
    assert_eq!(expected.len(), 2);
    ok(check_turn(&sim, &config, &expected));
    let sends = sim.sends();
    let finals: Vec<_> = sends
        .iter()
        .filter(|(_, s)| s.kind == SendKind::Final)
        .collect();
    assert_eq!(finals[0].1.op, SendOp::Edit { key: MessageKey(1) });
    assert_eq!(finals[1].1.op, SendOp::CREATE);
}

#[test]
fn a_new_assistant_message_finalizes_the_old_preview_and_starts_a_new_one() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 40);
    let first = "Let me look that up for you, it will take a moment.";
    let second = "Here is what I found: the answer is forty-two, as expected.";
    sim.push(Input::MessageStart);
    sim.stream(first, 4, 20);
    sim.push(Input::ToolStart { name: "search" });
    sim.push(Input::MessageEnd(None));
    sim.wait(500);
    sim.push(Input::ToolResult(replystream::Payload::text("🔎 searched")));
    sim.wait(500);
    sim.push(Input::MessageStart);
    sim.stream(second, 4, 20);
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();
    ok(check_turn(
        &sim,
        &config,
        &[first.to_owned(), "🔎 searched".into(), second.to_owned()],
    ));
    let keys: Vec<_> = sim.sends().iter().filter_map(|(_, s)| s.op.key()).collect();
    assert!(keys.contains(&MessageKey(1)) && keys.contains(&MessageKey(2)));
    // The old preview is finalized before the new one is created.
    let ops = kinds_ops(&sim.sends());
    let final_edit = ops.iter().position(|o| o == "final edit").unwrap();
    let tool = ops.iter().position(|o| o == "tool create").unwrap();
    let second_create = ops.iter().rposition(|o| o == "preview create").unwrap();
    assert!(final_edit < tool && tool < second_create, "{ops:?}");
}

#[test]
fn media_in_the_middle_splits_the_preview() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 30);
    let text = "Here is the chart you asked for, drawn from the data:\nMEDIA: https://example.com/chart.png\nAs you can see, the trend is up over the whole year.";
    stream_reply(&mut sim, text, 4, 20);
    let texts: Vec<_> = sim
        .chat
        .messages
        .iter()
        .map(|m| (m.text.as_str(), m.media.len()))
        .collect();
    assert_eq!(
        texts,
        [
            ("Here is the chart you asked for, drawn from the data:", 0),
            ("", 1),
            ("As you can see, the trend is up over the whole year.", 0)
        ]
    );
    ok(check_turn(&sim, &config, &answer_texts(&sim)));
}

#[test]
fn draft_transport_sends_drafts_and_a_normal_final() {
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.preview_transport = PreviewTransport::Draft;
    let mut sim = chat_sim(&config, 40);
    stream_reply(&mut sim, PROSE, 4, 20);
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let ops = kinds_ops(&sim.sends());
    assert!(
        ops[..ops.len() - 1].iter().all(|o| o == "preview draft"),
        "{ops:?}"
    );
    assert_eq!(ops.last().unwrap(), "final create");
    assert!(sim.chat.counts.drafts > 3);
    // Same throttle.
    let ops = preview_ops(&sim);
    assert!(ops.windows(2).all(|p| p[1].0 - p[0].0 >= 1000));
}

#[test]
fn a_preview_with_nothing_left_to_show_is_removed() {
    // Only reasoning was shown: the answer is empty, so the preview goes away and the
    // reasoning arrives as its own message.
    for transport in [PreviewTransport::Edit, PreviewTransport::Draft] {
        let mut config = preview_config("telegram", PreviewMode::Partial);
        config.reasoning = ReasoningMode::Stream;
        config.preview_transport = transport;
        let mut sim = chat_sim(&config, 20);
        sim.push(Input::MessageStart);
        sim.push(Input::ThinkingDelta(
            "Nothing to say to this one, I will stay quiet.",
        ));
        sim.wait(100);
        sim.push(Input::MessageEnd(None))
            .push(Input::Finish)
            .run_until_idle();
        assert_eq!(preview_ops(&sim).len(), 1, "a preview was shown");
        ok(check_turn(&sim, &config, &[]));
        let ops = kinds_ops(&sim.sends());
        assert_eq!(
            ops[1..],
            ["preview delete", "final create"],
            "{transport:?}"
        );
        assert_eq!(
            sim.chat.lane_texts(Lane::Reasoning),
            ["Nothing to say to this one, I will stay quiet."]
        );
    }
}

#[test]
fn a_silent_reply_shown_in_the_preview_ends_as_the_reply_does_without_one() {
    // Whatever the token rules make of it, the chat ends as it would without a preview,
    // and an empty final removes the preview.
    for text in ["**NO_REPLY**", "NO_REPLY", "HEARTBEAT_OK", "Done. NO_REPLY"] {
        let mut config = preview_config("telegram", PreviewMode::Partial);
        config.preview_min_initial_units = 4;
        let mut sim = chat_sim(&config, 20);
        stream_reply(&mut sim, text, 3, 50);
        let expected = reference_reply(&config, text);
        ok(check_turn(&sim, &config, &expected));
        if expected.is_empty() && !preview_ops(&sim).is_empty() {
            assert_eq!(kinds_ops(&sim.sends()).last().unwrap(), "preview delete");
        }
    }
}

#[test]
fn a_reply_target_the_preview_was_not_created_with_replaces_it() {
    let config = preview_config("telegram", PreviewMode::Partial);
    // Known from the start: the preview is created as a reply and edited in place.
    let mut sim = chat_sim(&config, 20);
    stream_reply(
        &mut sim,
        "[[reply_to_current]] Yes, that works, and here is why it does.",
        4,
        20,
    );
    assert_eq!(
        sim.sends()[0].1.payload.reply_to,
        Some(replystream::ReplyTarget::Current)
    );
    assert_eq!(kinds_ops(&sim.sends()).last().unwrap(), "final edit");
    // Known only later: the preview is deleted and the final sent as a reply.
    let mut sim = chat_sim(&config, 20);
    stream_reply(
        &mut sim,
        "Yes, that works, and here is why it does. [[reply_to_current]]",
        4,
        20,
    );
    let ops = kinds_ops(&sim.sends());
    assert_eq!(ops[ops.len() - 2..], ["preview delete", "final create"]);
    assert_eq!(sim.chat.messages.len(), 1);
    assert_eq!(
        sim.sends().last().unwrap().1.payload.reply_to,
        Some(replystream::ReplyTarget::Current)
    );
}

#[test]
fn a_failed_turn_edits_the_preview_and_sends_the_error_apart() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 20);
    sim.push(Input::MessageStart);
    sim.stream(PROSE, 8, 10);
    sim.push(Input::Fail {
        error: "The model stopped.",
    })
    .run_until_idle();
    let mut expected = reference_reply(&config, PROSE);
    expected.push("The model stopped.".into());
    ok(check_turn(&sim, &config, &expected));
    assert_eq!(kinds_ops(&sim.sends()).last().unwrap(), "final create");
}

#[test]
fn a_hung_preview_update_aborts_the_preview_not_the_reply() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = Sim::with_policy(
        engine(&config),
        Box::new(|s, _| {
            if s.kind == SendKind::Preview && s.op.name() == "edit" {
                Ack::Hang
            } else {
                Ack::Deliver { after_ms: 20 }
            }
        }),
    );
    sim.chat = telegram_chat(&config);
    stream_reply(&mut sim, CODE, 4, 5);
    ok(check_turn(&sim, &config, &reference_reply(&config, CODE)));
    assert_eq!(sim.aborts().len(), 1);
    assert_eq!(
        preview_ops(&sim).len(),
        2,
        "the create, then one edit that hangs"
    );
}

#[test]
fn a_hung_final_edit_removes_the_preview_and_sends_the_final_anew() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = Sim::with_policy(
        engine(&config),
        Box::new(|s, _| {
            if s.kind == SendKind::Final && s.op.name() == "edit" {
                Ack::Hang
            } else {
                Ack::Deliver { after_ms: 20 }
            }
        }),
    );
    sim.chat = telegram_chat(&config);
    stream_reply(&mut sim, PROSE, 8, 10);
    ok(check_turn(&sim, &config, &reference_reply(&config, PROSE)));
    let ops = kinds_ops(&sim.sends());
    assert_eq!(
        ops[ops.len() - 3..],
        ["final edit", "preview delete", "final create"]
    );
}

#[test]
fn the_response_prefix_shows_in_the_preview_and_the_final() {
    let mut config = preview_config("telegram", PreviewMode::Partial);
    config.response_prefix = Some("[bot]".into());
    let mut sim = chat_sim(&config, 20);
    stream_reply(&mut sim, PROSE, 8, 10);
    let expected = reference_reply(&config, PROSE);
    assert!(expected[0].starts_with("[bot] Great question!"));
    ok(check_turn(&sim, &config, &expected));
    for (_, op) in preview_ops(&sim) {
        assert!(op.payload.text.starts_with("[bot] Great question!"));
    }
}

#[test]
fn a_cancelled_turn_sends_nothing_more() {
    let config = preview_config("telegram", PreviewMode::Partial);
    let mut sim = chat_sim(&config, 20);
    sim.push(Input::MessageStart);
    sim.stream(PROSE, 8, 10);
    let before = sim.sends().len();
    sim.push(Input::Cancel);
    sim.wait(10_000);
    assert_eq!(sim.sends().len(), before);
    assert_eq!(sim.aborts(), [replystream::AbortReason::Cancelled]);
}

#[test]
fn same_inputs_same_actions() {
    let run = || {
        let mut config = preview_config("telegram", PreviewMode::Block);
        config.reasoning = ReasoningMode::Stream;
        let mut sim = limited(&config, 35, |_, n| (n % 7 == 3).then_some(700));
        sim.push(Input::ThinkingDelta("Some thinking first, to show above."));
        stream_reply(&mut sim, CODE, 5, 7);
        sim.log_text()
    };
    assert_eq!(run(), run());
}

/// A live preview runs on any channel the host can edit messages on, within the channel's
/// own limits (issue 20, item 10: no profile flag decides it; Discord can edit). On Discord
/// the tail window fits 2000 characters, and the chat ends showing exactly the reply.
#[test]
fn a_preview_on_discord_stays_within_its_limit() {
    let config = preview_config("discord", PreviewMode::Partial);
    assert_eq!(
        (config.preview_limit, config.metric),
        (2000, LengthMetric::Chars)
    );
    let mut sim = Sim::with_latency(engine(&config), 80);
    sim.chat = Chat::with_limit(2000, LengthMetric::Chars);
    stream_reply(&mut sim, LONG, 64, 10);
    let expected = reference_reply(&config, LONG);
    ok(check_turn(&sim, &config, &expected));
    let ops = preview_ops(&sim);
    assert!(ops.len() > 5, "the preview keeps moving");
    let tails = ops
        .iter()
        .filter(|(_, s)| s.payload.text.starts_with("…\n"));
    let mut tail_count = 0;
    for (_, s) in tails {
        let chars = s.payload.text.chars().count();
        assert!((1500..=2000).contains(&chars), "{chars}");
        tail_count += 1;
    }
    assert!(tail_count > 5, "past the limit a tail window keeps moving");
    for (_, s) in &ops {
        assert!(s.payload.text.chars().count() <= 2000);
    }
}

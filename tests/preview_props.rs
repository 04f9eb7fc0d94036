//! Live preview properties over the corpus: random delta sizes and gaps, ack latencies,
//! rate limits (429 with `retry_after`), modes, transports, throttles, cursors and reasoning.
//! After every turn the simulated chat shows exactly the reply, no cursor, no draft, each
//! preview within its limit with balanced fences, one update per throttle window at most.

mod preview_checks;
mod text_checks;

use preview_checks::*;
use proptest::prelude::*;
use replystream::sim::{Ack, Chat, Sim};
use replystream::{
    Engine, Input, Lane, PreviewMode, PreviewTransport, ReasoningMode, SendKind, SendOp,
};
use text_checks::{cases, corpus};

/// Corpus files whose reply is one stretch of text (media directives split a preview into
/// segments; `tests/preview.rs` covers them).
fn replies() -> Vec<(String, String)> {
    corpus()
        .into_iter()
        .filter(|(_, text)| !text.contains("MEDIA:") && !text.contains("[[media"))
        .collect()
}

#[derive(Clone, Debug)]
struct Case {
    file: usize,
    channel: &'static str,
    mode: PreviewMode,
    transport: PreviewTransport,
    throttle_ms: u64,
    cursor: bool,
    reasoning: bool,
    delta: usize,
    gap_ms: u64,
    latency_ms: (u64, u64),
    limit_percent: u64,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            0..64usize,
            prop_oneof![Just("telegram"), Just("generic"), Just("discord")],
            prop_oneof![Just(PreviewMode::Partial), Just(PreviewMode::Block)],
            prop_oneof![Just(PreviewTransport::Edit), Just(PreviewTransport::Draft)],
            prop_oneof![Just(250u64), Just(1000), 250..3000u64],
            any::<bool>(),
        ),
        (
            any::<bool>(),
            prop_oneof![Just(1usize), Just(4), 1..80usize],
            0..60u64,
            (0..200u64, 0..900u64),
            prop_oneof![Just(0u64), Just(10), 0..40u64],
            any::<u64>(),
        ),
    )
        .prop_map(
            |(
                (file, channel, mode, transport, throttle_ms, cursor),
                (reasoning, delta, gap_ms, latency_ms, limit_percent, seed),
            )| Case {
                file,
                channel,
                mode,
                transport,
                throttle_ms,
                cursor,
                reasoning,
                delta,
                gap_ms,
                latency_ms,
                limit_percent,
                seed,
            },
        )
}

const THINKING: &str = "First I look at what is asked. Then I check the facts I know, \
                        and the ones I do not. Then I write it down, clearly and briefly.";

fn run(case: &Case) -> Result<(), TestCaseError> {
    let files = replies();
    let (name, text) = &files[case.file % files.len()];
    let mut config = preview_config(case.channel, case.mode);
    config.preview_transport = case.transport;
    config.preview_throttle_ms = case.throttle_ms;
    if !case.cursor {
        config.preview_cursor = None;
    }
    if case.reasoning {
        config.reasoning = ReasoningMode::Stream;
    }
    let expected = reference_reply(&config, text);

    // Latency per send, and a 429 (with a retry_after) for some of them; the same send
    // fails at most twice in a row, as a platform's rate limit passes.
    let mut rng = fastrand::Rng::with_seed(case.seed);
    let (lo, hi) = (
        case.latency_ms.0.min(case.latency_ms.1),
        case.latency_ms.0.max(case.latency_ms.1),
    );
    let limit_percent = case.limit_percent;
    let mut failures: Vec<(u64, u32)> = Vec::new();
    let policy = Box::new(move |s: &replystream::SendRequest, _n: usize| {
        let after_ms = rng.u64(lo..=hi);
        let id = s.send_id.0;
        let row = failures
            .iter()
            .find(|(i, _)| *i == id)
            .map_or(0, |(_, n)| *n);
        if row < 2 && rng.u64(0..100) < limit_percent {
            match failures.iter_mut().find(|(i, _)| *i == id) {
                Some((_, n)) => *n += 1,
                None => failures.push((id, 1)),
            }
            return Ack::Fail {
                after_ms,
                retry_after_ms: Some(rng.u64(100..5000)),
                permanent: false,
            };
        }
        Ack::Deliver { after_ms }
    });
    let mut sim = Sim::with_policy(Engine::new(config.clone(), case.seed).unwrap(), policy);
    sim.chat = Chat::with_limit(config.preview_limit.max(config.text_limit), config.metric);
    sim.push(Input::MessageStart);
    if case.reasoning {
        for piece in THINKING.split_inclusive(' ') {
            sim.push(Input::ThinkingDelta(piece));
            let t = sim.now + case.gap_ms;
            sim.at(t);
        }
        sim.push(Input::ThinkingEnd);
    }
    sim.stream(text, case.delta, case.gap_ms);
    sim.push(Input::MessageEnd(None))
        .push(Input::Finish)
        .run_until_idle();

    let context = format!("{name} {case:?}");
    check_turn(&sim, &config, &expected)
        .map_err(|e| TestCaseError::fail(format!("{context}: {e}")))?;
    if case.reasoning {
        let reasoning = sim.chat.lane_texts(Lane::Reasoning).concat();
        prop_assert_eq!(reasoning, THINKING, "{}", context);
    }
    // One update per throttle window at most, and never one while another is in flight.
    let ops = preview_ops(&sim);
    let throttle = config.preview_throttle_ms.max(250);
    for pair in ops.windows(2) {
        let gap = pair[1].0 - pair[0].0;
        prop_assert!(gap >= throttle, "{}: updates {} ms apart", context, gap);
    }
    let duration = idle_time(&sim).unwrap_or(sim.now);
    prop_assert!(
        ops.len() as u64 <= duration / throttle + 2,
        "{}: {} updates",
        context,
        ops.len()
    );
    // Drafts with the draft transport, creates and edits otherwise.
    for (_, s) in &ops {
        let draft = matches!(s.op, SendOp::Draft { .. });
        prop_assert_eq!(draft, case.transport == PreviewTransport::Draft);
        prop_assert_eq!(s.kind, SendKind::Preview);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(96)))]

    #[test]
    fn the_chat_shows_exactly_the_reply(case in case()) {
        run(&case)?;
    }
}

#[test]
fn the_same_case_gives_the_same_actions() {
    let files = replies();
    let text = &files[0].1;
    let log = || {
        let config = preview_config("telegram", PreviewMode::Partial);
        let mut rng = fastrand::Rng::with_seed(3);
        let policy = Box::new(move |_: &replystream::SendRequest, _| {
            if rng.u64(0..10) == 0 {
                Ack::Fail {
                    after_ms: 40,
                    retry_after_ms: Some(1500),
                    permanent: false,
                }
            } else {
                Ack::Deliver {
                    after_ms: rng.u64(0..500),
                }
            }
        });
        let mut sim = Sim::with_policy(Engine::new(config, 3).unwrap(), policy);
        stream_reply(&mut sim, text, 3, 9);
        sim.log_text()
    };
    assert_eq!(log(), log());
}

/// A turn of several assistant messages with a tool call between them: each message gets
/// its own preview, finalized before the tool's message.
fn run_turn_with_tools(
    parts: &[(usize, usize)],
    mode: PreviewMode,
    latency: u64,
    seed: u64,
) -> Result<(), TestCaseError> {
    let files = replies();
    let texts: Vec<&str> = parts
        .iter()
        .map(|&(file, len)| {
            let text = &files[file % files.len()].1;
            let mut end = len.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            &text[..end]
        })
        .collect();
    let config = preview_config("telegram", mode);
    let mut expected = Vec::new();
    let mut sim = Sim::with_latency(Engine::new(config.clone(), seed).unwrap(), latency);
    sim.chat = Chat::with_limit(4096, config.metric);
    for (i, text) in texts.iter().enumerate() {
        if i > 0 {
            let tool = format!("tool result {i}");
            sim.push(Input::ToolResult(replystream::Payload::text(tool.clone())));
            expected.push(tool);
        }
        expected.extend(reference_reply(&config, text));
        sim.push(Input::MessageStart);
        sim.stream(text, 7, 13);
        // The message ends before the tool starts: text a stage still holds at the end
        // (a trailing `[` that may open a directive) is released by the message end.
        sim.push(Input::MessageEnd(None));
        sim.push(Input::ToolStart { name: "t" });
        let t = sim.now + 300;
        sim.at(t);
    }
    sim.push(Input::Finish).run_until_idle();
    check_turn(&sim, &config, &expected)
        .map_err(|e| TestCaseError::fail(format!("{parts:?} {mode:?} {latency}: {e}")))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(48)))]

    #[test]
    fn each_message_of_a_turn_ends_in_its_own_preview(
        parts in prop::collection::vec((0..64usize, 0..6000usize), 1..4),
        mode in prop_oneof![Just(PreviewMode::Partial), Just(PreviewMode::Block)],
        latency in 0..700u64,
        seed in any::<u64>(),
    ) {
        run_turn_with_tools(&parts, mode, latency, seed)?;
    }
}

/// Any input, in any order, at any time, with acks for real, stale or invented send ids and
/// failures of every kind: with a preview on, nothing panics, every send keeps its limit, at
/// most one is in flight, and once the host behaves the turn ends idle.
fn run_any_sequence(
    ops: &[(u8, u8, u8)],
    mode: PreviewMode,
    transport: PreviewTransport,
    reasoning: u8,
) {
    use replystream::{Action, Payload, SendId, Time};
    const TEXTS: &[&str] = &[
        "Hello there, this is a sentence. ",
        "```rust\nfn main() {}\n",
        "```\n",
        "<think>hmm</think>",
        "👨‍👩‍👧 e\u{301} 字字 ",
        "\n\n",
        "MEDIA: https://example.com/a.png\n",
        "[[reply_to_current]] ",
        "NO_REPLY",
        "",
    ];
    let mut config = preview_config("telegram", mode);
    config.preview_transport = transport;
    config.preview_limit = 200;
    config.text_limit = 300;
    config.preview_throttle_ms = 250;
    config.reasoning =
        [ReasoningMode::Off, ReasoningMode::On, ReasoningMode::Stream][usize::from(reasoning % 3)];
    config.delivery_timeout_ms = 2000;
    let mut engine = Engine::new(config.clone(), 1).unwrap();
    let mut now = 0u64;
    let mut sent: Vec<SendId> = Vec::new();
    let mut in_flight: Option<(SendId, u64)> = None;
    let mut cancelled = false;
    let mut idle = false;
    let check =
        |send: &replystream::SendRequest, in_flight: &mut Option<(SendId, u64)>, now: u64| {
            let abandoned = in_flight.is_some_and(|(_, at)| now >= at + 2000);
            assert!(in_flight.is_none() || abandoned, "two sends in flight");
            let t = &send.payload.text;
            let limit = if send.kind == SendKind::Preview {
                config.preview_limit
            } else {
                config.text_limit
            };
            assert!(config.metric.len(t) <= limit, "{t:?} over {limit}");
            let delete = matches!(send.op, SendOp::Delete { .. });
            assert!(
                delete || !t.trim().is_empty() || !send.payload.media.is_empty(),
                "empty send"
            );
            *in_flight = Some((send.send_id, now));
        };
    for &(op, dt, pick) in ops {
        now += u64::from(dt) * 7;
        let text = TEXTS[usize::from(pick) % TEXTS.len()];
        let any_id = sent
            .get(usize::from(pick) % sent.len().max(1))
            .copied()
            .unwrap_or(SendId(u64::from(pick)));
        let ack_id = in_flight.map_or(any_id, |f| f.0);
        let input = match op % 20 {
            0 => Input::MessageStart,
            1..=6 => Input::TextDelta(text),
            7 => Input::TextEnd(None),
            8 => Input::ThinkingDelta(text),
            9 => Input::ThinkingEnd,
            10 => Input::ToolStart { name: "t" },
            11 => Input::ToolResult(Payload::text("tool output")),
            12 => Input::Media(Payload {
                media: vec!["https://example.com/b.png".into()],
                ..Payload::default()
            }),
            13 => Input::MessageEnd(None),
            14 if op & 0x80 != 0 => Input::Finish,
            15 => Input::Fail { error: "boom" },
            16 if op & 0xC0 == 0xC0 => {
                cancelled = true;
                Input::Cancel
            }
            17 => Input::Delivered {
                send_id: ack_id,
                message_ref: Some("m"),
            },
            18 => Input::DeliveryFailed {
                send_id: ack_id,
                retry_after_ms: (op & 0x40 != 0).then_some(u64::from(pick) * 13),
                permanent: op & 0x80 != 0,
            },
            _ => Input::Timer,
        };
        let acked = matches!(
            input,
            Input::Delivered { .. } | Input::DeliveryFailed { .. }
        );
        let Ok(actions) = engine.push(input, Time::from_millis(now)) else {
            continue;
        };
        if acked {
            in_flight = None;
        }
        for action in actions {
            assert!(!idle, "{action:?} after Idle");
            match action {
                Action::Send(send) => {
                    sent.push(send.send_id);
                    check(&send, &mut in_flight, now);
                }
                Action::Idle => idle = true,
                _ => {}
            }
        }
    }
    // The host behaves from now on: it finishes the turn and acks every send.
    let mut pending: Vec<SendId> = in_flight.map(|f| f.0).into_iter().collect();
    let mut actions: Vec<Action> = engine
        .push(Input::Finish, Time::from_millis(now))
        .map(|a| a.collect())
        .unwrap_or_default();
    for _ in 0..10_000 {
        for action in actions.drain(..) {
            assert!(!idle, "{action:?} after Idle");
            match action {
                Action::Send(send) => {
                    check(&send, &mut in_flight, now);
                    pending.push(send.send_id);
                }
                Action::Idle => idle = true,
                _ => {}
            }
        }
        if engine.is_done() {
            break;
        }
        if let Some(id) = pending.pop() {
            in_flight = None;
            actions = engine
                .push(
                    Input::Delivered {
                        send_id: id,
                        message_ref: Some("m"),
                    },
                    Time::from_millis(now),
                )
                .map(|a| a.collect())
                .unwrap_or_default();
        } else if let Some(t) = engine.poll_timeout() {
            now = now.max(t.as_millis());
            actions = engine
                .push(Input::Timer, Time::from_millis(now))
                .unwrap()
                .collect();
        } else {
            break;
        }
    }
    assert!(engine.is_done() || cancelled, "the turn never ended");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn any_sequence_with_a_preview_is_safe(
        ops in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 0..200),
        mode in prop_oneof![Just(PreviewMode::Partial), Just(PreviewMode::Block)],
        transport in prop_oneof![Just(PreviewTransport::Edit), Just(PreviewTransport::Draft)],
        reasoning in any::<u8>(),
    ) {
        run_any_sequence(&ops, mode, transport, reasoning);
    }
}

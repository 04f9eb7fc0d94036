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

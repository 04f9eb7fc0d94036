//! Engine properties over the sample replies (SPEC §13): random delta splits, random ack
//! latencies and failures, random channels. Checks invariants 1, 2, 4, 5, 6, 8 and 9 on
//! what the harness saw delivered.

mod common;

use common::*;
use proptest::prelude::*;
use replystream::{ChannelProfile, Engine, FenceMarker, Input, SendKind};

/// Replies with no tags, directives or tokens: what is delivered must equal them exactly.
const PLAIN: &[&str] = &[
    include_str!("data/prose-paragraphs.md"),
    include_str!("data/code-heavy.md"),
    include_str!("data/lists-tables.md"),
    include_str!("data/unicode-mix.md"),
    include_str!("data/no-breaks.md"),
    include_str!("data/unclosed-fence.md"),
    include_str!("data/node-readline.md"),
];

/// A window of at most `len` bytes of `text`, on char boundaries.
fn window(text: &str, start: usize, len: usize) -> &str {
    let mut a = start.min(text.len());
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (a + len).min(text.len());
    while !text.is_char_boundary(b) {
        b -= 1;
    }
    &text[a..b]
}

/// Every fence opened in `text` is closed in it.
fn fences_balanced(text: &str) -> bool {
    let mut open: Option<FenceMarker> = None;
    for line in text.split('\n') {
        match open {
            Some(m) if m.is_closed_by(line) => open = None,
            Some(_) => {}
            None => open = FenceMarker::parse_open(line),
        }
    }
    open.is_none()
}

#[derive(Clone, Debug)]
struct Script {
    text_index: usize,
    start: usize,
    len: usize,
    cuts: Vec<usize>,
    channel: usize,
    small_chunks: bool,
    latency: u64,
    gap_ms: u64,
    /// Per send: 0 deliver, 1 retryable failure, 2 hang (timeout), 3 permanent failure.
    fates: Vec<u8>,
    tool_at: Option<usize>,
    seed: u64,
}

fn script() -> impl Strategy<Value = Script> {
    (
        0..PLAIN.len(),
        0usize..40_000,
        1usize..5000,
        prop::collection::vec(1usize..200, 1..60),
        0..ChannelProfile::ALL.len(),
        any::<bool>(),
        0u64..300,
        0u64..400,
        prop::collection::vec(prop::sample::select(vec![0u8, 0, 0, 0, 0, 1, 2, 3]), 0..20),
        prop::option::of(0usize..30),
        any::<u64>(),
    )
        .prop_map(
            |(
                text_index,
                start,
                len,
                cuts,
                channel,
                small_chunks,
                latency,
                gap_ms,
                fates,
                tool_at,
                seed,
            )| Script {
                text_index,
                start,
                len,
                cuts,
                channel,
                small_chunks,
                latency,
                gap_ms,
                fates,
                tool_at,
                seed,
            },
        )
}

fn run(s: &Script) -> (Sim, String) {
    let text = window(PLAIN[s.text_index], s.start, s.len).to_owned();
    let profile = ChannelProfile::ALL[s.channel];
    let mut c = replystream::Config::for_channel(&profile);
    if s.small_chunks {
        c.chunk_min = 40;
        c.chunk_max = 120;
        c.coalesce_min = Some(60);
    }
    c.delivery_timeout_ms = 2000;
    let fates = s.fates.clone();
    let latency = s.latency;
    let policy: AckPolicy = Box::new(move |send, n| {
        // Finals always get through: "nothing lost" is about the engine, not the platform.
        if send.kind == SendKind::Final {
            return Ack::Deliver { after_ms: latency };
        }
        match fates.get(n).copied().unwrap_or(0) {
            1 => Ack::Fail {
                after_ms: latency,
                retry_after_ms: Some(300),
                permanent: false,
            },
            2 => Ack::Hang,
            3 => Ack::Fail {
                after_ms: latency,
                retry_after_ms: None,
                permanent: true,
            },
            _ => Ack::Deliver { after_ms: latency },
        }
    });
    let mut sim = Sim::with_policy(Engine::new(c, s.seed).expect("profile config"), policy);
    let mut at = 0;
    let mut deltas = 0;
    let mut cuts = s.cuts.iter().cycle();
    while at < text.len() {
        let mut end = (at + cuts.next().copied().unwrap_or(7)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        sim.push(Input::TextDelta(&text[at..end]));
        at = end;
        deltas += 1;
        if s.tool_at == Some(deltas) {
            sim.push(Input::ToolStart { name: "t" });
        }
        let t = sim.now + s.gap_ms;
        sim.at(t);
    }
    sim.push(Input::Finish).run_until_idle();
    (sim, text)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn invariants_hold(s in script()) {
        let (sim, text) = run(&s);
        let profile = ChannelProfile::ALL[s.channel];
        prop_assert!(sim.errors.is_empty(), "{:?}", sim.errors);
        prop_assert!(sim.is_idle(), "the turn ends");
        prop_assert!(sim.max_in_flight <= 1, "one in flight");
        for (_, send) in sim.sends() {
            let t = &send.payload.text;
            prop_assert!(!t.trim().is_empty() || !send.payload.media.is_empty(), "empty send");
            prop_assert!(profile.metric.len(t) <= profile.text_limit, "over the limit: {}", profile.metric.len(t));
            if let Some(max) = profile.max_lines {
                prop_assert!(t.split('\n').count() <= max, "{} lines", t.split('\n').count());
            }
            prop_assert!(fences_balanced(t), "unbalanced fences in {t:?}");
        }
        // Nothing lost, nothing duplicated: the delivered texts are the reply, in order,
        // apart from separators and synthetic fence lines.
        // Messages are joined by a line break, as a chat shows them one under another.
        let delivered: String = sim.delivered_texts().join("\n");
        let strip_fences = |s: &str| -> String {
            s.split('\n').filter(|l| FenceMarker::parse_open(l).is_none() && !l.trim_start().starts_with("```") && !l.trim_start().starts_with("~~~")).collect::<Vec<_>>().join("\n")
        };
        let got = squash(&strip_fences(&delivered));
        let want = squash(&strip_fences(&text));
        if sim.engine.stats().dispatch.dropped == 0 {
            prop_assert_eq!(got, want);
        } else {
            // A block that failed for good comes back in the final, after the blocks that
            // got through: the same text exactly once, not in its place.
            let sorted = |s: &str| { let mut v: Vec<char> = s.chars().collect(); v.sort_unstable(); v };
            prop_assert_eq!(sorted(&got), sorted(&want));
        }
    }

    #[test]
    fn deterministic(s in script()) {
        let (a, _) = run(&s);
        let (b, _) = run(&s);
        prop_assert_eq!(a.log_text(), b.log_text());
    }
}

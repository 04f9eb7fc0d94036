//! Merged deltas change nothing a chat sees: a stream's sends through a driver that is
//! behind (its deltas waiting together in the mailbox, pushed as one) are exactly the sends
//! of the same deltas pushed into an engine one by one.
//!
//! Acks that arrive between deltas (into the same mailbox, from another thread) keep their
//! place between the merged runs: the sends match an engine fed the same steps.
//!
//! Streams with a live preview are not merged (the first preview would show more text);
//! their sends must match too.
//!
//! The driver is held behind on purpose: a "gate" stream's delivery blocks the driver thread
//! while the test pushes a group of deltas, so each group is taken in one go, and the
//! report's `merged_deltas` must count exactly the deltas merged into the one before them.
// The driver's own tests run on real threads.
#![allow(clippy::disallowed_methods)]

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::{
    Action, BreakPreference, ChannelProfile, Config, Engine, Input, PreviewMode, ReasoningMode,
    SendId, SendRequest, Time,
};

/// Marks the gate's sends (never in the test texts).
const GATE: &str = "GATE-PULSE";

/// The message ref the sinks give a send, so edits name it.
fn message_ref(id: SendId) -> Option<String> {
    Some(format!("m{}", id.0))
}

/// The sends of `deltas` pushed into an engine one at a time, every send delivered at once
/// (acks fed back in order after the push, as the driver does with a synchronous sink).
fn one_by_one(config: &Config, seed: u64, deltas: &[&str]) -> Vec<SendRequest> {
    let mut engine = Engine::new(config.clone(), seed).expect("valid config");
    let now = Time::from_millis(1);
    let mut sends = Vec::new();
    let run = |engine: &mut Engine, input: Input<'_>, sends: &mut Vec<SendRequest>| {
        let mut acks = VecDeque::new();
        acks.push_back(input.into());
        while let Some(input) = acks.pop_front() {
            let input: replystream::OwnedInput = input;
            let actions: Vec<Action> = engine.push(input.as_input(), now).unwrap().collect();
            for action in actions {
                if let Action::Send(send) = action {
                    acks.push_back(replystream::OwnedInput::Delivered {
                        send_id: send.send_id,
                        message_ref: message_ref(send.send_id),
                    });
                    sends.push(send);
                }
            }
        }
    };
    for delta in deltas {
        run(&mut engine, Input::TextDelta(delta), &mut sends);
    }
    run(&mut engine, Input::Finish, &mut sends);
    assert!(engine.is_done(), "every send was delivered");
    sends
}

/// Records the sends of every stream; blocks in the gate's delivery until released.
struct GatedSink {
    sends: Arc<Mutex<Vec<(StreamId, SendRequest)>>>,
    events: Arc<Mutex<Vec<(StreamId, StreamEvent)>>>,
    blocked: mpsc::Sender<()>,
    release: mpsc::Receiver<()>,
    /// Deliveries of the test stream stay pending (to keep it open after `Finish`).
    pending: bool,
}

impl Sink for GatedSink {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, _acks: &AckHandle) -> Delivery {
        if send.payload.text.contains(GATE) {
            self.blocked.send(()).unwrap();
            self.release.recv().unwrap();
            return Delivery::Delivered { message_ref: None };
        }
        self.sends.lock().unwrap().push((stream, send.clone()));
        if self.pending {
            return Delivery::Pending;
        }
        Delivery::Delivered {
            message_ref: message_ref(send.send_id),
        }
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        self.events.lock().unwrap().push((stream, event.clone()));
    }
}

/// A driver whose thread can be held in a gate stream's delivery.
struct Gated {
    driver: Driver,
    sends: Arc<Mutex<Vec<(StreamId, SendRequest)>>>,
    events: Arc<Mutex<Vec<(StreamId, StreamEvent)>>>,
    blocked: mpsc::Receiver<()>,
    release: mpsc::Sender<()>,
    gates: usize,
}

impl Gated {
    fn spawn(pending: bool) -> Gated {
        let (blocked_tx, blocked) = mpsc::channel();
        let (release, release_rx) = mpsc::channel();
        let sends = Arc::new(Mutex::new(Vec::new()));
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink = GatedSink {
            sends: sends.clone(),
            events: events.clone(),
            blocked: blocked_tx,
            release: release_rx,
            pending,
        };
        Gated {
            driver: Driver::spawn(sink, DriverOptions::default()),
            sends,
            events,
            blocked,
            release,
            gates: 0,
        }
    }

    /// Runs `push` while the driver thread is held: everything it pushes waits together.
    fn held(&mut self, push: impl FnOnce()) {
        self.gates += 1;
        let gate = self
            .driver
            .open(&format!("gate {}", self.gates), Config::default(), 0)
            .unwrap();
        gate.text(GATE).unwrap();
        gate.finish().unwrap();
        self.blocked
            .recv_timeout(Duration::from_secs(30))
            .expect("the driver thread reached the gate");
        push();
        self.release.send(()).unwrap();
    }
}

/// The sends of `deltas` through a driver held behind: each group of `groups` deltas is
/// pushed while the driver thread is held, so it is taken (and merged) at once. Returns
/// the stream's sends and the report's merged-delta count.
fn through_held_driver(
    config: &Config,
    seed: u64,
    deltas: &[&str],
    groups: &[usize],
) -> (Vec<SendRequest>, u64) {
    let mut gated = Gated::spawn(false);
    let stream = gated.driver.open("chat", config.clone(), seed).unwrap();
    let mut rest = deltas;
    for &n in groups {
        let (group, after) = rest.split_at(n.min(rest.len()));
        rest = after;
        gated.held(|| {
            for delta in group {
                stream.text(delta).unwrap();
            }
        });
    }
    assert!(rest.is_empty());
    stream.finish().unwrap();
    let report = gated.driver.shutdown(Duration::from_secs(30));
    assert!(report.is_clean(), "{report:?}");
    let sends = gated
        .sends
        .lock()
        .unwrap()
        .iter()
        .filter(|(id, _)| *id == stream.id())
        .map(|(_, send)| send.clone())
        .collect();
    (sends, report.merged_deltas)
}

/// `text` cut at random char boundaries into pieces of 1 to `max` bytes (or more, for a
/// character wider than that).
fn split<'a>(text: &'a str, max: usize, rng: &mut fastrand::Rng) -> Vec<&'a str> {
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut at = rng.usize(1..=max).min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, after) = rest.split_at(at);
        pieces.push(piece);
        rest = after;
    }
    pieces
}

/// Blocks of 20 to 60 units, sent as they come (the coalescer holds at most 60), and no idle
/// timer within a test.
fn small_blocks() -> Config {
    Config {
        chunk_min: 20,
        chunk_max: 60,
        coalesce_min: Some(20),
        coalesce_max: Some(60),
        coalesce_idle_ms: 60_000,
        ..Config::default()
    }
}

/// The configurations compared: every profile, small blocks with every break preference,
/// paragraph mode, coalescing, no block streaming, and both preview modes. No timer may
/// fire while a test runs (the engine side never advances its clock), so idle timers are
/// long.
fn configs() -> Vec<(String, Config)> {
    let mut out = Vec::new();
    for name in ["generic", "telegram", "discord", "slack"] {
        let mut c = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
        c.coalesce_idle_ms = 60_000;
        out.push((name.to_owned(), c));
    }
    for pref in [
        BreakPreference::Paragraph,
        BreakPreference::Newline,
        BreakPreference::Sentence,
    ] {
        let c = Config {
            break_preference: pref,
            ..small_blocks()
        };
        out.push((format!("small blocks, {pref:?}"), c.clone()));
        let c = Config {
            coalesce_min: Some(40),
            coalesce_max: Some(120),
            ..c
        };
        out.push((format!("small blocks, {pref:?}, coalesced"), c));
    }
    let c = Config {
        chunk_mode: replystream::ChunkMode::Newline,
        chunk_min: 10,
        chunk_max: 200,
        coalesce_idle_ms: 60_000,
        ..Config::default()
    };
    out.push(("paragraph mode".to_owned(), c));
    let c = Config {
        block_streaming: false,
        text_limit: 300,
        ..Config::default()
    };
    out.push(("finals only, 300 units".to_owned(), c));
    for mode in [PreviewMode::Partial, PreviewMode::Block] {
        let mut c = Config::for_channel(&ChannelProfile::by_name("telegram").unwrap());
        c.preview = mode;
        c.preview_throttle_ms = 60_000;
        c.coalesce_idle_ms = 60_000;
        out.push((format!("telegram, preview {mode:?}"), c));
    }
    for mode in [ReasoningMode::On, ReasoningMode::Stream] {
        let c = Config {
            reasoning: mode,
            ..small_blocks()
        };
        out.push((format!("small blocks, reasoning {mode:?}"), c));
    }
    out
}

const TEXTS: [(&str, &str); 5] = [
    ("code-heavy", include_str!("data/code-heavy.md")),
    ("lists-tables", include_str!("data/lists-tables.md")),
    ("unicode-mix", include_str!("data/unicode-mix.md")),
    ("unclosed-fence", include_str!("data/unclosed-fence.md")),
    (
        "directives-and-thinking",
        include_str!("data/directives-and-thinking.md"),
    ),
];

#[test]
fn merged_deltas_give_the_same_sends_as_deltas_pushed_one_by_one() {
    let mut rng = fastrand::Rng::with_seed(11);
    for (config_name, config) in configs() {
        for (text_name, text) in TEXTS {
            // About 2 KB of each text keeps the run short; the cut lands on a char boundary.
            let mut end = text.len().min(2_000);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let text = &text[..end];
            let deltas = split(text, 24, &mut rng);
            let mut groups = Vec::new();
            let mut left = deltas.len();
            while left > 0 {
                let n = rng.usize(1..=12).min(left);
                groups.push(n);
                left -= n;
            }
            let seed = rng.u64(..);
            let expected = one_by_one(&config, seed, &deltas);
            let (got, merged) = through_held_driver(&config, seed, &deltas, &groups);
            assert!(
                !expected.is_empty(),
                "{config_name} / {text_name}: nothing sent"
            );
            assert_eq!(
                got, expected,
                "{config_name} / {text_name}: the sends differ (groups {groups:?})"
            );
            // A stream with a live preview is never merged (a preview shows the text so
            // far, so a merged push would show more of it at once).
            let mergeable = config.preview == PreviewMode::Off;
            let expected_merged = if mergeable {
                (deltas.len() - groups.len()) as u64
            } else {
                0
            };
            assert_eq!(
                merged, expected_merged,
                "{config_name} / {text_name}: every delta of a group but the first is merged"
            );
        }
    }
}

/// Text after `Finish` is refused; three deltas merged into one push are still three
/// refusals, as they would be pushed one by one.
#[test]
fn a_refused_merged_delta_is_reported_once_per_delta() {
    let mut gated = Gated::spawn(true);
    let stream = gated.driver.open("chat", Config::default(), 1).unwrap();
    stream.text("The reply.").unwrap();
    stream.finish().unwrap();
    // The final stays pending, so the stream is still open when the late text arrives.
    gated.held(|| {
        for late in ["one ", "two ", "three"] {
            stream.text(late).unwrap();
        }
    });
    let report = gated.driver.shutdown(Duration::ZERO);
    assert_eq!(report.merged_deltas, 2, "{report:?}");
    let refused: Vec<_> = gated
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|(id, e)| *id == stream.id() && matches!(e, StreamEvent::InputRefused(_)))
        .map(|(_, e)| e.clone())
        .collect();
    assert_eq!(refused.len(), 3, "{refused:?}");
    assert!(
        refused.iter().all(|e| matches!(
            e,
            StreamEvent::InputRefused(replystream::Error::TurnEnded(_))
        )),
        "{refused:?}"
    );
}

/// One step of a script: a text delta, or an ack of the oldest send that was still
/// unacknowledged when its group began.
#[derive(Clone, Copy, Debug)]
enum Step<'a> {
    Text(&'a str),
    AckOldest,
}

/// The sends of `groups` pushed into an engine one step at a time; the host acks sends only
/// where the script says (the oldest send still open at the start of the step's group), then
/// every open send, oldest first, after `Finish`.
fn scripted_one_by_one(config: &Config, seed: u64, groups: &[Vec<Step<'_>>]) -> Vec<SendRequest> {
    let mut engine = Engine::new(config.clone(), seed).expect("valid config");
    let now = Time::from_millis(1);
    let mut sends: Vec<SendRequest> = Vec::new();
    let mut acked = 0;
    let push = |engine: &mut Engine, input: Input<'_>, sends: &mut Vec<SendRequest>| {
        let actions: Vec<Action> = engine.push(input, now).unwrap().collect();
        for action in actions {
            if let Action::Send(send) = action {
                sends.push(send);
            }
        }
    };
    let ack = |engine: &mut Engine, id: SendId, sends: &mut Vec<SendRequest>| {
        let reference = message_ref(id);
        let input = Input::Delivered {
            send_id: id,
            message_ref: reference.as_deref(),
        };
        push(engine, input, sends);
    };
    for group in groups {
        let mut open: VecDeque<SendId> = sends[acked..].iter().map(|s| s.send_id).collect();
        for step in group {
            match step {
                Step::Text(delta) => push(&mut engine, Input::TextDelta(delta), &mut sends),
                Step::AckOldest => {
                    if let Some(id) = open.pop_front() {
                        acked += 1;
                        ack(&mut engine, id, &mut sends);
                    }
                }
            }
        }
    }
    push(&mut engine, Input::Finish, &mut sends);
    while acked < sends.len() {
        let id = sends[acked].send_id;
        acked += 1;
        ack(&mut engine, id, &mut sends);
    }
    assert!(engine.is_done(), "every send was delivered");
    sends
}

/// Acks arriving between merged runs (from another thread, into the same mailbox) keep
/// their place: the sends are those of the same steps pushed one by one.
#[test]
fn acks_between_merged_deltas_keep_their_place() {
    let mut rng = fastrand::Rng::with_seed(23);
    let texts = [TEXTS[0], TEXTS[1], TEXTS[2]];
    let configs = [
        ("small blocks", small_blocks()),
        (
            "small blocks, coalesced",
            Config {
                coalesce_min: Some(40),
                coalesce_max: Some(120),
                ..small_blocks()
            },
        ),
    ];
    for (config_name, config) in &configs {
        for (text_name, text) in texts {
            let mut end = text.len().min(3_000);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            let deltas = split(&text[..end], 24, &mut rng);
            let mut groups: Vec<Vec<Step<'_>>> = Vec::new();
            let mut rest = &deltas[..];
            while !rest.is_empty() {
                let (group, after) = rest.split_at(rng.usize(1..=10).min(rest.len()));
                rest = after;
                let mut steps: Vec<Step<'_>> = group.iter().map(|d| Step::Text(d)).collect();
                for _ in 0..rng.usize(0..=2) {
                    steps.insert(rng.usize(0..=steps.len()), Step::AckOldest);
                }
                groups.push(steps);
            }
            let seed = rng.u64(..);
            let expected = scripted_one_by_one(config, seed, &groups);

            let mut gated = Gated::spawn(true);
            let acks = gated.driver.acks();
            let stream = gated.driver.open("chat", config.clone(), seed).unwrap();
            let all_sends = gated.sends.clone();
            let recorded = || -> Vec<SendId> {
                let sends = all_sends.lock().unwrap();
                sends
                    .iter()
                    .filter(|(id, _)| *id == stream.id())
                    .map(|(_, s)| s.send_id)
                    .collect()
            };
            let mut acked = 0;
            for group in &groups {
                gated.held(|| {
                    // The driver thread took everything before this group before it reached
                    // the gate, so the sends it made so far are recorded.
                    let mut open: VecDeque<SendId> = recorded()[acked..].iter().copied().collect();
                    for step in group {
                        match step {
                            Step::Text(delta) => stream.text(delta).unwrap(),
                            Step::AckOldest => {
                                if let Some(id) = open.pop_front() {
                                    acked += 1;
                                    acks.delivered(stream.id(), id, message_ref(id)).unwrap();
                                }
                            }
                        }
                    }
                });
            }
            assert!(
                acked > 0,
                "{config_name} / {text_name}: some acks came between deltas"
            );
            stream.finish().unwrap();
            // Ack every open send, oldest first, until the turn is idle.
            let idle = |gated: &Gated| {
                gated
                    .events
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|(id, e)| *id == stream.id() && matches!(e, StreamEvent::Idle(_)))
            };
            let mut rounds = 0;
            while !idle(&gated) {
                rounds += 1;
                assert!(
                    rounds < 1_000,
                    "{config_name} / {text_name}: the turn never ended"
                );
                gated.held(|| {});
                let open: Vec<SendId> = recorded()[acked..].to_vec();
                for id in open {
                    acked += 1;
                    acks.delivered(stream.id(), id, message_ref(id)).unwrap();
                }
            }
            let report = gated.driver.shutdown(Duration::from_secs(30));
            assert!(report.is_clean(), "{report:?}");
            assert!(report.merged_deltas > 0, "{config_name} / {text_name}");
            let got: Vec<SendRequest> = gated
                .sends
                .lock()
                .unwrap()
                .iter()
                .filter(|(id, _)| *id == stream.id())
                .map(|(_, s)| s.clone())
                .collect();
            assert_eq!(got, expected, "{config_name} / {text_name}");
        }
    }
}

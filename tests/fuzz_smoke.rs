//! A bounded random-sequence test of the engine that needs no nightly toolchain: a fixed range
//! of seeds, each one a random configuration and a random sequence of inputs (any input, in
//! any order, random acks, failures and times, near `u64::MAX` included). The `fuzz/`
//! cargo-fuzz targets explore further on nightly; this runs in every `cargo test`.
//!
//! Checked on every sequence (SPEC §13):
//! - nothing panics (a panic names its seed: rerun one with `FUZZ_SMOKE_SEED=N`);
//! - a valid configuration is accepted, an invalid one refused with `InvalidConfig`;
//! - every send is within the channel's limit (and line cap), and a created message is never
//!   empty;
//! - at most one send is in flight (one whose delivery timeout has passed no longer counts);
//! - nothing is sent after `Cancel`; `Idle` comes at most once, and last;
//! - once the host acks everything and fires every timer, the turn ends (no endless loop);
//! - the same seed gives the same actions (checked on every eighth seed).

use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use replystream::{
    Action, BreakMode, BreakPreference, ChannelProfile, ChunkMode, Config, Engine, Error,
    HumanDelay, Input, LengthMetric, OwnedInput, Payload, PreviewMode, ReasoningMode, SendId,
    SendOp, Time,
};

/// How many sequences run (seeds `0..SEQUENCES`).
const SEQUENCES: u64 = 10_000;
/// The longest sequence, in inputs (before the final drain).
const MAX_STEPS: usize = 120;

/// Text fragments that exercise every stage: fences, tags, directives, tokens, graphemes.
const FRAGMENTS: &[&str] = &[
    "Hello ",
    "world. ",
    "A sentence that goes on for a while and then ends. ",
    "\n",
    "\n\n",
    "\r\n",
    "```rust\n",
    "```\n",
    "````\n",
    "~~~ py title=\"x\"\n",
    "    indented code\n",
    "`inline` ",
    "``",
    "<think>",
    "</think>",
    "< thinking >",
    "<final>",
    "</final>",
    "<thi",
    "nk>",
    "MEDIA: https://example.com/a.png\n",
    "MEDIA: ./pic.jpg\n",
    "[[media:https://example.com/b.mp3]]",
    "[[reply_to_current]]",
    "[[reply_to: 42]]",
    "[[audio_as_voice]]",
    "[[",
    "]]",
    "NO_REPLY",
    "NO_",
    "HEARTBEAT_OK",
    "**NO_REPLY**",
    "é",
    "e\u{301}",
    "👩\u{200d}👩\u{200d}👧",
    "🇫🇷",
    "中文内容。",
    "日本語！",
    "- item\n",
    "# Heading\n",
    "> quote\n",
    "| a | b |\n",
    "1. ",
    "3.14",
    "…",
    " ",
    "\t",
];

const MEDIA: &[&str] = &[
    "https://example.com/x.png",
    "https://cdn.example.org/a/b.mp4",
    "/tmp/file.png",
    "./rel.jpg",
    "http://localhost/x",
    "../escape.png",
    "",
];

fn pick<'a>(rng: &mut fastrand::Rng, items: &[&'a str]) -> &'a str {
    items[rng.usize(..items.len())]
}

fn random_text(rng: &mut fastrand::Rng) -> String {
    let mut s = String::new();
    for _ in 0..rng.usize(1..=4) {
        match rng.u8(..20) {
            0 => s.push_str(&"x".repeat(rng.usize(1..400))),
            1 => {
                for _ in 0..rng.usize(1..8) {
                    s.push(rng.char(..));
                }
            }
            _ => s.push_str(pick(rng, FRAGMENTS)),
        }
    }
    s
}

fn payload(rng: &mut fastrand::Rng) -> Payload {
    let mut p = Payload::default();
    if rng.bool() {
        p.text = random_text(rng);
    }
    for _ in 0..rng.usize(0..=2) {
        p.media.push(pick(rng, MEDIA).to_owned());
    }
    p.audio_as_voice = rng.u8(..8) == 0;
    p.is_error = rng.u8(..8) == 0;
    p
}

/// What a configuration is expected to do at construction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Accepted,
    Refused,
    Either,
}

fn config(rng: &mut fastrand::Rng) -> (Config, Expect) {
    let name = ChannelProfile::NAMES[rng.usize(..ChannelProfile::NAMES.len())];
    let mut c = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
    let metrics = [
        LengthMetric::Utf16,
        LengthMetric::Chars,
        LengthMetric::Bytes,
        LengthMetric::Graphemes,
    ];
    if rng.bool() {
        c.metric = metrics[rng.usize(..4)];
    }
    if rng.bool() {
        // At least 200: a rendered format (Slack's escapes, in bytes) refuses less.
        c.text_limit = rng.usize(200..=5000);
    }
    c.chunk_min = [rng.usize(0..=100), rng.usize(0..=1500)][rng.usize(..2)];
    // At least 64: room to close and reopen a fence around any character in any metric.
    let spread = [rng.usize(0..=200), rng.usize(0..=2000)][rng.usize(..2)];
    c.chunk_max = (c.chunk_min + spread).max(64);
    c.max_lines = [None, None, Some(rng.usize(5..=40))][rng.usize(..3)];
    c.break_preference = [
        BreakPreference::Paragraph,
        BreakPreference::Newline,
        BreakPreference::Sentence,
    ][rng.usize(..3)];
    c.chunk_mode = [ChunkMode::Length, ChunkMode::Newline][rng.usize(..2)];
    c.break_mode = [BreakMode::TextEnd, BreakMode::MessageEnd][rng.usize(..2)];
    c.block_streaming = rng.u8(..5) != 0;
    c.coalesce_min = rng.bool().then(|| rng.usize(0..=300));
    c.coalesce_max = rng.bool().then(|| rng.usize(0..=6000));
    c.coalesce_idle_ms = [0, rng.u64(1..=2000), rng.u64(..)][rng.usize(..3)];
    c.human_delay = match rng.u8(..4) {
        0 => HumanDelay::Natural,
        1 => HumanDelay::Custom {
            min_ms: rng.u64(0..=60_000),
            max_ms: rng.u64(0..=60_000),
        },
        _ => HumanDelay::Off,
    };
    c.delivery_timeout_ms = [
        0,
        rng.u64(1..=20_000),
        15_000,
        u64::MAX,
        u64::MAX - rng.u64(0..1000),
    ][rng.usize(..5)];
    c.response_prefix = [
        None,
        None,
        Some("[{model}]".to_owned()),
        Some("Bot:".to_owned()),
    ][rng.usize(..4)]
    .clone();
    c.prefix_every_message = rng.bool();
    c.reasoning = [ReasoningMode::Off, ReasoningMode::On, ReasoningMode::Stream][rng.usize(..3)];
    c.require_final_tag = rng.u8(..10) == 0;
    if rng.u8(..8) == 0 {
        c.silent_token = None;
    }
    if rng.u8(..8) == 0 {
        c.heartbeat_token = None;
    }
    c.preview = [
        PreviewMode::Off,
        PreviewMode::Off,
        PreviewMode::Partial,
        PreviewMode::Block,
    ][rng.usize(..4)];
    match rng.u8(..10) {
        // One rule the configuration breaks.
        0 | 1 => {
            match rng.u8(..7) {
                // Below the smallest limit of every metric.
                0 => c.text_limit = rng.usize(0..15),
                1 => c.preview_limit = rng.usize(0..15),
                2 => c.max_lines = Some(rng.usize(0..3)),
                3 => {
                    c.human_delay = HumanDelay::Custom {
                        min_ms: rng.u64(60_001..),
                        max_ms: rng.u64(..),
                    }
                }
                4 => c.silent_token = Some(" ".repeat(rng.usize(0..3))),
                5 => c.heartbeat_token = Some("\t".repeat(rng.usize(0..3))),
                _ => c.response_prefix = Some("p".repeat(c.text_limit)),
            }
            (c, Expect::Refused)
        }
        // Anything at all.
        2 => {
            c.text_limit = [rng.usize(..), rng.usize(0..100_000)][rng.usize(..2)];
            c.preview_limit = rng.usize(0..10_000);
            c.chunk_min = rng.usize(..);
            c.chunk_max = rng.usize(..);
            c.max_lines = rng.bool().then(|| rng.usize(..));
            c.coalesce_min = Some(rng.usize(..));
            c.coalesce_max = Some(rng.usize(..));
            c.preview_throttle_ms = rng.u64(..);
            c.preview_min_initial_units = rng.usize(..);
            c.preview_block_min = rng.usize(..);
            c.preview_block_max = rng.usize(..);
            c.silent_token = rng.bool().then(|| random_text(rng));
            c.response_prefix = rng.bool().then(|| random_text(rng));
            (c, Expect::Either)
        }
        _ => (c, Expect::Accepted),
    }
}

/// One sequence: the engine, the host's view of it, and the checks.
struct Run {
    engine: Engine,
    seed: u64,
    /// The latest time pushed (the engine treats earlier times as this one).
    now: u64,
    timeout_ms: u64,
    /// The send in flight and the time its delivery timeout passes.
    in_flight: Option<(SendId, Option<u64>)>,
    /// Every send id seen, for stale and late acks.
    sent: Vec<SendId>,
    deadline: Option<Time>,
    cancelled: bool,
    idle: bool,
    /// Accumulated answer text, so snapshots sometimes extend it.
    full: String,
    log: String,
    coverage: Coverage,
}

impl Run {
    fn push(&mut self, step: &OwnedInput, time: u64, seq: Option<u64>) {
        let now = Time::from_millis(time);
        let _ = writeln!(self.log, "{time} <- {:?} seq {seq:?}", step.as_input());
        let ignored_before = self.engine.stats().duplicates_ignored;
        let result = match seq {
            Some(seq) => self.engine.push_seq(seq, step.as_input(), now),
            None => self.engine.push(step.as_input(), now),
        };
        self.now = self.now.max(time);
        let acked = match step {
            OwnedInput::Delivered { send_id, .. } | OwnedInput::DeliveryFailed { send_id, .. } => {
                Some(*send_id)
            }
            _ => None,
        };
        let actions: Vec<Action> = match result {
            Ok(actions) => actions.collect(),
            Err(e) => {
                let _ = writeln!(self.log, "{time} refused: {e}");
                self.coverage.refusals += 1;
                return;
            }
        };
        // An input with a stale sequence number is ignored, acks included.
        let ignored = self.engine.stats().duplicates_ignored > ignored_before;
        if !ignored && acked.is_some() && self.in_flight.map(|f| f.0) == acked {
            self.in_flight = None;
        }
        for action in actions {
            self.check(&action);
            let _ = writeln!(self.log, "{time} {action:?}");
        }
    }

    fn check(&mut self, action: &Action) {
        let seed = self.seed;
        assert!(!self.idle, "seed {seed}: {action:?} after Idle");
        match action {
            Action::Send(send) => {
                assert!(!self.cancelled, "seed {seed}: a send after Cancel");
                if let Some((id, expires)) = self.in_flight {
                    let abandoned = expires.is_some_and(|t| self.now >= t);
                    assert!(
                        abandoned,
                        "seed {seed}: {} sent while {id} is in flight",
                        send.send_id
                    );
                }
                let cfg = self.engine.config();
                let text = &send.payload.text;
                let limit = if send.kind == replystream::SendKind::Preview {
                    cfg.preview_limit
                } else {
                    cfg.text_limit
                };
                let len = cfg.metric.len(text);
                assert!(len <= limit, "seed {seed}: {len} > {limit} units: {text:?}");
                if let Some(max) = cfg.max_lines
                    && send.kind != replystream::SendKind::Preview
                {
                    let lines = text.split('\n').count();
                    assert!(lines <= max, "seed {seed}: {lines} > {max} lines: {text:?}");
                }
                if matches!(send.op, SendOp::Create { .. }) {
                    assert!(
                        !text.trim().is_empty() || !send.payload.media.is_empty(),
                        "seed {seed}: an empty message"
                    );
                }
                let expires =
                    (self.timeout_ms > 0).then(|| self.now.saturating_add(self.timeout_ms));
                self.in_flight = Some((send.send_id, expires));
                self.sent.push(send.send_id);
                self.coverage.sends += 1;
                if self.now >= u64::MAX - 1000 {
                    self.coverage.near_max_sends += 1;
                }
            }
            Action::ArmTimer { deadline } => self.deadline = *deadline,
            Action::Abort { reason } => {
                if *reason == replystream::AbortReason::Cancelled {
                    self.cancelled = true;
                    self.coverage.cancelled += 1;
                } else {
                    self.coverage.timeouts += 1;
                }
            }
            Action::Idle => {
                self.idle = true;
                self.coverage.idle += 1;
            }
            _ => {}
        }
    }

    fn random_step(&mut self, rng: &mut fastrand::Rng) -> OwnedInput {
        let ack_id = |run: &Run, rng: &mut fastrand::Rng| match run.in_flight {
            Some((id, _)) if rng.u8(..6) != 0 => id,
            _ if !run.sent.is_empty() && rng.bool() => run.sent[rng.usize(..run.sent.len())],
            _ => SendId(rng.u64(..1000)),
        };
        match rng.u16(..1000) {
            // The turn's end is rare, so most sequences get far before it.
            0..=4 => OwnedInput::Finish,
            5 => OwnedInput::Fail {
                error: random_text(rng),
            },
            6..=10 => OwnedInput::Cancel,
            11..=349 => {
                let t = random_text(rng);
                self.full.push_str(&t);
                OwnedInput::TextDelta(t)
            }
            350..=389 => {
                let t = random_text(rng);
                if rng.bool() {
                    self.full.push_str(&t);
                    OwnedInput::TextSnapshot(self.full.clone())
                } else {
                    OwnedInput::TextSnapshot(t)
                }
            }
            390..=439 => OwnedInput::TextEnd(rng.bool().then(|| self.full.clone())),
            440..=479 => OwnedInput::ThinkingDelta(random_text(rng)),
            480..=499 => OwnedInput::ThinkingEnd,
            500..=539 => {
                self.full.clear();
                OwnedInput::MessageStart
            }
            540..=579 => OwnedInput::MessageEnd(rng.bool().then(|| self.full.clone())),
            580..=609 => OwnedInput::ToolStart {
                name: random_text(rng),
            },
            610..=639 => OwnedInput::ToolResult(payload(rng)),
            640..=669 => OwnedInput::Media(payload(rng)),
            670..=689 => OwnedInput::FinalReply(payload(rng)),
            690..=769 => OwnedInput::Timer,
            770..=899 => OwnedInput::Delivered {
                send_id: ack_id(self, rng),
                message_ref: Some("m1".to_owned()),
            },
            _ => {
                let after = match rng.u8(..4) {
                    0 => None,
                    1 => Some(u64::MAX - rng.u64(0..10)),
                    _ => Some(rng.u64(0..3000)),
                };
                OwnedInput::DeliveryFailed {
                    send_id: ack_id(self, rng),
                    retry_after_ms: after,
                    permanent: rng.u8(..4) == 0,
                }
            }
        }
    }

    fn random_time(&self, rng: &mut fastrand::Rng) -> u64 {
        match rng.u16(..1000) {
            0..=24 => self.now.saturating_sub(rng.u64(0..1000)), // backwards
            25..=29 => u64::MAX - rng.u64(0..100_000),
            30..=31 => u64::MAX,
            32..=131 => self.deadline.map_or(self.now, Time::as_millis),
            _ => self.now.saturating_add(rng.u64(0..300)),
        }
    }

    /// Acts as a host that answers everything: acks the send in flight, fires each timer.
    fn drain(&mut self) {
        self.push(&OwnedInput::Finish, self.now, None);
        for _ in 0..10_000 {
            if self.engine.is_done() {
                return;
            }
            if let Some((id, _)) = self.in_flight {
                let ack = OwnedInput::Delivered {
                    send_id: id,
                    message_ref: None,
                };
                self.push(&ack, self.now, None);
            } else if let Some(t) = self.deadline {
                let t = t.as_millis().max(self.now);
                self.push(&OwnedInput::Timer, t, None);
            } else {
                break;
            }
        }
        assert!(
            self.engine.is_done(),
            "seed {}: the turn never ended ({:?} in flight, deadline {:?})\n{}",
            self.seed,
            self.in_flight,
            self.deadline,
            self.log
        );
    }
}

/// Runs one seed and returns its log and what it covered (`None` when the config was
/// refused).
fn run(seed: u64) -> Option<(String, Coverage)> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (config, expect) = config(&mut rng);
    let timeout_ms = config.delivery_timeout_ms;
    let engine = match (Engine::new(config.clone(), seed), expect) {
        (Ok(engine), Expect::Accepted | Expect::Either) => engine,
        (Err(Error::InvalidConfig(_)), Expect::Refused | Expect::Either) => return None,
        (Ok(_), Expect::Refused) => {
            panic!("seed {seed}: an invalid config was accepted: {config:?}")
        }
        (Err(e), _) => panic!("seed {seed}: {e} for {config:?}"),
    };
    let mut run = Run {
        engine,
        seed,
        now: 0,
        timeout_ms,
        in_flight: None,
        sent: Vec::new(),
        deadline: None,
        cancelled: false,
        idle: false,
        full: String::new(),
        log: String::new(),
        coverage: Coverage::default(),
    };
    let mut seq = 0u64;
    for _ in 0..rng.usize(1..=MAX_STEPS) {
        let step = run.random_step(&mut rng);
        let time = run.random_time(&mut rng);
        let seq = match rng.u8(..10) {
            0 => {
                seq += rng.u64(0..3);
                Some(seq)
            }
            1 => Some(seq.saturating_sub(rng.u64(0..3))),
            _ => None,
        };
        run.push(&step, time, seq);
    }
    run.drain();
    Some((run.log, run.coverage))
}

#[test]
fn random_sequences_keep_every_invariant() {
    let seeds = match std::env::var("FUZZ_SMOKE_SEED") {
        Ok(s) => {
            let seed: u64 = s.parse().expect("FUZZ_SMOKE_SEED is a number");
            seed..seed + 1
        }
        Err(_) => 0..SEQUENCES,
    };
    let (mut accepted, mut refused) = (0, 0);
    let mut seen = Coverage::default();
    for seed in seeds {
        let outcome = catch_unwind(AssertUnwindSafe(|| run(seed)));
        let log = match outcome {
            Ok(log) => log,
            Err(_) => panic!("seed {seed} failed (rerun with FUZZ_SMOKE_SEED={seed})"),
        };
        match &log {
            Some((_, coverage)) => {
                accepted += 1;
                seen.add(coverage);
            }
            None => refused += 1,
        }
        if seed % 8 == 0 {
            let again = run(seed).map(|(log, _)| log);
            assert_eq!(
                again,
                log.map(|(log, _)| log),
                "seed {seed}: not deterministic"
            );
        }
    }
    eprintln!("{accepted} sequences run, {refused} configurations refused; {seen:?}");
    if accepted + refused == SEQUENCES {
        // The sequences reach what they are meant to test.
        assert!(refused >= SEQUENCES / 10, "{refused} refused");
        assert!(seen.sends >= 5 * accepted, "{seen:?}");
        for n in [
            seen.idle,
            seen.cancelled,
            seen.timeouts,
            seen.near_max_sends,
            seen.refusals,
        ] {
            assert!(n >= accepted / 50, "{seen:?}");
        }
    }
}

/// What the accepted sequences did, to show they reach what they test.
#[derive(Debug, Default)]
struct Coverage {
    sends: u64,
    idle: u64,
    cancelled: u64,
    timeouts: u64,
    /// Sends made with the clock within a second of `u64::MAX`.
    near_max_sends: u64,
    refusals: u64,
}

impl Coverage {
    fn add(&mut self, other: &Coverage) {
        self.sends += other.sends;
        self.idle += other.idle;
        self.cancelled += other.cancelled;
        self.timeouts += other.timeouts;
        self.near_max_sends += other.near_max_sends;
        self.refusals += other.refusals;
    }
}

/// Found by this test (seed 17): `Cancel` after `Idle` emitted `Abort`, after the turn's last
/// action.
#[test]
fn cancel_after_idle_does_nothing() {
    let mut sim = replystream::sim::Sim::new(Engine::new(Config::default(), 1).unwrap());
    sim.push(Input::TextDelta("Hi."))
        .push(Input::Finish)
        .run_until_idle();
    assert_eq!(sim.log.last().map(|(_, a)| a), Some(&Action::Idle));
    sim.push(Input::Cancel);
    assert_eq!(
        sim.log.last().map(|(_, a)| a),
        Some(&Action::Idle),
        "{:?}",
        sim.log
    );
    assert!(sim.errors.is_empty(), "{:?}", sim.errors);
    assert!(sim.engine.is_done());
}

//! Shutdown with turns waiting behind a busy chat (SPEC §11): every accepted input is
//! delivered, or the report names its stream as unfinished with the text the sink never
//! got. Real threads, real time.
//!
//! The property test runs 500 random cases (about a second in a debug build);
//! `DRIVER_SHUTDOWN_CASES=N` runs more and `DRIVER_SHUTDOWN_SEED=S` starts at another seed
//! (a failure names its seed; the thread timing is not replayed, so a seed may need a few
//! runs to fail again).
#![allow(clippy::disallowed_methods)]

#[path = "common/driver_sink.rs"]
#[allow(dead_code)]
mod driver_sink;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use driver_sink::{delivered, sink};
use replystream::driver::{
    AckHandle, BusyChat, Delivery, Driver, DriverError, DriverOptions, ShutdownReport, Sink,
    StreamEvent, StreamHandle, StreamId, WhenFull,
};
use replystream::{Config, OwnedInput, SendId, SendKind, SendRequest, TurnOutcome};

const T1: &str = "The first turn has its answer here.";
const T2: &str = "The second turn waited behind the first one.";

#[test]
fn shutdown_delivers_a_turn_waiting_behind_an_unfinished_one() {
    let sent: Arc<Mutex<Vec<(StreamId, String)>>> = Arc::default();
    let events: Arc<Mutex<Vec<(StreamId, StreamEvent)>>> = Arc::default();
    let (s, e) = (sent.clone(), events.clone());
    let driver = Driver::spawn(
        sink(
            move |id, send, _| {
                s.lock().unwrap().push((id, send.payload.text.clone()));
                delivered()
            },
            move |id, event| e.lock().unwrap().push((id, event.clone())),
        ),
        DriverOptions::default(),
    );
    // A turn its producer never finishes.
    let a = driver.open("chat", Config::default(), 1).unwrap();
    a.push(OwnedInput::MessageStart).unwrap();
    a.text(T1).unwrap();
    a.push(OwnedInput::TextEnd(None)).unwrap();
    a.push(OwnedInput::MessageEnd(Some(T1.into()))).unwrap();
    // Waits behind `a` (one turn per chat).
    let b = driver.open("chat", Config::default(), 2).unwrap();
    b.push(OwnedInput::MessageStart).unwrap();
    b.text(T2).unwrap();
    b.push(OwnedInput::TextEnd(None)).unwrap();
    b.push(OwnedInput::MessageEnd(Some(T2.into()))).unwrap();
    b.finish().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let report = driver.shutdown(Duration::from_secs(5));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(report.completed, 2);
    assert_eq!(
        *sent.lock().unwrap(),
        [(a.id(), T1.to_owned()), (b.id(), T2.to_owned())]
    );
    let events = events.lock().unwrap();
    let idle_b = events
        .iter()
        .find_map(|(id, e)| match e {
            StreamEvent::Idle(o) if *id == b.id() => Some(o.clone()),
            _ => None,
        })
        .expect("b went idle");
    assert!(idle_b.all_delivered(), "{idle_b:?}");
    assert!(
        !events
            .iter()
            .any(|(_, e)| matches!(e, StreamEvent::InputRefused(_))),
        "{events:?}"
    );
}

/// A turn stuck behind one whose final is never acknowledged: the shutdown cannot finish
/// either, so the report is not clean, lists both, and gives the waiting turn's text as
/// never sent.
#[test]
fn a_turn_stuck_behind_an_unacknowledged_one_is_reported_with_its_text() {
    let driver = Driver::spawn(
        sink(|_, _, _| Delivery::Pending, |_, _| {}),
        DriverOptions::default(),
    );
    let a = driver.open("chat", Config::default(), 1).unwrap();
    a.text(T1).unwrap();
    let b = driver.open("chat", Config::default(), 2).unwrap();
    b.text("Held ").unwrap();
    b.text("text, 界 👩‍💻.").unwrap();
    b.finish().unwrap();
    let report = driver.shutdown(Duration::from_millis(100));
    assert!(!report.is_clean());
    assert_eq!(
        report.unfinished,
        [(a.id(), "chat".to_owned()), (b.id(), "chat".to_owned())]
    );
    // `a`'s final went to the sink (which never answered): not repeated. `b` never started.
    assert_eq!(report.unsent, [(b.id(), "Held text, 界 👩‍💻.".to_owned())]);
}

/// Input pushed after the shutdown ended the turn is refused to its caller, not dropped.
#[test]
fn input_after_the_shutdown_ended_the_turn_is_refused() {
    let driver = Driver::spawn(
        sink(|_, _, _| delivered(), |_, _| {}),
        DriverOptions::default(),
    );
    let a = driver.open("chat", Config::default(), 1).unwrap();
    a.text(T1).unwrap();
    let report = driver.shutdown(Duration::from_secs(5));
    assert!(report.is_clean(), "{report:?}");
    assert_eq!(a.text("late"), Err(DriverError::Closed));
    assert_eq!(a.finish(), Err(DriverError::Closed));
}

// ---------------------------------------------------------------------------------------
// The property: random interleavings of opens, deltas, finishes and a shutdown from another
// thread, with acks from another thread, both busy-chat policies and tiny bounded queues.
// Every input a call accepted is delivered, or its stream is reported.

/// What the recording sink and the acker saw.
#[derive(Default)]
struct Seen {
    /// Every send the sink was given, in order (a retried send appears again).
    sends: Vec<(StreamId, SendId, SendKind, String)>,
    /// Sends acknowledged as delivered (by the sink or the acker).
    delivered: HashSet<(StreamId, SendId)>,
    /// `Idle` outcomes.
    idle: HashMap<StreamId, TurnOutcome>,
    /// Inputs the engines refused.
    refused: Vec<(StreamId, String)>,
    /// Sends answered with a 429.
    rate_limits: u64,
}

/// How the acker answers one pending send.
enum Answer {
    Deliver,
    /// A 429 with this `retry_after` (once per send; the retry is delivered).
    RateLimit(u64),
    /// Never answered.
    Lose,
}

struct Recording {
    seen: Arc<Mutex<Seen>>,
    rng: fastrand::Rng,
    to_acker: crossbeam_channel::Sender<(StreamId, SendId, Answer)>,
    lossy: bool,
    rate_limited: HashSet<(StreamId, SendId)>,
}

impl Sink for Recording {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, _: &AckHandle) -> Delivery {
        let mut seen = self.seen.lock().unwrap();
        seen.sends
            .push((stream, send.send_id, send.kind, send.payload.text.clone()));
        let roll = self.rng.u32(0..100);
        if roll < 35 {
            seen.delivered.insert((stream, send.send_id));
            return delivered();
        }
        drop(seen);
        let answer = if self.lossy && roll >= 80 {
            Answer::Lose
        } else if roll >= 70 && self.rate_limited.insert((stream, send.send_id)) {
            self.seen.lock().unwrap().rate_limits += 1;
            Answer::RateLimit(self.rng.u64(1..4))
        } else {
            Answer::Deliver
        };
        let _ = self.to_acker.send((stream, send.send_id, answer));
        Delivery::Pending
    }

    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        let mut seen = self.seen.lock().unwrap();
        match event {
            StreamEvent::Idle(outcome) => {
                seen.idle.insert(stream, outcome.clone());
            }
            StreamEvent::InputRefused(e) => seen.refused.push((stream, e.to_string())),
            _ => {}
        }
    }
}

/// Answers pending sends from its own thread, each after a short random pause.
fn acker(
    seen: Arc<Mutex<Seen>>,
    acks: AckHandle,
    from_sink: crossbeam_channel::Receiver<(StreamId, SendId, Answer)>,
    seed: u64,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut rng = fastrand::Rng::with_seed(seed);
        for (stream, send_id, answer) in from_sink {
            if rng.bool() {
                std::thread::sleep(Duration::from_micros(rng.u64(0..1500)));
            }
            match answer {
                Answer::Deliver => {
                    seen.lock().unwrap().delivered.insert((stream, send_id));
                    let _ = acks.delivered(stream, send_id, None);
                }
                Answer::RateLimit(ms) => {
                    let _ = acks.failed(stream, send_id, Some(ms), false);
                }
                Answer::Lose => {}
            }
        }
    })
}

/// A word of the generated replies: plain, CJK, a ZWJ emoji, a combining mark.
const WORDS: [&str; 6] = ["alpha", "beta", "界面", "👩‍💻", "cafe\u{301}", "x"];

/// One stream as the producer sees it.
struct Planned {
    chat: usize,
    deltas: Vec<String>,
    finishes: bool,
}

/// What the producer got accepted for one stream.
#[derive(Default)]
struct Accepted {
    id: Option<StreamId>,
    /// When it was opened (among the opens of the case).
    opened: usize,
    chat: usize,
    /// The text of every delta a call accepted, in push order.
    text: String,
}

fn plan(rng: &mut fastrand::Rng) -> (Vec<Planned>, Vec<usize>) {
    let chats = rng.usize(1..=3);
    let streams: Vec<Planned> = (0..rng.usize(1..7))
        .map(|_| {
            let chat = rng.usize(0..chats);
            let deltas = (0..rng.usize(1..6))
                .map(|i| {
                    let word = WORDS[rng.usize(0..WORDS.len())];
                    if i == 0 {
                        word.to_owned()
                    } else {
                        format!(" {word}")
                    }
                })
                .collect();
            Planned {
                chat,
                deltas,
                finishes: rng.u32(0..100) < 80,
            }
        })
        .collect();
    // The interleaving: each stream's steps (open, deltas, finish) in order, streams mixed.
    let mut steps: Vec<usize> = Vec::new();
    let mut left: Vec<usize> = streams
        .iter()
        .map(|s| 1 + s.deltas.len() + usize::from(s.finishes))
        .collect();
    while left.iter().any(|&n| n > 0) {
        let live: Vec<usize> = (0..streams.len()).filter(|&i| left[i] > 0).collect();
        let i = live[rng.usize(0..live.len())];
        left[i] -= 1;
        steps.push(i);
    }
    (streams, steps)
}

/// A push the pusher thread makes: a delta, or the finish.
struct Push {
    stream: usize,
    handle: StreamHandle,
    delta: Option<String>,
}

/// What the pusher thread did: per stream, the text of every delta a call accepted; and
/// every call with its result (for the failure message).
type Pushed = (Vec<String>, Vec<String>);

/// Pushes what it is sent, in order, from its own thread.
fn pusher(
    count: usize,
    pushes: crossbeam_channel::Receiver<Push>,
) -> std::thread::JoinHandle<Pushed> {
    std::thread::spawn(move || {
        let mut accepted = vec![String::new(); count];
        let mut log = Vec::new();
        for push in pushes {
            let result = match &push.delta {
                Some(delta) => push.handle.text(delta),
                None => push.handle.finish(),
            };
            log.push(format!("{} {:?}: {result:?}", push.handle.id(), push.delta));
            match result {
                Ok(()) => accepted[push.stream].push_str(push.delta.as_deref().unwrap_or("")),
                Err(DriverError::Full | DriverError::Closed) => {}
                Err(e) => panic!("push: {e}"),
            }
        }
        (accepted, log)
    })
}

/// Runs the steps on this thread up to `shutdown_at` (opens here, pushes handed to the
/// pusher thread), then the shutdown (`catch_up`: once the pusher has pushed what it was
/// handed), while the pusher may still push; returns the report, what was accepted and the
/// pusher's log.
fn produce(
    driver: Driver,
    streams: &[Planned],
    steps: &[usize],
    shutdown_at: usize,
    wait: Duration,
    catch_up: bool,
    seed: u64,
) -> (ShutdownReport, Vec<Accepted>, Vec<String>) {
    let mut accepted: Vec<Accepted> = streams
        .iter()
        .map(|s| Accepted {
            chat: s.chat,
            ..Accepted::default()
        })
        .collect();
    let (to_pusher, pushes) = crossbeam_channel::unbounded();
    let pushing = pusher(streams.len(), pushes);
    let mut handles: Vec<Option<StreamHandle>> = streams.iter().map(|_| None).collect();
    let mut next: Vec<usize> = vec![0; streams.len()];
    for (at, &i) in steps.iter().enumerate() {
        let k = next[i];
        next[i] += 1;
        if k == 0 {
            if at >= shutdown_at {
                continue;
            }
            let chat = format!("chat-{}", streams[i].chat);
            match driver.open(&chat, Config::default(), seed) {
                Ok(handle) => {
                    accepted[i].id = Some(handle.id());
                    accepted[i].opened = at;
                    handles[i] = Some(handle);
                }
                Err(DriverError::ChatBusy | DriverError::Full) => {}
                Err(e) => panic!("open: {e}"),
            }
            continue;
        }
        if let Some(handle) = &handles[i] {
            let delta = streams[i].deltas.get(k - 1).cloned();
            let push = Push {
                stream: i,
                handle: handle.clone(),
                delta,
            };
            to_pusher.send(push).unwrap();
        }
    }
    if catch_up {
        // Let the pusher get ahead of the shutdown (at most 50 ms).
        for _ in 0..50 {
            if to_pusher.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    drop(to_pusher);
    let report = driver.shutdown(wait);
    let (texts, log) = pushing.join().unwrap();
    for (a, text) in accepted.iter_mut().zip(texts) {
        a.text = text;
    }
    (report, accepted, log)
}

/// The text of `id`'s sends, each send once (a retry is the same send), in send order;
/// `delivered_only`: only those acknowledged as delivered.
fn sent_text(seen: &Seen, id: StreamId, delivered_only: bool) -> String {
    let mut ids: Vec<(SendId, &str)> = Vec::new();
    for (stream, send_id, kind, text) in &seen.sends {
        if *stream != id || *kind == SendKind::Preview || ids.iter().any(|(s, _)| s == send_id) {
            continue;
        }
        if delivered_only && !seen.delivered.contains(&(id, *send_id)) {
            continue;
        }
        ids.push((*send_id, text));
    }
    ids.sort_by_key(|(s, _)| s.0);
    ids.into_iter().map(|(_, t)| t).collect()
}

/// What the cases went through, summed: the property must have been put to the test.
#[derive(Default, Debug)]
struct Coverage {
    /// Turns that waited behind another of their chat and were delivered.
    waited_and_delivered: u64,
    /// Unfinished streams whose text the report gave as unsent.
    unsent_reported: u64,
    /// Pushes refused for a full queue, and because the shutdown had ended the turn.
    refused_full: u64,
    refused_closed: u64,
    /// Sends the sink got a 429 for.
    rate_limited: u64,
}

fn run_case(seed: u64, coverage: &mut Coverage) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let lossy = rng.u32(0..100) < 15;
    let when_full = if rng.bool() {
        WhenFull::Block
    } else {
        WhenFull::Refuse
    };
    let options = DriverOptions::default()
        .with_busy_chat(if rng.bool() {
            BusyChat::Wait
        } else {
            BusyChat::Reject
        })
        .with_command_capacity(rng.usize(1..5))
        .with_when_full(when_full)
        // A full waiting-turn queue blocks `open` until a turn of the chat ends, which may
        // need a finish this thread has not handed over yet: tiny only when refusing.
        .with_max_waiting_turns(match when_full {
            WhenFull::Refuse => rng.usize(1..3),
            _ => 64,
        });
    let seen: Arc<Mutex<Seen>> = Arc::default();
    let (to_acker, from_sink) = crossbeam_channel::unbounded();
    let driver = Driver::spawn(
        Recording {
            seen: seen.clone(),
            rng: fastrand::Rng::with_seed(seed ^ 0x5eed),
            to_acker,
            lossy,
            rate_limited: HashSet::new(),
        },
        options,
    );
    let acker = acker(seen.clone(), driver.acks(), from_sink, seed ^ 0xacc);
    let (streams, steps) = plan(&mut rng);
    let shutdown_at = rng.usize(0..=steps.len());
    let wait = if lossy {
        Duration::from_millis(60)
    } else {
        Duration::from_secs(20)
    };
    let (report, accepted, log) = produce(
        driver,
        &streams,
        &steps,
        shutdown_at,
        wait,
        rng.bool(),
        seed,
    );
    acker.join().unwrap();
    let seen = seen.lock().unwrap();
    let context = || format!("seed {seed}: {options:?}, lossy {lossy}, {report:?}, pushes {log:?}");
    assert_eq!(report.failure, None, "{}", context());
    if !lossy {
        assert!(report.is_clean(), "{}", context());
    }
    for a in &accepted {
        let Some(id) = a.id else { continue };
        let unfinished = report.unfinished.iter().any(|(s, _)| *s == id);
        if unfinished {
            let unsent = report
                .unsent
                .iter()
                .find(|(s, _)| *s == id)
                .map_or("", |(_, t)| t.as_str());
            // Whatever the sink got (acknowledged or not) and what the report says it never
            // got is the whole accepted text.
            assert_eq!(
                format!("{}{unsent}", sent_text(&seen, id, false)).trim(),
                a.text.trim(),
                "{id} unfinished; {}",
                context()
            );
            continue;
        }
        let outcome = seen
            .idle
            .get(&id)
            .unwrap_or_else(|| panic!("{id} neither idle nor unfinished; {}", context()));
        assert!(outcome.all_delivered(), "{id}: {outcome:?}; {}", context());
        // A reply's edges are trimmed (the first accepted delta may start with a space when
        // the one before it was refused for a full queue); nothing inside is.
        assert_eq!(
            sent_text(&seen, id, true),
            a.text.trim(),
            "{id} delivered; sends {:?}, delivered {:?}; {}",
            seen.sends,
            seen.delivered,
            context()
        );
    }
    assert!(seen.refused.is_empty(), "{:?}; {}", seen.refused, context());
    coverage.unsent_reported += report.unsent.len() as u64;
    coverage.refused_full += log.iter().filter(|l| l.ends_with("Err(Full)")).count() as u64;
    coverage.refused_closed += log.iter().filter(|l| l.ends_with("Err(Closed)")).count() as u64;
    coverage.rate_limited += seen.rate_limits;
    for a in &accepted {
        let waited = accepted
            .iter()
            .any(|b| b.chat == a.chat && b.id.is_some() && b.opened < a.opened);
        if waited && a.id.is_some_and(|id| seen.idle.contains_key(&id)) && !a.text.trim().is_empty()
        {
            coverage.waited_and_delivered += 1;
        }
    }
    // One turn per chat at a time: a chat's sends come turn after turn, in open order.
    for chat in 0..3 {
        let mut opened: Vec<&Accepted> = accepted
            .iter()
            .filter(|a| a.chat == chat && a.id.is_some())
            .collect();
        opened.sort_by_key(|a| a.opened);
        let order: Vec<StreamId> = opened.iter().filter_map(|a| a.id).collect();
        let mut last = 0;
        for (stream, ..) in &seen.sends {
            if let Some(at) = order.iter().position(|s| s == stream) {
                assert!(
                    at >= last,
                    "chat {chat}: {stream} sent out of turn ({order:?}, {:?}); {}",
                    seen.sends,
                    context()
                );
                last = at;
            }
        }
    }
}

#[test]
fn every_accepted_input_is_delivered_or_reported() {
    let cases: u64 = std::env::var("DRIVER_SHUTDOWN_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(500);
    let first: u64 = std::env::var("DRIVER_SHUTDOWN_SEED")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0x20);
    let mut coverage = Coverage::default();
    for seed in first..first + cases {
        run_case(seed, &mut coverage);
    }
    if cases >= 100 {
        let c = &coverage;
        assert!(
            c.waited_and_delivered > 0
                && c.unsent_reported > 0
                && c.refused_full > 0
                && c.refused_closed > 0
                && c.rate_limited > 0,
            "{coverage:?}"
        );
    }
    eprintln!("{coverage:?}");
}

/// A final split in pieces whose first piece is never acknowledged: the pieces queued behind
/// it were never given to the sink, and the report says what they were.
#[test]
fn sends_queued_behind_an_unacknowledged_one_are_reported_unsent() {
    let sent: Arc<Mutex<Vec<String>>> = Arc::default();
    let s = sent.clone();
    let driver = Driver::spawn(
        sink(
            move |_, send, _| {
                s.lock().unwrap().push(send.payload.text.clone());
                Delivery::Pending
            },
            |_, _| {},
        ),
        DriverOptions::default(),
    );
    let config = Config {
        block_streaming: false,
        text_limit: 40,
        chunk_min: 10,
        chunk_max: 40,
        ..Config::default()
    };
    let a = driver.open("chat", config, 1).unwrap();
    a.text("First paragraph, short.\n\nSecond paragraph, short.\n\nThird one, 界面.")
        .unwrap();
    a.finish().unwrap();
    let b = driver.open("chat", Config::default(), 2).unwrap();
    b.text("Waiting.").unwrap();
    let report = driver.shutdown(Duration::from_millis(100));
    assert_eq!(*sent.lock().unwrap(), ["First paragraph, short."]);
    assert_eq!(
        report.unsent,
        [
            (
                a.id(),
                "Second paragraph, short.\n\nThird one, 界面.".to_owned()
            ),
            (b.id(), "Waiting.".to_owned())
        ]
    );
}

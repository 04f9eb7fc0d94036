//! What one reply stream costs in memory (SPEC §14: heap per stream after a short first delta
//! ≤ 4 KiB), measured with a counting global allocator that tracks the bytes each thread has
//! live. The engine is boxed, as the driver keeps it, so its inline size is counted too.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use replystream::{Action, ChannelProfile, Config, Engine, Input, SendId, Time};

struct LiveBytes;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread (tests run on parallel threads).
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // `try_with`: the allocator may be called while the thread-local is being torn down.
    let _ = LIVE.try_with(|live| live.set(live.get() + n));
}

// SAFETY: every call is forwarded unchanged to the system allocator; only a const-initialised
// thread-local counter (touching it never allocates) is updated besides.
unsafe impl GlobalAlloc for LiveBytes {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: LiveBytes = LiveBytes;

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// The heap `f` leaves allocated (what it returns is kept alive until measured).
fn retained<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = live();
    let value = f();
    let after = live();
    (value, usize::try_from(after - before).unwrap_or(0))
}

fn telegram() -> Config {
    Config::for_channel(&ChannelProfile::by_name("telegram").unwrap())
}

/// Pushes `input` and acks every send at once, as a host whose platform answers instantly.
fn push(engine: &mut Engine, input: Input<'_>, now: u64) {
    let now = Time::from_millis(now);
    let mut sends: Vec<SendId> = Vec::new();
    let mut collect = |actions: &mut dyn Iterator<Item = Action>| {
        for action in actions {
            if let Action::Send(send) = action {
                sends.push(send.send_id);
            }
        }
    };
    collect(&mut engine.push(input, now).expect("accepted"));
    while let Some(send_id) = sends.pop() {
        let ack = Input::Delivered {
            send_id,
            message_ref: None,
        };
        let mut more = Vec::new();
        for action in engine.push(ack, now).expect("a known send") {
            if let Action::Send(send) = action {
                more.push(send.send_id);
            }
        }
        sends.extend(more);
    }
}

/// SPEC §14. Cold state (a chunker for streamed reasoning, previews) is built on first use so
/// that a fresh stream stays within it.
const BUDGET: usize = 4096;

#[test]
fn a_stream_after_a_short_first_delta_fits_in_four_kib() {
    // What a thread allocates once, on its first engine (the standard library's per-thread
    // state), is no stream's: one engine built and used first keeps it out of the count.
    let mut warm = Box::new(Engine::new(telegram(), 7).unwrap());
    push(&mut warm, Input::TextDelta("Hello, wor"), 0);
    drop(warm);
    for name in ChannelProfile::NAMES {
        let config = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
        let (mut engine, fresh) = retained(|| Box::new(Engine::new(config, 7).unwrap()));
        let ((), grown) = retained(|| push(&mut engine, Input::TextDelta("Hello, wor"), 0));
        let total = fresh + grown;
        eprintln!(
            "{name}: engine {} B inline, fresh {fresh} B (inline included), after a short delta {total} B",
            std::mem::size_of::<Engine>()
        );
        assert!(
            total <= BUDGET,
            "{name}: a stream holds {total} B after one short delta (budget {BUDGET})"
        );
    }
}

#[test]
fn message_starts_reserve_nothing_for_the_turn() {
    let mut engine = Box::new(Engine::new(telegram(), 1).unwrap());
    push(
        &mut engine,
        Input::TextDelta("A first message of a few words."),
        0,
    );
    push(&mut engine, Input::MessageEnd(None), 0);
    const N: usize = 10_000;
    let ((), grown) = retained(|| {
        for _ in 0..N {
            push(&mut engine, Input::MessageStart, 1);
            push(&mut engine, Input::TextDelta("Hi"), 1);
            push(&mut engine, Input::MessageEnd(None), 1);
        }
    });
    let per_message = grown / N;
    eprintln!("{per_message} B kept per short message");
    // What the turn must remember of each message: its record and text ("Hi"), its ledger
    // entry and the dedupe key of its delivered send, with the slack of the lists they are
    // in. A 4 KiB reservation per message would be eight times this bound.
    assert!(per_message <= 512, "{per_message} B kept per message");
}

#[test]
fn empty_message_starts_keep_only_their_record() {
    let mut engine = Box::new(Engine::new(telegram(), 1).unwrap());
    const N: usize = 10_000;
    let ((), grown) = retained(|| {
        for _ in 0..N {
            push(&mut engine, Input::MessageStart, 1);
        }
    });
    let per_message = grown / N;
    eprintln!("{per_message} B kept per empty message");
    assert!(per_message <= 256, "{per_message} B kept per message start");
}

#[test]
fn a_long_message_keeps_about_its_own_length() {
    // Kept for the turn: the cleaned text (the final is reconciled against it; its growth
    // slack is given back when the message ends), the raw text (resent snapshots are
    // recognised against it; its buffer is reused by the next message) and the dedupe key of
    // each delivered send (host payloads equal to one are dropped). Linear, about 4 bytes
    // per byte of reply at most, whatever the length.
    let mut engine = Box::new(Engine::new(telegram(), 1).unwrap());
    let line = "A line of prose that goes on for a while, then ends.\n";
    let ((), grown) = retained(|| {
        for _ in 0..20_000 {
            push(&mut engine, Input::TextDelta(line), 0);
        }
        push(&mut engine, Input::MessageEnd(None), 0);
    });
    let text = line.len() * 20_000;
    eprintln!("a {text} B message keeps {grown} B");
    assert!(grown <= 4 * text, "{grown} B kept for a {text} B message");
}

//! A counting global allocator pins the hot path: once warm, pushing small deltas that emit
//! nothing allocates nothing; with a live preview on, a push that produces no update
//! allocates nothing either (an update's text is built only when one is due).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use replystream::{
    Action, ChannelProfile, Config, Engine, Input, PreviewMode, ReasoningMode, Time,
};

struct Counting;

// Counted per thread: the test harness and the other tests allocate on their own threads
// while one test measures.
thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Counts one allocation if this thread is measuring (never during its teardown).
fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// How many allocations `f` makes on this thread.
fn count<F: FnOnce()>(f: F) -> usize {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get)
}

const WORDS: &[&str] = &[
    "The ", "quick ", "brown ", "fox ", "jumps ", "over ", "a ", "lazy ", "dog. ",
];

#[test]
fn small_deltas_that_emit_nothing_do_not_allocate() {
    for name in ChannelProfile::NAMES {
        let mut config = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
        config.chunk_min = 3000;
        config.chunk_max = 3500;
        let mut engine = Engine::new(config, 1).unwrap();
        let mut now = 0;
        // Warm-up: a whole first message grows every buffer, then a second one begins.
        let _ = engine
            .push(Input::MessageStart, Time::from_millis(now))
            .unwrap()
            .count();
        for i in 0..900 {
            let _ = engine
                .push(
                    Input::TextDelta(WORDS[i % WORDS.len()]),
                    Time::from_millis(now),
                )
                .unwrap()
                .count();
        }
        let _ = engine
            .push(Input::MessageEnd(None), Time::from_millis(now))
            .unwrap()
            .count();
        let _ = engine
            .push(Input::MessageStart, Time::from_millis(now))
            .unwrap()
            .count();
        for i in 0..50 {
            let _ = engine
                .push(
                    Input::TextDelta(WORDS[i % WORDS.len()]),
                    Time::from_millis(now),
                )
                .unwrap()
                .count();
        }
        let allocations = count(|| {
            for i in 0..200 {
                now += 1;
                let mut actions = engine
                    .push(
                        Input::TextDelta(WORDS[i % WORDS.len()]),
                        Time::from_millis(now),
                    )
                    .unwrap();
                assert!(actions.next().is_none(), "the measured pushes emit nothing");
            }
        });
        assert_eq!(
            allocations, 0,
            "{name}: {allocations} allocations in 200 pushes"
        );
    }
}

// ---- live previews ---------------------------------------------------------------

/// 4-byte deltas for the preview cases.
const DELTAS: &[&str] = &[
    "The ", "quic", "k br", "own ", "fox ", "jump", "s ov", "er. ",
];

/// Pushes `input` at `now` and acks every send at once; returns whether anything was sent.
fn push_acked(engine: &mut Engine, input: Input<'_>, now: u64) -> bool {
    let t = Time::from_millis(now);
    let mut acks: Vec<_> = engine
        .push(input, t)
        .unwrap()
        .filter_map(|a| match a {
            Action::Send(s) => Some(s.send_id),
            _ => None,
        })
        .collect();
    let sent = !acks.is_empty();
    while let Some(id) = acks.pop() {
        let ack = Input::Delivered {
            send_id: id,
            message_ref: Some("m1"),
        };
        acks.extend(engine.push(ack, t).unwrap().filter_map(|a| match a {
            Action::Send(s) => Some(s.send_id),
            _ => None,
        }));
    }
    sent
}

/// Warms an engine up: a whole message with updates, then a second one whose preview was
/// just updated at `now`. The second message's reasoning (like its text) is a record that
/// grows by doubling: it gets some first, so the measured pushes are in steady state.
fn warm_preview(config: Config) -> (Engine, u64) {
    let mut engine = Engine::new(config, 1).unwrap();
    let mut now = 0;
    push_acked(&mut engine, Input::MessageStart, now);
    for i in 0..3000 {
        now += 5;
        push_acked(&mut engine, Input::TextDelta(DELTAS[i % DELTAS.len()]), now);
    }
    push_acked(&mut engine, Input::MessageEnd(None), now);
    push_acked(&mut engine, Input::MessageStart, now);
    // With reasoning shown, this alone creates the second preview.
    let shown = push_acked(&mut engine, Input::ThinkingDelta(&"hmm ".repeat(150)), now);
    // A second piece doubles the record's room (1200 bytes): the measured 400 bytes fit.
    push_acked(&mut engine, Input::ThinkingDelta("hmm "), now);
    // The second preview is created once it holds 30 units.
    for i in 0.. {
        if shown {
            break;
        }
        assert!(i < 100, "the second preview never came");
        if push_acked(&mut engine, Input::TextDelta(DELTAS[i % DELTAS.len()]), now) {
            break;
        }
    }
    (engine, now)
}

#[test]
fn preview_pushes_without_an_update_do_not_allocate() {
    for (name, reasoning) in [("telegram", false), ("generic", false), ("telegram", true)] {
        let mut config = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
        config.preview = PreviewMode::Partial;
        if reasoning {
            config.reasoning = ReasoningMode::Stream;
        }
        let (mut engine, mut now) = warm_preview(config);
        let allocations = count(|| {
            // 200 pushes 1 ms apart: all inside the throttle window.
            for i in 0..200 {
                now += 1;
                let input = if reasoning && i % 2 == 0 {
                    Input::ThinkingDelta(DELTAS[i % DELTAS.len()])
                } else {
                    Input::TextDelta(DELTAS[i % DELTAS.len()])
                };
                let mut actions = engine.push(input, Time::from_millis(now)).unwrap();
                assert!(
                    actions.all(|a| matches!(a, Action::ArmTimer { .. })),
                    "the measured pushes send nothing"
                );
            }
        });
        assert_eq!(
            allocations, 0,
            "{name} (reasoning {reasoning}): {allocations} allocations in 200 pushes"
        );
    }
}

#[test]
fn preview_block_mode_pushes_without_an_update_do_not_allocate() {
    let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
    config.preview = PreviewMode::Block;
    let (mut engine, mut now) = warm_preview(config);
    // 400 pushes of 4 bytes inside the throttle window: the preview's chunker is not even
    // fed until an update may go out.
    let allocations = count(|| {
        for i in 0..400 {
            now += 1;
            let mut actions = engine
                .push(
                    Input::TextDelta(DELTAS[i % DELTAS.len()]),
                    Time::from_millis(now),
                )
                .unwrap();
            assert!(actions.all(|a| matches!(a, Action::ArmTimer { .. })));
        }
    });
    assert_eq!(allocations, 0, "{allocations} allocations in 400 pushes");
}

//! A counting global allocator pins the hot path: once warm, pushing small deltas that emit
//! nothing allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use replystream::{ChannelProfile, Config, Engine, Input, Time};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count<F: FnOnce()>(f: F) -> usize {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    f();
    COUNTING.store(false, Ordering::SeqCst);
    ALLOCATIONS.load(Ordering::SeqCst)
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

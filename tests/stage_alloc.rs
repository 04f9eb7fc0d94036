//! Pins the steady-state promise of the text stages: once their buffers are warm, pushing a
//! delta of plain text through tags → directives → tokens allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use replystream::{DirectiveOutput, DirectiveParser, TagFilter, TokenConfig, TokenGate};

/// Counts allocations made by the current thread (tests may run on several threads).
struct CountingAllocator;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

/// The three stages wired as the engine wires them, with reusable buffers.
struct Pipeline {
    tags: TagFilter,
    directives: DirectiveParser,
    tokens: TokenGate,
    answer: String,
    reasoning: String,
    directed: DirectiveOutput,
    out: String,
}

impl Pipeline {
    fn new() -> Self {
        Pipeline {
            tags: TagFilter::new(false),
            directives: DirectiveParser::new(),
            tokens: TokenGate::new(&TokenConfig::default()),
            answer: String::new(),
            reasoning: String::new(),
            directed: DirectiveOutput::new(),
            out: String::new(),
        }
    }

    fn push(&mut self, delta: &str) {
        self.answer.clear();
        self.reasoning.clear();
        self.directed.clear();
        self.out.clear();
        self.tags.push(delta, &mut self.answer, &mut self.reasoning);
        self.directives.push(&self.answer, &mut self.directed);
        self.tokens.push(&self.directed.text, &mut self.out);
    }
}

const PROSE: &str = "The quick brown fox jumps over the lazy dog, and then it rests. \
It is a sunny day; nothing much happens.\n\nA second paragraph follows with `code` in it.\n";

#[test]
fn plain_text_pushes_do_not_allocate_once_warm() {
    let probe = allocations();
    std::hint::black_box(vec![0u8; 16]);
    assert!(allocations() > probe, "the counting allocator is in place");
    let mut p = Pipeline::new();
    // Warm up: buffers reach their working size.
    for _ in 0..50 {
        for piece in PROSE.as_bytes().chunks(4) {
            p.push(std::str::from_utf8(piece).unwrap());
        }
    }
    let before = allocations();
    for _ in 0..200 {
        for piece in PROSE.as_bytes().chunks(4) {
            p.push(std::str::from_utf8(piece).unwrap());
        }
    }
    assert_eq!(
        allocations() - before,
        0,
        "allocations during steady-state pushes"
    );
}

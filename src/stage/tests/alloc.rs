//! Pins the steady-state promise of the text stages: once their buffers are warm, pushing a
//! delta of plain text through tags → directives → tokens allocates nothing.

use crate::stage::directives::{DirectiveOutput, DirectiveParser};
use crate::stage::tags::TagFilter;
use crate::stage::tokens::{TokenConfig, TokenGate};
use crate::test_alloc::allocations;

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

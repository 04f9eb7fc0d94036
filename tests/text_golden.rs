//! Golden digests of the text core's output: the chunker and the platform splitter over
//! every `tests/data/*.md` file and a few generated stress texts, for many configurations
//! and every metric. The digests were recorded from the code before the performance work;
//! any change to a block's text, separator, source range, fence flags or (for the chunker)
//! the delta after which it came out changes a digest.
//!
//! To see the current digests (e.g. after an intended change of output), run
//! `GOLDEN_PRINT=1 cargo test --release --test text_golden -- --nocapture`.

mod text_checks;

use replystream::{
    Block, BlockChunker, BreakPreference, ChunkerConfig, LengthMetric, PlatformSplitter,
    SplitConfig, SplitMode,
};
use text_checks::corpus;

/// 64-bit FNV-1a, fed field by field.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    /// A field: its length first, so that field boundaries are part of the digest.
    fn field(&mut self, data: &[u8]) {
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data);
    }

    fn num(&mut self, n: usize) {
        self.bytes(&(n as u64).to_le_bytes());
    }

    fn block(&mut self, b: &Block) {
        self.field(b.text.as_bytes());
        self.field(b.sep.as_bytes());
        self.num(b.source.start);
        self.num(b.source.end);
        self.num(usize::from(b.fence_reopened) * 2 + usize::from(b.fence_closed));
    }
}

/// `text` cut into deltas of `size` bytes, each end moved forward to a char boundary.
fn deltas(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = at.saturating_add(size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[at..end]);
        at = end;
    }
    out
}

fn chunker_configs() -> Vec<ChunkerConfig> {
    let mut out = Vec::new();
    let shapes: [(usize, usize, BreakPreference, bool); 7] = [
        (1, 8, BreakPreference::Paragraph, false),
        (3, 30, BreakPreference::Sentence, false),
        (20, 60, BreakPreference::Newline, false),
        (50, 120, BreakPreference::Sentence, true),
        (40, 200, BreakPreference::Paragraph, false),
        (300, 500, BreakPreference::Paragraph, true),
        (800, 1200, BreakPreference::Paragraph, false),
    ];
    for metric in LengthMetric::ALL {
        for &(min, max, break_preference, flush_on_paragraph) in &shapes {
            out.push(ChunkerConfig {
                min,
                max,
                break_preference,
                flush_on_paragraph,
                metric,
            });
        }
    }
    out
}

fn split_configs() -> Vec<SplitConfig> {
    let mut out = Vec::new();
    for metric in LengthMetric::ALL {
        for (limit, mode, max_lines) in [
            (8, SplitMode::Length, None),
            (24, SplitMode::Length, Some(3)),
            (100, SplitMode::Length, None),
            (100, SplitMode::Newline, Some(17)),
            (300, SplitMode::Newline, None),
            (2000, SplitMode::Length, Some(17)),
            (2000, SplitMode::Length, None),
            (4000, SplitMode::Length, None),
        ] {
            out.push(SplitConfig {
                limit,
                metric,
                mode,
                max_lines,
            });
        }
    }
    out
}

/// Chunker output for 1-byte (so 1-char), 7-byte, 257-byte and whole deltas, with the index of the
/// push after which each block came out (`usize::MAX` for the flush).
fn chunker_digest(text: &str) -> u64 {
    let mut h = Fnv::new();
    for config in chunker_configs() {
        for size in [1, 7, 257, usize::MAX] {
            let mut c = BlockChunker::new(config);
            let mut out = Vec::new();
            for (k, d) in deltas(text, size).into_iter().enumerate() {
                c.push(d, &mut out);
                for b in out.drain(..) {
                    h.num(k);
                    h.block(&b);
                }
            }
            c.flush(&mut out);
            for b in out.drain(..) {
                h.num(usize::MAX);
                h.block(&b);
            }
            h.num(0xB10C);
        }
    }
    h.0
}

fn splitter_digest(text: &str) -> u64 {
    let mut h = Fnv::new();
    for config in split_configs() {
        let s = PlatformSplitter::new(config).expect("valid config");
        for b in s.split(text) {
            h.block(&b);
        }
        h.num(0x5917);
    }
    h.0
}

/// A deterministic Markdown-ish stress text: fences, inline code, CRLF, CJK marks,
/// combining marks, ZWJ sequences, flags, long words, indented code.
fn generated(seed: u64, len: usize) -> String {
    const PIECES: &[&str] = &[
        "word",
        "lorem",
        "x",
        " ",
        " ",
        " ",
        "  ",
        "\t",
        "\n",
        "\n\n",
        "\n \n",
        "\r\n",
        ". ",
        "! ",
        "? ",
        "…",
        ".",
        ")",
        "\"",
        "”",
        "3.14",
        "```rust\n",
        "```\n",
        "\n```\n",
        "~~~~ info\n",
        "~~~~\n",
        "````\n",
        "`",
        "``",
        "`code`",
        "e\u{301}",
        "👨\u{200d}👩\u{200d}👧",
        "🇫🇷",
        "🇩🇪🇯🇵",
        "日本語",
        "。",
        "！",
        "？」",
        "    indented code\n",
        "supercalifragilisticexpialidocious",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
        "é",
        "\u{1F600}",
        "- item\n",
        "# Title\n\n",
    ];
    let mut state = seed | 1;
    let mut out = String::new();
    while out.len() < len {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_f491_4f6c_dd1d);
        out.push_str(PIECES[(r >> 33) as usize % PIECES.len()]);
    }
    out
}

fn inputs() -> Vec<(String, String)> {
    let mut all = corpus();
    for (i, seed) in [1u64, 7, 42].into_iter().enumerate() {
        all.push((format!("generated-{i}"), generated(seed, 6000)));
    }
    all
}

/// (name, chunker digest, splitter digest), recorded before the performance work.
const GOLDEN: &[(&str, u64, u64)] = &[
    ("README.md", 0x2c2c2537c3723e8d, 0x297935c092561339),
    ("code-heavy.md", 0x3b9d62af27a6cd84, 0xfdea46ed0c94bfef),
    (
        "directives-and-thinking.md",
        0xcd5d653f951bf355,
        0xbf542ba35a0251f5,
    ),
    ("lists-tables.md", 0x77a2919f10eddb6a, 0xa2537679b93d32eb),
    ("no-breaks.md", 0x249c2b1e9542ee7d, 0xb1ae1094c395f35d),
    ("node-events.md", 0xfca745715bc1bbb5, 0x6afc4ea7bd372e6b),
    ("node-readline.md", 0x0f16be7d1c4a54c9, 0x84134b668d4f83e5),
    (
        "openclaw-streaming-notes.md",
        0xa039898ba2e720e7,
        0x6979a839326d0591,
    ),
    (
        "prose-paragraphs.md",
        0x0569fd4894d9862d,
        0x8b11f3f2b212af7d,
    ),
    (
        "reasoning-stream-design.md",
        0xe962acfcdb9b923c,
        0x4ddcd5945066bc94,
    ),
    (
        "silent-and-heartbeat.md",
        0xfa5bb1b701492735,
        0x99a606bc8d218825,
    ),
    ("silent-reply.md", 0xb82aa81ec0ad7195, 0xf26e31c520b04605),
    ("unclosed-fence.md", 0xe8ad2f155f180783, 0xfb980443797e8e3f),
    ("unicode-mix.md", 0xb4ab0d8962a3684a, 0x2e0953e414df16ba),
    ("generated-0", 0x9c27c7e51b3829e4, 0xd29aa18cf72ae74f),
    ("generated-1", 0xa2bc9e7651eab171, 0xfbddd1df8a10ad1b),
    ("generated-2", 0x881dc50fd1387a5f, 0xaa140ee3b078f46e),
];

#[test]
fn text_core_output_matches_the_golden_digests() {
    let print = std::env::var_os("GOLDEN_PRINT").is_some();
    let mut mismatches = Vec::new();
    let mut seen = 0;
    for (name, text) in inputs() {
        let c = chunker_digest(&text);
        let s = splitter_digest(&text);
        if print {
            println!("    (\"{name}\", 0x{c:016x}, 0x{s:016x}),");
        }
        match GOLDEN.iter().find(|(n, _, _)| *n == name) {
            Some(&(_, gc, gs)) => {
                seen += 1;
                if gc != c {
                    mismatches.push(format!("{name}: chunker 0x{c:016x} != 0x{gc:016x}"));
                }
                if gs != s {
                    mismatches.push(format!("{name}: splitter 0x{s:016x} != 0x{gs:016x}"));
                }
            }
            None => mismatches.push(format!("{name}: no golden digest")),
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
    assert_eq!(seen, GOLDEN.len(), "every golden input is still there");
}

//! The streaming block chunker (SPEC §3). API contract; implementation in progress.

use super::block::Block;
use super::metric::LengthMetric;

/// Where the chunker prefers to cut, in order of preference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BreakPreference {
    /// Paragraph break, then line break, then sentence end.
    #[default]
    Paragraph,
    /// Line break only (no sentence ends); waits for a line break until `max`.
    Newline,
    /// Sentence end (paragraph and line breaks are not preferred).
    Sentence,
}

/// Chunker settings. `min` and `max` are in `metric` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkerConfig {
    /// No block is emitted (unless forced) before the buffer holds this many units.
    pub min: usize,
    /// No block is ever longer than this (synthetic fence lines included).
    pub max: usize,
    /// Where to cut.
    pub break_preference: BreakPreference,
    /// Emit each paragraph as soon as its blank line arrives (respecting `min`).
    pub flush_on_paragraph: bool,
    /// How lengths are counted.
    pub metric: LengthMetric,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        ChunkerConfig {
            min: 800,
            max: 1200,
            break_preference: BreakPreference::Paragraph,
            flush_on_paragraph: false,
            metric: LengthMetric::Chars,
        }
    }
}

/// Cuts a stream of text deltas into blocks. One chunker per assistant message.
#[derive(Debug)]
pub struct BlockChunker {
    config: ChunkerConfig,
    buffer: String,
}

impl BlockChunker {
    /// A chunker with `config`, clamped: `min >= 1`, `max >= min`.
    pub fn new(config: ChunkerConfig) -> Self {
        BlockChunker {
            config,
            buffer: String::new(),
        }
    }

    /// The effective (clamped) configuration.
    pub fn config(&self) -> &ChunkerConfig {
        &self.config
    }

    /// Appends `delta` and pushes every block that is now due onto `out`.
    pub fn push(&mut self, delta: &str, out: &mut Vec<Block>) {
        self.buffer.push_str(delta);
        let _ = out;
    }

    /// Forced drain: emits everything buffered, in as few blocks as `max` allows.
    pub fn flush(&mut self, out: &mut Vec<Block>) {
        let _ = out;
    }

    /// Forgets everything (a new assistant message begins).
    pub fn reset(&mut self) {
        self.buffer.clear();
    }

    /// The text received but not yet emitted.
    pub fn buffered(&self) -> &str {
        &self.buffer
    }
}

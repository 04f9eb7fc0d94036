//! The chunker's settings, its break preferences and the break orders they give.

use crate::Error;
use crate::text::cut::BreakClass;
use crate::text::limits::check_limit;
use crate::text::metric::LengthMetric;

/// Where the chunker prefers to cut, in order of preference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
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

impl ChunkerConfig {
    /// The effective settings: `min >= 1`, `max >= min`; an error when `max` is below the
    /// smallest limit that works in the metric ([`crate::text::limits::min_limit`]).
    pub(crate) fn checked(self) -> Result<ChunkerConfig, Error> {
        let mut config = self;
        config.min = config.min.max(1);
        config.max = config.max.max(config.min);
        check_limit("chunk max", config.max, config.metric)?;
        Ok(config)
    }
}

/// The break classes a chunker cuts at, best first: those allowed for eager cuts (the
/// preference's, with a paragraph break first under `flush_on_paragraph`), and those for cuts
/// at max and forced drains (the eager ones, then the other text classes in
/// [`BreakClass::TEXT`] order). Shared tables rather than two small vectors per chunker: the
/// eager list is read at every candidate, and a heap buffer of its own was one more cache
/// line to miss per push at scale.
pub(super) fn break_orders(
    preference: BreakPreference,
    flush_on_paragraph: bool,
) -> (&'static [BreakClass], &'static [BreakClass]) {
    use BreakClass::{Line, Paragraph, Sentence, Whitespace};
    match (preference, flush_on_paragraph) {
        (BreakPreference::Paragraph, _) => (
            &[Paragraph, Line, Sentence],
            &[Paragraph, Line, Sentence, Whitespace],
        ),
        (BreakPreference::Newline, _) => {
            (&[Paragraph, Line], &[Paragraph, Line, Sentence, Whitespace])
        }
        (BreakPreference::Sentence, false) => {
            (&[Sentence], &[Sentence, Paragraph, Line, Whitespace])
        }
        (BreakPreference::Sentence, true) => (
            &[Paragraph, Sentence],
            &[Paragraph, Sentence, Line, Whitespace],
        ),
    }
}

//! What the coalescer hands on: merged texts with their metadata and source ranges.

use std::ops::Range;

use smallvec::SmallVec;

use crate::render::Measured;
use crate::{Lane, ReplyTarget};

/// How a payload is to be delivered. Blocks whose metadata differ are never merged: a
/// different assistant message, reply target, voice flag or lane is a conflict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct BlockMeta {
    /// The index of the assistant message (within the turn) the block came from.
    pub message: usize,
    /// The platform message the payload replies to.
    pub reply_to: Option<ReplyTarget>,
    /// Audio should be sent as a voice note.
    pub audio_as_voice: bool,
    /// Visibility class.
    pub lane: Lane,
}

/// The source ranges of the blocks merged into one [`CoalescedText`], in order.
pub(crate) type SourceRanges = SmallVec<[Range<usize>; 4]>;

/// One merged text the coalescer hands on: one or more blocks joined, with their metadata
/// and where they came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoalescedText {
    /// The merged text (see [`Coalescer`](super::Coalescer) for how blocks are joined).
    pub text: String,
    /// The source ranges the text shows, in order. Never empty. Blocks joined by their own
    /// source separator share one range (the separator is part of what was shown); a
    /// configured joiner starts a new range. The ranges index the assistant message's
    /// cleaned text (for the answer lane).
    pub sources: SourceRanges,
    /// The metadata shared by every merged block.
    pub meta: BlockMeta,
    /// `text` ends with a `"\n"` and a synthetic closing fence line (the last merged
    /// block was cut inside a fence).
    pub fence_closed: bool,
    /// `text` as rendered when it was measured against `max` (when it had to be rendered):
    /// the render the send posts, so it is not rendered again. Dropped whenever `text`
    /// changes.
    pub measured: Option<Measured>,
}

impl CoalescedText {
    /// The span of source text covered, from the start of the first merged block to the end
    /// of the last one.
    #[cfg(test)]
    pub(crate) fn covered(&self) -> Range<usize> {
        match (self.sources.first(), self.sources.last()) {
            (Some(first), Some(last)) => first.start..last.end,
            _ => 0..0,
        }
    }
}

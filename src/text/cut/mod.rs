//! The one cut finder, shared by the block chunker and the platform splitter.
//!
//! A *cut* splits a text at byte `end`: the piece is `text[start..end]`, the separator is
//! `text[end..sep_end]` and the next piece starts at `sep_end`. Cuts fall on breaks, best
//! first: a paragraph break (`\n`, optional spaces/tabs, `\n`), a line break, a sentence end
//! (`.` `!` `?` `…` followed by whitespace, or the CJK marks `。！？` with or without it;
//! closing quotes and brackets after the mark belong to the sentence), any whitespace; inside
//! code that must be split (a fenced block, an indented block), a line break of the code;
//! inside an inline code span longer than a piece, a line break or whitespace inside it; and
//! last a hard cut at the largest grapheme boundary that fits.
//!
//! Whitespace here is ASCII: space, tab, `\r`, `\n` (so a CR LF is a line break like a LF),
//! and only when it is a grapheme cluster of its own: a space that carries a combining mark,
//! or follows a prepended char, belongs to that cluster and is never a break. A whitespace
//! run after a cut becomes the separator: the whole run for a cut on one line, and through
//! the run's last `\n` when it holds line breaks, so that the next piece keeps its own
//! indentation (see [`shown_start`] for indentation too wide to show).
//!
//! # What a cut must never do
//!
//! - **Break a fence's reading.** A piece whose last line was cut in its middle must not end
//!   with text that reads as a fence line (three backticks or tildes after at most 3 spaces),
//!   and the next piece must not start with such text, unless the source line is a real
//!   fence line. Inside a fence the next piece never starts with a line of marker chars only.
//!   The one deliberate exception: a fence opening line too long to fit beside any code is
//!   cut after its marker; its head is shown closed, and the rest continues as code under a
//!   bare marker.
//! - **Leave a piece of fence lines only.** A cut must leave content (a non-whitespace byte
//!   that is not on a fence's opening or closing line) in the piece before it and in the text
//!   after it ([`ContentBounds`](bounds::ContentBounds)). While the text's last line may
//!   still turn out to be a fence line, a streaming caller waits rather than cut before it.
//!
//! Searches run backward from the end of the window and stop at its start, so their cost is
//! bounded by the window, never by the text.

mod bounds;
mod candidate;
mod find;
mod hard;
mod planner;
mod reopen;
#[cfg(test)]
mod tests;

pub(crate) use bounds::shown_start;
pub(crate) use candidate::{
    BreakClass, Candidate, candidate_at, is_tail_char, is_ws, joined_ws, line_continues,
    may_be_candidate, may_break_beyond_whitespace, may_end_tail, partial_fence_at_end,
    sep_trimmed_end,
};
pub(crate) use planner::{NextStart, Planned, Planner};
pub(crate) use reopen::{Reopen, ReopenCost, build_piece, quoted_after};

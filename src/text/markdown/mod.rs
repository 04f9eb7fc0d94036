//! The one Markdown scanner: where fenced code blocks and inline code spans are.
//!
//! The chunker, the platform splitter and the preview tail all ask the same question, "may I
//! cut here?", and must all answer it the same way, so they share this scanner.
//!
//! Fences follow CommonMark: an opening line has at most 3 spaces of indent, then 3 or more
//! backticks or tildes, then an optional info string (a backtick fence's info string holds no
//! backtick). A closing line uses the same character, at least as many of it, at most 3
//! spaces of indent, and nothing but spaces or tabs after the marker; the fence ends with its
//! marker run, so a cut right after it (before the spaces, tabs or `\r` that end the line) is
//! outside the fence.
//!
//! Fences inside container blocks (list items, block quotes; see [`containers`]) are read
//! relative to their container's content: under `- ` a fence at 4 spaces is a fence, after
//! `> ` one is too, and a line that leaves the container ends the fence with it. Their
//! synthetic closing and reopening lines repeat the container prefix
//! ([`FenceMarker::prefix`]). A fence in list items alone at 3 spaces or less keeps the
//! top-level reading (a message that lost the item shows it that way).
//!
//! Inline code spans are backtick runs closed by the next run of exactly the same length. As
//! in CommonMark, a span never crosses a block boundary: a blank line, an ATX heading's end,
//! the start of a list item, a block quote, a fence line or an indented code block. An
//! unmatched run is literal text once its block ends.
//!
//! An indented code block is a run of lines indented by 4 or more columns (a tab counts to
//! the next multiple of 4) that starts after a blank line, a heading, a fence's closing line
//! or at the start of the text (it cannot interrupt a paragraph), and goes on, across blank
//! lines, up to the last such line before a line indented less.
//!
//! The scanner is incremental: [`MarkdownScanner::scan`] continues where the previous call
//! stopped, jumping between interesting bytes with memchr, so its cost over a stream is linear
//! in the stream's length. It keeps the spans it found in two small vectors that are reused
//! (never reallocated once warm), and [`MarkdownScanner::drain`] drops what a consumer has cut
//! off the front of its buffer.

mod groups;
pub(crate) use groups::find_in;
mod indented;
mod lines;
mod scanner;
mod spans;
#[cfg(test)]
mod tests;

pub(crate) use indented::{is_code_indent, is_indented_code_line};
pub(crate) use scanner::MarkdownScanner;
pub(crate) use spans::{CodeSpan, FenceSpan, IndentedSpan};

mod containers;
pub(crate) mod inline;
mod lists;
mod quoted;
mod tables;

pub use containers::ContainerPrefix;
pub(crate) use lists::shows_list_for;
pub use spans::FenceMarker;
pub(crate) use tables::TableSpan;

//! A block on its way into the buffer, and the seam helpers that trim and join it.

use std::ops::Range;

use crate::text::block::Block;
use crate::text::dedent::end_columns;
use crate::text::markdown::FenceMarker;

use super::*;

/// A block on its way into the buffer.
pub(super) struct Piece {
    pub(super) text: String,
    pub(super) source: Range<usize>,
    /// Bytes of `text` that are its synthetic start: a reopened fence line and its `"\n"`,
    /// or the 4 spaces that continue an indented code line.
    pub(super) head: usize,
    /// Bytes of `text` that are `"\n"` and a synthetic closing line.
    pub(super) trail: usize,
    /// When the piece's source starts with the closing line of the fence it reopens, where
    /// that line ends (else 0): the code block was already closed at the end of the piece
    /// before, and reopening it here would show an empty one.
    pub(super) closed_at: usize,
    /// The piece starts a line of its source.
    pub(super) line_start: bool,
    /// An indentation at the piece's start would make indented code, as in its source
    /// (not a paragraph's lazy continuation line).
    pub(super) code_line: bool,
    /// The columns of de-indentation in force at its end ([`end_cols`]).
    pub(super) end_cols: usize,
    /// The piece as it starts a message, where it joins the buffer rebuilt otherwise (a
    /// de-indented block joining text de-indented by other columns).
    pub(super) alone: Option<Box<Piece>>,
    /// The header and delimiter rows of the table whose body rows the piece starts with,
    /// when its block could not repeat them ([`Block::table_head`]): shown before it where
    /// it starts a message that has room for them.
    pub(super) table_head: Option<Box<str>>,
    /// `text` between its synthetic edges is its source byte for byte (not de-indented).
    pub(super) verbatim: bool,
}

/// The columns of de-indentation in force at the end of `block` ([`end_columns`]): 0 for
/// a block shown as written; unknown without its source, and then nothing joins it.
pub(super) fn end_cols(block: &Block, source: Option<&str>) -> usize {
    match (block.dedent, source) {
        (0, _) => 0,
        (_, Some(text)) => end_columns(block, text),
        (_, None) => usize::MAX,
    }
}

impl Piece {
    /// How many leading bytes are separator whitespace, dropped where the piece starts a
    /// buffer or follows a joiner: none after a synthetic reopen line (that is code), but a
    /// reopen line followed by the fence's own closing line goes with that line; then
    /// blank lines always; the rest of the run too, unless it is a code indentation (four
    /// columns or more) at the start of a line and `indent_ok` (the piece starts a message
    /// or follows a joiner that ends a line). Fewer spaces mean nothing at a message's
    /// start (" After the chart." after a removed directive line).
    pub(super) fn strip_leading(&self, indent_ok: bool) -> usize {
        if self.head > 0 && self.closed_at == 0 {
            return 0;
        }
        let from = self.closed_at;
        let text = &self.text[from..];
        let run = &text[..text.len() - trim_sep_start(text).len()];
        let nl = run.rfind('\n');
        let indent = &run[nl.map_or(0, |i| i + 1)..];
        let at_line_start = nl.is_some() || (self.line_start && from == 0);
        // A fence opening line keeps its indentation (3 spaces at most): its code lines are
        // indented alike, and the fence takes that much off each of them.
        let indent_from = nl.map_or(0, |i| i + 1);
        let fence_line = || {
            let line = &text[indent_from..];
            FenceMarker::parse_open(&line[..line.find('\n').unwrap_or(line.len())]).is_some()
        };
        from + match nl {
            _ if indent_ok && at_line_start && self.code_line && is_code_indent(indent) => {
                indent_from
            }
            _ if indent_ok && at_line_start && !indent.is_empty() && fence_line() => indent_from,
            _ => run.len(),
        }
    }
}

/// Where the first source line of a block ends when it closes the fence the block's
/// synthetic reopen line (`lead` bytes) opens; 0 otherwise.
pub(crate) fn reopened_then_closed(text: &str, lead: usize) -> usize {
    // A bare marker going on with the rest of its opening line is no line of its own.
    if lead == 0 || text.as_bytes()[lead - 1] != b'\n' {
        return 0;
    }
    let reopen = &text[..lead - 1];
    let line = text[lead..].split('\n').next().unwrap_or("");
    // In a quote, the reopening line repeats the container prefix, and the fence's closing
    // line carries the same one: the fence lines are read after it.
    let prefix = reopen.len() - reopen.trim_start_matches([' ', '\t', '>']).len();
    let quoted = reopen[..prefix].contains('>') && line.starts_with(&reopen[..prefix]);
    let (reopen, first) = match quoted {
        true => (&reopen[prefix..], &line[prefix..]),
        false => (reopen, line),
    };
    match FenceMarker::parse_open(reopen) {
        Some(m) if m.is_closed_by(first) => lead + line.len(),
        _ => 0,
    }
}

/// The byte lengths of `block`'s synthetic start (a reopened fence line with its `"\n"`,
/// or the 4 spaces continuing an indented code line) and synthetic close (the `"\n"` and
/// closing line), 0 when absent: what lies outside [`Block::source_in_text`].
pub(super) fn synthetic_edges(block: &Block) -> (usize, usize) {
    let shown = block.source_in_text();
    (shown.start, block.text.len() - shown.end)
}

/// Separator whitespace, as the chunker cuts at it: space, tab, `\r`, `\n`. Other
/// whitespace (an ideographic space indenting a paragraph) is text.
pub(super) fn is_sep_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

pub(super) fn trim_sep_end(text: &str) -> &str {
    text.trim_end_matches([' ', '\t', '\n', '\r'])
}

pub(super) fn trim_sep_start(text: &str) -> &str {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
}

pub(super) fn line_breaks(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

/// Whether the last line of `text` is a fence line (an opening or closing marker line).
pub(super) fn ends_with_fence_line(text: &str) -> bool {
    let last = text.rsplit('\n').next().unwrap_or("");
    FenceMarker::parse_open(last).is_some()
}

/// Whether the first line of `text` is a fence line.
pub(super) fn starts_with_fence_line(text: &str) -> bool {
    let first = text.split('\n').next().unwrap_or("");
    FenceMarker::parse_open(first).is_some()
}

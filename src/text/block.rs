//! The unit of output of the chunker and the splitter.

use std::ops::Range;

/// One piece of text cut from a longer text, ready to be shown as (part of) a message.
///
/// `text` is what is displayed: `source` from the original text, plus synthetic text where a
/// cut fell inside code. A piece cut inside a fenced code block ends with `"\n"` and a
/// synthetic closing fence line (`fence_closed`), and the next piece starts with a synthetic
/// opening fence line and `"\n"` (`fence_reopened`; when the cut fell in the middle of the
/// fence's opening line, a long info string, only the bare marker, with the rest of that
/// line right after it); a piece that continues an indented code
/// line cut in its middle starts with 4 synthetic spaces (`indent_reopened`; in a block quote,
/// after the quote's markers and a space).
///
/// Whatever the repair, the synthetic text sits only at the two edges of `text`, and its
/// extent is stated exactly: `text[..head_len]` is synthetic (a reopened fence line, an
/// indentation, a container prefix, a repeated table header, reopened span delimiters),
/// `text[text.len() - tail_len..]` is synthetic (a closing fence line, closing span
/// delimiters), and what lies between is `source`, byte for byte. The bool flags say which
/// repairs were made.
///
/// The whitespace between pieces is kept, not lost: `sep` is the original text between this
/// piece and the next one (`"\n\n"`, `"\n"`, `" "`, `""` for a hard cut, or whatever
/// whitespace stood there, blank lines included), and `lead` is whitespace before this
/// piece that no separator holds (the text's leading whitespace, on the first piece).
/// Concatenating `lead + original[source] + sep` over all pieces gives back the original
/// text exactly.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Block {
    /// The display text, synthetic text included.
    pub text: String,
    /// Whitespace before `source` that the previous piece's `sep` does not hold: the
    /// leading whitespace of the text (or, for the chunker, of the text after a flush).
    pub lead: String,
    /// The source text that separated this piece from the next one.
    pub sep: String,
    /// The byte range of the original text that `text` shows (synthetic text excluded).
    pub source: Range<usize>,
    /// `text` starts with a synthetic fence opening line and a `"\n"`, or, where the
    /// source starts in the middle of the fence's opening line, with the bare marker.
    pub fence_reopened: bool,
    /// `text` starts with 4 synthetic spaces: an indented code line cut in its middle goes
    /// on here. In a block quote the quote's markers (through the last `>`, list markers
    /// between them shown as spaces) and a space come before them (`>     `, `>   >     `),
    /// so the rest of the line is still code in the quote; `head_len` covers them.
    pub indent_reopened: bool,
    /// `text` ends with a `"\n"` and a synthetic closing fence line.
    pub fence_closed: bool,
    /// `text` starts with a table's header row and delimiter row, each followed by a
    /// `"\n"`, repeated: the piece goes on with the rows of a table cut between two rows,
    /// and without them they would not render as a table.
    pub table_header_repeated: bool,
    /// Bytes of synthetic text at the start of `text` (0 when it starts with source): a
    /// reopened fence line and its `"\n"`, a bare marker, the 4 spaces continuing an
    /// indented code line, a container prefix, a repeated table header.
    pub head_len: usize,
    /// Bytes of synthetic text at the end of `text` (0 when it ends with source): the
    /// `"\n"` and closing fence line, closing span delimiters.
    pub tail_len: usize,
    /// `text` starts with synthetic inline delimiters (outermost first): the piece before
    /// was cut inside an inline code span longer than a piece (its backtick run) or inside
    /// emphasis, strong emphasis or strikethrough, and they open again here.
    pub spans_reopened: bool,
    /// `text` ends with synthetic inline delimiters (innermost first) that close what the
    /// cut fell inside: an inline code span's backtick run, emphasis delimiters.
    pub spans_closed: bool,
    /// Columns of indentation taken off the lines of `text` (0: none). Set on a piece that
    /// starts inside a list item's fenced code whose lines sit 4 or more columns deep (under
    /// `1. ` a fence indented 4 spaces), or anywhere in a list item's text (a paragraph, the
    /// middle of one, a paragraph line 4 or more columns deep) with lines 4 or more columns
    /// deep after it: shown at a message's start without its item, those lines would read
    /// as indented code, so the piece is shown as the item's content reads, de-indented by
    /// the item's content column (a deep paragraph line it starts at: by that line's
    /// indentation) (SPEC §15, containers).
    ///
    /// Exactly: every line of `text` that starts a line (after a `"\n"` of `text`, and its
    /// first line when `source` starts a line of the original text and no synthetic head
    /// runs into it) is its line with up to `c` leading columns of spaces and tabs removed
    /// (a tab reaches the next multiple of 4 columns; one that crosses `c` leaves spaces for
    /// the columns past it). `c` is `dedent` at the start; a line whose content is indented
    /// fewer than `c` columns has left the item (for an outer item or the top level), and
    /// from that line on `c` is its indentation. The synthetic head and tail are
    /// de-indented alike, and `head_len` and `tail_len` measure them as shown. So with
    /// `dedent > 0`, `text` between its head and tail is `source` de-indented, not `source`
    /// byte for byte; `lead + source + sep` still rebuilds the input exactly.
    pub dedent: usize,
    /// Quote markers kept at the start of each line before the `dedent` columns are taken
    /// off (0: the columns are a line's leading ones). Set on a piece that starts inside a
    /// fence of a list item in a block quote whose lines sit 4 or more columns past the
    /// `>` (`> 1)     ```` under `> 1) `): alone, without the item, they would read as the
    /// quote's indented code, so the piece is shown as the item's content reads in the
    /// quote, every line's first `dedent_quotes` markers (each after at most 3 spaces,
    /// with the one space after it) kept and up to `dedent` columns taken off after them;
    /// a line that does not carry them has left the quote, and from it on nothing is taken
    /// off. The synthetic head and tail are de-indented alike.
    pub dedent_quotes: usize,
    /// The piece starts with a list item that goes on with a list begun before the piece,
    /// right after paragraph text, and that could not start a list there (an ordered item
    /// not numbered 1, an empty item): joined after text that does not show that list's
    /// earlier items, it would read as that text's continuation (see the coalescer).
    pub(crate) continues_list: bool,
    /// The piece ends where a line leaving a list item ends that item's fence, with no
    /// closing line (see `MarkdownScanner::list_cut`). A message that shows the fence
    /// without its item (de-indented) reads it open at the top level, where that line does
    /// not end it: the coalescer starts the next block apart from such a message.
    pub(crate) ends_item_fence: bool,
    /// The piece starts with a whole body row of a table whose header and delimiter rows it
    /// does not repeat (with that row they did not fit within `max`): those two rows as a
    /// repeated header would show them (each followed by `"\n"`, the container prefix
    /// blanked, de-indented as the piece is). A consumer whose message has more room than
    /// a piece (the engine's coalescer, under a text limit above `chunk_max`) shows them
    /// before the piece where it starts a message, as a synthetic repeat.
    pub(crate) table_head: Option<Box<str>>,
}

impl Block {
    /// The byte range of `text` that shows `source`: `text` without its synthetic start and
    /// end.
    pub fn source_in_text(&self) -> Range<usize> {
        let end = self.text.len().saturating_sub(self.tail_len);
        self.head_len.min(end)..end
    }
}

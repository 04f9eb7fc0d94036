//! The small intermediate reading of one send's Markdown that every platform writer walks:
//! blocks (paragraphs, headings, list items, quotes, code, tables, breaks) holding inlines
//! (text, emphasis, code, links, breaks). Only what a chat can show is kept; everything the
//! reading does not understand stays text, so no character of the source is lost.

use std::ops::Range;

/// One block of a send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Block {
    /// A paragraph of inlines.
    Paragraph(Vec<Inline>),
    /// An ATX or setext heading (level 1 to 6).
    Heading(Vec<Inline>),
    /// One list item: its marker and the blocks inside it.
    ListItem {
        /// `None` for a bullet item, `Some(n)` for an ordered item numbered `n`.
        number: Option<u64>,
        /// The marker character (`-`, `*`, `+`, `.` or `)`): a new one starts a new list.
        marker: u8,
        /// The blocks of the item (nested lists are list items in here).
        children: Vec<Block>,
    },
    /// A block quote and the blocks inside it.
    Quote(Vec<Block>),
    /// Fenced or indented code: the code lines without the fences, and the language (the
    /// first word of the info string) if any.
    Code {
        /// The first word of the fence's info string.
        language: Option<String>,
        /// The code, lines joined by `\n`, no trailing newline.
        text: String,
    },
    /// A GFM table.
    Table(Table),
    /// A thematic break (`---`, `***`, `___`).
    Rule,
}

/// A GFM table: a header row, alignments and body rows (each row has as many cells as the
/// header; missing cells are empty, extra cells are dropped as GFM does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Table {
    /// Column alignment from the delimiter row.
    pub(crate) align: Vec<Align>,
    /// The header cells.
    pub(crate) header: Vec<Vec<Inline>>,
    /// The body rows.
    pub(crate) rows: Vec<Vec<Vec<Inline>>>,
    /// The table's lines in the source, as written (for table mode `off`).
    pub(crate) source: String,
    /// The header cells' Markdown as written (for the Markdown writers).
    pub(crate) raw_header: Vec<String>,
    /// The body cells' Markdown as written.
    pub(crate) raw_rows: Vec<Vec<String>>,
}

/// A column's alignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Align {
    /// No colon, or `:---`.
    Left,
    /// `:---:`.
    Center,
    /// `---:`.
    Right,
}

/// An inline element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Inline {
    /// Literal text (escapes and entity references already decoded).
    Text(String),
    /// `**strong**` or `__strong__`.
    Bold(Vec<Inline>),
    /// `*emphasis*` or `_emphasis_`.
    Italic(Vec<Inline>),
    /// `~~strikethrough~~` (or single tildes).
    Strike(Vec<Inline>),
    /// An inline code span, its content normalised as CommonMark does.
    Code(String),
    /// A link: `[text](url)`, an autolink `<url>` or a bare URL (then `text` is the URL).
    Link {
        /// The link text.
        children: Vec<Inline>,
        /// The destination.
        url: String,
    },
    /// An image `![alt](url)`: chats show it as a link to the image.
    Image {
        /// The alt text.
        alt: Vec<Inline>,
        /// The image URL.
        url: String,
    },
    /// A hard line break (two spaces or a backslash before a newline).
    HardBreak,
    /// A soft line break (a plain newline inside a paragraph): chats show a newline.
    SoftBreak,
}

/// A top-level block and the byte range of the source it was read from (for the writers
/// that keep the source as written and only replace some blocks: `markdown` and `discord`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Located {
    /// The block.
    pub(crate) block: Block,
    /// Its source lines, including their line endings.
    pub(crate) range: Range<usize>,
}

/// The text of inlines with all markup removed (links show their text only).
pub(crate) fn plain_text(inlines: &[Inline], out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(t) | Inline::Code(t) => out.push_str(t),
            Inline::Bold(c) | Inline::Italic(c) | Inline::Strike(c) => plain_text(c, out),
            Inline::Link { children, .. } => plain_text(children, out),
            Inline::Image { alt, .. } => plain_text(alt, out),
            Inline::HardBreak | Inline::SoftBreak => out.push(' '),
        }
    }
}

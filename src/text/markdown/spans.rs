//! The spans the scanner reports: fence markers, fenced blocks, inline code spans, indented code.

use memchr::memchr;

use super::containers::ContainerPrefix;

use super::lines::*;

/// A fence's opening marker: which character, how many, and how far indented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FenceMarker {
    /// `b'`'` or `b'~'`.
    pub ch: u8,
    /// The number of marker characters (3 or more).
    pub len: usize,
    /// Spaces before the marker (0 to 3), after the container prefix.
    pub indent: usize,
    /// The container prefix (list item content columns, quote markers) before the fence's
    /// own indentation: its synthetic closing and reopening lines repeat it, so that they
    /// close and open the fence inside the same containers. Empty outside containers.
    pub prefix: ContainerPrefix,
}

impl FenceMarker {
    /// Parses `line` (without its `\n`; a trailing `\r` is ignored) as an opening fence line.
    pub fn parse_open(line: &str) -> Option<FenceMarker> {
        let bytes = trim_cr(line.as_bytes());
        let indent = bytes.iter().take(4).take_while(|&&b| b == b' ').count();
        if indent > 3 {
            return None;
        }
        let rest = &bytes[indent..];
        let ch = *rest.first()?;
        if ch != b'`' && ch != b'~' {
            return None;
        }
        let len = rest.iter().take_while(|&&b| b == ch).count();
        if len < 3 {
            return None;
        }
        if ch == b'`' && memchr(b'`', &rest[len..]).is_some() {
            return None;
        }
        Some(FenceMarker {
            ch,
            len,
            indent,
            prefix: ContainerPrefix::NONE,
        })
    }

    /// Whether `line` (without its `\n`) closes a fence opened with this marker.
    pub fn is_closed_by(&self, line: &str) -> bool {
        let bytes = trim_cr(line.as_bytes());
        let indent = bytes.iter().take(4).take_while(|&&b| b == b' ').count();
        if indent > 3 {
            return false;
        }
        let rest = &bytes[indent..];
        let len = rest.iter().take_while(|&&b| b == self.ch).count();
        len >= self.len && rest[len..].iter().all(|&b| b == b' ' || b == b'\t')
    }

    /// Appends the synthetic closing line for this fence (container prefix, indent,
    /// marker; no newline).
    pub fn push_close(&self, out: &mut String) {
        out.push_str(self.prefix.as_str());
        for _ in 0..self.indent {
            out.push(' ');
        }
        for _ in 0..self.len {
            out.push(self.ch as char);
        }
    }

    /// The length of the synthetic closing line in any metric: it is ASCII, so bytes,
    /// chars, UTF-16 units and graphemes agree.
    pub fn close_len(&self) -> usize {
        self.prefix.len() + self.indent + self.len
    }

    /// Bytes from the start of the opening line to the end of its marker run.
    pub fn marker_end(&self) -> usize {
        self.close_len()
    }

    /// Appends the synthetic line that reopens this fence, from its original opening line
    /// `line` (without its `\n`): the line with its container prefix shown as
    /// [`ContainerPrefix`] shows it (list markers as spaces), so that it opens a fence at
    /// the same depth without showing a list marker again. Same length as `line`.
    pub fn push_open_line(&self, line: &str, out: &mut String) {
        let n = self.prefix.len();
        match line.get(n..) {
            Some(rest) if n > 0 => {
                out.push_str(self.prefix.as_str());
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
    }
}

/// A fenced code block found in the scanned text. Offsets are byte offsets into the text
/// the scanner was given (after any [`MarkdownScanner::drain`](super::MarkdownScanner::drain)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FenceSpan {
    /// Where the opening line starts. 0 when the opening line was drained away (the fence
    /// continues from text that was cut off; see `continued`).
    pub start: usize,
    /// Where the opening line's content ends (the position of its `\n`).
    pub open_end: usize,
    /// Where the closing line starts (meaningful once `end` is known).
    pub close_start: usize,
    /// Just past the closing line's marker run: what follows on that line (spaces, tabs, a
    /// `\r`) is whitespace, and a cut there is after the fence. `None` while the fence is
    /// open.
    pub end: Option<usize>,
    /// The opening marker.
    pub marker: FenceMarker,
    /// The opening line was drained: the fence began before the current text.
    pub continued: bool,
    /// How many containers its lines must carry: a line that leaves one ends the fence.
    pub depth: u8,
}

impl FenceSpan {
    /// Whether a cut at byte `p` (text before `p` goes to one piece, the rest to the next)
    /// would fall inside this fence. Cutting right before the opening line or right after
    /// the closing marker is outside.
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        let after_start = p > self.start || (self.continued && p >= self.start);
        after_start && self.end.is_none_or(|end| p < end)
    }

    /// If byte `x` lies on this fence's opening or closing line (before the closing marker's
    /// end): that line's (start, end).
    pub(super) fn line_of(&self, x: usize) -> Option<(usize, usize)> {
        // A continued fence keeps what is left of its opening line (nothing, once drained).
        if x >= self.start && x < self.open_end {
            return Some((self.start, self.open_end));
        }
        match self.end {
            Some(end) if x >= self.close_start && x < end => Some((self.close_start, end)),
            _ => None,
        }
    }
}

/// An inline code span: from its opening backtick run to just past its closing run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodeSpan {
    /// The first byte of the opening backtick run.
    pub start: usize,
    /// The length of the opening (and closing) backtick run.
    pub run: usize,
    /// A line ended while the span was open (it goes on over lines, or, while still open,
    /// may be a stray backtick in a paragraph that goes on).
    pub crossed_line: bool,
    /// Just past the closing run; `None` while no closing run has arrived (it may never:
    /// an unmatched run is literal text, decided when its block ends).
    pub end: Option<usize>,
}

impl CodeSpan {
    /// Whether a cut at byte `p` falls strictly inside this span.
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        p > self.start && self.end.is_none_or(|end| p < end)
    }
}

/// An indented code block: lines indented by 4 or more columns that follow a blank line
/// (or start the text), up to the last such line before a line indented less.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IndentedSpan {
    /// Where its first line starts (the indentation included).
    pub start: usize,
    /// Just past the last non-whitespace byte of its last line; `None` while a later line
    /// may still continue it.
    pub end: Option<usize>,
    /// The quote markers its first line's container prefix holds, as a synthetic line
    /// shows them (through the last `>`; list markers and digits as spaces, see
    /// [`ContainerPrefix`]); empty outside block quotes. A piece that goes on in the middle
    /// of one of its lines repeats it before the code's indentation, so the rest of the line
    /// stays code in the quote.
    pub quote: ContainerPrefix,
}

impl IndentedSpan {
    /// Whether a cut at byte `p` falls inside this block.
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        p > self.start && self.end.is_none_or(|end| p < end)
    }
}

//! GFM tables, as the scanner reads them: a header row, a delimiter row with as many cells,
//! then body rows up to a blank line or a line that starts another block.
//!
//! A table renders only while its header row and delimiter row stand together at the top:
//! cut between them, or cut off a continuation from them, and every row shows as raw pipes.
//! So a cut inside a table is treated like a cut inside a fence: avoided while a cut outside
//! exists, and when a table longer than a piece must be cut, made between two rows, the
//! next piece starting with the header and delimiter rows again (synthetic, like a reopened
//! fence line).
//!
//! The rules follow the renderer the tests judge with (pulldown-cmark, GFM tables): the
//! header row holds an unescaped `|`, and either starts a paragraph or starts with `|`
//! (then it may interrupt one); the delimiter row is, after at most 3 spaces, cells of
//! `-` (at least one per cell) with optional `:` at either end, separated by `|`, holding at
//! least one `|` and one `-`, and has as many cells as the header; a body row is any line up
//! to a blank line or one that starts another block (a heading, a list item, a block quote,
//! a fence line). A line without a pipe after the rows is still a row, as GFM reads it.

use memchr::memchr_iter;

/// A table found in the scanned text. Offsets are byte offsets into the text the scanner
/// was given (after any drain).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableSpan {
    /// Where the header row starts. 0 when it was drained away (see `continued`).
    pub start: usize,
    /// Where the delimiter row ends (the position of its `\n`, or the end of the text):
    /// `text[start..delim_end]` is the header and delimiter rows.
    pub delim_end: usize,
    /// Where the first body row starts (just past the delimiter row's `\n`): after a drain
    /// that took the delimiter row, 0.
    pub rows_start: usize,
    /// Just past the last non-whitespace byte of the last row; `None` while more rows may
    /// come.
    pub end: Option<usize>,
    /// The header row was drained: the table began before the current text.
    pub continued: bool,
    /// The bytes of the header row's line before its content: the container prefix of a
    /// table in a list item or a block quote (a repeated header shows it blanked, as a
    /// fence's reopening line does: `>` and tabs kept, list markers as spaces), its
    /// indentation outside containers.
    pub prefix_len: usize,
    /// The prefix holds list items only (no quote marker, no tab): blanked, it is
    /// `prefix_len` columns of spaces.
    pub items_only: bool,
}

impl TableSpan {
    /// Whether a cut at byte `p` falls inside this table (right before its header row, or
    /// right after its last row's last char, is outside).
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        let after_start = p > self.start || (self.continued && p >= self.start);
        after_start && self.end.is_none_or(|end| p < end)
    }
}

/// A line that may be a table's header row: where it starts and ends, and its cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeaderCandidate {
    /// Where the line starts.
    pub start: usize,
    /// The number of cells the delimiter row must have. (Small fields: the scanner holds
    /// one candidate inline, and a stream holds several scanners within its memory budget.)
    pub cells: u16,
    /// The bytes of its container prefix: its content starts at `start + prefix`.
    pub prefix: u16,
    /// How many containers it lies in: the delimiter and body rows must carry the same.
    pub depth: u8,
}

/// The number of cells of a header row `line` (without its `\n`), counting its unescaped
/// pipes as GFM does: a leading pipe opens no cell, a trailing one closes the last. `None`
/// when the line holds no unescaped pipe.
pub(crate) fn header_cells(line: &[u8]) -> Option<usize> {
    let mut pipes = 0;
    let mut last_pipe = 0;
    for i in memchr_iter(b'|', line) {
        // A pipe right after a backslash is escaped (pulldown-cmark reads `\\|` so too).
        if i == 0 || line[i - 1] != b'\\' {
            pipes += 1;
            last_pipe = i;
        }
    }
    if pipes == 0 {
        return None;
    }
    let lead = line
        .iter()
        .position(|&b| b != b' ' && b != b'\t')
        .unwrap_or(line.len());
    let mut cells = pipes;
    if line.get(lead) == Some(&b'|') {
        cells -= 1;
    }
    let after_last = &line[last_pipe + 1..];
    if !after_last
        .iter()
        .all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
    {
        cells += 1;
    }
    Some(cells)
}

/// The number of cells of `line` (without its `\n`) read as a delimiter row, or `None` when
/// it is not one.
pub(crate) fn delimiter_cells(line: &[u8]) -> Option<usize> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let indent = line.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 || indent == line.len() {
        return None;
    }
    let mut rest = &line[indent..];
    let mut found_pipe = false;
    if rest.first() == Some(&b'|') {
        rest = &rest[1..];
        found_pipe = true;
    }
    let (mut cells, mut in_cell, mut hyphen, mut any_hyphen) = (0, false, false, false);
    for &b in rest {
        match b {
            b' ' => {}
            b':' => in_cell = true,
            b'-' => {
                in_cell = true;
                hyphen = true;
                any_hyphen = true;
            }
            b'|' => {
                if !hyphen {
                    return None;
                }
                found_pipe = true;
                cells += 1;
                in_cell = false;
                hyphen = false;
            }
            _ => return None,
        }
    }
    if in_cell {
        cells += 1;
    }
    (found_pipe && any_hyphen).then_some(cells)
}

/// What a line that ended was, as far as tables care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableLine {
    /// A line of text (outside code): blank, an ATX heading, or the start of a list item or
    /// block quote (which interrupt a table), or else a paragraph's line. Inside containers
    /// (list items, block quotes) the line is read from its content on: a table there
    /// goes on only over lines that carry the same containers.
    Text {
        /// Only spaces and tabs (after the container prefix).
        blank: bool,
        /// An ATX heading.
        heading: bool,
        /// Its content starts a block of its own (a list item or block quote nested
        /// deeper than the containers read, a thematic break).
        block: bool,
        /// Where its content starts (past the container prefix).
        content: usize,
        /// How many containers its content lies in.
        depth: u8,
        /// It opened a container (a list item or quote starts on it): a new block.
        opened: bool,
        /// It keeps containers only as a paragraph's lazy continuation.
        lazy: bool,
    },
    /// A fence line or a line of code: no table goes on through it.
    Break,
}

/// The table part of the scanner's state: the tables found, the one still taking rows, the
/// line that may turn out to be a header row, and what the current line holds so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableState {
    /// Tables in order; only the last one may be open.
    spans: Vec<TableSpan>,
    /// Just past the last non-whitespace byte of the open table's last row.
    rows_end: usize,
    /// How many containers the open table lies in.
    open_depth: u8,
    /// The last line ended may be a header row: decided when the next line ends.
    head: Option<HeaderCandidate>,
    /// The last line ended leaves a paragraph open (a header row that does not start with
    /// `|` must start a paragraph).
    para_open: bool,
    /// The current line holds an unescaped-or-not `|` so far.
    pub(crate) line_pipe: bool,
    /// The current line starts with `|` after at most 3 spaces.
    pub(crate) line_starts_pipe: bool,
}

impl TableState {
    /// Forgets everything, keeping the vector's capacity.
    pub(crate) fn reset(&mut self) {
        self.spans.clear();
        self.rows_end = 0;
        self.open_depth = 0;
        self.head = None;
        self.para_open = false;
        self.new_line();
    }

    /// A new line starts.
    #[inline]
    pub(crate) fn new_line(&mut self) {
        self.line_pipe = false;
        self.line_starts_pipe = false;
    }

    /// The table still taking rows, if any.
    pub(crate) fn open(&self) -> Option<&TableSpan> {
        self.spans.last().filter(|t| t.end.is_none())
    }

    /// The table that a cut at `p` falls inside, if any.
    pub(crate) fn table_at(&self, p: usize) -> Option<&TableSpan> {
        let i = self
            .spans
            .partition_point(|t| t.start < p || (t.continued && t.start <= p));
        let t = self.spans[..i].last()?;
        t.contains_cut(p).then_some(t)
    }

    /// Where the line that may still turn out to be a header row starts, if any.
    pub(crate) fn pending_head(&self) -> Option<usize> {
        self.head.map(|h| h.start)
    }

    /// Whether a cut at `p` may fall inside a table: inside a known one, after a line that
    /// may be a header row, or inside the current line (starting at `line_start`; a line of
    /// paragraph text, not a list item's, quote's or heading's, when `text_line`) while it
    /// holds a pipe and may be a header row.
    #[inline]
    pub(crate) fn blocks_cut(&self, p: usize, line_start: usize, text_line: bool) -> bool {
        (!self.spans.is_empty() && self.table_at(p).is_some())
            || self.head.is_some_and(|h| p > h.start)
            || (text_line
                && self.line_pipe
                && p > line_start
                && (self.line_starts_pipe || !self.para_open))
    }

    /// [`TableState::line_end`] for a text line that is `blank` or a `heading` or neither,
    /// when that is all it needs to know: no table open, none pending, no pipe in the line
    /// (the usual line). Returns whether it was that case; else nothing changed.
    #[inline]
    pub(crate) fn quiet_text_line_end(&mut self, blank: bool, heading: bool) -> bool {
        let quiet = self.head.is_none()
            && !self.line_pipe
            && self.spans.last().is_none_or(|t| t.end.is_some());
        if quiet {
            self.para_open = !blank && !heading;
        }
        quiet
    }

    /// The line `bytes[line_start..line_end]` ended as `kind`. Returns the lowest position
    /// whose cut turned safe: a table ended, a line that might have been a header row was
    /// not one.
    #[inline]
    pub(crate) fn line_end(
        &mut self,
        bytes: &[u8],
        line_start: usize,
        line_end: usize,
        kind: TableLine,
    ) -> Option<usize> {
        if self.head.is_none()
            && !self.line_pipe
            && self.spans.last().is_none_or(|t| t.end.is_some())
        {
            // The usual line: no table open, none pending, no pipe (inlined: it is most
            // lines of a text).
            self.para_open = match kind {
                TableLine::Text { blank, heading, .. } => !blank && !heading,
                TableLine::Break => false,
            };
            return None;
        }
        self.table_line_end(bytes, line_start, line_end, kind)
    }

    /// [`TableState::line_end`] when a table is open or pending, or the line holds a pipe.
    #[inline(never)]
    fn table_line_end(
        &mut self,
        bytes: &[u8],
        line_start: usize,
        line_end: usize,
        kind: TableLine,
    ) -> Option<usize> {
        let line = &bytes[line_start..line_end];
        // Just past the line's last non-whitespace byte (asked only for table lines).
        let trimmed = || {
            line_start
                + line
                    .iter()
                    .rposition(|&b| !matches!(b, b' ' | b'\t' | b'\r'))
                    .map_or(0, |i| i + 1)
        };
        let (text, blank, heading, block, content, depth, opened, lazy) = match kind {
            TableLine::Text {
                blank,
                heading,
                block,
                content,
                depth,
                opened,
                lazy,
            } => (true, blank, heading, block, content, depth, opened, lazy),
            TableLine::Break => (false, false, false, false, line_start, 0, false, false),
        };
        let content = content.clamp(line_start, line_end);
        // A line of a paragraph or a table: a header row may start on one (a list item's
        // or quote's first line too); a delimiter or body row goes on in the same
        // containers only, carried, not lazily.
        let row = text && !blank && !heading && !block;
        let goes_on = |d: u8| row && !opened && !lazy && depth == d;
        let mut safe = None;
        if self.open().is_some() {
            if goes_on(self.open_depth) {
                self.rows_end = trimmed();
                self.new_line();
                return None;
            }
            safe = self.end_table();
        }
        if let Some(head) = self.head.take() {
            if goes_on(head.depth)
                && delimiter_cells(&bytes[content..line_end]) == Some(usize::from(head.cells))
            {
                self.spans.push(TableSpan {
                    start: head.start,
                    delim_end: line_end,
                    rows_start: line_end + 1,
                    end: None,
                    continued: false,
                    prefix_len: usize::from(head.prefix),
                    items_only: !bytes[head.start..head.start + usize::from(head.prefix)]
                        .iter()
                        .any(|&b| b == b'>' || b == b'\t'),
                });
                self.open_depth = depth;
                self.rows_end = trimmed();
                self.para_open = false;
                self.new_line();
                return None;
            }
            safe = Some(safe.map_or(head.start, |s: usize| s.min(head.start)));
        }
        // What `blocks_cut` held back in this line: a header row now waits for the next
        // line; anything else turns safe. A line that opens a container starts a new
        // paragraph.
        let para_open = self.para_open && !opened;
        if row && !lazy && self.line_pipe && (self.line_starts_pipe || !para_open) {
            // (A header of more cells or a longer prefix than the candidate holds is read
            // as text.)
            let cells = header_cells(&bytes[content..line_end]).and_then(|c| u16::try_from(c).ok());
            match (cells, u16::try_from(content - line_start)) {
                (Some(cells), Ok(prefix)) => {
                    self.head = Some(HeaderCandidate {
                        start: line_start,
                        cells,
                        prefix,
                        depth,
                    })
                }
                _ => safe = Some(safe.map_or(line_start, |s| s.min(line_start))),
            }
        }
        self.para_open = text && !blank && !heading;
        self.new_line();
        safe
    }

    /// Ends the open table, if any, after its last row. Returns where cuts turned safe.
    pub(crate) fn end_table(&mut self) -> Option<usize> {
        let end = self.rows_end;
        let t = self.spans.last_mut().filter(|t| t.end.is_none())?;
        let end = end.max(t.start);
        t.end = Some(end);
        Some(end)
    }

    /// No more text: the open table ends, and a line that may have been a header row is
    /// not one. Returns where cuts turned safe.
    pub(crate) fn finish(&mut self) -> Option<usize> {
        let a = self.end_table();
        let b = self.head.take().map(|h| h.start);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The consumer removed the first `n` bytes of its text.
    pub(crate) fn drain(&mut self, n: usize) {
        let keep = self
            .spans
            .partition_point(|t| t.end.is_some_and(|e| e <= n));
        self.spans.drain(..keep);
        for t in &mut self.spans {
            if t.start < n {
                t.continued = true;
            }
            t.start = t.start.saturating_sub(n);
            t.delim_end = t.delim_end.saturating_sub(n);
            t.rows_start = t.rows_start.saturating_sub(n);
            t.end = t.end.map(|e| e.saturating_sub(n));
        }
        self.rows_end = self.rows_end.saturating_sub(n);
        if let Some(h) = &mut self.head {
            h.start = h.start.saturating_sub(n);
        }
    }

    /// All tables found (the last may be open).
    #[cfg(test)]
    pub(crate) fn spans(&self) -> &[TableSpan] {
        &self.spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_header_cells_like_gfm() {
        assert_eq!(header_cells(b"| a | b |"), Some(2));
        assert_eq!(header_cells(b"a | b"), Some(2));
        assert_eq!(header_cells(b"| a | b"), Some(2));
        assert_eq!(header_cells(b"a | b |  "), Some(2));
        assert_eq!(header_cells(b"| a \\| x | b |"), Some(2), "escaped pipe");
        assert_eq!(
            header_cells(b"| a \\\\| b |"),
            Some(1),
            "as the renderer reads it"
        );
        assert_eq!(header_cells(b"no pipes"), None);
    }

    #[test]
    fn reads_delimiter_rows() {
        assert_eq!(delimiter_cells(b"|---|---|"), Some(2));
        assert_eq!(delimiter_cells(b"| :-- | --: | :-: |"), Some(3));
        assert_eq!(delimiter_cells(b"--- | ---"), Some(2));
        assert_eq!(delimiter_cells(b"   |---|\r"), Some(1));
        assert_eq!(delimiter_cells(b"---"), None, "no pipe: a thematic break");
        assert_eq!(delimiter_cells(b"|---||"), None, "back-to-back pipes");
        assert_eq!(delimiter_cells(b"| x |"), None);
        assert_eq!(delimiter_cells(b"    |---|"), None, "indented code");
    }
}

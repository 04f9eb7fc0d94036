//! The incremental Markdown scanner: where fences, code spans, indented code and tables are.

use memchr::{memchr, memrchr};

use super::containers::{
    ContainerPrefix, Containers, Continues, LineContent, decides_thematic_break,
};
use super::inline::{self, InlineScanner, InlineSpan};
use super::quoted::{QuotedLine, columns_past_quote};
use super::tables::{TableLine, TableSpan, TableState};

use super::lines::*;
use super::spans::*;

/// The text after the current line up to which [`MarkdownScanner::fence_stretch`] reads the
/// lines of a fence one by one (the text comes in small pieces) rather than searching for
/// its marker char (see [`fence_stretch_from`]): the searches' set-up would cost more than
/// the lines.
pub(super) const SHORT_FENCE_REST: usize = 64;

/// Whether the line at `line` may close a fence of `marker`: at most 3 spaces, then the
/// marker char or the end of the text (see [`FenceMarker::is_closed_by`]).
#[inline(always)]
fn may_close_fence(bytes: &[u8], line: usize, marker: u8) -> bool {
    let indent = bytes[line..]
        .iter()
        .take(4)
        .take_while(|&&b| b == b' ')
        .count();
    indent < 4 && bytes.get(line + indent).is_none_or(|&b| b == marker)
}

/// The start of the first line from `first` (a line's start) on that may close a fence of
/// `marker` (see [`may_close_fence`]), else the end of `bytes`. Such a line has its marker
/// char after at most 3 spaces: found by jumping between the marker chars (code holds
/// few), not by looking at every line. Else only the last line may, while the text ends
/// within its first 3 spaces.
#[inline(never)]
fn fence_stretch_from(bytes: &[u8], first: usize, marker: u8) -> usize {
    let mut at = first;
    while let Some(i) = memchr(marker, &bytes[at..]) {
        let m = at + i;
        let ls = memrchr(b'\n', &bytes[first..m]).map_or(first, |k| first + k + 1);
        if m - ls <= 3 && bytes[ls..m].iter().all(|&b| b == b' ') {
            return ls;
        }
        at = m + 1;
    }
    let last = memrchr(b'\n', &bytes[first..]).map_or(first, |k| first + k + 1);
    match may_close_fence(bytes, last, marker) {
        true => last,
        false => bytes.len(),
    }
}

/// The most bytes [`MarkdownScanner::scan`] reads inline (a word or two).
const SHORT_SCAN: usize = 16;

/// What the scanner knows about the line it is in the middle of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LineMode {
    /// Only the indentation seen (or the first bytes of a list, heading or fence marker):
    /// what kind of line this is is not decided yet.
    Start,
    /// Ordinary text outside a fence: inline code is tracked byte by byte.
    Text,
    /// Starts like a fence line (indent, then three backticks or tildes); decided at the
    /// line's end.
    MaybeFence,
    /// Inside an open fence: waiting for the line's end to test it as a closer.
    InFence,
    /// A line of an indented code block: nothing to track until its end.
    Indented,
}

/// Incremental scanner of fences, inline code spans and indented code blocks. See the
/// module docs.
#[derive(Clone, Debug)]
pub(crate) struct MarkdownScanner {
    /// Bytes of the text scanned so far.
    pos: usize,
    /// Where the current (possibly incomplete) line starts.
    line_start: usize,
    mode: LineMode,
    /// Whether the current line so far holds only spaces and tabs.
    line_blank: bool,
    /// The current text line is an ATX heading: an inline code span cannot go past its end.
    heading: bool,
    /// The current line starts a list item or a block quote.
    line_block: bool,
    /// An indented code block may start on the next line: at the start of the text and
    /// after a blank line, a heading or a fence's closing line (not after paragraph text).
    code_may_start: bool,
    /// Fences in order; only the last one may be open.
    fences: Vec<FenceSpan>,
    /// Inline code spans in order; only the last one may be open.
    codes: Vec<CodeSpan>,
    /// Indented code blocks in order; only the last one may be open.
    indented: Vec<IndentedSpan>,
    /// Just past the last non-whitespace byte of the last indented code line seen.
    indented_end: usize,
    /// Length of the opening run of the open code span (0 when none is open).
    code_open_len: usize,
    /// A backtick run that reached the end of the scanned text and may continue:
    /// (start, length so far).
    run: Option<(usize, usize)>,
    /// The lowest position whose cut turned from unsafe to safe since the last
    /// [`MarkdownScanner::take_newly_safe`] (an unmatched backtick run dropped, an undecided
    /// line that turned out to be text, an indented code block that ended).
    newly_safe: Option<usize>,
    /// When a block ends with an unmatched run, pair the runs after it (see
    /// [`MarkdownScanner::with_late_pairs`]).
    late_pairs: bool,
    /// GFM tables (see [`tables`](super::tables)).
    pub(super) tables: TableState,
    /// Whether links, images, autolinks and URLs are read (see [`inline`]): for consumers
    /// that cut; the tag and directive stages only ask about code.
    reads_inline: bool,
    /// Whether the text's byte 0 starts a line (false once a drain left the text starting
    /// after other text on its line: a `>` there is no quote marker).
    text_starts_line: bool,
    /// The reader of links, images, autolinks and URLs, fed the paragraph text.
    pub(super) inline: InlineScanner,
    /// The list items and block quotes open at the current line (see
    /// [`containers`](super::containers)).
    containers: Containers,
    /// The current line's container prefixes, once read (reading them again would read
    /// the containers it opens twice).
    content: Option<LineContent>,
    /// Where the list-item content column (see [`MarkdownScanner::item_column_at`])
    /// changes: (the start of the line from which it holds, the column), in order; before
    /// the first entry it is 0. One entry per change, not per line.
    item_columns: Vec<(usize, u16)>,
    /// A paragraph is open: the last line was paragraph text (a line leaving its
    /// containers may continue it lazily).
    paragraph: bool,
    /// Tests only: every line start takes the full path of
    /// [`MarkdownScanner::scan_line_start`] (no [`MarkdownScanner::plain_line_start`]), to
    /// check that the fast path reads lines as it does.
    #[cfg(test)]
    pub(super) full_line_starts: bool,
}

impl Default for MarkdownScanner {
    fn default() -> Self {
        Self::new()
    }
}

impl MarkdownScanner {
    /// A scanner at the start of a text.
    pub(crate) fn new() -> Self {
        MarkdownScanner {
            pos: 0,
            line_start: 0,
            mode: LineMode::Start,
            line_blank: true,
            heading: false,
            line_block: false,
            code_may_start: true,
            fences: Vec::new(),
            codes: Vec::new(),
            indented: Vec::new(),
            indented_end: 0,
            code_open_len: 0,
            run: None,
            newly_safe: None,
            late_pairs: false,
            tables: TableState::default(),
            reads_inline: true,
            text_starts_line: true,
            inline: InlineScanner::new(),
            containers: Containers::default(),
            content: None,
            item_columns: Vec::new(),
            paragraph: false,
            #[cfg(test)]
            full_line_starts: false,
        }
    }

    /// Tests only: every line takes the full paths (no fast line start, no fast container
    /// reading of a line that starts with a letter).
    #[cfg(test)]
    pub(super) fn use_full_paths(&mut self) {
        self.full_line_starts = true;
        self.containers.full_reads = true;
    }

    /// A scanner that, when a block ends with an unmatched backtick run, pairs the runs
    /// after it in that block among themselves, as CommonMark does (`` ```` x `a` `` holds
    /// the span `` `a` ``). The plain scanner leaves them unpaired, which only ever makes
    /// cuts safer; consumers that must know exactly which text is code (the tag and
    /// directive stages) use this one.
    pub(crate) fn with_late_pairs() -> Self {
        MarkdownScanner {
            late_pairs: true,
            reads_inline: false,
            ..Self::new()
        }
    }

    /// Forgets everything, keeping the vectors' capacity.
    pub(crate) fn reset(&mut self) {
        self.pos = 0;
        self.text_starts_line = true;
        self.line_start = 0;
        self.mode = LineMode::Start;
        self.line_blank = true;
        self.heading = false;
        self.line_block = false;
        self.code_may_start = true;
        self.fences.clear();
        self.codes.clear();
        self.indented.clear();
        self.indented_end = 0;
        self.code_open_len = 0;
        self.run = None;
        self.newly_safe = None;
        self.tables.reset();
        self.inline.reset();
        self.containers.reset();
        self.content = None;
        self.item_columns.clear();
        self.paragraph = false;
    }

    /// Returns, and forgets, the lowest position `p` such that some cut at or after `p`
    /// turned from unsafe to safe since the previous call. Safety only ever changes in that
    /// direction, and only as lines are decided: an unmatched backtick run is dropped when
    /// its block ends, a line that might have opened a fence turns out to be ordinary text,
    /// an indented code block ends. Streaming consumers use this to revisit candidates they
    /// skipped.
    pub(crate) fn take_newly_safe(&mut self) -> Option<usize> {
        match (self.newly_safe.take(), self.inline.take_newly_safe()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether some cut turned safe since the last [`MarkdownScanner::take_newly_safe`]
    /// (without forgetting it).
    pub(crate) fn has_newly_safe(&self) -> bool {
        self.newly_safe.is_some() || self.inline.has_newly_safe()
    }

    fn mark_newly_safe(&mut self, from: usize) {
        self.newly_safe = Some(self.newly_safe.map_or(from, |p| p.min(from)));
    }

    /// How many bytes of the text have been scanned.
    pub(crate) fn scanned(&self) -> usize {
        self.pos
    }

    /// Where the current, not yet complete, line starts.
    pub(crate) fn line_start(&self) -> usize {
        self.line_start
    }

    /// Scans `text` from where the previous call stopped to its end. `text` must extend the
    /// text given before (minus what was drained). The last, unterminated line is scanned as
    /// far as it can be decided; call [`MarkdownScanner::finish`] when no more text will come.
    ///
    /// Inlined for the usual step of a streaming consumer, a word or two more of a text
    /// line with no byte [`MarkdownScanner::scan_text`] stops at: what that reading does
    /// then (the line's blankness, the position, the inline reader) without the call.
    #[inline]
    pub(crate) fn scan(&mut self, text: &str) {
        let bytes = text.as_bytes();
        if self.mode == LineMode::Text
            && self.run.is_none()
            && let Some(new) = bytes.get(self.pos..)
            && new.len() <= SHORT_SCAN
            && !tail_has_text_stop(bytes, self.pos)
        {
            if self.line_blank {
                self.line_blank = is_blank(new);
            }
            self.pos = bytes.len();
            self.feed_inline(bytes, bytes.len());
            return;
        }
        self.scan_lines(text);
    }

    /// [`MarkdownScanner::scan`] as a call: line after line.
    #[inline(never)]
    fn scan_lines(&mut self, text: &str) {
        let bytes = text.as_bytes();
        debug_assert!(self.pos <= bytes.len());
        while self.pos < bytes.len() {
            match self.mode {
                LineMode::Start => {
                    if !self.scan_line_start_outlined(bytes) {
                        return;
                    }
                }
                LineMode::Text => self.scan_text(bytes),
                LineMode::MaybeFence | LineMode::InFence | LineMode::Indented => {
                    match find_newline(&bytes[self.pos..]) {
                        Some(i) => {
                            let end = self.pos + i;
                            self.pos = end + 1;
                            if self.mode == LineMode::InFence && self.skip_fence_lines(bytes) {
                                continue;
                            }
                            self.end_line(text, end);
                        }
                        None => self.pos = bytes.len(),
                    }
                }
            }
        }
    }

    /// A line of an open fence outside containers ended (its `\n` just before `pos`): when
    /// it cannot close the fence (after at most 3 spaces, a byte other than the marker
    /// char: see [`FenceMarker::is_closed_by`]), passes over it and the complete lines
    /// after it that cannot either, in one go. For each, [`MarkdownScanner::end_line`]
    /// would only start the next line and [`MarkdownScanner::scan_line_start`] put it in
    /// the fence again: the same state whatever the number of lines. Returns whether it
    /// did (the next line starts at `pos`, in the fence); else the line is left to
    /// [`MarkdownScanner::end_line`].
    fn skip_fence_lines(&mut self, bytes: &[u8]) -> bool {
        let Some(ch) = self
            .open_fence()
            .filter(|f| f.depth == 0)
            .map(|f| f.marker.ch)
        else {
            return false;
        };
        // The test of `may_close_fence`, written out: called here, the function changed how
        // this one is inlined into `scan_text` and cost about 7 K instructions per
        // node-events text (callgrind).
        let may_close = |line: usize| {
            let indent = bytes[line..]
                .iter()
                .take(4)
                .take_while(|&&b| b == b' ')
                .count();
            indent < 4 && bytes.get(line + indent).is_none_or(|&b| b == ch)
        };
        if may_close(self.line_start) {
            return false;
        }
        // The next line that may close the fence is the first whose marker char comes after
        // at most 3 spaces: found by jumping between the marker chars (code holds few)
        // rather than from line to line. The last line, still incomplete, is left to `scan`.
        let from = self.pos;
        let last = memrchr(b'\n', &bytes[from..]).map_or(from, |i| from + i + 1);
        let mut at = from;
        let line = loop {
            let Some(i) = memchr(ch, &bytes[at..last]) else {
                break last;
            };
            let m = at + i;
            let ls = memrchr(b'\n', &bytes[from..m]).map_or(from, |i| from + i + 1);
            if m - ls <= 3 && bytes[ls..m].iter().all(|&b| b == b' ') {
                break ls;
            }
            at = m + 1;
        };
        self.pos = line;
        self.paragraph = false;
        if self.reads_inline {
            self.inline.skip_to(line);
        }
        self.start_line(line);
        self.mode = LineMode::InFence;
        true
    }

    /// Treats the end of `text` as the end of the last line (no more text will come):
    /// decides a pending line and closes a pending backtick run.
    pub(crate) fn finish(&mut self, text: &str) {
        self.scan(text);
        let end = text.len();
        self.decide_last_fence_line(text.as_bytes());
        self.read_last_containers(text.as_bytes());
        if self.line_start < end || self.run.is_some() {
            self.end_line(text, end);
            self.pos = end;
        }
        self.end_indented();
        if let Some(p) = self.tables.finish() {
            self.mark_newly_safe(p);
        }
        if let Some(p) = self.inline.quoted_mut().finish() {
            self.mark_newly_safe(p);
        }
    }

    /// The containers the line just read carries, opens and leaves (`c`, from
    /// [`Containers::read_line`]): noted for the line, which reads on from its content.
    #[inline(always)]
    fn take_containers(&mut self, c: LineContent) -> LineContent {
        self.content = Some(c);
        self.note_item_column(c.depth);
        if c.continues_list {
            // A list item its paragraph text would swallow in a piece that starts after its
            // list did (see `lists`).
            self.inline.push_list_item(self.line_start);
        }
        if c.opened {
            // The content of a new list item or quote starts a new block.
            self.code_may_start = true;
        }
        c
    }

    /// At the end of a finished text, a last line whose containers [`MarkdownScanner::scan`]
    /// could not read yet (the text ended first: `  * ` where a forced flush ended the
    /// line): the end of the text ends it, so they are read now. An empty item it opens
    /// ends the paragraph before it (the line's content is blank), so the next line is no
    /// lazy continuation of it. The line is read from a copy with a line break after it
    /// (on the stack: a line that long is text, never a prefix still to be told).
    fn read_last_containers(&mut self, bytes: &[u8]) {
        const MAX_LINE: usize = 128;
        let line = &bytes[self.line_start.min(bytes.len())..];
        if self.mode != LineMode::Start
            || self.content.is_some()
            || line.is_empty()
            || line.len() >= MAX_LINE
        {
            return;
        }
        let mut copy = [0u8; MAX_LINE];
        copy[..line.len()].copy_from_slice(line);
        copy[line.len()] = b'\n';
        let read = self
            .containers
            .read_line(&copy[..=line.len()], 0, self.paragraph);
        if let Some(c) = read {
            let at = (self.line_start + c.at).min(bytes.len());
            self.take_containers(LineContent { at, ..c });
        }
    }

    /// At the end of a finished text, a last line that [`MarkdownScanner::scan`] left
    /// undecided in a fence in containers (it ended inside their prefixes, `>` under
    /// `>   > `): the end of the text ends it, so whether it carries the fence's containers
    /// is told now. One that leaves them ends the fence before it, as a line followed by
    /// more text would; else it is a line of the fence.
    fn decide_last_fence_line(&mut self, bytes: &[u8]) {
        if self.mode != LineMode::Start || self.line_start >= bytes.len() {
            return;
        }
        let Some(depth) = self.open_fence().map(|f| usize::from(f.depth)) else {
            return;
        };
        if depth == 0 {
            return;
        }
        match self
            .containers
            .continues_at_end(bytes, self.line_start, depth)
        {
            Continues::Yes(content) => {
                self.content = Some(content);
                self.mode = LineMode::InFence;
            }
            Continues::No => self.end_fence_with_container(bytes),
            Continues::NotYet => {}
        }
    }

    /// After [`MarkdownScanner::finish`]: the end of `text` also ends its last block, so a
    /// code span still open there is literal and the runs after it pair among themselves
    /// (as at a blank line). Consumers that must know which text is code, rather than where
    /// a cut is safe, call this.
    pub(crate) fn end_block(&mut self, text: &str) {
        self.drop_unclosed_code(text.as_bytes(), text.len());
    }

    /// The fence that a cut at `p` would fall inside, if any.
    pub(crate) fn fence_at(&self, p: usize) -> Option<&FenceSpan> {
        // Fences are ordered and disjoint: the candidate is the last one starting before p
        // (most often the last one of all: cuts are asked about near the end).
        let before = |f: &FenceSpan| f.start < p || (f.continued && f.start <= p);
        let f = match self.fences.last() {
            Some(f) if before(f) => f,
            _ => {
                let i = self.fences.partition_point(before);
                self.fences[..i].last()?
            }
        };
        f.contains_cut(p).then_some(f)
    }

    /// The content column of the list items (those before any quote: in a quote nested in
    /// items, the column of its `>`; 0 outside any item) whose content holds the line with
    /// byte `p`, as the containers were read
    /// (lazy continuation lines included): the columns a message that starts there takes
    /// off its lines to show them as the item shows them (see `text::dedent`). A line not
    /// yet read counts as the line before it.
    pub(crate) fn item_column_at(&self, p: usize) -> usize {
        let i = self.item_columns.partition_point(|&(at, _)| at <= p);
        self.item_columns[..i]
            .last()
            .map_or(0, |&(_, c)| usize::from(c))
    }

    /// Records the list-item content column of the line just read (its containers were).
    fn note_item_column(&mut self, depth: u8) {
        let col = self.containers.item_column(usize::from(depth));
        let col = col.min(usize::from(u16::MAX)) as u16;
        let last = self.item_columns.last().map_or(0, |&(_, c)| c);
        if col != last {
            self.item_columns.push((self.line_start, col));
        }
    }

    /// The current line read as outside every container (content at its first byte): kept
    /// as its content, and `note_item_column(0)` told inline (outside containers the
    /// column is 0).
    #[inline]
    fn top_level_line(&mut self) -> LineContent {
        let c = LineContent::at_line_start(self.line_start, 0, false);
        self.content = Some(c);
        if self.item_columns.last().is_some_and(|&(_, col)| col != 0) {
            self.item_columns.push((self.line_start, 0));
        }
        c
    }

    /// The inline code span that a cut at `p` would fall inside, if any.
    pub(crate) fn code_at(&self, p: usize) -> Option<&CodeSpan> {
        let c = match self.codes.last() {
            Some(c) if c.start < p => c,
            _ => {
                let i = self.codes.partition_point(|c| c.start < p);
                self.codes[..i].last()?
            }
        };
        c.contains_cut(p).then_some(c)
    }

    /// The indented code block that a cut at `p` would fall inside, if any.
    pub(crate) fn indented_at(&self, p: usize) -> Option<&IndentedSpan> {
        let c = match self.indented.last() {
            Some(c) if c.start < p => c,
            _ => {
                let i = self.indented.partition_point(|c| c.start < p);
                self.indented[..i].last()?
            }
        };
        c.contains_cut(p).then_some(c)
    }

    /// The link, image, autolink or URL that a cut at `p` would fall inside, if any (one
    /// still undecided counts: see [`inline`]).
    #[inline]
    pub(crate) fn inline_at(&self, p: usize) -> Option<InlineSpan> {
        if !self.reads_inline {
            return None;
        }
        self.inline.span_at(p)
    }

    /// The emphasis, strong emphasis and strikethrough delimiters a cut at `p` leaves open
    /// before it, outermost first (see [`InlineScanner::emphasis_at`]).
    #[inline]
    pub(crate) fn emphasis_at(&self, p: usize) -> inline::SpanDelims {
        if !self.reads_inline {
            return inline::SpanDelims::NONE;
        }
        self.inline.emphasis_at(p)
    }

    /// Whether `p` lies inside the current line while that line's kind is still undecided
    /// (it may be a fence line; it may end an inline code span; it may be indented code).
    pub(crate) fn in_undecided_fence_line(&self, p: usize) -> bool {
        matches!(self.mode, LineMode::MaybeFence | LineMode::Start) && p > self.line_start
    }

    /// Whether a cut at `p` breaks no fence, no inline code span, no indented code block and
    /// no undecided line, and starts no message before a quoted line it would show as
    /// indented code (see [`super::quoted`]).
    pub(crate) fn is_safe_cut(&self, p: usize) -> bool {
        self.fence_at(p).is_none()
            && self.code_at(p).is_none()
            && self.indented_at(p).is_none()
            && !self.in_undecided_fence_line(p)
            && !self.table_blocks_cut(p)
            && self.inline_at(p).is_none()
            && !self.inline.quoted().blocks_cut(p)
    }

    /// Whether a cut at `p` breaks no fence, no inline code span, no indented code block, no
    /// undecided line and no link, image, autolink or URL (tables are ignored: for a row
    /// longer than a piece).
    pub(crate) fn is_safe_cut_in_table(&self, p: usize) -> bool {
        self.is_safe_cut_in_table_link(p) && self.inline_at(p).is_none()
    }

    /// [`MarkdownScanner::is_safe_cut_in_table`] with links, images, autolinks and URLs
    /// ignored too: for a row longer than a piece whose window holds no cut outside them.
    pub(crate) fn is_safe_cut_in_table_link(&self, p: usize) -> bool {
        self.fence_at(p).is_none()
            && self.code_at(p).is_none()
            && self.indented_at(p).is_none()
            && !self.in_undecided_fence_line(p)
    }

    /// Whether a cut at `p` breaks nothing [`MarkdownScanner::is_safe_cut`] checks, apart
    /// from starting a message before a quoted line it would show as indented code: for a
    /// stretch before such a line that is longer than a piece.
    pub(crate) fn is_safe_cut_in_quoted_stretch(&self, p: usize) -> bool {
        self.is_safe_cut_in_link(p) && self.inline_at(p).is_none()
    }

    /// Whether a cut at `p` may fall inside a table (a known one, or lines that may still
    /// turn out to start one).
    #[inline]
    pub(crate) fn table_blocks_cut(&self, p: usize) -> bool {
        // A heading's line, or one whose content starts a block, is never a header row.
        let text_line = self.mode == LineMode::Text && !self.line_block && !self.heading;
        self.tables.blocks_cut(p, self.line_start, text_line)
    }

    /// The table that a cut at `p` would fall inside, if any.
    pub(crate) fn table_at(&self, p: usize) -> Option<&TableSpan> {
        self.tables.table_at(p)
    }

    /// Where a line that may still turn out to be a table's header row starts, if any
    /// (a consumer that drops text keeps it).
    pub(crate) fn pending_table_head(&self) -> Option<usize> {
        self.tables.pending_head()
    }

    /// The table still taking rows at the end of the scanned text, if any.
    pub(crate) fn open_table(&self) -> Option<&TableSpan> {
        self.tables.open()
    }

    /// Whether a cut at `p` breaks no fence, no indented code block and no undecided line
    /// (inline code spans are ignored: for a span longer than a piece).
    pub(crate) fn is_safe_cut_in_code_span(&self, p: usize) -> bool {
        self.fence_at(p).is_none()
            && self.indented_at(p).is_none()
            && !self.in_undecided_fence_line(p)
            && !self.table_blocks_cut(p)
            && self.inline_at(p).is_none()
    }

    /// Whether a cut at `p` breaks no code, no table and no undecided line (links, images,
    /// autolinks and URLs are ignored: for a window that holds no cut outside them).
    pub(crate) fn is_safe_cut_in_link(&self, p: usize) -> bool {
        self.fence_at(p).is_none()
            && self.code_at(p).is_none()
            && self.indented_at(p).is_none()
            && !self.in_undecided_fence_line(p)
            && !self.table_blocks_cut(p)
    }

    /// While a fence is open at the end of the scanned text: how far `text` (which extends
    /// the scanned text) goes on from there with no line that might close the fence. The
    /// stretch ends at the start of the first line, the current one included, whose first
    /// byte after at most 3 spaces is the fence's marker char or has not arrived yet (a
    /// closing line needs that byte; see [`FenceMarker::is_closed_by`]); else at the end of
    /// `text`. It is empty when the current line might close the fence. Scanning the stretch
    /// ends only lines that leave the fence open: no fence or code span opens or closes and
    /// no cut turns safe. `None` when no fence is open, or the open fence is in containers.
    /// Cost: past a short rest, a search for the marker char over the stretch (code holds
    /// few) and a look back to its line's start for each one found, not a look at every
    /// line.
    pub(crate) fn fence_stretch(&self, text: &str) -> Option<usize> {
        let open = self.open_fence()?;
        if open.depth > 0 {
            // Any line may leave the fence's containers: no stretch is known (the consumer
            // reads it line by line, as outside fences).
            return None;
        }
        let marker = open.marker.ch;
        let bytes = text.as_bytes();
        debug_assert!(self.pos <= bytes.len());
        let mut line = self.line_start;
        loop {
            if may_close_fence(bytes, line, marker) {
                return Some(line.max(self.pos));
            }
            // The current line has no `\n` before `pos`; later lines start after it.
            let from = line.max(self.pos);
            match memchr(b'\n', &bytes[from..]) {
                Some(i) => line = from + i + 1,
                None => return Some(bytes.len()),
            }
            if bytes.len() - line > SHORT_FENCE_REST {
                return Some(fence_stretch_from(bytes, line, marker));
            }
        }
    }

    /// The fence still open at the end of the scanned text, if any.
    pub(crate) fn open_fence(&self) -> Option<&FenceSpan> {
        self.fences.last().filter(|f| f.end.is_none())
    }

    /// Where the backtick run of the inline code span still open at the end of the scanned
    /// text starts, if one is open. Until its block ends it may prove unmatched, and then
    /// (with late pairs) the runs after it are paired among themselves: a consumer that
    /// drops text must keep the run and everything after it.
    pub(crate) fn open_code_start(&self) -> Option<usize> {
        if self.code_open_len == 0 {
            return None;
        }
        self.codes.last().map(|c| c.start)
    }

    /// The first *content* byte of `text[from..to]`: a byte that is not whitespace, not on a
    /// fence's opening or closing line, and not on a line whose kind is still undecided.
    /// `Err(resume)` when there is none yet: no content lies in `from..resume`, and asking
    /// again from `resume` (once more text is scanned) continues the search. `text` must be
    /// scanned through `to`. Cost: the whitespace and fence lines skipped.
    pub(crate) fn first_content(&self, text: &str, from: usize, to: usize) -> Result<usize, usize> {
        let bytes = text.as_bytes();
        let mut x = from;
        while x < to {
            if is_space(bytes[x]) || is_quote_marker(bytes, x, self.text_starts_line) {
                x += 1;
                continue;
            }
            if x >= self.line_start && self.current_line_undecided(bytes) {
                return Err(x.min(self.line_start.max(from)));
            }
            match self.fence_line_of(x) {
                Some((_, end)) => x = end,
                None => return Ok(x),
            }
        }
        Err(to.max(from))
    }

    /// The last content byte of `text[from..to]` (see [`MarkdownScanner::first_content`]).
    pub(crate) fn last_content(&self, text: &str, from: usize, to: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        let mut x = to;
        while x > from {
            let y = x - 1;
            if is_space(bytes[y]) || is_quote_marker(bytes, y, self.text_starts_line) {
                x = y;
                continue;
            }
            if y >= self.line_start && self.current_line_undecided(bytes) {
                x = self.line_start;
                continue;
            }
            match self.fence_line_of(y) {
                Some((start, _)) => x = start,
                None => return Some(y),
            }
        }
        None
    }

    /// Whether the last line of `text` (scanned through its end) is still undecided: it may
    /// turn out to be a fence line, so whether it holds content is not known yet.
    pub(crate) fn last_line_undecided(&self, text: &str) -> bool {
        self.line_start < text.len() && self.current_line_undecided(text.as_bytes())
    }

    /// Whether a cut at `p` would start a message before a quoted line that it would show as
    /// indented code, or in a quoted line whose next line is not read yet (see `quoted`).
    #[inline]
    pub(crate) fn blocks_quoted_cut(&self, p: usize) -> bool {
        self.inline.quoted().blocks_cut(p)
    }

    /// Whether a cut at `p` falls in the last quoted line (or the lines going on with it)
    /// while the line after it is not read yet (see `quoted`).
    #[inline]
    pub(crate) fn quoted_cut_undecided(&self, p: usize) -> bool {
        self.inline.quoted().undecided_at(p)
    }

    /// Whether the line after a quoted one is being read, its prefix not decided yet.
    #[inline]
    pub(crate) fn quoted_line_pending(&self) -> bool {
        self.inline.quoted().is_pending()
    }

    /// Whether cuts in the last quoted line (or the lines going on with it) wait for the
    /// line after it, which may be one that a message starting in them would show as
    /// indented code (see `quoted`).
    #[inline]
    pub(crate) fn quoted_line_undecided(&self) -> bool {
        !self.inline.quoted().is_idle()
    }

    /// Whether the current line cannot yet tell content from a fence line.
    // Inlined for the mode's test (the compiler kept a call for it), the line in a fence
    // read in a call.
    #[inline(always)]
    fn current_line_undecided(&self, bytes: &[u8]) -> bool {
        match self.mode {
            LineMode::Start | LineMode::MaybeFence => true,
            LineMode::InFence => self.fence_line_undecided(bytes),
            LineMode::Text | LineMode::Indented => false,
        }
    }

    /// [`MarkdownScanner::current_line_undecided`] in a fence: a line inside a fence may
    /// close it only while it holds nothing but spaces, then marker chars, then spaces and
    /// tabs.
    #[inline(never)]
    fn fence_line_undecided(&self, bytes: &[u8]) -> bool {
        let marker = self.open_fence().map_or(b'`', |f| f.marker.ch);
        let from = self.content.map_or(self.line_start, |c| c.at);
        let line = &bytes[from.min(self.pos)..self.pos.min(bytes.len())];
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        let run = line[indent..].iter().take_while(|&&b| b == marker).count();
        indent < 4
            && line[indent + run..]
                .iter()
                .all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
            && (run > 0 || indent == line.len())
    }

    /// The opening or closing fence line that byte `x` lies on, if any: (start, end).
    fn fence_line_of(&self, x: usize) -> Option<(usize, usize)> {
        // Most questions are about text after the last fence: answer those at once.
        let last = self.fences.last()?;
        if last.end.is_some_and(|end| x >= end) {
            return None;
        }
        let i = self.fences.partition_point(|f| f.start <= x || f.continued);
        self.fences[..i].last()?.line_of(x)
    }

    /// All fences found (the last may be open), in order; drained ones are gone.
    pub(crate) fn fences(&self) -> &[FenceSpan] {
        &self.fences
    }

    /// All inline code spans found (the last may be open).
    #[cfg(test)]
    pub(crate) fn code_spans(&self) -> &[CodeSpan] {
        &self.codes
    }

    /// All indented code blocks found (the last may be open).
    #[cfg(test)]
    pub(crate) fn indented_blocks(&self) -> &[IndentedSpan] {
        &self.indented
    }

    /// How many bytes (at most `n`) a consumer may drain from the front of its text: the
    /// inline reading keeps what it still reads (see [`InlineScanner::keep_from`]).
    pub(crate) fn drain_limit(&self, n: usize) -> usize {
        match self.reads_inline {
            true => self.inline.keep_from(n),
            false => n,
        }
    }

    /// Tells whether the text, after a drain, starts a line (`false`: it starts after
    /// other text on its line). Read where a `>` at byte 0 may be a quote marker.
    pub(crate) fn set_text_starts_line(&mut self, starts_line: bool) {
        self.text_starts_line = starts_line;
    }

    /// The consumer removed the first `n` bytes of its text: drop spans that ended there and
    /// shift the rest. A fence that straddles the cut keeps going, marked `continued`.
    pub(crate) fn drain(&mut self, n: usize) {
        if n == 0 {
            return;
        }
        let keep_f = self
            .fences
            .partition_point(|f| f.end.is_some_and(|e| e <= n));
        self.fences.drain(..keep_f);
        for f in &mut self.fences {
            if f.start < n {
                f.continued = true;
            }
            f.start = f.start.saturating_sub(n);
            f.open_end = f.open_end.saturating_sub(n);
            f.close_start = f.close_start.saturating_sub(n);
            f.end = f.end.map(|e| e - n);
        }
        let keep_c = self
            .codes
            .partition_point(|c| c.end.is_some_and(|e| e <= n));
        self.codes.drain(..keep_c);
        for c in &mut self.codes {
            c.start = c.start.saturating_sub(n);
            c.end = c.end.map(|e| e - n);
        }
        let keep_i = self
            .indented
            .partition_point(|c| c.end.is_some_and(|e| e <= n));
        self.indented.drain(..keep_i);
        for c in &mut self.indented {
            c.start = c.start.saturating_sub(n);
            c.end = c.end.map(|e| e - n);
        }
        self.indented_end = self.indented_end.saturating_sub(n);
        // The last change at or before `n` still holds there.
        let keep_k = self
            .item_columns
            .partition_point(|&(at, _)| at <= n)
            .saturating_sub(1);
        self.item_columns.drain(..keep_k);
        for (at, _) in &mut self.item_columns {
            *at = at.saturating_sub(n);
        }
        if let Some((s, l)) = self.run {
            self.run = Some((s.saturating_sub(n), l));
        }
        self.tables.drain(n);
        self.newly_safe = self.newly_safe.map(|p| p.saturating_sub(n));
        self.pos = self.pos.saturating_sub(n);
        self.line_start = self.line_start.saturating_sub(n);
        if let Some(c) = &mut self.content {
            c.at = c.at.saturating_sub(n);
        }
        self.inline.drain(n);
    }

    /// Decides, from the start of a line, what kind of line it is. Returns false when the
    /// text ends before that can be told (the bytes are looked at again with more text).
    ///
    /// Inlined in [`MarkdownScanner::scan_text`], where most lines start (a call there
    /// cost as much as much of its work); [`MarkdownScanner::scan`] calls it through
    /// [`MarkdownScanner::scan_line_start_outlined`].
    /// With `plain_tried`, the caller found that [`MarkdownScanner::plain_line_start`]
    /// does not read the line: it is asked again only if the line ends a fence.
    #[inline(always)]
    fn scan_line_start(&mut self, bytes: &[u8], plain_tried: bool) -> bool {
        let mut plain_may_read = !plain_tried;
        if let Some(depth) = self.open_fence().map(|f| f.depth) {
            // Only a closing line matters in a fence; it is told at the line's end. A line
            // of a fence in containers must carry them: one that leaves one ends the fence.
            if depth == 0 {
                self.mode = LineMode::InFence;
                return true;
            }
            match self
                .containers
                .continues(bytes, self.line_start, usize::from(depth))
            {
                Continues::NotYet => return false,
                Continues::Yes(content) => {
                    self.content = Some(content);
                    self.mode = LineMode::InFence;
                    return true;
                }
                Continues::No => {
                    self.end_fence_with_container(bytes);
                    plain_may_read = true;
                }
            }
        }
        if plain_may_read && self.plain_line_start(bytes) {
            return true;
        }
        // The containers the line carries, opens and leaves.
        let content = match self.content {
            Some(c) => c,
            // Outside containers, a line whose first byte can start no container marker
            // (a blank line, a heading, HTML, a link) has its content at its start: what
            // reading its prefixes finds, without reading them.
            None if self.containers.depth() == 0
                && bytes.get(self.line_start).is_some_and(|&b| {
                    !matches!(
                        b,
                        b' ' | b'\t' | b'>' | b'-' | b'*' | b'+' | b'_' | b'0'..=b'9'
                    )
                }) =>
            {
                self.top_level_line()
            }
            None => match self
                .containers
                .read_line(bytes, self.line_start, self.paragraph)
            {
                Some(c) => self.take_containers(c),
                None => return false,
            },
        };
        // The indentation, in columns (a tab goes to the next multiple of 4), from the
        // content's start: fences and indented code are told relative to their container.
        let mut p = self.pos.max(content.at);
        while p < bytes.len() && (bytes[p] == b' ' || bytes[p] == b'\t') {
            p += 1;
        }
        self.pos = p;
        let Some(&b) = bytes.get(p) else {
            return false;
        };
        let blank = b == b'\n' || b == b'\r';
        let columns = usize::from(content.carry)
            + bytes[content.at..p].iter().fold(0, |c, &b| {
                if b == b'\t' {
                    c + 4 - (content.col as usize + c) % 4
                } else {
                    c + 1
                }
            });
        // The prefix is a few bytes: a loop, not a call to a vector search (`contains`).
        #[allow(clippy::manual_contains)]
        let quoted = content.depth > 0
            && bytes[self.line_start..content.at]
                .iter()
                .any(|&b| b == b'>');
        let deep =
            !blank && self.inline.quoted().is_pending() && self.quoted_line_is_deep(bytes, columns);
        self.read_quoted_line(QuotedLine {
            quoted,
            blank,
            lazy: content.lazy,
            deep,
        });
        if blank {
            // A blank line (or one that may be: a lone `\r` is whitespace too).
            self.mode = LineMode::Text;
            return true;
        }
        if columns >= 4 {
            if self.code_may_start || self.in_indented() {
                if !self.in_indented() {
                    self.drop_unclosed_code(bytes, self.line_start);
                    // (Only a block in a quote reads its prefix: a quote marker there.)
                    let prefix = &bytes[self.line_start..content.at];
                    let quote = match quoted {
                        true => memrchr(b'>', prefix)
                            .and_then(|q| ContainerPrefix::blanked(&prefix[..=q]))
                            .unwrap_or(ContainerPrefix::NONE),
                        false => ContainerPrefix::NONE,
                    };
                    self.indented.push(IndentedSpan {
                        start: self.line_start,
                        end: None,
                        quote,
                    });
                }
                self.mode = LineMode::Indented;
            } else {
                // A paragraph's continuation line, however deeply indented.
                self.mode = LineMode::Text;
            }
            return true;
        }
        // A non-blank line indented less than 4 columns ends an indented code block.
        self.end_indented();
        self.tables.line_starts_pipe = b == b'|';
        match b {
            b'`' | b'~' => {
                // Three markers make a possible fence line; fewer followed by anything else
                // make ordinary text.
                let run = bytes[p..].iter().take(3).take_while(|&&x| x == b).count();
                if run >= 3 {
                    self.mode = LineMode::MaybeFence;
                } else if p + run == bytes.len() {
                    return false;
                } else {
                    self.mode = LineMode::Text;
                }
            }
            _ => match block_start(&bytes[p..]) {
                None => return false,
                Some(own) => {
                    // A line that opens a container starts a block too (its markers were
                    // read as containers). One that only carries the quotes it is in (its
                    // `>` markers) goes on with their paragraph: a code span or emphasis
                    // opened on the line before may close on it.
                    let kind = match content.opened {
                        true if own == BlockStart::None => BlockStart::Other,
                        _ => own,
                    };
                    if kind != BlockStart::None {
                        // An inline code span never crosses into another block.
                        self.drop_unclosed_code(bytes, self.line_start);
                    }
                    self.heading = kind == BlockStart::Heading;
                    // Tables read a line from its content on (the containers aside).
                    self.line_block = own == BlockStart::Other;
                    self.mode = LineMode::Text;
                }
            },
        }
        true
    }

    /// [`MarkdownScanner::scan_line_start`] as a call (one copy of it for the lines that
    /// [`MarkdownScanner::scan`] starts).
    #[inline(never)]
    fn scan_line_start_outlined(&mut self, bytes: &[u8]) -> bool {
        self.scan_line_start(bytes, false)
    }

    /// The usual line: it starts with a letter, outside any code block and container. It
    /// is text: reads it so and returns true; else false, nothing read. Inlined where a
    /// text line ends, so that most lines start without a call to
    /// [`MarkdownScanner::scan_line_start`] (whose first step this is).
    ///
    /// So is a line that starts with any other byte that starts no block there (see
    /// [`starts_plain_line`]: `<`, `[`, `!`, a non-ASCII letter, ...), as the full path
    /// reads it: its content at its start (no container marker, no indentation), no quote
    /// (no `>`), and [`block_start`] finds nothing. An ATX heading's line is read here
    /// too, as the full path reads it: it ends the block before it. So is a line that
    /// starts with a backtick or tilde (a possible fence line with three, else text), and
    /// one with a bullet (`-`, `*`, `+`) right before a byte other than whitespace: no
    /// list item (its marker needs whitespace after it), and a thematic break (`---`)
    /// reads as text too, once the line tells whether it is one.
    ///
    /// A blank line there (its first byte a `\n` or `\r`) is read here too, as the full
    /// path reads it: its content at its start, no container, no quote; and in containers
    /// (see [`MarkdownScanner::blank_item_line`]).
    #[inline(always)]
    fn plain_line_start(&mut self, bytes: &[u8]) -> bool {
        #[cfg(test)]
        if self.full_line_starts {
            return false;
        }
        if self.pos != self.line_start || self.open_fence().is_some() {
            return false;
        }
        if self.containers.depth() != 0 {
            return self.blank_item_line(bytes);
        }
        let mut mode = LineMode::Text;
        let blank = match bytes.get(self.pos) {
            Some(&b) if starts_plain_line(b) && !self.in_indented() => false,
            Some(b'#') if !self.in_indented() => {
                match block_start(&bytes[self.pos..]) {
                    None => return false,
                    Some(BlockStart::Heading) => {
                        // An inline code span never crosses into another block.
                        self.drop_unclosed_code(bytes, self.line_start);
                        self.heading = true;
                    }
                    Some(_) => {}
                }
                false
            }
            Some(&b @ (b'`' | b'~')) if !self.in_indented() => {
                // Three markers make a possible fence line; fewer followed by anything else
                // make ordinary text.
                let run = bytes[self.pos..]
                    .iter()
                    .take(3)
                    .take_while(|&&x| x == b)
                    .count();
                if run < 3 && self.pos + run == bytes.len() {
                    return false;
                }
                mode = if run >= 3 {
                    LineMode::MaybeFence
                } else {
                    LineMode::Text
                };
                false
            }
            // A bullet right before another byte than whitespace opens no list item; the
            // line is text once the line tells whether it is a thematic break (it is text
            // then too).
            Some(b'-' | b'*' | b'+')
                if !self.in_indented()
                    && bytes
                        .get(self.pos + 1)
                        .is_some_and(|&n| !matches!(n, b' ' | b'\t' | b'\n' | b'\r')) =>
            {
                if !decides_thematic_break(bytes, self.pos) {
                    return false;
                }
                false
            }
            Some(b'\n' | b'\r') if self.content.is_none() => true,
            _ => return false,
        };
        if blank {
            self.top_level_line();
        }
        self.mode = mode;
        // No quote goes on there.
        self.read_quoted_line(QuotedLine {
            quoted: false,
            blank,
            lazy: false,
            deep: false,
        });
        true
    }

    /// [`MarkdownScanner::plain_line_start`] in containers: a blank line (its first byte a
    /// `\n` or `\r`) is read as the full path reads it: the list items it goes on in (see
    /// [`Containers::read_line`]), its content at its start, no quote (no `>` before it),
    /// nothing deep. Any other line: false, nothing read.
    #[inline(always)]
    fn blank_item_line(&mut self, bytes: &[u8]) -> bool {
        if self.content.is_some() || !matches!(bytes.get(self.pos), Some(b'\n' | b'\r')) {
            return false;
        }
        let c = self.containers.blank_line(self.line_start);
        self.content = Some(c);
        self.note_item_column(c.depth);
        self.mode = LineMode::Text;
        self.read_quoted_line(QuotedLine {
            quoted: false,
            blank: true,
            lazy: false,
            deep: false,
        });
        true
    }

    /// Whether the current line, a non-blank one whose content stands `columns` past its
    /// containers' content, reads as indented code in a message that starts with it, and
    /// the reply reads it otherwise (see [`super::quoted`]).
    fn quoted_line_is_deep(&self, bytes: &[u8], columns: usize) -> bool {
        let Some(gap) = columns_past_quote(&bytes[self.line_start..]) else {
            return false;
        };
        // The reply's indented code right in the quote shows alike.
        let same_code = columns >= 4 && columns + 1 == gap;
        gap >= 5 && !(same_code && (self.code_may_start || self.in_indented()))
    }

    /// The current line was read as `line`, for the quoted lines (see [`super::quoted`]).
    /// Inlined: most lines are read with no quote around (a test and nothing more).
    #[inline(always)]
    fn read_quoted_line(&mut self, line: QuotedLine) {
        if !line.quoted && self.inline.quoted().is_idle() {
            return;
        }
        self.read_quoted_line_slow(line);
    }

    /// [`MarkdownScanner::read_quoted_line`] in or after a quote.
    #[inline(never)]
    fn read_quoted_line_slow(&mut self, line: QuotedLine) {
        let line_start = self.line_start;
        if let Some(p) = self.inline.quoted_mut().line_read(line_start, line) {
            self.mark_newly_safe(p);
        }
    }

    /// The line at `line_start` leaves a container of the open fence: the fence ends with
    /// its last line, before the line break (CommonMark closes it with its container).
    fn end_fence_with_container(&mut self, bytes: &[u8]) {
        let line_start = self.line_start;
        let Some(f) = self.fences.last_mut() else {
            return;
        };
        // A line that a flush ended has no `\n`: the fence ends where the next line starts.
        let newline = line_start > 0 && bytes.get(line_start - 1) == Some(&b'\n');
        // (The opening line's `\r` is the line break's, as the blank lines' are.)
        let open_end =
            f.open_end - usize::from(bytes.get(f.open_end.wrapping_sub(1)) == Some(&b'\r'));
        let mut end = (line_start - usize::from(newline)).max(open_end);
        // Blank lines before the line that leaves are no code a piece must close the fence
        // around: the fence ends with its last line that has content (they go with the
        // separator after it).
        while end > open_end && matches!(bytes.get(end - 1), Some(b'\r' | b'\n' | b' ' | b'\t')) {
            end -= 1;
        }
        f.close_start = end;
        f.end = Some(end);
        self.code_may_start = true;
        self.mark_newly_safe(end);
    }

    fn in_indented(&self) -> bool {
        self.indented.last().is_some_and(|c| c.end.is_none())
    }

    /// Ends the open indented code block, if any, after its last code line.
    // Inlined: it runs at each line start read in full, most often finding no block open
    // (the compiler kept a call for that test).
    #[inline(always)]
    fn end_indented(&mut self) {
        if let Some(c) = self.indented.last_mut()
            && c.end.is_none()
        {
            c.end = Some(self.indented_end);
            let end = self.indented_end;
            self.mark_newly_safe(end);
        }
    }

    /// Ordinary text: jump between backticks, pipes and newlines ([`find_text_stop`]), line
    /// after line while the lines are ordinary text (no trip through
    /// [`MarkdownScanner::scan`] between lines).
    fn scan_text(&mut self, bytes: &[u8]) {
        while self.pos < bytes.len() {
            if let Some((start, len)) = self.run {
                // Continue a backtick run that may have been cut by the end of a delta.
                let more = bytes[self.pos..].iter().take_while(|&&b| b == b'`').count();
                self.pos += more;
                if self.pos == bytes.len() {
                    self.run = Some((start, len + more));
                    self.feed_inline(bytes, start);
                    return;
                }
                self.run = None;
                self.on_run(bytes, start, len + more);
                continue;
            }
            // The next backtick, newline or pipe at or after `pos`.
            let Some(at) = find_text_stop(&bytes[self.pos..]).map(|i| self.pos + i) else {
                if self.line_blank {
                    self.line_blank = is_blank(&bytes[self.pos..]);
                }
                self.pos = bytes.len();
                self.feed_inline(bytes, bytes.len());
                return;
            };
            if self.line_blank {
                self.line_blank = is_blank(&bytes[self.pos..at]);
            }
            if bytes[at] == b'\n' {
                self.pos = at + 1;
                self.end_text_line(bytes);
                // Go on while the next line is ordinary text too. The inline reader reads
                // the lines in one go when they end (what it reads does not depend on how
                // the text is split, and what reads the inline state between lines, the end
                // of a block and a code span's opening run, feeds it first).
                if self.pos == bytes.len()
                    || !(self.plain_line_start(bytes) || self.scan_line_start(bytes, true))
                    || self.mode != LineMode::Text
                {
                    self.feed_inline(bytes, at + 1);
                    return;
                }
                continue;
            }
            self.line_blank = false;
            if bytes[at] == b'|' {
                self.tables.line_pipe = true;
                self.pos = at + 1;
                continue;
            }
            // A backtick run: read at once (as the continuation above would).
            // Most runs are one backtick (inline code): told without the loop, whose exit
            // was a branch mispredicted at most runs.
            let len = match bytes.get(at + 1) {
                Some(b'`') => bytes[at..].iter().take_while(|&&b| b == b'`').count(),
                _ => 1,
            };
            self.pos = at + len;
            if self.pos == bytes.len() {
                // It may go on in the next text.
                self.run = Some((at, len));
                self.feed_inline(bytes, at);
                return;
            }
            self.on_run(bytes, at, len);
        }
        // A `|` ended the text: the inline reader reads up to it too, or a delimiter run
        // after it would go unread while the text past it is planned.
        self.feed_inline(bytes, self.pos);
    }

    /// Feeds the inline reader the paragraph text through `to`.
    #[inline]
    fn feed_inline(&mut self, bytes: &[u8], to: usize) {
        if self.reads_inline {
            self.inline.feed(bytes, to);
        }
    }

    /// A complete backtick run at `start` of `len` backticks, outside fences.
    fn on_run(&mut self, bytes: &[u8], start: usize, len: usize) {
        if self.code_open_len == 0 {
            self.codes.push(CodeSpan {
                start,
                run: len,
                crossed_line: false,
                end: None,
            });
            self.code_open_len = len;
            if self.reads_inline {
                self.inline.code_opens(bytes, start);
            }
        } else if self.code_open_len == len {
            if let Some(c) = self.codes.last_mut() {
                c.end = Some(start + len);
            }
            self.code_open_len = 0;
            if self.reads_inline {
                self.inline.code_closes(start + len);
            }
        }
    }

    /// The end of a Text line (at its `\n`, already consumed).
    fn end_text_line(&mut self, bytes: &[u8]) {
        self.table_line_end(bytes, self.pos - 1);
        if self.line_blank || self.heading {
            // A blank line ends the paragraph, a heading is one line: an unmatched backtick
            // run in it is literal text.
            self.drop_unclosed_code(bytes, self.pos);
        }
        self.code_may_start = self.line_blank || self.heading;
        self.paragraph = !self.line_blank && !self.heading;
        self.start_line(self.pos);
    }

    /// The block that ends at `block_end` (at a blank line, a heading's end, or where a
    /// fence line, a list item, a block quote or indented code starts) leaves
    /// the open code span unmatched: its opening run is literal text. With `late_pairs`, the
    /// backtick runs after it in the block are then paired among themselves.
    // Inlined: it runs at every block end (each blank line), mostly to feed the inline
    // reader, and a call cost a good part of that.
    #[inline(always)]
    fn drop_unclosed_code(&mut self, bytes: &[u8], block_end: usize) {
        if self.reads_inline {
            // Inline spans end with their block too.
            self.inline.feed(bytes, block_end);
            self.inline.end_block(block_end);
        }
        if self.code_open_len != 0 {
            // An unmatched backtick run is literal text, not a span.
            if let Some(c) = self.codes.pop() {
                self.mark_newly_safe(c.start);
                if self.late_pairs {
                    let from = (c.start + self.code_open_len).min(block_end);
                    self.pair_runs(bytes, from, block_end);
                }
            }
            self.code_open_len = 0;
        }
    }

    /// Pairs the backtick runs of `bytes[from..to]` (the rest of an ended block) into code
    /// spans, left to right: each run is closed by the next run of the same length, or is
    /// literal when there is none.
    fn pair_runs(&mut self, bytes: &[u8], from: usize, to: usize) {
        let run_at = |at: usize| at + bytes[at..to].iter().take_while(|&&b| b == b'`').count();
        let mut i = from;
        while let Some(k) = memchr(b'`', &bytes[i..to]) {
            let start = i + k;
            let after = run_at(start);
            let mut j = after;
            let mut end = None;
            while let Some(k) = memchr(b'`', &bytes[j..to]) {
                let s = j + k;
                j = run_at(s);
                if j - s == after - start {
                    end = Some(j);
                    break;
                }
            }
            match end {
                Some(end) => {
                    self.codes.push(CodeSpan {
                        start,
                        run: after - start,
                        crossed_line: memchr(b'\n', &bytes[start..end]).is_some(),
                        end: Some(end),
                    });
                    i = end;
                }
                None => i = after,
            }
        }
    }

    fn start_line(&mut self, at: usize) {
        if self.code_open_len != 0
            && let Some(c) = self.codes.last_mut()
        {
            c.crossed_line = true;
        }
        self.line_start = at;
        if !self.inline.quoted().is_idle()
            && let Some(p) = self.inline.quoted_mut().line_starts()
        {
            self.mark_newly_safe(p);
        }
        self.content = None;
        self.mode = LineMode::Start;
        self.line_blank = true;
        self.heading = false;
        self.line_block = false;
        self.tables.new_line();
    }

    /// A text line (at its end `end`, before its `\n`) ends, for the tables.
    #[inline]
    fn table_line_end(&mut self, bytes: &[u8], end: usize) {
        if !self
            .tables
            .quiet_text_line_end(self.line_blank, self.heading)
        {
            self.table_text_line_end(bytes, end);
        }
    }

    /// [`MarkdownScanner::table_line_end`] when a table is open or pending, or the line
    /// holds a pipe.
    #[inline(never)]
    fn table_text_line_end(&mut self, bytes: &[u8], end: usize) {
        let content = self.content;
        let kind = TableLine::Text {
            blank: self.line_blank,
            heading: self.heading,
            block: self.line_block,
            content: content.map_or(self.line_start, |c| c.at),
            depth: content.map_or(0, |c| c.depth),
            opened: content.is_some_and(|c| c.opened),
            lazy: content.is_some_and(|c| c.lazy),
        };
        if let Some(p) = self.tables.line_end(bytes, self.line_start, end, kind) {
            self.mark_newly_safe(p);
        }
    }

    /// A fence line or a code line ends: no table goes on through it.
    fn table_break(&mut self, bytes: &[u8], end: usize) {
        if let Some(p) = self
            .tables
            .line_end(bytes, self.line_start, end, TableLine::Break)
        {
            self.mark_newly_safe(p);
        }
    }

    /// The end of a line (at byte `end`, which is its `\n` or the end of the text).
    fn end_line(&mut self, text: &str, end: usize) {
        let line = &text[self.line_start..end];
        // The line without its container prefixes (the whole line outside containers).
        let content_at = self
            .content
            .map_or(self.line_start, |c| c.at.clamp(self.line_start, end));
        let content_line = &text[content_at..end];
        self.paragraph = false;
        match self.mode {
            LineMode::InFence => {
                let open = self.fences.last_mut().expect("in fence");
                if open.marker.is_closed_by(content_line) {
                    let bytes = content_line.as_bytes();
                    let indent = bytes.iter().take_while(|&&b| b == b' ').count();
                    let run = bytes[indent..]
                        .iter()
                        .take_while(|&&b| b == open.marker.ch)
                        .count();
                    open.close_start = self.line_start;
                    open.end = Some(content_at + indent + run);
                    self.code_may_start = true;
                }
            }
            LineMode::Indented => {
                self.table_break(text.as_bytes(), end);
                let trimmed = line.trim_end_matches([' ', '\t', '\r']).len();
                self.indented_end = self.line_start + trimmed;
                self.code_may_start = false;
            }
            LineMode::MaybeFence | LineMode::Start => {
                let carry = self.content.map_or(0, |c| usize::from(c.carry));
                let prefix = &text.as_bytes()[self.line_start..content_at];
                // A fence in list items alone (no quote) that reads as a fence at the top
                // level too (3 spaces at most) keeps the top-level reading: a message that
                // lost the items shows it that way, so both agree on where it ends.
                let top = match prefix.contains(&b'>') {
                    false => FenceMarker::parse_open(line),
                    true => None,
                };
                let opener = match self.mode {
                    LineMode::MaybeFence if top.is_some() => top,
                    LineMode::MaybeFence => FenceMarker::parse_open(content_line)
                        .filter(|m| m.indent + carry <= 3)
                        .and_then(|m| {
                            Some(FenceMarker {
                                prefix: ContainerPrefix::blanked(prefix)?,
                                ..m
                            })
                        }),
                    _ => None,
                };
                let depth = match top {
                    Some(_) => 0,
                    None => self.content.map_or(0, |c| c.depth),
                };
                if let Some(marker) = opener {
                    self.table_break(text.as_bytes(), end);
                    self.drop_unclosed_code(text.as_bytes(), self.line_start);
                    self.fences.push(FenceSpan {
                        start: self.line_start,
                        open_end: end,
                        close_start: end,
                        end: None,
                        marker,
                        continued: false,
                        depth,
                    });
                } else if is_blank(content_line.as_bytes()) {
                    // (Blank past its container prefixes too: an empty list item, a bare
                    // `>`, read by `read_last_containers`.)
                    self.line_blank = true;
                    self.table_line_end(text.as_bytes(), end);
                    self.mark_newly_safe(self.line_start);
                    self.drop_unclosed_code(text.as_bytes(), self.line_start);
                    self.code_may_start = true;
                } else {
                    // Ordinary text after all: scan its inline code now.
                    self.mark_newly_safe(self.line_start);
                    let resume = self.pos.max(end);
                    self.pos = self.line_start;
                    self.mode = LineMode::Text;
                    self.line_blank = true;
                    self.scan_text(&text.as_bytes()[..end]);
                    if let Some((start, len)) = self.run.take() {
                        self.on_run(&text.as_bytes()[..end], start, len);
                    }
                    self.table_line_end(text.as_bytes(), end);
                    self.code_may_start = false;
                    self.paragraph = !self.heading;
                    self.pos = resume;
                }
            }
            LineMode::Text => {
                if let Some((start, len)) = self.run.take() {
                    self.on_run(&text.as_bytes()[..end], start, len);
                }
                self.table_line_end(text.as_bytes(), end);
                if self.line_blank || self.heading {
                    self.drop_unclosed_code(text.as_bytes(), end);
                }
                self.code_may_start = self.line_blank || self.heading;
                self.paragraph = !self.line_blank && !self.heading;
            }
        }
        let next = if end < text.len() { end + 1 } else { end };
        // Fence and indented code lines are not read for links; a URL ends with its line.
        if self.reads_inline {
            self.inline.skip_to(next);
        }
        self.start_line(next);
    }
}

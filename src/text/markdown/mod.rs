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

mod containers;
mod lists;
pub(crate) use lists::shows_list_for;
mod tables;

pub use containers::ContainerPrefix;
use containers::{Containers, Continues, LineContent};
use memchr::{memchr, memchr3, memrchr};
pub(crate) use tables::TableSpan;
use tables::{TableLine, TableState};

pub(crate) mod inline;

use inline::{InlineScanner, InlineSpan};

/// Whether `indent` (spaces and tabs) makes an indented code line: four columns or more
/// (a tab counts four).
pub(crate) fn is_code_indent(indent: &str) -> bool {
    let columns: usize = indent.bytes().map(|b| if b == b'\t' { 4 } else { 1 }).sum();
    columns >= 4
}

/// How far back [`is_indented_code_line`] looks, in bytes.
const INDENTED_LOOK_BACK: usize = 1024;

/// Whether the line of `text` starting at `line` (indented 4 columns or more) is a line of
/// an indented code block rather than a paragraph's lazy continuation: indented code cannot
/// interrupt a paragraph, so walking back over the indented lines before it, a blank line,
/// a heading, a fence line or the text's start must come first. For what a piece may show
/// at its start (an indentation is kept only when it makes code); cost: the lines walked.
/// False when `line` is not the start of a line. The walk stops after
/// [`INDENTED_LOOK_BACK`] bytes of indented lines, which are then taken for code, so asking
/// at every piece of a long indented block stays linear.
pub(crate) fn is_indented_code_line(text: &str, line: usize) -> bool {
    let mut end = line.min(text.len());
    // Not at a line start: an indentation there is no line's.
    if end > 0 && text.as_bytes()[end - 1] != b'\n' {
        return false;
    }
    let floor = end.saturating_sub(INDENTED_LOOK_BACK);
    let own = {
        let rest = &text.as_bytes()[end..];
        let n = rest
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        columns(&rest[..n])
    };
    // A fence-like line keeps its indentation wherever it stands (a fence in a list item,
    // or a paragraph's continuation): shown without it, it would open a fence at the top
    // level that the text does not have there, and run on.
    let rest = text[end..].trim_start_matches([' ', '\t']).as_bytes();
    if own >= 4 && (rest.starts_with(b"```") || rest.starts_with(b"~~~")) {
        return true;
    }
    while end > 0 {
        if end < floor {
            return true;
        }
        let prev_end = end - 1;
        let from = floor.min(prev_end);
        let Some(prev_start) = memchr::memrchr(b'\n', &text.as_bytes()[from..prev_end])
            .map(|i| from + i + 1)
            .or((from == 0).then_some(0))
        else {
            // A line longer than the look-back: taken for code, as above.
            return true;
        };
        let prev = &text[prev_start..prev_end];
        let prev = prev.strip_suffix('\r').unwrap_or(prev);
        let indent = prev.len() - prev.trim_start_matches([' ', '\t']).len();
        if indent == prev.len() {
            // After a blank line: code, unless a list item above holds the line as its
            // content (indented less than 4 past the item's content column).
            return !in_list_item(text, prev_start, floor, own);
        }
        if !is_code_indent(&prev[..indent]) {
            let rest = &prev[indent..];
            return rest.starts_with('#') || FenceMarker::parse_open(prev).is_some();
        }
        end = prev_start;
    }
    true
}

/// Columns of an indentation (a tab to the next multiple of 4).
fn columns(indent: &[u8]) -> usize {
    indent
        .iter()
        .fold(0, |c, &b| if b == b'\t' { c + 4 - c % 4 } else { c + 1 })
}

/// Whether a line indented `own` columns, after the blank line starting at `blank`, is
/// content of a list item above it: walking back over blank and indented lines (not past
/// `floor`), the first line indented less than 4 columns starts a list item whose content
/// column leaves the line fewer than 4 columns of its own.
fn in_list_item(text: &str, blank: usize, floor: usize, own: usize) -> bool {
    let bytes = text.as_bytes();
    let mut end = blank;
    while end > floor {
        let prev_end = end - 1;
        let start =
            memchr::memrchr(b'\n', &bytes[floor..prev_end]).map_or(floor, |i| floor + i + 1);
        let line = trim_cr(&bytes[start..prev_end]);
        let n = line
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let cols = columns(&line[..n]);
        if n < line.len() && cols < 4 {
            // A list item's first line: its content column.
            let rest = &line[n..];
            let digits = rest
                .iter()
                .take(10)
                .take_while(|b| b.is_ascii_digit())
                .count();
            let marker = match rest.first() {
                Some(b'-' | b'*' | b'+') => 1,
                Some(b'0'..=b'9')
                    if digits <= 9 && matches!(rest.get(digits), Some(b'.' | b')')) =>
                {
                    digits + 1
                }
                _ => return false,
            };
            let spaces = rest[marker..].iter().take_while(|&&b| b == b' ').count();
            if spaces == 0 && marker < rest.len() {
                return false;
            }
            let content = cols + marker + if (1..=4).contains(&spaces) { spaces } else { 1 };
            return own < content + 4;
        }
        end = start;
        if start == floor {
            break;
        }
    }
    false
}

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
/// the scanner was given (after any [`MarkdownScanner::drain`]).
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
    fn line_of(&self, x: usize) -> Option<(usize, usize)> {
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
}

impl IndentedSpan {
    /// Whether a cut at byte `p` falls inside this block.
    #[inline]
    pub(crate) fn contains_cut(&self, p: usize) -> bool {
        p > self.start && self.end.is_none_or(|end| p < end)
    }
}

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
    /// GFM tables (see [`tables`]).
    tables: TableState,
    /// Whether links, images, autolinks and URLs are read (see [`inline`]): for consumers
    /// that cut; the tag and directive stages only ask about code.
    reads_inline: bool,
    /// The reader of links, images, autolinks and URLs, fed the paragraph text.
    inline: InlineScanner,
    /// The list items and block quotes open at the current line (see [`containers`]).
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
            inline: InlineScanner::new(),
            containers: Containers::default(),
            content: None,
            item_columns: Vec::new(),
            paragraph: false,
        }
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
    pub(crate) fn scan(&mut self, text: &str) {
        let bytes = text.as_bytes();
        debug_assert!(self.pos <= bytes.len());
        while self.pos < bytes.len() {
            match self.mode {
                LineMode::Start => {
                    if !self.scan_line_start(bytes) {
                        return;
                    }
                }
                LineMode::Text => self.scan_text(bytes),
                LineMode::MaybeFence | LineMode::InFence | LineMode::Indented => {
                    match memchr(b'\n', &bytes[self.pos..]) {
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
        if self.line_start < end || self.run.is_some() {
            self.end_line(text, end);
            self.pos = end;
        }
        self.end_indented();
        if let Some(p) = self.tables.finish() {
            self.mark_newly_safe(p);
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

    /// The content column of the list items (list items alone: 0 in a quote, and outside
    /// any item) whose content holds the line with byte `p`, as the containers were read
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
    /// no undecided line.
    pub(crate) fn is_safe_cut(&self, p: usize) -> bool {
        self.fence_at(p).is_none()
            && self.code_at(p).is_none()
            && self.indented_at(p).is_none()
            && !self.in_undecided_fence_line(p)
            && !self.table_blocks_cut(p)
            && self.inline_at(p).is_none()
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
    /// Cost: one memchr over the stretch
    /// and a few bytes per line.
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
            let indent = bytes[line..]
                .iter()
                .take(4)
                .take_while(|&&b| b == b' ')
                .count();
            if indent < 4 && bytes.get(line + indent).is_none_or(|&b| b == marker) {
                return Some(line.max(self.pos));
            }
            // The current line has no `\n` before `pos`; later lines start after it.
            let from = line.max(self.pos);
            match memchr(b'\n', &bytes[from..]) {
                Some(i) => line = from + i + 1,
                None => return Some(bytes.len()),
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
            if is_space(bytes[x]) || is_quote_marker(bytes, x) {
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
            if is_space(bytes[y]) || is_quote_marker(bytes, y) {
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

    /// Whether the current line cannot yet tell content from a fence line.
    fn current_line_undecided(&self, bytes: &[u8]) -> bool {
        match self.mode {
            LineMode::Start | LineMode::MaybeFence => true,
            LineMode::InFence => {
                // A line inside a fence may close it only while it holds nothing but spaces,
                // then marker chars, then spaces and tabs.
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
            LineMode::Text | LineMode::Indented => false,
        }
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

    /// All fences found (the last may be open).
    #[cfg(test)]
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
    fn scan_line_start(&mut self, bytes: &[u8]) -> bool {
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
                Continues::No => self.end_fence_with_container(bytes),
            }
        }
        // The usual line: it starts with a letter, outside any code block and container.
        // It is text.
        if self.pos == self.line_start
            && self.containers.depth() == 0
            && bytes.get(self.pos).is_some_and(u8::is_ascii_alphabetic)
            && !self.in_indented()
        {
            self.mode = LineMode::Text;
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
                let c = LineContent {
                    at: self.line_start,
                    carry: 0,
                    col: 0,
                    depth: 0,
                    opened: false,
                    lazy: false,
                    continues_list: false,
                };
                self.content = Some(c);
                self.note_item_column(0);
                c
            }
            None => match self
                .containers
                .read_line(bytes, self.line_start, self.paragraph)
            {
                Some(c) => {
                    self.content = Some(c);
                    self.note_item_column(c.depth);
                    if c.continues_list {
                        // A list item its paragraph text would swallow in a piece that
                        // starts after its list did (see `lists`).
                        self.inline.push_list_item(self.line_start);
                    }
                    if c.opened {
                        // The content of a new list item or quote starts a new block.
                        self.code_may_start = true;
                    }
                    c
                }
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
        if b == b'\n' || b == b'\r' {
            // A blank line (or one that may be: a lone `\r` is whitespace too).
            self.mode = LineMode::Text;
            return true;
        }
        let columns = usize::from(content.carry)
            + bytes[content.at..p].iter().fold(0, |c, &b| {
                if b == b'\t' {
                    c + 4 - (content.col as usize + c) % 4
                } else {
                    c + 1
                }
            });
        if columns >= 4 {
            if self.code_may_start || self.in_indented() {
                if !self.in_indented() {
                    self.drop_unclosed_code(bytes, self.line_start);
                    self.indented.push(IndentedSpan {
                        start: self.line_start,
                        end: None,
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
                    // A line that opens a container, or carries a quote's `>`, starts a
                    // block too (its markers were read as containers).
                    let quoted =
                        content.depth > 0 && bytes[self.line_start..content.at].contains(&b'>');
                    let kind = match content.opened || quoted {
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

    /// The line at `line_start` leaves a container of the open fence: the fence ends with
    /// its last line, before the line break (CommonMark closes it with its container).
    fn end_fence_with_container(&mut self, bytes: &[u8]) {
        let line_start = self.line_start;
        let Some(f) = self.fences.last_mut() else {
            return;
        };
        // A line that a flush ended has no `\n`: the fence ends where the next line starts.
        let newline = line_start > 0 && bytes.get(line_start - 1) == Some(&b'\n');
        let mut end = (line_start - usize::from(newline)).max(f.open_end);
        if end > f.open_end && bytes.get(end - 1) == Some(&b'\r') {
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
                    || !self.scan_line_start(bytes)
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
            self.pos = at;
            self.run = Some((at, 0));
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
        self.content = None;
        self.mode = LineMode::Start;
        self.line_blank = true;
        self.heading = false;
        self.line_block = false;
        self.tables.new_line();
    }

    /// A text line (at its end `end`, before its `\n`) ends, for the tables.
    fn table_line_end(&mut self, bytes: &[u8], end: usize) {
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
                } else if is_blank(line.as_bytes()) {
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

/// The first backtick, `\n` or `|` of `bytes`: the bytes [`MarkdownScanner::scan_text`]
/// stops at.
///
/// The first [`SHORT_STOP`] bytes are looked at eight at a time, as one word (a bit trick
/// finds a byte equal to a given one: see [`zero_bytes`]); a vector search goes on from
/// there. Text lines are short (a few dozen bytes between stops), and a vector search's
/// set-up cost per call was most of its time there.
#[inline]
fn find_text_stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    let head = &bytes[..bytes.len().min(SHORT_STOP)];
    let mut chunks = head.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let hits = zero_bytes(w ^ (ONES * u64::from(b'`')))
            | zero_bytes(w ^ (ONES * u64::from(b'\n')))
            | zero_bytes(w ^ (ONES * u64::from(b'|')));
        if hits != 0 {
            return Some(base + hits.trailing_zeros() as usize / 8);
        }
        base += 8;
    }
    if let Some(k) = chunks
        .remainder()
        .iter()
        .position(|&b| matches!(b, b'`' | b'\n' | b'|'))
    {
        return Some(base + k);
    }
    memchr3(b'`', b'\n', b'|', &bytes[head.len()..]).map(|k| head.len() + k)
}

/// How many bytes [`find_text_stop`] looks at a word at a time before a vector search.
const SHORT_STOP: usize = 64;

/// The high bit of each zero byte of `w` set (and maybe of bytes above a zero byte: the
/// lowest set bit always marks the first zero byte, in little-endian order).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// What a line starts, as far as inline code spans care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockStart {
    /// Nothing: the line may continue a paragraph.
    None,
    /// An ATX heading (`#` to `######` then a space or the line's end).
    Heading,
    /// A list item (`-`, `*`, `+`, or 1 to 9 digits and `.` or `)`, then a space or the
    /// line's end) or a block quote (`>`).
    Other,
}

/// What the line whose first non-indentation bytes are `rest` starts, or `None` when
/// `rest` ends before that can be told.
fn block_start(rest: &[u8]) -> Option<BlockStart> {
    // After a marker: a space, a tab or the line's end makes it a block start.
    let ends_marker = |i: usize| -> Option<bool> {
        rest.get(i)
            .map(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    };
    let kind = match rest.first() {
        None => return None,
        Some(b'>') => BlockStart::Other,
        Some(b'#') => {
            let n = rest.iter().take(7).take_while(|&&b| b == b'#').count();
            if n == rest.len() && n < 7 {
                return None;
            }
            if n <= 6 && ends_marker(n)? {
                BlockStart::Heading
            } else {
                BlockStart::None
            }
        }
        Some(b'-' | b'*' | b'+') => {
            if ends_marker(1)? {
                BlockStart::Other
            } else {
                BlockStart::None
            }
        }
        Some(b'0'..=b'9') => {
            let n = rest
                .iter()
                .take(10)
                .take_while(|b| b.is_ascii_digit())
                .count();
            if n == rest.len() && n < 10 {
                return None;
            }
            if n <= 9 && matches!(rest.get(n), Some(b'.' | b')')) && ends_marker(n + 1)? {
                BlockStart::Other
            } else {
                BlockStart::None
            }
        }
        Some(_) => BlockStart::None,
    };
    Some(kind)
}

/// Whether byte `x` is a block quote's `>` in a line's prefix (only spaces, tabs and `>`
/// before it on its line): markup, not content a piece may show alone. Looks back at most
/// 64 bytes.
#[inline]
fn is_quote_marker(bytes: &[u8], x: usize) -> bool {
    if bytes[x] != b'>' {
        return false;
    }
    let from = x.saturating_sub(64);
    let mut i = x;
    while i > from {
        match bytes[i - 1] {
            b'\n' => return true,
            b' ' | b'\t' | b'>' => i -= 1,
            _ => return false,
        }
    }
    i == 0
}

/// ASCII whitespace: space, tab, `\r`, `\n`.
#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Whether `bytes` holds only spaces, tabs and `\r`.
#[inline]
fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

#[inline]
fn trim_cr(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indented_lines_are_code_only_where_a_code_block_may_start() {
        let text = "Para\n    lazy\n\n    code\n      more\n# Head\n    code2\n```\n    in\n```\n    code3";
        let at = |line: &str| text.find(&format!("\n{line}")).unwrap() + 1;
        assert!(!is_indented_code_line(text, at("    lazy")));
        assert!(is_indented_code_line(text, at("    code\n")));
        assert!(is_indented_code_line(text, at("      more")));
        assert!(is_indented_code_line(text, at("    code2")));
        assert!(is_indented_code_line(text, at("    code3")));
        assert!(!is_indented_code_line(text, 2), "not a line start");
        // A long run of indented lines is taken for code without walking it all.
        let long = format!("Para\n{}", "    x\n".repeat(1000));
        assert!(is_indented_code_line(&long, long.len() - 6));
    }

    #[test]
    fn an_item_paragraph_after_its_code_is_no_indented_code() {
        let text = "1. Install:\n\n    ```sh\n    run\n    ```\n\n    If it fails, retry.\n\n   - nested\n\n       deep para\n\nTop.\n\n    code\n";
        let at = |line: &str| text.find(&format!("\n{line}")).unwrap() + 1;
        // Under `1. ` (content column 3) a line at 4 spaces is the item's paragraph.
        assert!(!is_indented_code_line(text, at("    If it fails")));
        // Under `   - ` (content column 5) a line at 7 spaces is too.
        assert!(!is_indented_code_line(text, at("       deep para")));
        // The item's fence line keeps its indentation (shown bare it would run on).
        assert!(is_indented_code_line(text, at("    ```sh")));
        // After the list, 4 spaces after a blank line are code again.
        assert!(is_indented_code_line(text, at("    code")));
    }

    fn scan_all(text: &str) -> MarkdownScanner {
        let mut s = MarkdownScanner::new();
        s.finish(text);
        s
    }

    fn scan_bytewise(text: &str) -> MarkdownScanner {
        let mut s = MarkdownScanner::new();
        let mut end = 0;
        while end < text.len() {
            end += 1;
            while !text.is_char_boundary(end) {
                end += 1;
            }
            s.scan(&text[..end]);
        }
        s.finish(text);
        s
    }

    /// The fences of `text`, read whole and byte by byte (the same either way), as
    /// (opening line, closing marker end or text end, prefix shown).
    fn container_fences(text: &str) -> Vec<(String, usize, String)> {
        let whole = scan_all(text);
        let bytewise = scan_bytewise(text);
        assert_eq!(
            whole.fences(),
            bytewise.fences(),
            "split-invariant on {text:?}"
        );
        whole
            .fences()
            .iter()
            .map(|f| {
                (
                    text[f.start..f.open_end].to_owned(),
                    f.end.unwrap_or(text.len()),
                    f.marker.prefix.as_str().to_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn fences_in_list_items_are_fences() {
        let text = "- item\n    ```sh\n    echo\n    ```\n- next\n";
        let f = container_fences(text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].0, "    ```sh");
        assert_eq!(f[0].1, text.find("    ```\n-").unwrap() + 7);
        assert_eq!(f[0].2, "  ");
        // Under `1. ` a fence may stand at 6 spaces; at 7 it is indented code.
        let six = "1. step\n\n      ```\n      x\n      ```\n";
        assert_eq!(container_fences(six).len(), 1);
        let seven = "1. step\n\n       ```\n       x\n";
        assert!(container_fences(seven).is_empty());
        // Two levels deep, CRLF.
        let deep = "1. a\r\n   - b\r\n\r\n     ```\r\n     x\r\n     ```\r\n";
        let f = container_fences(deep);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].2, "     ");
        assert!(deep[..f[0].1].ends_with("     ```"));
    }

    #[test]
    fn fences_in_quotes_end_with_the_quote() {
        let text = "> say\n> ```\n> code\nplain\n```\n";
        let f = container_fences(text);
        // The quote's fence ends where a line leaves the quote; the last ``` opens a new one.
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].0, "> ```");
        assert_eq!(f[0].1, text.find("\nplain").unwrap());
        assert_eq!(f[0].2, "> ");
        assert_eq!(f[1].2, "");
        // A lazy paragraph line keeps the quote; the fence after it is still in the quote.
        let lazy = "> para\nlazy\n> ```\n> x\n> ```\nafter";
        let f = container_fences(lazy);
        assert_eq!(f.len(), 1);
        assert!(lazy[..f[0].1].ends_with("> ```"));
    }

    #[test]
    fn a_shallow_fence_in_a_list_item_keeps_the_top_level_reading() {
        // At 3 spaces or less (no quote) a fence reads the same at the top level, where a
        // message that lost the item shows it: it ends at its closing line, not with the
        // item.
        let text = "- a\n  ```\n  code\nout\n```\n";
        let f = container_fences(text);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].2, "");
        assert_eq!(f[0].1, text.len() - 1);
    }

    #[test]
    fn a_list_item_ending_inside_its_code_ends_the_fence() {
        let text = "1. a\n    ```\n    code\nout\n";
        let s = scan_all(text);
        let f = s.fences()[0];
        assert_eq!(f.end, Some(text.find("\nout").unwrap()));
        // A cut between the code and `out` is outside the fence.
        assert!(s.fence_at(text.find("out").unwrap()).is_none());
        assert!(s.fence_at(text.find("code").unwrap() + 2).is_some());
    }

    #[test]
    fn synthetic_fence_lines_carry_the_container_prefix() {
        let text = "> 1. x\n>    ```rust\n>    a\n";
        let s = scan_all(text);
        let m = s.fences()[0].marker;
        let mut close = String::new();
        m.push_close(&mut close);
        assert_eq!(close, ">    ```");
        assert_eq!(m.close_len(), close.len());
        let mut open = String::new();
        m.push_open_line("> 1. ```rust", &mut open);
        assert_eq!(open, ">    ```rust");
    }

    #[test]
    fn parses_opening_lines() {
        assert_eq!(
            FenceMarker::parse_open("```rust"),
            Some(FenceMarker {
                ch: b'`',
                len: 3,
                indent: 0,
                prefix: ContainerPrefix::NONE,
            })
        );
        assert_eq!(
            FenceMarker::parse_open("   ~~~~ info `x`"),
            Some(FenceMarker {
                ch: b'~',
                len: 4,
                indent: 3,
                prefix: ContainerPrefix::NONE,
            })
        );
        assert_eq!(
            FenceMarker::parse_open("    ```"),
            None,
            "4 spaces is indented code"
        );
        assert_eq!(FenceMarker::parse_open("``"), None);
        assert_eq!(
            FenceMarker::parse_open("``` a`b"),
            None,
            "backtick in info string"
        );
        assert_eq!(FenceMarker::parse_open("x```"), None);
    }

    #[test]
    fn closing_rules() {
        let m = FenceMarker::parse_open("````").unwrap();
        assert!(
            !m.is_closed_by("```"),
            "four-backtick fence is not closed by three"
        );
        assert!(m.is_closed_by("````"));
        assert!(m.is_closed_by("  `````  "));
        assert!(
            !m.is_closed_by("```` x"),
            "text after the marker is content"
        );
        assert!(!m.is_closed_by("~~~~"));
        assert!(m.is_closed_by("````\r"));
    }

    #[test]
    fn finds_fences_and_cut_safety() {
        let text = "Intro\n\n~~~sh\nline1\n\nline2\n~~~\n\nOutro";
        let s = scan_all(text);
        assert_eq!(s.fences().len(), 1);
        let f = s.fences()[0];
        assert_eq!(&text[f.start..f.open_end], "~~~sh");
        assert_eq!(&text[f.start..f.end.unwrap()], "~~~sh\nline1\n\nline2\n~~~");
        assert_eq!(&text[f.close_start..f.end.unwrap()], "~~~");
        assert!(s.is_safe_cut(f.start));
        assert!(!s.is_safe_cut(f.start + 1));
        assert!(!s.is_safe_cut(text.find("\n\nline2").unwrap()));
        assert!(s.is_safe_cut(f.end.unwrap()));
        assert!(s.open_fence().is_none());
    }

    #[test]
    fn unclosed_fence_stays_open() {
        let text = "a\n```py\nprint(1)\n``` not a closer\nx";
        let s = scan_all(text);
        let f = s.open_fence().expect("open");
        assert_eq!(&text[f.start..f.open_end], "```py");
        assert!(!s.is_safe_cut(text.len()));
    }

    #[test]
    fn inline_code_spans() {
        let text = "use `a b` and ``x ` y`` then `open\n\nnext `c`";
        let s = scan_all(text);
        let spans: Vec<&str> = s
            .code_spans()
            .iter()
            .map(|c| &text[c.start..c.end.unwrap()])
            .collect();
        assert_eq!(spans, ["`a b`", "``x ` y``", "`c`"]);
        let inside = text.find("a b").unwrap() + 1;
        assert!(!s.is_safe_cut(inside));
        assert!(s.is_safe_cut(text.find(" and").unwrap()));
        assert!(
            s.is_safe_cut(text.find("open").unwrap() + 2),
            "unmatched run is literal"
        );
    }

    #[test]
    fn bytewise_scan_equals_whole_scan() {
        let samples = [
            "Intro\n\n~~~sh\nline1\nline2\n~~~\n\nOutro",
            "````md\n```\ninner\n```\n````\nafter `x` ``y``",
            "  ```\n  code\n  ```\ntext `a\nb` c\n\n`d",
            "a `` b\n```\n`x`\n```\n",
            "```\nopen forever `x` \n",
        ];
        for text in samples {
            let a = scan_all(text);
            let b = scan_bytewise(text);
            assert_eq!(a.fences(), b.fences(), "{text:?}");
            assert_eq!(a.code_spans(), b.code_spans(), "{text:?}");
        }
    }

    #[test]
    fn drain_rebases_and_marks_continued() {
        let text = "p\n```rs\nlet a = 1;\nlet b = 2;\n";
        let mut s = MarkdownScanner::new();
        s.scan(text);
        let cut = text.find("let b").unwrap();
        s.drain(cut);
        let rest = &text[cut..];
        let f = s.open_fence().unwrap();
        assert!(f.continued);
        assert_eq!(f.start, 0);
        assert!(!s.is_safe_cut(0) || f.contains_cut(0));
        s.scan(&format!("{rest}```\nok"));
        assert!(s.open_fence().is_none());
    }

    #[test]
    fn fence_stretch_stops_before_possible_closers() {
        let mut s = MarkdownScanner::new();
        assert_eq!(s.fence_stretch("text"), None, "no fence");
        let text = "````rs\na\n    ````\n~~~\nb\n ````x\nc";
        s.scan(&text[..7]);
        // Indented 4 spaces or starting with another char: no closer. The next line that
        // may close is " ````x" (a closer would start the same way).
        let stop = text.find(" ````x").unwrap();
        assert_eq!(s.fence_stretch(text), Some(stop));
        s.scan(&text[..9]);
        assert_eq!(s.fence_stretch(text), Some(stop), "mid-line");
        s.scan(&text[..stop + 2]);
        assert_eq!(s.fence_stretch(text), Some(stop + 2), "empty on that line");
        let mut s = MarkdownScanner::new();
        s.scan("~~~\ncode\n  ");
        assert_eq!(
            s.fence_stretch("~~~\ncode\n  "),
            Some(11),
            "an unfinished indent may lead to a closer"
        );
        assert_eq!(s.fence_stretch("~~~\ncode\n  x"), Some(12));
    }

    #[test]
    fn undecided_fence_line_is_not_cut() {
        let mut s = MarkdownScanner::new();
        let text = "hello\n``";
        s.scan(text);
        assert!(s.in_undecided_fence_line(text.len()));
        assert!(!s.is_safe_cut(text.len()));
        assert!(s.is_safe_cut(5));
    }

    #[test]
    fn a_closing_fence_ends_at_its_marker_run() {
        // A cut right after the marker is outside the fence, whatever ends the line.
        for text in [
            "```\ncode\n```\r\nafter",
            "```\ncode\n```  \nafter",
            "```\ncode\n```",
        ] {
            let s = scan_all(text);
            let f = s.fences()[0];
            assert_eq!(f.end, Some(12), "{text:?}");
            assert!(s.is_safe_cut(12), "{text:?}");
            assert!(!s.is_safe_cut(11), "{text:?}");
        }
    }

    #[test]
    fn inline_code_stops_at_block_boundaries() {
        // A stray backtick is literal once its block ends: at a list item, a heading's end,
        // a block quote, a fence line; the spans after it pair up as written.
        let cases = [
            "- a stray `backtick here.\n- item `one` and `two`",
            "# Title with a ` stray\nText `one` and `two`",
            "A stray ` here\n> quote `one` and `two`",
            "A stray ` here\n1. item `one` and `two`",
            "A stray ` here\n12) item `one` and `two`",
        ];
        for text in cases {
            for s in [scan_all(text), scan_bytewise(text)] {
                let spans: Vec<&str> = s
                    .code_spans()
                    .iter()
                    .map(|c| &text[c.start..c.end.unwrap()])
                    .collect();
                assert_eq!(spans, ["`one`", "`two`"], "{text:?}");
            }
        }
        // A paragraph's continuation line (even one that looks like a number) is not a
        // block start: the span goes on.
        let text = "A span ` starts\n2024 was `x";
        let s = scan_all(text);
        let spans: Vec<&str> = s
            .code_spans()
            .iter()
            .filter_map(|c| c.end.map(|e| &text[c.start..e]))
            .collect();
        assert_eq!(spans, ["` starts\n2024 was `"]);
    }

    #[test]
    fn indented_code_blocks() {
        let text = "Para\n    not code\n\n    code 1\n\n    code 2\n  \nAfter\n\n\tcode 3\n";
        for s in [scan_all(text), scan_bytewise(text)] {
            let blocks: Vec<&str> = s
                .indented_blocks()
                .iter()
                .map(|c| &text[c.start..c.end.unwrap()])
                .collect();
            assert_eq!(blocks, ["    code 1\n\n    code 2", "\tcode 3"]);
            let blank = text.find("\n\n    code 2").unwrap();
            assert!(!s.is_safe_cut(blank), "a blank line inside indented code");
            assert!(s.is_safe_cut(text.find("\n  \nAfter").unwrap()));
            assert!(s.is_safe_cut(text.find(" not").unwrap()));
        }
    }

    #[test]
    fn content_skips_fence_lines_and_whitespace() {
        let text = "  \n```rust\n```\n\n~~~\n  x\n~~~  \n";
        let s = scan_all(text);
        assert_eq!(
            s.first_content(text, 0, text.len()),
            Ok(text.find('x').unwrap())
        );
        assert_eq!(s.last_content(text, 0, text.len()), text.find('x'));
        let x = text.find('x').unwrap();
        assert_eq!(s.first_content(text, x + 1, text.len()), Err(text.len()));
        assert_eq!(s.last_content(text, 0, x), None);
        // While a line may still be a fence line, it holds no content yet.
        let mut s = MarkdownScanner::new();
        s.scan("ab\n``");
        assert_eq!(s.first_content("ab\n``", 2, 5), Err(3));
        s.scan("ab\n``x");
        assert_eq!(s.first_content("ab\n``x", 2, 6), Ok(3));
    }

    #[test]
    fn tables_are_read_as_gfm_reads_them() {
        let text = "Intro\n\n| A | B |\n|---|:-:|\n| 1 | 2 |\nlazy row\n\nAfter | x\n|---|\n\n\
                    Para\n| C | D |\n| - | - |\n| 3 | 4 |\n# Head\n";
        for s in [scan_all(text), scan_bytewise(text)] {
            let tables: Vec<(&str, &str)> = s
                .tables
                .spans()
                .iter()
                .map(|t| (&text[t.start..t.delim_end], &text[t.start..t.end.unwrap()]))
                .collect();
            assert_eq!(
                tables,
                [
                    (
                        "| A | B |\n|---|:-:|",
                        "| A | B |\n|---|:-:|\n| 1 | 2 |\nlazy row"
                    ),
                    ("| C | D |\n| - | - |", "| C | D |\n| - | - |\n| 3 | 4 |"),
                ],
                "`After | x` does not start a paragraph; two cells over one is none"
            );
            let at = |needle: &str| text.find(needle).unwrap();
            assert!(!s.is_safe_cut(at("\n|---|:-:|")), "header | delimiter");
            assert!(!s.is_safe_cut(at("\nlazy")), "between rows");
            assert!(s.is_safe_cut(at("\n\nAfter")), "after the last row");
            assert!(s.is_safe_cut(at("\n| A")), "before the header");
            assert!(s.is_safe_cut(at("\n|---|\n\n")), "not a table");
        }
        // In containers: a quote's table ends at a line that leaves the quote (a lazy
        // line is no row), a list item's header may stand on the item's first line.
        let text = "> | A | B |\n> |---|---|\n> | 1 | 2 |\n| lazy | x |\n\n\
                    - | C | D |\n  |---|---|\n  | 3 | 4 |\n- next\n\n\
                    > | E |\n|---|\n";
        for s in [scan_all(text), scan_bytewise(text)] {
            let tables: Vec<(&str, &str, usize)> = s
                .tables
                .spans()
                .iter()
                .map(|t| {
                    (
                        &text[t.start..t.delim_end],
                        &text[t.start..t.end.unwrap()],
                        t.prefix_len,
                    )
                })
                .collect();
            assert_eq!(
                tables,
                [
                    (
                        "> | A | B |\n> |---|---|",
                        "> | A | B |\n> |---|---|\n> | 1 | 2 |",
                        2
                    ),
                    (
                        "- | C | D |\n  |---|---|",
                        "- | C | D |\n  |---|---|\n  | 3 | 4 |",
                        2
                    ),
                ],
                "a delimiter row outside the header's quote makes no table"
            );
        }
        // While the line after a header-like line is not complete, no cut after it.
        let mut s = MarkdownScanner::new();
        s.scan("Intro\n\n| A | B |\n|--");
        assert!(!s.is_safe_cut(13) && !s.is_safe_cut(16) && s.is_safe_cut(5));
        s.scan("Intro\n\n| A | B |\n|--x\n");
        assert_eq!(
            s.take_newly_safe(),
            Some(7),
            "not a delimiter row after all"
        );
        assert!(s.is_safe_cut(16));
        // A pipe line in progress may be a header row.
        let mut s = MarkdownScanner::new();
        s.scan("| A | B");
        assert!(!s.is_safe_cut(3));
    }

    #[test]
    fn late_pairs_pair_the_runs_after_an_unmatched_one_at_every_block_boundary() {
        // An unmatched run is literal once its block ends (a blank line, a heading's end, a
        // list item, a block quote, a fence line, indented code, the end of the text); with
        // late pairs the runs after it in that block pair among themselves, and nothing of
        // the next block is paired with them.
        let cases = [
            ("A `` stray and `one` here\n\nnext `", "`one`"),
            ("# A `` stray `one`\nnext `", "`one`"),
            ("A `` stray `one`\n- item `", "`one`"),
            ("A `` stray `one`\n> quote `", "`one`"),
            ("A `` stray `one`\n```\ncode `\n```", "`one`"),
            ("# A `` stray `one`\n\n    code `", "`one`"),
            ("A `` stray `one`", "`one`"),
        ];
        for (text, span) in cases {
            let bytes = text.as_bytes();
            let mut whole = MarkdownScanner::with_late_pairs();
            whole.finish(text);
            whole.end_block(text);
            let mut bytewise = MarkdownScanner::with_late_pairs();
            for end in 1..=bytes.len() {
                bytewise.scan(&text[..end]);
            }
            bytewise.finish(text);
            bytewise.end_block(text);
            for s in [whole, bytewise] {
                let spans: Vec<&str> = s
                    .code_spans()
                    .iter()
                    .filter_map(|c| c.end.map(|e| &text[c.start..e]))
                    .collect();
                assert_eq!(spans, [span], "{text:?}");
                let at = text.find(span).unwrap() + 1;
                assert!(s.code_at(at).is_some(), "{text:?}");
            }
            // The plain scanner leaves them unpaired (only safer cuts).
            let plain = scan_all(text);
            assert!(
                plain.code_spans().iter().all(|c| c.end.is_none()),
                "{text:?}"
            );
        }
    }
}

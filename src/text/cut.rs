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
//!   after it ([`ContentBounds`]). While the text's last line may still turn out to be a fence
//!   line, a streaming caller waits rather than cut before it.
//!
//! Searches run backward from the end of the window and stop at its start, so their cost is
//! bounded by the window, never by the text.

use super::limits::{Limits, widest_char, widest_grapheme};
use super::markdown::inline::SpanDelims;
use super::markdown::{CodeSpan, FenceMarker, FenceSpan, IndentedSpan, MarkdownScanner, TableSpan};
use super::metric::{
    LengthMetric, floor_char_boundary, floor_grapheme_boundary, is_grapheme_boundary,
    next_grapheme_boundary,
};

/// What kind of break a cut falls on. Earlier variants are better breaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BreakClass {
    /// A blank line: `\n`, optional spaces/tabs, `\n`.
    Paragraph,
    /// A line break.
    Line,
    /// A sentence end.
    Sentence,
    /// Any whitespace.
    Whitespace,
    /// A line break inside a fenced code block; the piece closes the fence and the next
    /// piece reopens it.
    CodeLine,
    /// No break: the largest grapheme boundary that fits.
    Hard,
}

impl BreakClass {
    /// The four break classes that a plain-text candidate can have, best first.
    pub(crate) const TEXT: [BreakClass; 4] = [
        BreakClass::Paragraph,
        BreakClass::Line,
        BreakClass::Sentence,
        BreakClass::Whitespace,
    ];

    fn bit(self) -> u8 {
        match self {
            BreakClass::Paragraph => 1,
            BreakClass::Line => 2,
            BreakClass::Sentence => 4,
            BreakClass::Whitespace => 8,
            BreakClass::CodeLine | BreakClass::Hard => 0,
        }
    }
}

/// Where to cut: the piece ends at `end`, the separator is `end..sep_end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cut {
    /// The end of the piece (exclusive byte offset).
    pub end: usize,
    /// The end of the separator; the next piece starts here.
    pub sep_end: usize,
    /// The kind of break.
    pub class: BreakClass,
}

impl Cut {
    /// A hard cut at `at`: no separator.
    pub(crate) fn hard(at: usize) -> Cut {
        Cut {
            end: at,
            sep_end: at,
            class: BreakClass::Hard,
        }
    }
}

/// A place where a text may be cut, with every break class it belongs to (a blank line
/// after a full stop is a paragraph break, a line break, a sentence end and whitespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// The end of the piece.
    pub end: usize,
    /// The end of the separator.
    pub sep_end: usize,
    classes: u8,
}

impl Candidate {
    /// Whether the candidate is a break of `class`.
    pub(crate) fn has(&self, class: BreakClass) -> bool {
        self.classes & class.bit() != 0
    }

    /// The position in `order` of the best class this candidate has, if any.
    pub(crate) fn rank(&self, order: &[BreakClass]) -> Option<usize> {
        order.iter().position(|&c| self.has(c))
    }
}

/// ASCII whitespace, the only whitespace that breaks: space, tab, `\r`, `\n`.
#[inline(always)]
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Sentence marks that need whitespace after them.
#[inline]
fn is_spaced_mark(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

/// CJK sentence marks: a sentence ends after them even without whitespace.
#[inline]
fn is_cjk_mark(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// Closing quotes and brackets that stay with the sentence mark before them.
#[inline]
fn is_closer(c: char) -> bool {
    matches!(
        c,
        ')' | ']' | '"' | '\'' | '”' | '’' | '」' | '』' | '）' | '】' | '》'
    )
}

/// A sentence mark or a closer: a char that may continue a sentence's end.
#[inline]
pub(crate) fn is_tail_char(c: char) -> bool {
    is_spaced_mark(c) || is_cjk_mark(c) || is_closer(c)
}

/// Whether byte `b` may be the last byte of a tail char (a cheap pre-filter).
#[inline]
fn may_end_tail(b: u8) -> bool {
    matches!(
        b,
        b'.' | b'!' | b'?' | b')' | b']' | b'"' | b'\'' | 0x80..=0xBF
    )
}

/// What ends the text before a position, as far as sentences go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    None,
    /// A mark that needs whitespace after it.
    Spaced,
    /// A CJK mark: the sentence ends here whatever follows.
    Cjk,
}

/// Looks back from `p` over closers, then sentence marks.
fn sentence_tail(text: &str, p: usize) -> Tail {
    let mut chars = text[..p].chars().rev();
    let mut c = chars.next();
    while let Some(ch) = c {
        if !is_closer(ch) {
            break;
        }
        c = chars.next();
    }
    let mut tail = Tail::None;
    while let Some(ch) = c {
        if is_cjk_mark(ch) {
            tail = Tail::Cjk;
        } else if is_spaced_mark(ch) {
            if tail == Tail::None {
                tail = Tail::Spaced;
            }
        } else {
            break;
        }
        c = chars.next();
    }
    tail
}

/// Whether `p` (between a non-whitespace char and the next char) is a grapheme boundary,
/// with an ASCII fast path.
#[inline]
fn boundary_at(text: &str, p: usize) -> bool {
    let b = text.as_bytes();
    if p == 0 || p >= b.len() {
        return true;
    }
    if b[p - 1] < 0x80 && b[p] < 0x80 {
        return !(b[p - 1] == b'\r' && b[p] == b'\n');
    }
    is_grapheme_boundary(text, p)
}

/// Whether the whitespace byte at `j` is joined into one grapheme cluster with the char
/// before it (a prepended char such as U+0600) or after it (a combining mark): then it is
/// part of that cluster and does not break.
#[inline]
pub(crate) fn joined_ws(text: &str, j: usize) -> bool {
    let b = text.as_bytes();
    (j > 0 && b[j - 1] >= 0x80 && !is_grapheme_boundary(text, j))
        || (j + 1 < b.len() && b[j + 1] >= 0x80 && !is_grapheme_boundary(text, j + 1))
}

/// The cut candidate at `p`, if `p` is one: the start of a breaking whitespace run right
/// after non-whitespace, or the position right after a CJK sentence end. Unless `complete`
/// (no more text will come), a whitespace run that reaches the end of `text` is undecided
/// (more whitespace may come), and so is a cut whose next piece would start, mid-line, with
/// one or two backticks or tildes at the end of `text` (a third would make it read as a
/// fence line; see [`partial_fence_at_end`]).
pub(crate) fn candidate_at(text: &str, p: usize, complete: bool) -> Option<Candidate> {
    let bytes = text.as_bytes();
    if p == 0 || p >= bytes.len() || !text.is_char_boundary(p) {
        return None;
    }
    if is_ws(bytes[p - 1]) && !joined_ws(text, p - 1) {
        return None;
    }
    if is_ws(bytes[p]) {
        if joined_ws(text, p) {
            // Part of the cluster before (then the run starts later) or after (then there
            // is no run).
            return None;
        }
        let mut r = p;
        while r < bytes.len() && is_ws(bytes[r]) {
            r += 1;
        }
        if r == bytes.len() && !complete {
            return None;
        }
        // A whitespace char joined with the char after the run belongs to that char.
        if r < bytes.len() && bytes[r] >= 0x80 && !is_grapheme_boundary(text, r) {
            r -= 1;
        }
        let run = &bytes[p..r];
        // Runs are short (a space, a line break or two): a plain count beats a vector one.
        let newlines = if run.len() <= 16 {
            run.iter().filter(|&&b| b == b'\n').count()
        } else {
            memchr::memchr_iter(b'\n', run).count()
        };
        if newlines == 0
            && (starts_like_fence(&bytes[r..]) || (!complete && partial_fence_at_end(&bytes[r..])))
        {
            // The next piece would start with a run that reads as a fence opening line.
            return None;
        }
        if newlines <= 1 && lone_list_marker_before(bytes, p) {
            // The piece would end with a list item's marker alone, its text in the next
            // (an empty item, then the text without its marker; `1.` is no sentence): on
            // the marker's line, or on the next line, where an item whose first line holds
            // only its marker goes on.
            return None;
        }
        let last_newline = match newlines {
            0 => None,
            _ if run.len() <= 16 => run.iter().rposition(|&b| b == b'\n'),
            _ => memchr::memrchr(b'\n', run),
        };
        let q = match last_newline {
            Some(i) => p + i + 1,
            None => r,
        };
        let mut classes = BreakClass::Whitespace.bit();
        if newlines >= 1 {
            classes |= BreakClass::Line.bit();
        }
        if newlines >= 2 {
            classes |= BreakClass::Paragraph.bit();
        }
        if sentence_tail(text, p) != Tail::None {
            classes |= BreakClass::Sentence.bit();
        }
        return Some(Candidate {
            end: p,
            sep_end: q,
            classes,
        });
    }
    if !may_end_tail(bytes[p - 1]) {
        return None;
    }
    let next = text[p..].chars().next()?;
    if is_tail_char(next)
        || sentence_tail(text, p) != Tail::Cjk
        || starts_like_fence(&bytes[p..])
        || (!complete && partial_fence_at_end(&bytes[p..]))
        || !boundary_at(text, p)
    {
        return None;
    }
    Some(Candidate {
        end: p,
        sep_end: p,
        classes: BreakClass::Sentence.bit(),
    })
}

/// Whether the line before `p` holds only a list item's marker (`-`, `*`, `+`, or 1 to 9
/// digits and `.` or `)`), after any indentation and quote markers. Cost: a few bytes (it
/// looks back at most 64).
#[inline]
fn lone_list_marker_before(bytes: &[u8], p: usize) -> bool {
    let last = bytes[p - 1];
    if !matches!(last, b'.' | b')' | b'-' | b'*' | b'+') {
        return false;
    }
    let from = p.saturating_sub(64);
    let line = memchr::memrchr(b'\n', &bytes[from..p]).map_or(from, |i| from + i + 1);
    if line == from && from > 0 {
        return false;
    }
    let head = &bytes[line..p - 1];
    let prefix = head
        .iter()
        .take_while(|&&b| matches!(b, b' ' | b'\t' | b'>'))
        .count();
    let marker = &head[prefix..];
    match last {
        b'.' | b')' => (1..=9).contains(&marker.len()) && marker.iter().all(u8::is_ascii_digit),
        _ => marker.is_empty(),
    }
}

/// Whether `rest` starts with three backticks or tildes.
fn starts_like_fence(rest: &[u8]) -> bool {
    rest.len() >= 3 && (rest[..3] == *b"```" || rest[..3] == *b"~~~")
}

/// Whether `rest` is one or two backticks or tildes and nothing more: at the end of a text
/// that goes on, it may still grow into a fence-like run.
pub(crate) fn partial_fence_at_end(rest: &[u8]) -> bool {
    matches!(rest, [b'`'] | [b'`', b'`'] | [b'~'] | [b'~', b'~'])
}

/// Whether a line starting with `rest` reads as a fence line: at most 3 spaces, then three
/// backticks or tildes.
pub(crate) fn reads_as_fence_line(rest: &[u8]) -> bool {
    let indent = rest.iter().take(4).take_while(|&&b| b == b' ').count();
    indent < 4 && starts_like_fence(&rest[indent..])
}

/// Whether the line that `end` lies on goes on with non-whitespace after `end`: then a cut
/// at `end` splits the line.
pub(crate) fn line_continues(bytes: &[u8], end: usize) -> bool {
    bytes[end..]
        .iter()
        .find(|&&b| !matches!(b, b' ' | b'\t' | b'\r'))
        .is_some_and(|&b| b != b'\n')
}

/// Whether byte position `j` could hold a candidate (a cheap pre-filter for
/// [`candidate_at`]).
#[inline(always)]
pub(crate) fn may_be_candidate(bytes: &[u8], j: usize) -> bool {
    j > 0
        && j < bytes.len()
        && (!is_ws(bytes[j - 1]) || (j >= 2 && bytes[j - 2] >= 0x80))
        && (is_ws(bytes[j]) || may_end_tail(bytes[j - 1]))
}

/// Whether a candidate at `p` (see [`candidate_at`]) may be of a class other than
/// [`BreakClass::Whitespace`]: its whitespace run holds a line break, or a sentence may end
/// before it. A cheap pre-filter for who cuts only at those classes (eager cuts).
#[inline]
pub(crate) fn may_break_beyond_whitespace(bytes: &[u8], p: usize) -> bool {
    p > 0
        && (may_end_tail(bytes[p - 1])
            || bytes[p..]
                .iter()
                .take_while(|&&b| is_ws(b))
                .any(|&b| b == b'\n'))
}

/// Where a piece whose separator ends at `q`, and which starts with the synthetic text
/// `reopen`, starts showing text. The whitespace up to the last line break before the next
/// non-whitespace belongs to the separator (a piece never starts with a blank line), and so
/// does the part of the indentation after it that would not leave room, within `max`, for
/// the synthetic lines (`reopen` and the closing line it may need) and the first cluster (as wide as the widest cluster kept whole while it may still grow, unless
/// `complete`). An indentation kept before a fence-like run keeps at least 4 columns, so that
/// the line does not start to read as a fence line. Returns `text.len()` when only
/// whitespace follows `q`.
pub(crate) fn shown_start(
    text: &str,
    q: usize,
    limits: &Limits,
    reopen: Option<Reopen<'_>>,
    complete: bool,
) -> usize {
    let reserve = reserve_after(reopen, limits.metric);
    let bytes = text.as_bytes();
    let mut s = q;
    let mut r = q;
    while r < bytes.len() && is_ws(bytes[r]) {
        if bytes[r] == b'\n' {
            s = r + 1;
        }
        r += 1;
    }
    if r == bytes.len() {
        return r;
    }
    if r > s && bytes[r] >= 0x80 && !is_grapheme_boundary(text, r) {
        // The last whitespace char carries the combining mark that follows it.
        r -= 1;
    }
    if matches!(reopen, Some(Reopen::Delims(_))) {
        // After reopened inline delimiters, whitespace would be inside the span (shown in a
        // code span, or breaking the delimiter's flanking): all of it is the separator.
        return r;
    }
    // Spaces, tabs and `\r` are one unit each in every metric.
    let indent = r - s;
    if indent == 0 {
        return s;
    }
    // A cluster that the text ends in may still grow: count the widest one kept whole.
    let next = next_grapheme_boundary(text, r);
    let mut first = limits.metric.len(&text[r..next]);
    if next == text.len() && !complete {
        first = first.max(widest_grapheme(limits.metric));
    }
    let room = limits.max.saturating_sub(reserve + first);
    if indent <= room {
        return s;
    }
    // A line indented 4 or more is not a fence line; shown with less it might read as one:
    // outside a fence as an opening line, inside the reopened fence as its closing line.
    let line_end = memchr::memchr(b'\n', &bytes[r..]).map_or(bytes.len(), |i| r + i);
    let misreads = match reopen {
        Some(Reopen::Fence { marker, .. }) => marker.is_closed_by(&text[r..line_end]),
        _ => starts_like_fence(&bytes[r..]),
    };
    let keep = if room < 4 && indent >= 4 && misreads {
        4
    } else {
        room
    };
    r - keep
}

/// How strictly a cut must avoid code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Safety {
    /// Outside fences, indented code, inline code spans and undecided lines.
    Strict,
    /// Inline code spans may be cut (for a span longer than a piece).
    InCodeSpan,
    /// Tables may be cut (for a row longer than a piece).
    InTable,
    /// Tables, and links, images, autolinks and URLs in them, may be cut (for a row longer
    /// than a piece whose window holds no cut outside them).
    InTableLink,
    /// Links, images, autolinks and URLs may be cut (for a window that holds no cut
    /// outside them).
    InLink,
}

/// A cut must leave content in its piece and after it: the piece must end after `first`
/// and the next piece must start at or before `last` (byte positions of content, see
/// [`MarkdownScanner::first_content`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ContentBounds {
    /// The first content byte of the piece's text.
    pub first: usize,
    /// The last content byte of the text known.
    pub last: usize,
}

impl ContentBounds {
    /// Whether a cut ending the piece at `end`, the next piece starting at `sep_end`, leaves
    /// content on both sides.
    #[inline]
    pub(crate) fn allows(&self, end: usize, sep_end: usize) -> bool {
        end > self.first && sep_end <= self.last
    }
}

/// [`ContentBounds::allows`], with no bounds allowing everything.
#[inline]
fn allows(bounds: Option<ContentBounds>, end: usize, sep_end: usize) -> bool {
    bounds.is_none_or(|b| b.allows(end, sep_end))
}

/// The start of the line that positions at or below the last one asked about lie on,
/// for searches that walk backward (each line is found once).
struct LineStarts {
    /// The piece's start: a line is shown from there at the earliest.
    floor: usize,
    known: Option<usize>,
}

impl LineStarts {
    fn new(floor: usize) -> Self {
        LineStarts { floor, known: None }
    }

    /// The start of the displayed line holding byte position `p` (queried at decreasing
    /// `p`).
    fn at(&mut self, bytes: &[u8], p: usize) -> usize {
        match self.known {
            Some(ls) if ls <= p => ls,
            _ => {
                let ls = memchr::memrchr(b'\n', &bytes[self.floor..p])
                    .map_or(self.floor, |i| self.floor + i + 1);
                self.known = Some(ls);
                ls
            }
        }
    }
}

/// Whether a cut at `end` leaves the piece's last line reading as a fence line it was not:
/// the line is cut in its middle, and its shown part reads as a closing line of the fence
/// `fence` the cut falls in, or, outside fences, as an opening line. (The source line itself
/// is neither: a real opening line is only cut by [`Planner::plan`]'s opening-line rule.)
fn truncates_into_fence_line(
    text: &str,
    lines: &mut LineStarts,
    end: usize,
    fence: Option<FenceMarker>,
) -> bool {
    let bytes = text.as_bytes();
    line_continues(bytes, end) && {
        let shown = &text[lines.at(bytes, end)..end];
        match fence {
            Some(m) => m.is_closed_by(shown),
            None => FenceMarker::parse_open(shown).is_some(),
        }
    }
}

/// The best safe candidate with `lo <= end <= hi` for a piece starting at `start`: the first
/// class of `order` that has one, and the last candidate of that class. Searches backward
/// from `hi` and stops early once the best class is found.
#[allow(clippy::too_many_arguments)]
pub(crate) fn find_cut(
    text: &str,
    scanner: &MarkdownScanner,
    start: usize,
    lo: usize,
    hi: usize,
    order: &[BreakClass],
    complete: bool,
    safety: Safety,
    bounds: Option<ContentBounds>,
) -> Option<Cut> {
    let bytes = text.as_bytes();
    let hi = hi.min(bytes.len().saturating_sub(1));
    let lo = lo.max(1);
    if order.is_empty() || lo > hi {
        return None;
    }
    let mut lines = LineStarts::new(start);
    let mut best: Option<(usize, Candidate)> = None;
    let mut j = hi;
    loop {
        if may_be_candidate(bytes, j)
            && let Some(f) = scanner.fence_at(j)
        {
            // Every cut from the fence's first inner position up to `j` is inside it: none
            // of them can be chosen, so jump over them.
            let first = if f.continued { f.start } else { f.start + 1 };
            if first <= lo {
                break;
            }
            j = first - 1;
            continue;
        }
        if may_be_candidate(bytes, j)
            && let Some(c) = candidate_at(text, j, complete)
            && let Some(rank) = c.rank(order)
            && best.is_none_or(|(r, _)| rank < r)
            && match safety {
                Safety::Strict => scanner.is_safe_cut(j),
                Safety::InCodeSpan => scanner.is_safe_cut_in_code_span(j),
                Safety::InTable => scanner.is_safe_cut_in_table(j),
                Safety::InTableLink => scanner.is_safe_cut_in_table_link(j),
                Safety::InLink => scanner.is_safe_cut_in_link(j),
            }
            && allows(bounds, c.end, c.sep_end)
            && !truncates_into_fence_line(text, &mut lines, c.end, None)
        {
            best = Some((rank, c));
            if rank == 0 {
                break;
            }
        }
        if j == lo {
            break;
        }
        j -= 1;
    }
    best.map(|(rank, c)| Cut {
        end: c.end,
        sep_end: c.sep_end,
        class: order[rank],
    })
}

/// The last line break of code at which a piece may end, with `content_start < end <= hi`:
/// the piece keeps some code after `content_start`, the next piece starts on a line that
/// holds code (in a fence with marker char `marker`: not just marker chars and spaces, so
/// that it never starts with a closing line), and `bounds` allow it.
pub(crate) fn find_code_line_cut(
    text: &str,
    content_start: usize,
    hi: usize,
    fence: Option<FenceMarker>,
    bounds: Option<ContentBounds>,
) -> Option<Cut> {
    let bytes = text.as_bytes();
    let hi = hi.min(bytes.len());
    let mut search_end = hi;
    while search_end > content_start {
        let nl = content_start + memchr::memrchr(b'\n', &bytes[content_start..search_end])?;
        // The whitespace run around this newline: the piece ends at its start.
        let mut p = nl;
        while p > content_start && is_ws(bytes[p - 1]) {
            p -= 1;
        }
        let mut r = nl + 1;
        let mut last_nl = nl;
        while r < bytes.len() && is_ws(bytes[r]) {
            if bytes[r] == b'\n' {
                last_nl = r;
            }
            r += 1;
        }
        let q = last_nl + 1;
        let holds_code = match fence {
            Some(m) => starts_code(text, q, m),
            None => r < bytes.len(),
        };
        if p > content_start
            && p <= hi
            && boundary_at(text, p)
            && !(p > 0 && is_ws(bytes[p - 1]))
            && holds_code
            && allows(bounds, p, q)
        {
            return Some(Cut {
                end: p,
                sep_end: q,
                class: BreakClass::CodeLine,
            });
        }
        search_end = p.min(nl);
    }
    None
}

/// Whether the line starting at `at`, inside the fence with marker `fence`, is a line of
/// code: not blank and not one that closes the fence. A line that the text ends in the middle
/// of counts as code only once it can no longer become a closing line.
fn starts_code(text: &str, at: usize, fence: FenceMarker) -> bool {
    let rest = &text[at..];
    match rest.find('\n') {
        Some(nl) => {
            let line = &rest[..nl];
            !line.trim_matches([' ', '\t', '\r']).is_empty() && !fence.is_closed_by(line)
        }
        None => rest.bytes().any(|b| !is_ws(b) && b != fence.ch),
    }
}

/// Whether `text[from..end]` holds non-whitespace.
#[inline]
fn shows(text: &str, from: usize, end: usize) -> bool {
    end > from && text.as_bytes()[from..end].iter().any(|&b| !is_ws(b))
}

/// The largest grapheme boundary `<= hi` after `start` that leaves some non-whitespace after
/// `shown_from` (`>= start`) in the piece, counting boundaries from `start`. When a single
/// grapheme is wider than the budget, the limit wins: the largest char boundary. When even
/// one char does not fit, progress wins: the end of the first non-whitespace char.
pub(crate) fn hard_cut(text: &str, start: usize, shown_from: usize, hi: usize) -> usize {
    let hi = hi.min(text.len());
    if hi > start {
        let g = start + floor_grapheme_boundary(&text[start..], hi - start);
        if shows(text, shown_from, g) {
            return g;
        }
        let c = floor_char_boundary(text, hi);
        if shows(text, shown_from, c) {
            return c;
        }
    }
    let first = text.as_bytes()[shown_from.min(text.len())..]
        .iter()
        .position(|&b| !is_ws(b))
        .map_or(text.len(), |i| shown_from + i);
    text[first..]
        .chars()
        .next()
        .map_or(text.len(), |c| first + c.len_utf8())
}

/// The largest hard cut of a piece starting at `start`, at most `hi`, that shows something
/// after `shown_from`, that `bounds` allow, whose cut line reads as it does in the text (no
/// fence line made by the cut, at either side), and inside the fence with marker `fence`
/// does not start the next piece with a line of marker chars only. With `whole_clusters`, a
/// cluster wider than the room is not cut into (`None` instead). Steps back one cluster at a
/// time.
#[allow(clippy::too_many_arguments)]
fn checked_hard_cut(
    text: &str,
    start: usize,
    shown_from: usize,
    hi: usize,
    fence: Option<FenceMarker>,
    bounds: Option<ContentBounds>,
    whole_clusters: bool,
    complete: bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let hi = bounds.map_or(hi, |b| hi.min(b.last));
    if hi <= shown_from {
        return None;
    }
    let mut h = hard_cut(text, start, shown_from, hi);
    // Within bounds, a cut that would split a cluster is no cut: the unbounded plan decides.
    let whole_clusters = whole_clusters || bounds.is_some();
    if h > hi || (whole_clusters && !is_grapheme_boundary(&text[start..], h - start)) {
        return None;
    }
    let mut lines = LineStarts::new(start);
    loop {
        let next_line_ok = match fence {
            // The rest of the line, or the next line holding anything, is code.
            Some(m) => match bytes[h..].iter().position(|&b| !is_ws(b)) {
                Some(i) => {
                    let at = h + i;
                    let line = memchr::memrchr(b'\n', &bytes[h..at]).map_or(h, |j| h + j + 1);
                    starts_code(text, line, m)
                }
                None => true,
            },
            None => true,
        };
        // Inside a fence only a closing line would misread (checked above); outside, an
        // opening line.
        if next_line_ok
            && allows(bounds, h, h)
            && (fence.is_some() || !reads_as_fence_line_after_cut(bytes, h, complete))
            && !truncates_into_fence_line(text, &mut lines, h, fence)
        {
            return Some(h);
        }
        h = step_back(text, start, shown_from, h)?;
    }
}

/// The largest char boundary in `(shown_from, hi]`, inside the fence with marker `fence`,
/// inside a cluster glued to a run of marker chars, at which a piece starting at `start` may end with its cut line
/// reading as in the text and the next piece starting with the rest of that line as code
/// (not a closing line). Looks at most a few dozen chars back.
fn char_cut_reading_right(
    text: &str,
    start: usize,
    shown_from: usize,
    hi: usize,
    fence: FenceMarker,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut lines = LineStarts::new(start);
    let mut h = floor_char_boundary(text, hi.min(text.len()));
    for _ in 0..64 {
        if h <= shown_from {
            return None;
        }
        let rest_is_code = match bytes[h..].iter().position(|&b| !is_ws(b)) {
            Some(i) => {
                let at = h + i;
                let line = memchr::memrchr(b'\n', &bytes[h..at]).map_or(h, |j| h + j + 1);
                starts_code(text, line, fence)
            }
            None => true,
        };
        // Only inside a cluster glued to a run of marker chars (cutting after the cluster
        // would start the next piece with a closing line).
        let cluster_end = next_grapheme_boundary(text, floor_grapheme_boundary(text, h));
        let glued = bytes[cluster_end..]
            .iter()
            .take(3)
            .filter(|&&b| b == fence.ch)
            .count()
            == 3;
        if glued
            && shows(text, shown_from, h)
            && line_continues(bytes, h)
            && rest_is_code
            && !truncates_into_fence_line(text, &mut lines, h, Some(fence))
        {
            return Some(h);
        }
        h = floor_char_boundary(text, h - 1);
    }
    None
}

/// Whether a cut at `h` in the middle of a line starts the next piece with text that reads
/// as a fence line (or, unless `complete`, may still grow into one).
fn reads_as_fence_line_after_cut(bytes: &[u8], h: usize, complete: bool) -> bool {
    let rest = &bytes[h..];
    let indent = rest.iter().take(4).take_while(|&&b| b == b' ').count();
    h > 0
        && bytes[h - 1] != b'\n'
        && (reads_as_fence_line(rest)
            || (!complete && indent < 4 && partial_fence_at_end(&rest[indent..])))
}

/// A hard cut one grapheme earlier than `h`: before the last non-whitespace grapheme, if the
/// piece still shows something after `shown_from`.
fn step_back(text: &str, start: usize, shown_from: usize, h: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let last = bytes[shown_from..h].iter().rposition(|&b| !is_ws(b))? + shown_from;
    let g = start + floor_grapheme_boundary(&text[start..], last - start);
    (g > shown_from && shows(text, shown_from, g)).then_some(g)
}

/// A line-break cut right before the line starting at `line_start`.
fn cut_before_line(text: &str, start: usize, line_start: usize) -> Option<Cut> {
    let bytes = text.as_bytes();
    let mut p = line_start;
    while p > start && is_ws(bytes[p - 1]) {
        p -= 1;
    }
    (p > start && p < line_start && boundary_at(text, p)).then_some(Cut {
        end: p,
        sep_end: line_start,
        class: BreakClass::Line,
    })
}

/// Whether the piece that starts at byte `at` of `text`, inside a fence with `marker`, goes
/// on in the middle of a line of its code in a block quote (the prefix holds a `>`), and
/// `limits` leave room for the prefix after the reopening line and the closing line, as
/// [`Limits::repair`] asks for a reopened fence: room for the widest cluster after the
/// fence's own opening line, for one char after the bare marker (a cluster wider than the
/// room left is then cut at a char boundary: the limit wins).
///
/// `line` is the reopening line (`None`: the bare marker).
pub(crate) fn quoted_after(
    text: &str,
    limits: &Limits,
    marker: &FenceMarker,
    line: Option<&str>,
    at: usize,
) -> bool {
    // (A piece that starts with the line's break holds nothing more of the line.)
    let mid_line = at > 0
        && at < text.len()
        && text.as_bytes()[at - 1] != b'\n'
        && !matches!(text.as_bytes()[at], b'\n' | b'\r');
    let reopen = line.map_or(marker.close_len(), |l| limits.metric.len(l)) + 1;
    let room = match line {
        Some(_) => widest_grapheme(limits.metric),
        None => widest_char(limits.metric),
    };
    mid_line
        && marker.prefix.as_str().contains('>')
        && reopen + marker.prefix.len() + marker.close_len() + 1 + room <= limits.max
}

/// The synthetic text a piece starts with when it continues code cut in the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reopen<'a> {
    /// A fence that continues: its original opening line (info string included), or the
    /// bare marker (`None`) when that line leaves no room for code.
    Fence {
        /// The fence's marker.
        marker: FenceMarker,
        /// The original opening line, or `None` for the bare marker.
        line: Option<&'a str>,
        /// The piece goes on in the middle of a code line of a fence in a block quote: the
        /// container prefix (its `>` markers) follows the reopened line, so that the rest of
        /// the line stays in the quote, and in the fence.
        quoted: bool,
    },
    /// A fence whose opening line was cut in its middle (a long info string): the next
    /// piece starts with the bare marker and goes on with the rest of that line, so the rest
    /// is read as the info string again, never as code or prose.
    Marker {
        /// The fence's marker.
        marker: FenceMarker,
        /// A space after the marker, as the rest of the line starts with the marker's
        /// char (glued, it would lengthen the marker run).
        space: bool,
    },
    /// An indented code line cut in its middle continues after 4 spaces of indentation,
    /// so that it still reads as code.
    Indent,
    /// A table cut between two rows goes on under its header and delimiter rows again, so
    /// that the rest still renders as a table.
    Table {
        /// The header row, its line break and the delimiter row (no final `\n`), as
        /// written, container prefixes included.
        head: &'a str,
        /// How many bytes at `head`'s start are the header line's container prefix, shown
        /// blanked (`>` and tabs kept, list markers as spaces: a list item's first line
        /// repeated must not open another item).
        blank: usize,
    },
    /// Inline delimiters open at the cut (an inline code span's backtick run, emphasis)
    /// open again.
    Delims(SpanDelims),
}

impl Reopen<'_> {
    /// The indentation that continues an indented code line.
    pub(crate) const INDENT: &'static str = "    ";

    /// The length of the synthetic text (a fence line with its `\n`, or the indentation).
    pub(crate) fn cost(&self, metric: LengthMetric) -> usize {
        match self {
            Reopen::Fence {
                marker,
                line,
                quoted,
            } => {
                line.map_or(marker.close_len(), |l| metric.len(l))
                    + 1
                    + if *quoted { marker.prefix.len() } else { 0 }
            }
            Reopen::Marker { marker, space } => marker.close_len() + usize::from(*space),
            Reopen::Indent => Self::INDENT.len(),
            // Blanking keeps the length: the prefix is ASCII.
            Reopen::Table { head, .. } => metric.len(head) + 1,
            Reopen::Delims(d) => d.len(),
        }
    }

    /// The synthetic lines it adds.
    pub(crate) fn lines(&self) -> usize {
        match self {
            Reopen::Fence { .. } => 1,
            Reopen::Table { head, .. } => 1 + memchr::memchr_iter(b'\n', head.as_bytes()).count(),
            Reopen::Marker { .. } | Reopen::Indent | Reopen::Delims(_) => 0,
        }
    }

    /// The cost of the closing line the piece may need (a reopened fence can be cut again).
    pub(crate) fn close_cost(&self) -> usize {
        match self {
            Reopen::Fence { marker, .. } | Reopen::Marker { marker, .. } => marker.close_len() + 1,
            Reopen::Indent | Reopen::Table { .. } => 0,
            // The piece may be cut inside the same delimiters again.
            Reopen::Delims(d) => d.len(),
        }
    }

    /// Appends the synthetic text.
    pub(crate) fn push_to(&self, out: &mut String) {
        match self {
            Reopen::Fence {
                marker,
                line,
                quoted,
            } => {
                match line {
                    Some(l) => marker.push_open_line(l, out),
                    None => marker.push_close(out),
                }
                out.push('\n');
                if *quoted {
                    out.push_str(marker.prefix.as_str());
                }
            }
            Reopen::Marker { marker, space } => {
                marker.push_close(out);
                if *space {
                    out.push(' ');
                }
            }
            Reopen::Indent => out.push_str(Self::INDENT),
            Reopen::Table { head, blank } => {
                let blank = (*blank).min(head.len());
                out.extend(head.as_bytes()[..blank].iter().map(|&b| match b {
                    b'>' | b'\t' => char::from(b),
                    _ => ' ',
                }));
                out.push_str(&head[blank..]);
                out.push('\n');
            }
            Reopen::Delims(d) => d.push_open(out),
        }
    }
}

/// What the synthetic start of a piece costs: units and lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReopenCost {
    /// Units of the synthetic text.
    pub units: usize,
    /// Lines it adds.
    pub lines: usize,
}

impl ReopenCost {
    /// The cost of `reopen` in `metric`.
    pub(crate) fn of(reopen: Option<Reopen<'_>>, metric: LengthMetric) -> ReopenCost {
        reopen.map_or(ReopenCost::default(), |r| ReopenCost {
            units: r.cost(metric),
            lines: r.lines(),
        })
    }
}

/// How the piece after a cut starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextStart {
    /// With its own text.
    Plain,
    /// With a synthetic opening line of the fence closed at the end of the cut piece:
    /// the original line, or the bare marker.
    Fence {
        /// Reopen with the bare marker.
        bare: bool,
    },
    /// With the bare marker of the fence whose opening line the cut fell in, the rest of
    /// that line right after it (after a space when the rest starts with the marker's
    /// char).
    OpenLine {
        /// A space between the marker and the rest.
        space: bool,
    },
    /// With the indentation of an indented code line cut in its middle.
    Indent,
    /// With the header and delimiter rows of the table cut between two of its rows.
    Table,
    /// The piece ends with these inline delimiters closed (synthetic), and the next one
    /// starts with them reopened: the cut fell inside an inline code span longer than a
    /// piece, or inside emphasis.
    Delims(SpanDelims),
}

/// A cut chosen when a piece must end (forced, or over the limit), whether the piece must
/// close a fence it ends inside, and how the next piece starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    /// The cut.
    pub cut: Cut,
    /// The fence the piece ends inside and closes with a synthetic line.
    pub close: Option<FenceSpan>,
    /// How the next piece starts.
    pub next: NextStart,
}

impl Planned {
    fn plain(cut: Cut) -> Planned {
        Planned {
            cut,
            close: None,
            next: NextStart::Plain,
        }
    }
}

/// Everything a forced cut needs to know about the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Planner<'a> {
    /// The text known so far; cuts fall inside it.
    pub text: &'a str,
    /// The scanner, fed through `text` (positions relative to `text`).
    pub scanner: &'a MarkdownScanner,
    /// The limits.
    pub limits: Limits,
    /// The break classes in preference order.
    pub order: &'a [BreakClass],
    /// No more text will come (a forced drain): a whitespace run at the end of `text` is a
    /// break, and its last line is final.
    pub complete: bool,
    /// The opening line of a fence whose opening line is no longer in `text`.
    pub continued_line: Option<&'a str>,
    /// The header and delimiter rows of a table whose header is no longer in `text`.
    pub continued_table: Option<&'a str>,
    /// Only cuts at breaks (code line breaks included): no hard cut, no cut inside a line.
    pub breaks_only: bool,
}

impl<'a> Planner<'a> {
    /// The opening line of `fence` (without `\r`).
    pub(crate) fn open_line(&self, fence: &FenceSpan) -> &'a str {
        if fence.continued {
            return self.continued_line.unwrap_or("");
        }
        let line = &self.text[fence.start..fence.open_end.min(self.text.len())];
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// The header and delimiter rows of `table` (no final `\n`), when known, and the bytes
    /// of its container prefix to blank (see [`Reopen::Table`]).
    pub(crate) fn table_head(&self, table: &TableSpan) -> Option<(&'a str, usize)> {
        let head = match table.continued {
            // Saved with the prefix blanked already.
            true => (self.continued_table?, 0),
            false => (
                &self.text[table.start..table.delim_end.min(self.text.len())],
                table.prefix_len,
            ),
        };
        (!head.0.is_empty()).then_some(head)
    }

    /// Whether the piece that starts at `at`, inside a fence with `marker`, goes on in the
    /// middle of a code line of a block quote, and the limits leave room for the quote
    /// prefix after the reopened line (see [`Reopen::Fence`]).
    pub(crate) fn quoted_after(&self, marker: &FenceMarker, line: Option<&str>, at: usize) -> bool {
        quoted_after(self.text, &self.limits, marker, line, at)
    }

    /// How `fence` is reopened after a cut inside it, if it can be.
    pub(crate) fn repair(&self, fence: &FenceSpan) -> Option<Reopen<'a>> {
        self.limits.repair(fence.marker, self.open_line(fence))
    }

    /// The synthetic line that starts the piece after `planned`, if any.
    pub(crate) fn next_reopen(&self, planned: &Planned) -> Option<Reopen<'a>> {
        match (planned.next, planned.close) {
            (NextStart::Fence { bare }, Some(f)) => {
                let mut line = (!bare).then(|| self.open_line(&f));
                let at = planned.cut.sep_end;
                let mut quoted = self.quoted_after(&f.marker, line, at);
                // The bare marker where it leaves room for the quote prefix and the line
                // does not.
                if !quoted && line.is_some() && self.quoted_after(&f.marker, None, at) {
                    (line, quoted) = (None, true);
                }
                Some(Reopen::Fence {
                    marker: f.marker,
                    line,
                    quoted,
                })
            }
            (NextStart::OpenLine { space }, Some(f)) => Some(Reopen::Marker {
                marker: f.marker,
                space,
            }),
            (NextStart::Indent, _) => Some(Reopen::Indent),
            (NextStart::Table, _) => {
                let table = self.scanner.table_at(planned.cut.end)?;
                let (head, blank) = self.table_head(table)?;
                Some(Reopen::Table { head, blank })
            }
            (NextStart::Delims(d), _) => Some(Reopen::Delims(d)),
            _ => None,
        }
    }

    /// The content a piece starting at `start` and the text after it must keep (see
    /// [`ContentBounds`]); `None` when the text holds no content to keep on both sides.
    pub(crate) fn content_bounds(&self, start: usize) -> Option<ContentBounds> {
        let end = self.text.len();
        let first = self.scanner.first_content(self.text, start, end).ok()?;
        let last = self.scanner.last_content(self.text, start, end)?;
        (first < last).then_some(ContentBounds { first, last })
    }

    /// Chooses the cut for a piece starting at `start` (after synthetic text costing
    /// `reopen`) that must end before the text does: a break in `[min_units, max]` in
    /// `order`; then a break anywhere that fits, if `forced` (a forced drain) or if a hard
    /// cut would fall inside code or a line that may open a fence (never cut inside code
    /// while a cut outside it is possible); then, inside code, a line break of the code (or,
    /// in an inline code span, a break inside it); then a hard cut. Every cut leaves content
    /// on both sides when the text allows it (see [`ContentBounds`]).
    ///
    /// Unless `forced`, while the text's last line is still undecided (it may turn out to be
    /// a fence line), the cut falls at a break before that line and leaves content between
    /// them; `None` when there is no such cut: a streaming caller waits for more text (the
    /// line's end, or the code after it). A `forced` plan always has a cut.
    ///
    /// A cut inside emphasis, strong emphasis or strikethrough closes their delimiters at
    /// the end of the piece and reopens them at the start of the next
    /// ([`NextStart::Delims`]), within the limit: when they do not fit beside the cut, the
    /// plan is made again with room for them.
    pub(crate) fn plan(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
    ) -> Option<Planned> {
        let mut reserve = 0;
        let mut planned = None;
        for _ in 0..3 {
            let room = Planner {
                limits: Limits {
                    max: self.limits.max.saturating_sub(reserve),
                    ..self.limits
                },
                ..*self
            };
            let Some(plain) = room.plan_cut(start, reopen, min_units, forced) else {
                return planned;
            };
            let Some((with, extra)) = self.with_emphasis(start, reopen, plain) else {
                return Some(plain);
            };
            if let Some(with) = with {
                return Some(with);
            }
            planned = Some(plain);
            reserve += extra;
        }
        planned
    }

    /// `planned` with the emphasis open at its cut closed and reopened: `None` when none is
    /// open there (or it cannot be repaired: too many delimiters, too little room in any
    /// piece), else the repaired plan if it fits, and the units the delimiters need.
    fn with_emphasis(
        &self,
        start: usize,
        reopen: ReopenCost,
        planned: Planned,
    ) -> Option<(Option<Planned>, usize)> {
        let inner = match planned.next {
            NextStart::Plain => SpanDelims::NONE,
            NextStart::Delims(d) => d,
            _ => return None,
        };
        if planned.close.is_some() {
            return None;
        }
        let mut delims = self.scanner.emphasis_at(planned.cut.end);
        if delims.is_empty() || !delims.extend(inner) {
            return None;
        }
        let extra = delims.len() - inner.len();
        // The next piece holds them twice (reopened, maybe closed again) and a char.
        if 2 * delims.len() + super::limits::widest_char(self.limits.metric) > self.limits.max {
            return None;
        }
        let fits = self.limits.fits(
            self.text,
            start,
            planned.cut.end,
            reopen.units + delims.len(),
            reopen.lines,
        );
        let repaired = Planned {
            next: NextStart::Delims(delims),
            ..planned
        };
        Some((fits.then_some(repaired), extra))
    }

    /// [`Planner::plan`] without the emphasis repair.
    fn plan_cut(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
    ) -> Option<Planned> {
        if !forced && self.scanner.last_line_undecided(self.text) {
            // Nothing may be cut inside or right before a line that may be a fence line:
            // plan within the text before it, keeping content after the cut, or wait.
            let line_start = self.scanner.line_start();
            if line_start <= start {
                return None;
            }
            // Only at a break: a hard cut now would be a poor one made for a line that may
            // still turn out to be text, or code that arrives next.
            let before = Planner {
                text: &self.text[..line_start],
                breaks_only: true,
                ..*self
            };
            let bounds = before.content_bounds(start)?;
            return before.plan_within(start, reopen, min_units, forced, Some(bounds));
        }
        let bounds = self.content_bounds(start);
        if let Some(planned) = self.plan_within(start, reopen, min_units, forced, bounds) {
            return Some(planned);
        }
        self.plan_within(start, reopen, min_units, forced, None)
    }

    /// [`Planner::plan`] within `bounds`. Always a cut without bounds.
    fn plan_within(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        // No cut may leave the text after it without content.
        let hi = limits
            .window_end(text, start, avail, reopen.lines)
            .min(bounds.map_or(usize::MAX, |b| b.last));
        let find = |lo: usize, hi: usize, safety: Safety| {
            find_cut(
                text,
                self.scanner,
                start,
                lo,
                hi,
                self.order,
                self.complete,
                safety,
                bounds,
            )
        };
        // A cut right before a fence whose opening line leaves no room for code would start
        // the next piece with fence lines only: the head of that line ends this piece instead,
        // after the text before it, and the fence goes on under a bare marker.
        let plain = |cut: Cut| {
            self.crowded_fence_at(cut.sep_end)
                .and_then(|f| self.head_after_text(start, reopen, &f, bounds))
                .unwrap_or(Planned::plain(cut))
        };
        let content_min = min_units.saturating_sub(reopen.units);
        // The end of the range the search below `min` must still look at.
        let mut below = hi;
        if content_min > 1 {
            let lo = start + limits.metric.floor_index(&text[start..], content_min - 1) + 1;
            if let Some(cut) = find(lo, hi, Safety::Strict) {
                return Some(plain(cut));
            }
            // `lo..=hi` holds no usable candidate: searching it again would find nothing.
            below = hi.min(lo - 1);
        }
        // Below `min` only when forced, or when the alternative cuts into code.
        let hard = hard_cut(text, start, start, hi);
        if (forced || content_min <= 1 || !self.scanner.is_safe_cut(hard))
            && let Some(cut) = find(start + 1, below, Safety::Strict)
        {
            return Some(plain(cut));
        }
        // Inside code, a cut is made the code's way or not at all (a plain cut would break
        // the fence, or lose the line's indentation); a fence that cannot be repaired is cut
        // plainly (the limit wins).
        if let Some(fence) = self.scanner.fence_at(hard).copied() {
            if self.repair(&fence).is_some() {
                let planned = self
                    .plan_in_fence(start, reopen, &fence, bounds)
                    .map(|p| in_opening_line(text, p));
                if planned.is_some() || bounds.is_some() {
                    return planned;
                }
            }
        } else if let Some(block) = self.scanner.indented_at(hard).copied() {
            let planned = self.plan_in_indented(start, reopen, &block, bounds);
            if planned.is_some() || bounds.is_some() {
                return planned;
            }
        } else {
            if self.scanner.table_blocks_cut(hard) {
                if let Some(table) = self.scanner.table_at(hard).copied() {
                    if let Some(planned) = self.plan_in_table(start, reopen, &table, bounds) {
                        return Some(planned);
                    }
                    // Held back before a line that may still be a fence line, right after a
                    // body row that ends there: wait for that line rather than cut inside
                    // the row.
                    let bytes = text.as_bytes();
                    let tail = bytes.iter().rposition(|&b| !is_ws(b)).map_or(0, |i| i + 1);
                    if self.breaks_only
                        && bytes[tail..].contains(&b'\n')
                        && tail > start.max(table.rows_start)
                    {
                        return None;
                    }
                }
                // A row longer than a piece (or a line that may still be a header row): the
                // ordinary rules, inside the row; a link or URL is cut only when the window
                // holds no cut outside it.
                if let Some(cut) = find(start + 1, hi, Safety::InTable) {
                    return Some(Planned::plain(cut));
                }
                if self.scanner.inline_at(hard).is_some()
                    && let Some(cut) = find(start + 1, hi, Safety::InTableLink)
                {
                    return Some(Planned::plain(cut));
                }
            }
            if let Some(code) = self.scanner.code_at(hard).copied() {
                if let Some(planned) = self.plan_in_code_span(start, reopen, &code, bounds) {
                    return Some(planned);
                }
                // A span that cannot be closed and reopened: at a break inside it.
                if let Some(cut) = find(start + 1, hi, Safety::InCodeSpan) {
                    return Some(Planned::plain(cut));
                }
            } else if self.scanner.inline_at(hard).is_some()
                && let Some(cut) = find(start + 1, hi, Safety::InLink)
            {
                // No cut outside the link (or URL) in the window: a break inside it, then (a
                // URL longer than the window) a hard cut.
                return Some(Planned::plain(cut));
            }
        }
        if self.breaks_only {
            return None;
        }
        let cut = self.plain_hard_cut(start, hi, hard, bounds)?;
        // A hard cut that stepped back into a link, a URL or code (from a safe place right
        // after it that reads wrong), or that falls next to an emphasis delimiter run (a run cut
        // off from the text it wraps shows as raw markup: no delimiters are open there to
        // close), gives way to a break before it.
        let bytes = text.as_bytes();
        let delim = |b: Option<&u8>| matches!(b, Some(b'*' | b'_' | b'~'));
        let by_delims = cut.end > 0 && (delim(bytes.get(cut.end - 1)) || delim(bytes.get(cut.end)));
        if (by_delims || !self.scanner.is_safe_cut(cut.end))
            && let Some(before) = find(start + 1, below, Safety::Strict)
        {
            return Some(Planned::plain(before));
        }
        // Stepped back into a code span: cut it the span's way.
        if let Some(code) = self.scanner.code_at(cut.end).copied()
            && let Some(planned) = self.plan_in_code_span(start, reopen, &code, bounds)
        {
            return Some(planned);
        }
        Some(Planned::plain(cut))
    }

    /// A cut inside `fence`, closing it and reopening it in the next piece.
    fn plan_in_fence(
        &self,
        start: usize,
        reopen: ReopenCost,
        fence: &FenceSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let repair = self.repair(fence)?;
        let text = self.text;
        let limits = self.limits;
        let marker = fence.marker;
        let close_cost = marker.close_len() + 1;
        let avail = limits.max.saturating_sub(reopen.units + close_cost);
        let hi = limits.window_end(text, start, avail, reopen.lines + 1);
        let opener_here = !fence.continued && fence.start >= start;
        let content_start = if opener_here {
            (fence.open_end + 1).min(text.len())
        } else {
            start
        };
        let bare = matches!(repair, Reopen::Fence { line: None, .. });
        let close = Some(*fence);
        if content_start < hi {
            if let Some(cut) = find_code_line_cut(text, content_start, hi, Some(marker), bounds) {
                return Some(Planned {
                    cut,
                    close,
                    next: NextStart::Fence { bare },
                });
            }
            if self.breaks_only {
                return None;
            }
            if let Some(h) =
                // Beside the opening line, a cluster that does not fit whole goes to the next
                // piece (it fits there, after a shorter reopening line).
                checked_hard_cut(
                    text,
                    start,
                    content_start,
                    hi,
                    Some(marker),
                    bounds,
                    opener_here,
                    self.complete,
                )
                && fence.contains_cut(h)
            {
                return Some(Planned {
                    cut: Cut::hard(h),
                    close,
                    next: NextStart::Fence { bare },
                });
            }
        }
        if self.breaks_only {
            return None;
        }
        if !opener_here {
            // What the checks above refuse everywhere: first a cut at a char boundary that
            // still reads right (a cluster glued to marker chars, such as an emoji right
            // before "````", may have to be split: balanced fences come first); last, for a
            // line cap that leaves room for one line, any cut inside the fence.
            if bounds.is_none()
                && let Some(h) = char_cut_reading_right(text, start, content_start, hi, marker)
            {
                return Some(Planned {
                    cut: Cut::hard(h),
                    close,
                    next: NextStart::Fence { bare },
                });
            }
            let h = hard_cut(text, start, content_start, hi);
            return (bounds.is_none() && h <= hi && fence.contains_cut(h)).then_some(Planned {
                cut: Cut::hard(h),
                close,
                next: NextStart::Fence { bare },
            });
        }
        // The opening line leaves no room for code beside it: after text, the piece ends
        // with its head (a piece before it would start the next one with fence lines only);
        // else end the piece before it, or, when it starts the piece, show its head.
        if fence.start > start
            && self.crowded_fence_at(fence.start).is_some()
            && let Some(planned) = self.opener_head(start, fence, hi, bounds)
        {
            return Some(planned);
        }
        if fence.start > start
            && let Some(cut) = cut_before_line(text, start, fence.start)
            && allows(bounds, cut.end, cut.sep_end)
        {
            return Some(Planned::plain(cut));
        }
        self.opener_head(start, fence, hi, bounds)
    }

    /// The fence whose opening line starts at `p`, when it holds code (as far as the text
    /// goes) and that line is too long for a piece starting with it to show any: the line,
    /// a line break, one char and the closing line do not fit.
    pub(crate) fn crowded_fence_at(&self, p: usize) -> Option<FenceSpan> {
        let f = *self.scanner.fence_at(p + 1)?;
        if f.continued || f.start != p || f.open_end >= self.text.len() {
            return None;
        }
        // An empty fence has no code to make room for.
        let code_end = f.end.map_or(self.text.len(), |_| f.close_start);
        let code = self.text.get(f.open_end + 1..code_end).unwrap_or("");
        if code.bytes().all(is_ws) {
            return None;
        }
        let line = self.open_line(&f);
        let needed = self.limits.metric.len(line) + 2 + f.marker.close_len() + 1;
        (needed > self.limits.max && self.repair(&f).is_some()).then_some(f)
    }

    /// The piece starting at `start` (after synthetic text costing `reopen`) ending with the
    /// head of `fence`'s opening line, closed, after the text before it (see
    /// [`Planner::opener_head`]); `None` when not even the marker fits after that text.
    fn head_after_text(
        &self,
        start: usize,
        reopen: ReopenCost,
        fence: &FenceSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        if fence.start <= start || self.breaks_only {
            return None;
        }
        let close_cost = fence.marker.close_len() + 1;
        let avail = self.limits.max.saturating_sub(reopen.units + close_cost);
        let hi = self
            .limits
            .window_end(self.text, start, avail, reopen.lines + 1);
        self.opener_head(start, fence, hi, bounds)
            .map(|p| in_opening_line(self.text, p))
    }

    /// The head of an opening line too long to fit beside any code, at the end of a piece:
    /// the marker and as much of the info string as fits, closed. The next piece reopens the
    /// fence with the bare marker and shows the rest of the line as its first line of code.
    /// Its own piece shows only fence lines: the one exception to that rule, as the line
    /// cannot be shown whole.
    fn opener_head(
        &self,
        start: usize,
        fence: &FenceSpan,
        hi: usize,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let marker_end = fence.start + fence.marker.marker_end();
        let mut line_end = fence.open_end.min(text.len());
        if line_end > fence.start && bytes[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        if marker_end > hi {
            return None;
        }
        let mut h = (start + floor_grapheme_boundary(&text[start..], hi - start)).min(line_end);
        // The rest of the line, shown after the bare marker, must not read as a fence line.
        while h < line_end && reads_as_fence_line(&bytes[h..]) {
            h = start + floor_grapheme_boundary(&text[start..], h - 1 - start);
        }
        if h < marker_end {
            return None;
        }
        // The next piece must show something: the rest of the line, or code after it.
        let rest_shows = shows(text, h, line_end);
        if !rest_shows && bounds.is_some_and(|b| b.last < fence.open_end) {
            return None;
        }
        let cut = if h == line_end {
            Cut {
                end: h,
                sep_end: (fence.open_end + 1).min(text.len()),
                class: BreakClass::CodeLine,
            }
        } else {
            Cut::hard(h)
        };
        Some(Planned {
            cut,
            close: Some(*fence),
            next: NextStart::Fence { bare: true },
        })
    }

    /// A cut inside `table`, between two of its rows (the last line break that fits, with
    /// a row on both sides: a piece never shows the header and delimiter rows alone). The
    /// next piece starts with the header and delimiter rows again when they leave room
    /// for the row after the cut, else plainly (the limit wins). `None` when no row break
    /// fits: a row longer than a piece is cut by the ordinary rules.
    fn plan_in_table(
        &self,
        start: usize,
        reopen: ReopenCost,
        table: &TableSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        let hi = limits
            .window_end(text, start, avail, reopen.lines)
            .min(text.len());
        // Only between body rows, and the piece keeps at least one of them (it never ends
        // with the header and delimiter rows alone).
        let rows_from = start.max(table.rows_start).min(text.len());
        // An open table may take more rows: a cut right before the next line is one
        // between rows until that line proves otherwise (the chunker then drops the header
        // it planned).
        let table_end = table.end.unwrap_or(usize::MAX);
        let deep = table.items_only && table.prefix_len >= 4;
        // A line break right at the window's end, or after only whitespace there (a CRLF's
        // `\r`), still ends a row that fits.
        let mut search_end = hi
            + bytes[hi..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
                .count();
        if bytes.get(search_end) == Some(&b'\n') {
            search_end += 1;
        }
        while search_end > rows_from {
            let nl = rows_from + memchr::memrchr(b'\n', &bytes[rows_from..search_end])?;
            let mut p = nl;
            while p > rows_from && is_ws(bytes[p - 1]) {
                p -= 1;
            }
            // Rows hold no blank line: the next row starts right after the line break,
            // past its indentation (a list item's; a quote's `>` stays with the row) unless
            // the piece is de-indented (a table 4 columns deep or more in list items: the
            // indentation goes with the row, to be taken off with the piece's).
            let indent = match deep {
                true => 0,
                false => bytes[nl + 1..]
                    .iter()
                    .take_while(|&&b| b == b' ' || b == b'\t')
                    .count(),
            };
            // (Not into a cluster: a space may carry a combining mark.)
            let q = match boundary_at(text, nl + 1 + indent) {
                true => nl + 1 + indent,
                false => nl + 1,
            };
            search_end = p.min(nl);
            // Streaming, the next row's content may not have arrived yet (its quote marker
            // may have): the cut right before it leaves the next piece nothing so far, but
            // what comes next goes there. (Not where the text was held back before a line
            // that may be a fence line: that line comes next.)
            let next_unknown = !self.complete
                && !self.breaks_only
                && bytes[q.min(text.len())..]
                    .iter()
                    .all(|&b| is_ws(b) || b == b'>');
            let content = match next_unknown {
                true => bounds.is_none_or(|b| p > b.first),
                false => allows(bounds, p, q),
            };
            // Right after the table's last row (the table ended there): a cut outside it,
            // over all the whitespace after it, that the search for safe cuts may have
            // refused only because what follows has not arrived.
            let at_end = p == table_end;
            let q = match at_end {
                true => {
                    let mut q = p + bytes[p..].iter().take_while(|&&b| is_ws(b)).count();
                    while q > p && !boundary_at(text, q) {
                        q -= 1;
                    }
                    q
                }
                false => q,
            };
            if p <= rows_from || (q >= table_end && !at_end) || !boundary_at(text, p) || !content {
                continue;
            }
            let repeat = self.table_head(table).filter(|&(head, blank)| {
                // The header again and the row after the cut (up to its last non-blank
                // byte) within the limits. When they do not fit together no piece can show
                // that row as a table: it goes on plainly, as a row longer than a piece does
                // (README design notes, tables). A row whose end has not arrived is judged
                // on what has, with room for the widest cluster beside the header (the piece
                // must be able to hold one whatever comes).
                let line_end = memchr::memchr(b'\n', &bytes[q..]).map(|i| q + i);
                let known = line_end.is_some() || self.complete;
                let row_end = line_end.unwrap_or(text.len());
                let row_end = q + bytes[q..row_end]
                    .iter()
                    .rposition(|&b| !is_ws(b))
                    .map_or(0, |i| i + 1);
                let cost = ReopenCost::of(Some(Reopen::Table { head, blank }), limits.metric);
                limits.max_lines.is_none_or(|cap| cost.lines < cap)
                    && (known || cost.units + widest_grapheme(limits.metric) <= limits.max)
                    && limits.fits(text, q, row_end, cost.units, cost.lines)
            });
            let next = match repeat {
                Some(_) if !at_end => NextStart::Table,
                _ => NextStart::Plain,
            };
            return Some(Planned {
                cut: Cut {
                    end: p,
                    sep_end: q,
                    class: BreakClass::Line,
                },
                close: None,
                next,
            });
        }
        None
    }

    /// A cut inside the inline code span `code`, longer than a piece: the piece ends with
    /// the span closed by a synthetic run of its backticks, and the next piece reopens it
    /// with the same run, so both show code (a plain cut would show a literal backtick and
    /// the rest as prose in each). At a break inside the span (the whitespace goes to the
    /// separator), else a hard cut. The piece keeps some of the span's code, and the next
    /// one starts with some: a cut right after the opening run or right before the closing
    /// one would show an empty span. Neither side of the cut may be a backtick (a synthetic
    /// run beside it would make a longer run). `None` when the run is too long to repeat, or
    /// no such cut fits, the run is three backticks or more (a piece starting with it
    /// would read as a fence's opening line), or the span's closing run has not arrived and
    /// a line break came after its opening run: until its block ends an open run may prove
    /// a stray backtick, literal text, and closing it would show the text after it as code.
    /// A streaming chunker that must cut a span longer than `max` before its closing run
    /// arrives takes it for a span while it stays on one line (a choice: a long span in a
    /// reply is a line of code; a stray backtick's paragraph goes on over lines).
    fn plan_in_code_span(
        &self,
        start: usize,
        reopen: ReopenCost,
        code: &CodeSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let limits = self.limits;
        let mut delims = SpanDelims::NONE;
        // A span whose closing run has not arrived may be a stray backtick: taken for a
        // span only while it stays on its line (a long span in a reply is one line of code;
        // a stray backtick's paragraph goes on over lines).
        let open_over_lines = code.end.is_none() && code.crossed_line;
        if open_over_lines || code.run >= 3 || !delims.push(b'`', code.run) {
            return None;
        }
        // The next piece must hold the run again, its close, and a cluster of code.
        if 2 * code.run + super::limits::widest_char(limits.metric) > limits.max {
            return None;
        }
        let avail = limits.max.saturating_sub(reopen.units + code.run);
        let hi = limits.window_end(text, start, avail, reopen.lines);
        // Some code in this piece, and some in the next (before the closing run, if known).
        let content_start = (code.start + code.run).max(start);
        let content_end = code.end.map_or(bytes.len(), |e| e.saturating_sub(code.run));
        let inside = ContentBounds {
            first: content_start,
            last: content_end.saturating_sub(1),
        };
        let bounds = Some(match bounds {
            Some(b) => ContentBounds {
                first: b.first.max(inside.first),
                last: b.last.min(inside.last),
            },
            None => inside,
        });
        let beside_backtick = |end: usize, sep_end: usize| {
            bytes[end - 1] == b'`' || bytes.get(sep_end) == Some(&b'`')
        };
        let planned = |cut: Cut| Planned {
            cut,
            close: None,
            next: NextStart::Delims(delims),
        };
        if let Some(cut) = find_cut(
            text,
            self.scanner,
            start,
            content_start + 1,
            hi,
            self.order,
            self.complete,
            Safety::InCodeSpan,
            bounds,
        ) && code.contains_cut(cut.end)
            && !beside_backtick(cut.end, cut.sep_end)
        {
            return Some(planned(cut));
        }
        if self.breaks_only {
            return None;
        }
        let mut h = checked_hard_cut(
            text,
            start,
            content_start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        )?;
        while beside_backtick(h, h) {
            h = step_back(text, start, content_start, h)?;
        }
        code.contains_cut(h).then(|| planned(Cut::hard(h)))
    }

    /// A cut inside an indented code block: at a line break of the code (the next piece
    /// keeps the line's indentation), else in the middle of a line (the next piece goes on
    /// after 4 spaces of indentation, so it still reads as code; never as a fenced block).
    fn plan_in_indented(
        &self,
        start: usize,
        reopen: ReopenCost,
        block: &IndentedSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        let hi = limits.window_end(text, start, avail, reopen.lines);
        let content_start = start.max(block.start);
        if let Some(cut) = find_code_line_cut(text, content_start, hi, None, bounds) {
            return Some(Planned::plain(cut));
        }
        if self.breaks_only {
            return None;
        }
        let h = checked_hard_cut(
            text,
            start,
            content_start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        )?;
        let next = if line_continues(text.as_bytes(), h) {
            NextStart::Indent
        } else {
            NextStart::Plain
        };
        Some(Planned {
            cut: Cut::hard(h),
            close: None,
            next,
        })
    }

    /// A hard cut near `hard` that does not split a line that opens (or may open) a fence
    /// when the piece can end before that line, and that reads right (see
    /// [`checked_hard_cut`]). Without bounds there always is one: when no checked cut
    /// exists, `hard` itself (progress wins).
    fn plain_hard_cut(
        &self,
        start: usize,
        hi: usize,
        hard: usize,
        bounds: Option<ContentBounds>,
    ) -> Option<Cut> {
        let scanner = self.scanner;
        let opener_start = if scanner.in_undecided_fence_line(hard) {
            Some(scanner.line_start())
        } else {
            scanner
                .fence_at(hard)
                .filter(|f| !f.continued && hard <= f.open_end)
                .map(|f| f.start)
        };
        if let Some(line_start) = opener_start
            && line_start > start
            && let Some(cut) = cut_before_line(self.text, start, line_start)
            && allows(bounds, cut.end, cut.sep_end)
        {
            return Some(cut);
        }
        let end = match checked_hard_cut(
            self.text,
            start,
            start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        ) {
            Some(h) => h,
            None if bounds.is_some() => return None,
            None => hard,
        };
        Some(Cut {
            end,
            sep_end: end,
            class: BreakClass::Hard,
        })
    }
}

/// Appends the display text of a piece: the synthetic start, the source, the synthetic
/// closing line.
pub(crate) fn build_piece(
    source: &str,
    reopen: Option<Reopen<'_>>,
    close: Option<FenceMarker>,
    out: &mut String,
) {
    if let Some(r) = reopen {
        r.push_to(out);
    }
    out.push_str(source);
    if let Some(m) = close {
        out.push('\n');
        m.push_close(out);
    }
}

/// A cut inside a fence that falls in the middle of the fence's opening line (before its
/// end, `\r` excluded): the next piece starts with the bare marker and the rest of the
/// line, not with a line of its own.
fn in_opening_line(text: &str, mut planned: Planned) -> Planned {
    // A continued fence keeps what is left of its opening line (nothing, once drained).
    if let Some(f) = planned.close
        && planned.cut.end > f.start
    {
        let line = &text[f.start..f.open_end.min(text.len())];
        let line_end = f.start + line.strip_suffix('\r').unwrap_or(line).len();
        // The next piece starts in the line only if more than whitespace is left of it.
        let rest = text.get(planned.cut.sep_end..line_end).unwrap_or("");
        if planned.cut.end < line_end && !rest.bytes().all(is_ws) {
            let space = rest.as_bytes()[0] == f.marker.ch;
            planned.next = NextStart::OpenLine { space };
        }
    }
    planned
}

/// The least room a piece keeps after a synthetic start `reopen`: the synthetic text, and
/// the closing line it may need.
pub(crate) fn reserve_after(reopen: Option<Reopen<'_>>, metric: LengthMetric) -> usize {
    reopen.map_or(0, |r| r.cost(metric) + r.close_cost())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(text: &str) -> MarkdownScanner {
        let mut s = MarkdownScanner::new();
        s.finish(text);
        s
    }

    #[test]
    fn classifies_candidates() {
        let t = "One. Two\n\n  three\nfour x";
        let c = candidate_at(t, 4, false).unwrap();
        assert!(c.has(BreakClass::Sentence) && c.has(BreakClass::Whitespace));
        assert_eq!((c.end, c.sep_end), (4, 5));
        let c = candidate_at(t, 8, false).unwrap();
        assert!(c.has(BreakClass::Paragraph) && c.has(BreakClass::Line));
        assert_eq!(
            &t[c.end..c.sep_end],
            "\n\n",
            "indentation stays with the next piece"
        );
        assert!(candidate_at("a ", 1, false).is_none(), "undecided run");
        assert!(candidate_at("a ", 1, true).is_some());
        assert!(candidate_at("3.14", 2, false).is_none());
    }

    #[test]
    fn cjk_sentences_need_no_space() {
        let t = "今日は晴れ。明日は「雨？」です";
        let p = t.find('明').unwrap();
        let c = candidate_at(t, p, false).unwrap();
        assert_eq!((c.end, c.sep_end), (p, p));
        assert!(c.has(BreakClass::Sentence));
        let q = t.find('で').unwrap();
        assert!(candidate_at(t, q, false).is_some(), "closer after the mark");
        assert!(candidate_at(t, t.find('」').unwrap(), false).is_none());
    }

    #[test]
    fn finds_best_class_last() {
        let t = "aa bb.\ncc. dd\n\nee ff. gg hh";
        let s = scanned(t);
        let order = BreakClass::TEXT;
        let cut = find_cut(t, &s, 0, 1, t.len(), &order, false, Safety::Strict, None).unwrap();
        assert_eq!(cut.class, BreakClass::Paragraph);
        assert_eq!(&t[..cut.end], "aa bb.\ncc. dd");
        let cut = find_cut(t, &s, 0, 1, 12, &order, false, Safety::Strict, None).unwrap();
        assert_eq!(cut.class, BreakClass::Line);
        let order = [BreakClass::Sentence];
        let cut = find_cut(t, &s, 0, 1, t.len(), &order, false, Safety::Strict, None).unwrap();
        assert_eq!(&t[..cut.end], "aa bb.\ncc. dd\n\nee ff.");
    }

    #[test]
    fn skips_unsafe_candidates() {
        let t = "x `a b c` y\n```\nq r\n```\nz";
        let s = scanned(t);
        let cut = find_cut(
            t,
            &s,
            0,
            1,
            8,
            &BreakClass::TEXT,
            false,
            Safety::Strict,
            None,
        )
        .unwrap();
        assert_eq!(cut.end, 1);
        let inside = t.find("q r").unwrap() + 1;
        let cut = find_cut(
            t,
            &s,
            0,
            10,
            inside + 1,
            &BreakClass::TEXT,
            false,
            Safety::Strict,
            None,
        )
        .unwrap();
        assert_eq!(cut.end, 11, "the line break before the fence");
    }

    #[test]
    fn hard_cut_keeps_graphemes() {
        let t = "ab👨‍👩‍👧cd";
        for hi in 3..10 {
            assert_eq!(hard_cut(t, 0, 0, hi), 2);
        }
        assert_eq!(
            hard_cut(t, 2, 2, 5),
            6,
            "a lone grapheme wider than the budget: limit wins"
        );
        assert_eq!(hard_cut("日本", 0, 0, 1), 3, "progress wins over the limit");
        assert_eq!(hard_cut(" 日本", 0, 0, 2), 4, "never whitespace alone");
    }
}

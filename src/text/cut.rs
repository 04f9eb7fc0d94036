//! The one cut finder, shared by the block chunker and the platform splitter.
//!
//! A *cut* splits a text at byte `end`: the piece is `text[start..end]`, the separator is
//! `text[end..sep_end]` and the next piece starts at `sep_end`. Cuts fall on breaks, best
//! first: a paragraph break (`\n`, optional spaces/tabs, `\n`), a line break, a sentence end
//! (`.` `!` `?` `…` followed by whitespace, or the CJK marks `。！？` with or without it;
//! closing quotes and brackets after the mark belong to the sentence), any whitespace; inside
//! a fenced code block that must be split, a line break of the code; and last a hard cut at
//! the largest grapheme boundary that fits.
//!
//! Whitespace here is ASCII: space, tab, `\r`, `\n`. A whitespace run after a cut becomes the
//! separator: the whole run for a cut on one line, and through the run's last `\n` when it
//! holds line breaks, so that the next piece keeps its own indentation.
//!
//! Searches run backward from the end of the window and stop at its start, so their cost is
//! bounded by the window, never by the text.

use super::markdown::{FenceMarker, FenceSpan, MarkdownScanner};
use super::metric::{
    LengthMetric, floor_char_boundary, floor_grapheme_boundary, is_grapheme_boundary,
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

/// The cut candidate at `p`, if `p` is one: the start of a whitespace run right after
/// non-whitespace, or the position right after a CJK sentence end. A whitespace run that
/// reaches the end of `text` is undecided (more whitespace may come) unless `trailing_run`.
pub(crate) fn candidate_at(text: &str, p: usize, trailing_run: bool) -> Option<Candidate> {
    let bytes = text.as_bytes();
    if p == 0 || p >= bytes.len() || !text.is_char_boundary(p) || is_ws(bytes[p - 1]) {
        return None;
    }
    if is_ws(bytes[p]) {
        let mut r = p;
        let mut newlines = 0usize;
        let mut last_nl = p;
        while r < bytes.len() && is_ws(bytes[r]) {
            if bytes[r] == b'\n' {
                newlines += 1;
                last_nl = r;
            }
            r += 1;
        }
        if r == bytes.len() && !trailing_run {
            return None;
        }
        if !boundary_at(text, p) {
            return None;
        }
        if newlines == 0 && starts_like_fence(&bytes[r..]) {
            // The next piece would start with a run that reads as a fence opening line.
            return None;
        }
        let mut q = if newlines > 0 { last_nl + 1 } else { r };
        if q < bytes.len() && bytes[q] >= 0x80 {
            // A combining mark after the run joins its last whitespace char.
            q = floor_grapheme_boundary(text, q).max(p);
        }
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

/// Whether `rest` starts with three backticks or tildes.
fn starts_like_fence(rest: &[u8]) -> bool {
    rest.len() >= 3 && (rest[..3] == *b"```" || rest[..3] == *b"~~~")
}

/// Whether byte position `j` could hold a candidate (a cheap pre-filter for
/// [`candidate_at`]).
#[inline(always)]
pub(crate) fn may_be_candidate(bytes: &[u8], j: usize) -> bool {
    j > 0
        && j < bytes.len()
        && !is_ws(bytes[j - 1])
        && (is_ws(bytes[j]) || may_end_tail(bytes[j - 1]))
}

/// The best safe candidate with `lo <= end <= hi`: the first class of `order` that has one,
/// and the last candidate of that class. Searches backward from `hi` and stops early once
/// the best class is found.
pub(crate) fn find_cut(
    text: &str,
    scanner: &MarkdownScanner,
    lo: usize,
    hi: usize,
    order: &[BreakClass],
    trailing_run: bool,
) -> Option<Cut> {
    let bytes = text.as_bytes();
    let hi = hi.min(bytes.len().saturating_sub(1));
    let lo = lo.max(1);
    if order.is_empty() || lo > hi {
        return None;
    }
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
            && let Some(c) = candidate_at(text, j, trailing_run)
            && let Some(rank) = c.rank(order)
            && best.is_none_or(|(r, _)| rank < r)
            && scanner.is_safe_cut(j)
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

/// The last line break of the code inside `fence` at which a piece starting at `start` may
/// end, with `end <= hi`: the piece keeps some code after `content_start`, and the next piece
/// starts on a line that holds code, not just fence characters (so that it never consists
/// of fence lines only).
pub(crate) fn find_code_line_cut(
    text: &str,
    fence: &FenceSpan,
    content_start: usize,
    hi: usize,
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
        if p <= content_start || p > hi || !boundary_at(text, p) {
            search_end = p;
            continue;
        }
        if line_holds_code(bytes, q, fence.marker.ch) {
            return Some(Cut {
                end: p,
                sep_end: q,
                class: BreakClass::CodeLine,
            });
        }
        search_end = p;
    }
    None
}

/// Whether the (possibly unfinished) line starting at `at` holds a byte that can be neither
/// whitespace nor part of a closing fence line.
fn line_holds_code(bytes: &[u8], at: usize, marker: u8) -> bool {
    bytes[at..]
        .iter()
        .take_while(|&&b| b != b'\n')
        .any(|&b| !is_ws(b) && b != marker)
}

/// The largest grapheme boundary `<= hi` after `start` that leaves some non-whitespace after
/// `shown_from` (`>= start`) in the piece, counting boundaries from `start`. When a single
/// grapheme is wider than the budget, the limit wins: the largest char boundary. When even
/// one char does not fit, progress wins: the end of the first non-whitespace char.
pub(crate) fn hard_cut(text: &str, start: usize, shown_from: usize, hi: usize) -> usize {
    let hi = hi.min(text.len());
    let shows = |end: usize| {
        end > shown_from && text.as_bytes()[shown_from..end].iter().any(|&b| !is_ws(b))
    };
    if hi > start {
        let g = start + floor_grapheme_boundary(&text[start..], hi - start);
        if shows(g) {
            return g;
        }
        let c = floor_char_boundary(text, hi);
        if shows(c) {
            return c;
        }
    }
    let first = text.as_bytes()[shown_from..]
        .iter()
        .position(|&b| !is_ws(b))
        .map_or(text.len(), |i| shown_from + i);
    text[first..]
        .chars()
        .next()
        .map_or(text.len(), |c| first + c.len_utf8())
}

/// A synthetic opening line for a fence that continues from the previous piece: the
/// original opening line (info string included), or the bare marker when that line is too
/// long to leave room for code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reopen<'a> {
    /// The fence's marker.
    pub marker: FenceMarker,
    /// The original opening line, or `None` for the bare marker.
    pub line: Option<&'a str>,
}

impl Reopen<'_> {
    /// The length of the line plus its `\n`.
    pub(crate) fn cost(&self, metric: LengthMetric) -> usize {
        self.line.map_or(self.marker.close_len(), |l| metric.len(l)) + 1
    }

    /// Appends the line and its `\n`.
    pub(crate) fn push_to(&self, out: &mut String) {
        match self.line {
            Some(l) => out.push_str(l),
            None => self.marker.push_close(out),
        }
        out.push('\n');
    }
}

/// The limits a piece must respect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// How lengths are counted.
    pub metric: LengthMetric,
    /// The largest piece, synthetic fence lines included.
    pub max: usize,
    /// The most lines in a piece, synthetic fence lines included.
    pub max_lines: Option<usize>,
}

impl Limits {
    /// The widest char in the metric: the least room that always allows progress.
    pub(crate) fn widest_char(metric: LengthMetric) -> usize {
        match metric {
            LengthMetric::Bytes => 4,
            LengthMetric::Utf16 => 2,
            LengthMetric::Chars | LengthMetric::Graphemes => 1,
        }
    }

    /// The least units a piece must keep free after its leading whitespace: room for one
    /// char, plus the synthetic lines around it when it reopens a fence.
    pub(crate) fn lead_reserve(metric: LengthMetric, reopen: Option<Reopen<'_>>) -> usize {
        Self::widest_char(metric) + reopen.map_or(0, |r| r.cost(metric) + r.marker.close_len() + 1)
    }

    /// How a fence with opening line `open_line` is reopened after a cut inside it, or
    /// `None` when the limits leave no room to close and reopen it around any code (then a
    /// cut inside it is a plain cut: the limit wins over fence balance).
    pub(crate) fn repair<'a>(&self, marker: FenceMarker, open_line: &'a str) -> Option<Reopen<'a>> {
        if self.max_lines.is_some_and(|m| m < 3) {
            return None;
        }
        let close = marker.close_len() + 1;
        let room = Self::widest_char(self.metric);
        let full = Reopen {
            marker,
            line: Some(open_line),
        };
        if full.cost(self.metric) + close + room <= self.max {
            return Some(full);
        }
        let bare = Reopen { marker, line: None };
        (bare.cost(self.metric) + close + room <= self.max).then_some(bare)
    }

    /// The largest `end` such that `text[start..end]` holds at most `units` and, with
    /// `extra_lines` synthetic lines, at most `max_lines` lines.
    pub(crate) fn window_end(
        &self,
        text: &str,
        start: usize,
        units: usize,
        extra_lines: usize,
    ) -> usize {
        let mut hi = start + self.metric.floor_index(&text[start..], units);
        if let Some(max_lines) = self.max_lines {
            let newlines = max_lines.saturating_sub(1 + extra_lines);
            if let Some(nl) = memchr::memchr_iter(b'\n', &text.as_bytes()[start..hi]).nth(newlines)
            {
                hi = start + nl;
            }
        }
        hi
    }

    /// Whether `text[start..end]`, with synthetic lines costing `extra_units` and
    /// `extra_lines`, fits. Cost is bounded by the limit, not by the text.
    pub(crate) fn fits(
        &self,
        text: &str,
        start: usize,
        end: usize,
        extra_units: usize,
        extra_lines: usize,
    ) -> bool {
        extra_units <= self.max
            && self.window_end(&text[..end], start, self.max - extra_units, extra_lines) == end
    }
}

/// A cut chosen when a piece must end (forced, or over the limit), and whether the piece
/// must close a fence it ends inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    /// The cut.
    pub cut: Cut,
    /// The fence the piece ends inside and closes with a synthetic line.
    pub close: Option<FenceSpan>,
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
    /// A whitespace run at the end of `text` counts as a break.
    pub trailing_run: bool,
    /// The opening line of a fence whose opening line is no longer in `text`.
    pub continued_line: Option<&'a str>,
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

    /// How `fence` is reopened after a cut inside it, if it can be.
    pub(crate) fn repair(&self, fence: &FenceSpan) -> Option<Reopen<'a>> {
        self.limits.repair(fence.marker, self.open_line(fence))
    }

    /// Chooses the cut for a piece starting at `start` (after a synthetic opening line of
    /// `reopen_cost` units, if any) that must end before the text does: a break in
    /// `[min_units, max]` in `order`; then a break anywhere that fits, if `any_length` (a
    /// forced drain) or if a hard cut would fall inside a fence, inline code or a line that
    /// may open a fence (never cut inside code while a cut outside it is possible); then a
    /// line break of the code inside the fence at the window's end; then a hard cut.
    pub(crate) fn plan(
        &self,
        start: usize,
        reopen_cost: usize,
        min_units: usize,
        any_length: bool,
    ) -> Planned {
        let text = self.text;
        let limits = self.limits;
        let reopen_lines = usize::from(reopen_cost > 0);
        let avail = limits.max.saturating_sub(reopen_cost);
        let hi = limits.window_end(text, start, avail, reopen_lines);
        let plain = |cut| Planned { cut, close: None };
        let content_min = min_units.saturating_sub(reopen_cost);
        // The end of the range the search below `min` must still look at.
        let mut below = hi;
        if content_min > 1 {
            let lo = start + limits.metric.floor_index(&text[start..], content_min - 1) + 1;
            if let Some(cut) = find_cut(text, self.scanner, lo, hi, self.order, self.trailing_run) {
                return plain(cut);
            }
            // `lo..=hi` holds no usable candidate: searching it again would find nothing.
            below = hi.min(lo - 1);
        }
        // Below `min` only when forced, or when the alternative cuts into a fence or code.
        let hard = hard_cut(text, start, start, hi);
        if (any_length || content_min <= 1 || !self.scanner.is_safe_cut(hard))
            && let Some(cut) = find_cut(
                text,
                self.scanner,
                start + 1,
                below,
                self.order,
                self.trailing_run,
            )
        {
            return plain(cut);
        }
        if let Some(fence) = self.scanner.fence_at(hard).copied()
            && let Some(planned) = self.plan_in_fence(start, reopen_cost, &fence)
        {
            return planned;
        }
        plain(self.plain_hard_cut(start, hard))
    }

    /// A cut inside `fence`, closing it and reopening it in the next piece.
    fn plan_in_fence(
        &self,
        start: usize,
        reopen_cost: usize,
        fence: &FenceSpan,
    ) -> Option<Planned> {
        self.repair(fence)?;
        let text = self.text;
        let limits = self.limits;
        let close_cost = fence.marker.close_len() + 1;
        let avail = limits.max.saturating_sub(reopen_cost + close_cost);
        let hi = limits.window_end(text, start, avail, usize::from(reopen_cost > 0) + 1);
        let content_start = if fence.continued || fence.start < start {
            start
        } else {
            fence.open_end + 1
        };
        let close = Some(*fence);
        if let Some(cut) = find_code_line_cut(text, fence, content_start, hi) {
            return Some(Planned { cut, close });
        }
        let content_start = content_start.min(text.len());
        let mut hard = hard_cut(text, start, content_start, hi);
        if leaves_fence_line(text, hard, Some(fence.marker.ch)) {
            hard = step_back(text, start, content_start, hard).unwrap_or(hard);
        }
        if hard <= hi && self.scanner.fence_at(hard).is_some() {
            return Some(Planned {
                cut: Cut {
                    end: hard,
                    sep_end: hard,
                    class: BreakClass::Hard,
                },
                close,
            });
        }
        // The opening line leaves no room for code: end the piece before it if possible.
        if !fence.continued && fence.start > start {
            return cut_before_line(text, start, fence.start)
                .map(|cut| Planned { cut, close: None });
        }
        None
    }

    /// A hard cut at `hard` that does not split a line that opens (or may open) a fence when
    /// the piece can end before that line.
    fn plain_hard_cut(&self, start: usize, hard: usize) -> Cut {
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
        {
            return cut;
        }
        let end = if leaves_fence_line(self.text, hard, None) {
            step_back(self.text, start, start, hard).unwrap_or(hard)
        } else {
            hard
        };
        Cut {
            end,
            sep_end: end,
            class: BreakClass::Hard,
        }
    }
}

/// Whether a hard cut at `h` would start the next piece with a line that reads as a fence
/// line: a run of 3+ backticks or tildes right at `h`, or (inside a fence with marker char
/// `fence`) a next line with nothing but marker chars and spaces (a closing line alone).
fn leaves_fence_line(text: &str, h: usize, fence: Option<u8>) -> bool {
    let bytes = text.as_bytes();
    if starts_like_fence(&bytes[h..]) {
        return true;
    }
    let Some(marker) = fence else {
        return false;
    };
    match bytes[h..].iter().position(|&b| !is_ws(b)) {
        Some(i) => !line_holds_code(bytes, h + i, marker),
        None => true,
    }
}

/// A hard cut one grapheme earlier than `h`: before the last non-whitespace grapheme, if the
/// piece still shows something after `shown_from`.
fn step_back(text: &str, start: usize, shown_from: usize, h: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let last = bytes[shown_from..h].iter().rposition(|&b| !is_ws(b))? + shown_from;
    let g = start + floor_grapheme_boundary(&text[start..], last - start);
    (g > shown_from && bytes[shown_from..g].iter().any(|&b| !is_ws(b))).then_some(g)
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

/// Appends the display text of a piece: the synthetic opening line, the source, the
/// synthetic closing line.
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
        let cut = find_cut(t, &s, 1, t.len(), &order, false).unwrap();
        assert_eq!(cut.class, BreakClass::Paragraph);
        assert_eq!(&t[..cut.end], "aa bb.\ncc. dd");
        let cut = find_cut(t, &s, 1, 12, &order, false).unwrap();
        assert_eq!(cut.class, BreakClass::Line);
        let order = [BreakClass::Sentence];
        let cut = find_cut(t, &s, 1, t.len(), &order, false).unwrap();
        assert_eq!(&t[..cut.end], "aa bb.\ncc. dd\n\nee ff.");
    }

    #[test]
    fn skips_unsafe_candidates() {
        let t = "x `a b c` y\n```\nq r\n```\nz";
        let s = scanned(t);
        let cut = find_cut(t, &s, 1, 8, &BreakClass::TEXT, false).unwrap();
        assert_eq!(cut.end, 1);
        let inside = t.find("q r").unwrap() + 1;
        let cut = find_cut(t, &s, 10, inside + 1, &BreakClass::TEXT, false).unwrap();
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

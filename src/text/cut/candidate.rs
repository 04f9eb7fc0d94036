//! Break classes, cuts, and the candidate breaks a text offers at a position.

use crate::text::metric::is_grapheme_boundary;

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
pub(crate) const fn may_end_tail(b: u8) -> bool {
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
pub(super) fn boundary_at(text: &str, p: usize) -> bool {
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

/// Where `text[start..end]` ends without its trailing separator whitespace: a whitespace
/// char joined into one grapheme cluster with the char before it (after a prepended char
/// such as U+0600) is part of that cluster, and stays.
pub(crate) fn sep_trimmed_end(text: &str, start: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut last = end;
    while last > start && is_ws(bytes[last - 1]) && !joined_ws(&text[..end], last - 1) {
        last -= 1;
    }
    last
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
        // The byte before first (most runs follow a word): no tail char ends there.
        if may_end_tail(bytes[p - 1]) && sentence_tail(text, p) != Tail::None {
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
pub(super) fn starts_like_fence(rest: &[u8]) -> bool {
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

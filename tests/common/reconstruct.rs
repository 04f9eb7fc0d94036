//! An independent checker of the message rule (DESIGN §4, SPEC §3–§4, §13): it owns its fence
//! parser, its length metrics and its whitespace rules, and uses nothing of the library but
//! the names of its settings.
//!
//! Each send of the answer is matched against the cleaned model text it came from: its text
//! must be exactly one span of that text, apart from the documented edge repairs (a synthetic
//! reopening fence line at its start when the span starts inside a fence, a synthetic closing
//! line at its end when a fence is open at the span's end) and, only at the `TextEnd`
//! boundaries the test names, the configured joiner. Block sends tile the text in order;
//! finals tile what was not delivered; together the delivered spans cover every
//! non-separator byte exactly once.

use std::collections::HashSet;

use replystream::{LengthMetric, SendId, SendKind, SendRequest};
use unicode_segmentation::UnicodeSegmentation;

use super::containers::Dedent;

/// The width of an indentation in columns (a tab counts four).
fn columns(indent: &str) -> usize {
    indent.bytes().map(|b| if b == b'\t' { 4 } else { 1 }).sum()
}

/// Separator whitespace: what a cut may fall in and what a separator is made of.
pub(crate) fn is_sep(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The length of `text` in `metric`, counted here.
pub(crate) fn units(metric: LengthMetric, text: &str) -> usize {
    match metric {
        LengthMetric::Bytes => text.len(),
        LengthMetric::Chars => text.chars().count(),
        LengthMetric::Utf16 => text.encode_utf16().count(),
        LengthMetric::Graphemes => text.graphemes(true).count(),
        other => panic!("unknown metric {other:?}"),
    }
}

/// A fence marker: character, length, indentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    ch: u8,
    len: usize,
    indent: usize,
    /// Bytes of container prefix (list item columns, quote markers) before the fence's
    /// own indentation: its synthetic lines repeat it.
    prefix: usize,
    /// The prefix holds a quote marker: a code line cut in its middle goes on after it.
    quoted: bool,
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

/// `line` as an opening fence line (CommonMark: at most 3 spaces, 3+ backticks or tildes, a
/// backtick fence's info string holds no backtick).
pub(crate) fn opener(line: &str) -> Option<Marker> {
    let line = strip_cr(line).as_bytes();
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let ch = *line.get(indent)?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = line[indent..].iter().take_while(|&&b| b == ch).count();
    if len < 3 || (ch == b'`' && line[indent + len..].contains(&b'`')) {
        return None;
    }
    Some(Marker {
        ch,
        len,
        indent,
        prefix: 0,
        quoted: false,
    })
}

/// Whether `line` closes a fence opened by `m`: at most 3 spaces, the same character at least
/// as many times, then only spaces or tabs.
pub(crate) fn closes(m: Marker, line: &str) -> bool {
    let line = strip_cr(line).as_bytes();
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return false;
    }
    let len = line[indent..].iter().take_while(|&&b| b == m.ch).count();
    len >= m.len
        && line[indent + len..]
            .iter()
            .all(|&b| b == b' ' || b == b'\t')
}

/// A line that is only a fence marker (what a synthetic close or bare reopen looks like).
fn bare_marker_line(line: &str) -> bool {
    opener(line).is_some_and(|m| closes(m, line))
}

/// Whether `line` is a fence line (opening or closing marker line).
pub(crate) fn is_fence_line(line: &str) -> bool {
    opener(line).is_some()
}

/// The fence left open at the end of `text`, if any.
pub(crate) fn open_fence_at_end(text: &str) -> Option<Marker> {
    let mut open: Option<Marker> = None;
    for line in text.split('\n') {
        match open {
            Some(m) if closes(m, line) => open = None,
            Some(_) => {}
            None => open = opener(line),
        }
    }
    open
}

/// Fences balanced: every fence opened in `text` is closed in it.
pub(crate) fn balanced(text: &str) -> bool {
    // Read in containers: a fence in a list item or quote closes with it.
    super::containers::open_at_end(text).is_none()
}

/// A fenced code block of a source text, in byte offsets.
#[derive(Clone, Copy, Debug)]
struct Fence {
    /// Start of the opening line.
    open_start: usize,
    /// End of the opening line (its `\n`, or the end of the text).
    open_end: usize,
    /// Where its code starts: after the opening line's `\n`, or right at its end where a
    /// forced flush ended the line.
    content_start: usize,
    marker: Marker,
    /// Start of the closing line, if any (for a fence that a line leaving its containers
    /// ended, where its last line ends).
    close_start: Option<usize>,
    /// End of the closing line's marker run (before any trailing spaces and `\n`), or the
    /// end of its last line when a line leaving its containers ended it.
    close_end: Option<usize>,
    /// A line leaving its containers ended it (no closing line).
    by_container: bool,
}

impl Fence {
    /// The container prefix its synthetic lines show: the opening line's, quote markers
    /// (and tabs) kept, list markers and digits as spaces.
    fn prefix(&self, text: &str) -> String {
        text[self.open_start..self.open_start + self.marker.prefix]
            .chars()
            .map(|c| if c == '>' || c == '\t' { c } else { ' ' })
            .collect()
    }

    /// Its synthetic closing line (and bare reopening marker).
    fn close_line(&self, text: &str) -> String {
        let m = self.marker;
        let mut out = self.prefix(text);
        out.push_str(&" ".repeat(m.indent));
        out.extend(std::iter::repeat_n(m.ch as char, m.len));
        out
    }
}

/// The lines of `text` as (start, end) byte ranges: split at each `\n` and at each of
/// `line_ends` (where a forced flush ended a line in the middle: what follows is read as a
/// new line, as the chunker read it).
fn lines(text: &str, line_ends: &[usize]) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    for line in text.split('\n') {
        let end = at + line.len();
        let mut from = at;
        for &p in line_ends.iter().filter(|&&p| p > at && p < end) {
            out.push((from, p, p));
            from = p;
        }
        out.push((from, end, end + 1));
        at = end + 1;
    }
    out
}

fn fences(text: &str, line_ends: &[usize]) -> Vec<Fence> {
    // Read in their containers (list items, quotes) by the tests' own reader.
    let (lines, found) = super::containers::read(text, line_ends);
    found
        .into_iter()
        .map(|f| {
            // Where the code starts: after the opening line's `\n`, or right at its end
            // where a forced flush ended the line.
            let content_start = lines
                .iter()
                .find(|l| l.start > f.open_start)
                .map_or(text.len(), |l| l.start);
            let (close_start, close_end) = match (f.by_container, f.close_start) {
                (true, _) => (f.end, f.end),
                (false, Some(c)) => (Some(c), f.end),
                (false, None) => (None, None),
            };
            Fence {
                open_start: f.open_start,
                open_end: f.open_end,
                content_start,
                marker: Marker {
                    ch: f.marker.ch,
                    len: f.marker.len,
                    indent: f.marker.indent,
                    prefix: f.open_content - f.open_start,
                    quoted: text[f.open_start..f.open_content].contains('>'),
                },
                close_start,
                close_end,
                by_container: f.by_container,
            }
        })
        .collect()
}

/// One assistant message's cleaned text, as the test knows it.
pub(crate) struct Source {
    pub(crate) text: String,
    fences: Vec<Fence>,
    /// Each line's start and the column where its content starts past list items only
    /// (0 for a line in a quote or outside containers), as the tests' container reader
    /// reads them.
    item_columns: Vec<(usize, usize)>,
    /// Each line's start and [`super::containers::Line::outer_items`].
    outer_items: Vec<(usize, [usize; 3])>,
    /// Each line's start and where its content starts past its container prefixes.
    contents: Vec<(usize, usize)>,
    /// Where the host pushed `TextEnd` while streaming: the configured joiner may stand there.
    pub(crate) boundaries: Vec<usize>,
    /// Grapheme cluster boundaries.
    graphemes: HashSet<usize>,
}

impl Source {
    pub(crate) fn new(text: &str, boundaries: Vec<usize>) -> Source {
        Source::with_line_ends(text, boundaries, &[])
    }

    /// A source whose lines also end at `line_ends`: where a forced flush (a tool call, a
    /// `TextEnd`) came in the middle of a line, the text after it is read as a new line.
    pub(crate) fn with_line_ends(
        text: &str,
        boundaries: Vec<usize>,
        line_ends: &[usize],
    ) -> Source {
        let mut graphemes: HashSet<usize> = text.grapheme_indices(true).map(|(i, _)| i).collect();
        graphemes.insert(text.len());
        let lines = super::containers::read(text, line_ends).0;
        let contents = lines.iter().map(|l| (l.start, l.content)).collect();
        let item_columns = lines
            .iter()
            .map(|l| {
                let prefix = &text[l.start..l.content];
                // A lazy continuation line (no prefix) stays in its item. In a quote, the
                // items' columns before its `>` (none for a quote outside items).
                let col = match prefix.find('>') {
                    Some(q) if prefix[..q].bytes().all(|b| b == b' ' || b == b'\t') => {
                        columns(&prefix[..q])
                    }
                    Some(_) => 0,
                    None => columns(prefix).max(l.item),
                };
                (l.start, col)
            })
            .collect();
        let outer_items = lines.iter().map(|l| (l.start, l.outer_items)).collect();
        Source {
            text: text.to_owned(),
            fences: fences(text, line_ends),
            item_columns,
            outer_items,
            contents,
            boundaries,
            graphemes,
        }
    }

    /// The fence whose code `p` lies in (after its opening line, up to the start of its
    /// closing line): a send starting there must reopen it.
    fn inside(&self, p: usize) -> Option<&Fence> {
        self.fences.iter().find(|f| {
            // A fence its container's end closed is over where that end is.
            let before_end = |c: usize| if f.by_container { p < c } else { p <= c };
            p >= f.content_start && f.close_start.is_none_or(before_end)
        })
    }

    /// The fence still open at `b` for a span ending there (its opening marker within the
    /// span or reopened, its closing marker not yet complete): the send must close it.
    fn open_at(&self, b: usize) -> Option<&Fence> {
        self.fences.iter().find(|f| {
            let marker_end = f.open_start + f.marker.prefix + f.marker.indent + f.marker.len;
            marker_end <= b && f.close_end.is_none_or(|c| b < c)
        })
    }

    /// The fence a span ending at `b` leaves open, which a send ending there must close: one
    /// open at `b` ([`Source::open_at`]) that the limits let the library repair, unless only
    /// separator whitespace stands between `b` and the line that leaves the fence's
    /// container (which ends it, as for the balance check,
    /// [`Source::container_ends_fence_in`]).
    fn left_open_at(&self, b: usize, rule: &Rule) -> Option<&Fence> {
        self.open_at(b).filter(|f| {
            let ended_by_container = f.by_container
                && f.close_end.is_some_and(|e| {
                    e >= b && self.text.as_bytes()[b..e].iter().all(|&c| is_sep(c))
                });
            !unrepairable(f.marker, rule.metric, rule.limit) && !ended_by_container
        })
    }

    /// Whether a fence in containers ends in `range` (or in the whitespace at its edges)
    /// because a line leaves its container (CommonMark closes it there with no closing
    /// line). A send holding that end but not the container's start reads the fence on at
    /// the top level, and one ending there leaves it open: a known limit (no synthetic line
    /// can stand in the middle of a send), accepted by the balance check.
    pub(crate) fn container_ends_fence_in(&self, range: std::ops::Range<usize>) -> bool {
        let ws = |r: std::ops::Range<usize>| self.text[r].bytes().all(is_sep);
        self.fences.iter().any(|f| {
            f.by_container
                && f.close_end.is_some_and(|e| {
                    (e >= range.start || ws(e..range.start)) && (e <= range.end || ws(range.end..e))
                })
        })
    }

    /// The fence in containers that a line leaving them ended right at `b`: a send ending
    /// there (at a flush, before that line came) may have closed it.
    fn container_ended_at(&self, b: usize) -> Option<&Fence> {
        self.fences
            .iter()
            .find(|f| f.by_container && f.close_end == Some(b))
    }

    /// The markers of the fences of the text.
    pub(crate) fn fence_markers(&self) -> impl Iterator<Item = Marker> + '_ {
        self.fences.iter().map(|f| f.marker)
    }

    /// The fence whose opening line holds `p` past its marker's first char.
    fn opening_line_around(&self, p: usize) -> Option<&Fence> {
        self.fences
            .iter()
            .find(|f| p > f.open_start + f.marker.prefix + f.marker.indent && p < f.open_end)
    }

    /// Whether a cut at `p` falls inside a fence opening line's marker run (after its
    /// first marker char, before its last).
    fn in_opening_marker(&self, p: usize) -> bool {
        self.fences.iter().any(|f| {
            let run = f.open_start + f.marker.prefix + f.marker.indent;
            p > run && p < run + f.marker.len
        })
    }

    /// Whether `p` lies in a fence, its opening and closing lines included.
    pub(crate) fn in_code(&self, p: usize) -> bool {
        self.fences
            .iter()
            .any(|f| p >= f.open_start && f.close_end.is_none_or(|c| p <= c + 1))
    }

    /// When the first non-separator byte from `cursor` starts the closing line of a fence
    /// that can be repaired under `rule`, the send before ended with a synthetic close just
    /// before it, which showed that line (a send reopening the fence there would show an
    /// empty code block): the range of the line, to be counted with the send before.
    ///
    /// A fence that cannot be repaired is cut plainly, with no synthetic close (SPEC §9: the
    /// limit wins): its closing line is only ever shown as source text, by the send that
    /// holds it.
    fn shown_closer(&self, cursor: usize, rule: &Rule) -> Option<std::ops::Range<usize>> {
        let mut n = self.next_non_sep(cursor);
        // (A closing line indented in its list item starts at its indentation.)
        let line = self.text[..n].rfind('\n').map_or(0, |i| i + 1);
        if line >= cursor && self.text[line..n].bytes().all(|b| b == b' ' || b == b'\t') {
            n = line;
        }
        let f = self.inside(n)?;
        if f.close_start != Some(n) || unrepairable(f.marker, rule.metric, rule.limit) {
            return None;
        }
        Some(n..f.close_end?)
    }

    /// The content column of the list items (only) holding the line of byte `p`.
    fn item_column(&self, p: usize) -> Option<usize> {
        let i = self.item_columns.partition_point(|&(start, _)| start <= p);
        Some(self.item_columns.get(i.checked_sub(1)?)?.1)
    }

    /// The content columns of the list items around the innermost one holding the line of
    /// byte `p` (before any quote; 0: none).
    fn outer_item_columns(&self, p: usize) -> [usize; 3] {
        let i = self.outer_items.partition_point(|&(start, _)| start <= p);
        i.checked_sub(1)
            .and_then(|i| self.outer_items.get(i))
            .map_or([0; 3], |&(_, cols)| cols)
    }

    /// The quote markers of the container prefix of the line holding `p` when that line's
    /// content, past its prefixes, is indented 4 columns or more and `p` lies after that
    /// indentation: what a send going on in the middle of that (indented code) line repeats
    /// before its 4 spaces, as a synthetic line shows a prefix (through its last `>`, list
    /// markers and digits as spaces), with the space after it.
    fn quoted_code_line_prefix(&self, p: usize) -> Option<String> {
        let i = self.contents.partition_point(|&(start, _)| start <= p);
        let (start, content) = *self.contents.get(i.checked_sub(1)?)?;
        let prefix = &self.text[start..content];
        let last = prefix.rfind('>')?;
        let rest = &self.text[content..];
        let indent = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if columns(&rest[..indent]) < 4 || p <= content + indent {
            return None;
        }
        let shown: String = prefix[..=last]
            .chars()
            .map(|c| if c == '>' || c == '\t' { c } else { ' ' })
            .collect();
        Some(format!("{shown} "))
    }

    fn next_non_sep(&self, from: usize) -> usize {
        let bytes = self.text.as_bytes();
        let mut p = from;
        while p < bytes.len() && is_sep(bytes[p]) {
            p += 1;
        }
        p
    }

    /// Whether the line starting at `p`, if indented 4 columns or more, is indented code and
    /// not a paragraph's lazy continuation: the lines before it, back to the first that is
    /// not indented 4 or more, end at a blank line, a heading, a fence line or the start.
    ///
    /// The engine looks back over at most 1 KiB of indented lines and then takes the line for
    /// code (a documented bound that keeps its cost linear, README design notes): past that
    /// distance the line is taken for code here too.
    fn is_code_line(&self, p: usize) -> bool {
        let before = &self.text[..p];
        if before.is_empty() {
            return true;
        }
        let Some(before) = before.strip_suffix('\n') else {
            return false;
        };
        for line in before.rsplit('\n') {
            let walked = p - (line.as_ptr() as usize - self.text.as_ptr() as usize);
            if walked > 1024 {
                return true;
            }
            let line = strip_cr(line);
            let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            if indent == line.len() {
                return true;
            }
            if columns(&line[..indent]) < 4 {
                return line[indent..].starts_with('#') || opener(line).is_some();
            }
        }
        true
    }

    fn is_line_start(&self, p: usize) -> bool {
        p == 0 || self.text.as_bytes()[p - 1] == b'\n'
    }
}

/// The settings the rule depends on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    /// The configured joiner.
    pub(crate) joiner: &'static str,
    pub(crate) metric: LengthMetric,
    pub(crate) limit: usize,
    pub(crate) max_lines: Option<usize>,
    /// Check that every span starts and ends on a grapheme boundary.
    pub(crate) graphemes: bool,
    /// Every fence of the sources can be closed and reopened within the limit: every send
    /// must then have balanced fences (else a fence may be cut plainly, SPEC §9).
    pub(crate) all_fences_repairable: bool,
}

/// Where a send sits in its source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) message: usize,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Whether a fence with marker `m` cannot be closed and reopened within the rule's limit
/// around even one char (its marker is wider than the standard form the smallest limits
/// are made for, "   ```"): then it is cut plainly (the limit wins, SPEC §9).
pub(crate) fn unrepairable(m: Marker, metric: LengthMetric, limit: usize) -> bool {
    2 * (m.prefix + m.indent + m.len + 1) + widest_char(metric) > limit
}

/// The widest char in `metric` units.
fn widest_char(metric: LengthMetric) -> usize {
    match metric {
        LengthMetric::Bytes => 4,
        LengthMetric::Utf16 => 2,
        _ => 1,
    }
}

/// Whether every send holding code of the fence with marker `m` keeps its fences balanced:
/// it can be repaired, and in a quote, the quote prefix fits again after the reopening line
/// before the rest of a code line cut in its middle (where it does not, the rest goes on
/// without it and leaves the quote, and the fence with it: a known limit).
pub(crate) fn repairs_balance(m: Marker, metric: LengthMetric, limit: usize) -> bool {
    let quoted = if m.quoted { m.prefix } else { 0 };
    2 * (m.prefix + m.indent + m.len + 1) + quoted + widest_char(metric) <= limit
}

/// Whether a cluster `widest` units wide fits whole in a piece that goes on in the middle
/// of a code line of the fence with marker `m`: after the bare reopening line and, in a
/// quote, the quote prefix where it fits, before the closing line. Where it does not, the library cuts it
/// at a char boundary (the limit wins, as for any cluster wider than a piece's room).
pub(crate) fn cluster_fits_in_fence(
    m: Marker,
    metric: LengthMetric,
    limit: usize,
    widest: usize,
) -> bool {
    let quoted = match m.quoted && repairs_balance(m, metric, limit) {
        true => m.prefix,
        false => 0,
    };
    unrepairable(m, metric, limit)
        || 2 * (m.prefix + m.indent + m.len + 1) + quoted + widest <= limit
}

/// Checks what every send must satisfy on its own: not empty, within the limit and the line
/// cap, no separator whitespace at either end (fences balanced is checked with the send's
/// span, see [`Source::container_ends_fence_in`]).
pub(crate) fn check_shape(text: &str, rule: &Rule) -> Result<(), String> {
    if text.bytes().all(is_sep) {
        return Err(format!("empty send {text:?}"));
    }
    let n = units(rule.metric, text);
    if n > rule.limit {
        return Err(format!("{n} units > limit {}: {text:?}", rule.limit));
    }
    if let Some(cap) = rule.max_lines {
        let lines = text.split('\n').count();
        if lines > cap {
            return Err(format!("{lines} lines > cap {cap}: {text:?}"));
        }
    }
    if text.ends_with(|c: char| c.is_ascii() && is_sep(c as u8)) {
        return Err(format!("ends with separator whitespace: {text:?}"));
    }
    if text.starts_with(['\n', '\r']) {
        return Err(format!("starts with a line break: {text:?}"));
    }
    Ok(())
}

/// Whether `text` starts with a line that reopens `f`: its opening line or its bare marker.
fn reopens(f: &Fence, source: &str, text: &str) -> bool {
    let Some((first, _)) = text.split_once('\n') else {
        return false;
    };
    // A fence line's indentation (up to 3 spaces) does not change it.
    // Nor does trailing whitespace (the info string is trimmed).
    let line = |l: &str| {
        strip_cr(l)
            .trim_start_matches(' ')
            .trim_end_matches([' ', '\t'])
            .to_owned()
    };
    // The opening line with its container prefix shown as the synthetic lines show it.
    let prefix = f.prefix(source);
    let shown = format!(
        "{prefix}{}",
        &source[f.open_start + prefix.len()..f.open_end]
    );
    line(first) == line(&shown)
        || (bare_marker_line(first) && closes(f.marker, first))
        || strip_cr(first).trim_end_matches([' ', '\t']) == f.close_line(source)
}

/// Matches one send's text against `src` from `cursor` on (separator whitespace before it is
/// skipped), allowing synthetic inline delimiters at its edges: a cut inside an inline code
/// span (or emphasis) closes it at the end of a send and reopens it at the start of the next
/// (a run of backticks, `*`, `_` or `~` only, the closing runs the opening ones reversed
/// where both are there). Returns the span it shows.
fn match_send(
    src: &Source,
    cursor: usize,
    text: &str,
    rule: &Rule,
) -> Result<(usize, usize), String> {
    let exact = match_send_exact(src, cursor, text, rule);
    if exact.is_ok() {
        return exact;
    }
    if let Some(span) = match_send_dedented(src, cursor, text, rule) {
        return Ok(span);
    }
    let is_delim = |b: u8| matches!(b, b'`' | b'*' | b'_' | b'~');
    let bytes = text.as_bytes();
    let head_max = bytes.iter().take_while(|&&b| is_delim(b)).count();
    let tail_max = bytes.iter().rev().take_while(|&&b| is_delim(b)).count();
    // (Broken emphasis nests deep: each `**` never closed stays open, and all are
    // reopened and closed again, as far as the limit leaves room.)
    for h in 0..=head_max.min(16) {
        for t in 0..=tail_max.min(16) {
            if h + t == 0 || h + t >= bytes.len() {
                continue;
            }
            let body = &text[h..text.len() - t];
            if let Ok(span) = match_send_exact(src, cursor, body, rule) {
                return Ok(span);
            }
            // Both repairs: a piece de-indented (a deep list item's table or code) that
            // starts or ends inside a span.
            if let Some(span) = match_send_dedented(src, cursor, body, rule) {
                return Ok(span);
            }
        }
    }
    exact
}

/// A send that starts inside deep list-item code, or at its opening line, or at a list
/// item's paragraph line indented 4 columns or more, is shown de-indented (SPEC §15,
/// containers): by the container prefix of the fence when the list items push it to 4
/// columns or more (the spaces before a quote's `>` in items when they are 4 or more),
/// else by the paragraph line's indentation; a reopening line and a closing line are
/// de-indented alike. [`super::containers::dedent_lines`] says how lines are de-indented.
/// Returns the span shown, or `None` when the send is not such a send.
fn match_send_dedented(
    src: &Source,
    cursor: usize,
    text: &str,
    rule: &Rule,
) -> Option<(usize, usize)> {
    use super::containers::dedent_view as dedent_lines;
    let s = src.text.as_str();
    let n = src.next_non_sep(cursor);
    let line = s[..n].rfind('\n').map_or(0, |i| i + 1);
    let ws = s[line..].len() - s[line..].trim_start_matches([' ', '\t']).len();
    let deep = |f: &Fence| -> Option<Dedent> {
        let prefix = f.prefix(s);
        let lead = prefix.len() - prefix.trim_start_matches(' ').len();
        match prefix[lead..].chars().next() {
            None if lead > 0 && lead + f.marker.indent >= 4 => Some(lead.into()),
            Some('>') if lead >= 4 => Some(lead.into()),
            // In list items in a quote: the items' columns after the quote markers, where
            // they push the fence 4 columns or more past the last `>`.
            Some('>') => quoted_items_columns(&prefix, f.marker.indent),
            _ => None,
        }
    };
    // The columns, the synthetic reopening line (de-indented) and where the source starts:
    // the readings the send may be, each tried.
    let item = src.item_column(n).filter(|&c| c > 0);
    let mut readings: Vec<(Dedent, String, usize)> = Vec::new();
    // In a deep fence's opening line, past its marker: the bare marker (de-indented, a
    // space after it where the rest starts with the marker's char) goes on with the rest
    // of the line, as it does at the top level.
    if let Some((f, cols)) = src.opening_line_around(n).and_then(|f| Some((f, deep(f)?))) {
        let mut bare = dedent_lines(&f.close_line(s), cols, true);
        if s.as_bytes()[n] == f.marker.ch {
            bare.push(' ');
        }
        let froms = (cursor..=n).filter(|&p| s[p..n].bytes().all(|b| b == b' ' || b == b'\t'));
        readings.extend(froms.map(|p| (cols, bare.clone(), p)));
    }
    match src.inside(n) {
        Some(f) => {
            let cols = deep(f)?;
            let prefix = f.prefix(s);
            let open = format!("{prefix}{}", &s[f.open_start + prefix.len()..f.open_end]);
            let open = strip_cr(&open).to_owned();
            let head = format!("{}\n", dedent_lines(&open, cols, true));
            // Or the bare marker, where the opening line leaves no room.
            let bare = format!("{}\n", dedent_lines(&f.close_line(s), cols, true));
            // The code after the cut: from a line start between the cursor and `n`.
            let from = (cursor..=n)
                .rev()
                .find(|&p| p == 0 || s.as_bytes()[p - 1] == b'\n')
                .filter(|&p| p >= cursor)
                .unwrap_or(n);
            // (Spaces after a cut in a code line's middle are code; so is what is left of
            // its indentation where the limit left no room for all of it.)
            let froms = [from, cursor]
                .into_iter()
                .filter(|&p| p == from || (p < n && !s[p..n].contains('\n')))
                .chain(
                    // (After the line's start, or after the cursor when the line started
                    // before it.)
                    (if from == n { cursor } else { from.max(cursor) } + 1..n)
                        .filter(|&p| s[p..n].bytes().all(|b| b == b' ' || b == b'\t')),
                );
            // In the middle of a code line in a quote, the quote prefix again after the
            // reopening line (de-indented alike).
            let quoted = |line: &str| dedent_lines(&format!("{line}\n{prefix}"), cols, true);
            let mut heads = vec![head.clone(), bare.clone()];
            if prefix.contains('>') {
                heads.extend([quoted(&open), quoted(&f.close_line(s))]);
            }
            for from in froms {
                for head in &heads {
                    readings.push((cols, head.clone(), from));
                }
            }
        }
        None if n == line + ws => match src.fences.iter().find(|f| f.open_start == line) {
            Some(f) => {
                let cols = deep(f)?;
                readings.push((cols, String::new(), line));
                // Joined to a message de-indented by fewer columns (an outer item's): the
                // opening line keeps what is left of its indentation, 3 spaces at most.
                let own = columns(&s[line..n]);
                readings.extend(
                    (own.saturating_sub(3).max(1)..cols.cols)
                        .filter(|_| cols.quotes == 0)
                        .map(|c| (c.into(), String::new(), line)),
                );
            }
            None => {
                // A paragraph line 4 or more deep shown from its start (by its own
                // indentation), or from its text (by the item's column).
                if columns(&s[line..n]) >= 4 {
                    readings.push((columns(&s[line..n]).into(), String::new(), line));
                }
                readings.extend(item.map(|c| (c.into(), String::new(), n)));
                // A piece that the engine split off a de-indented block over the line cap
                // carries the columns in force where it starts (README, item 12): those of
                // an outer item the block started in, its line's indentation trimmed by the
                // send.
                readings.extend(
                    src.outer_item_columns(n)
                        .into_iter()
                        .filter(|&c| c > 0 && item.is_some_and(|i| c < i))
                        .map(|c| (c.into(), String::new(), n)),
                );
                // A nested item's first line, indented 1 to 3 columns under an outer item:
                // the lines after it lose as much as the send trims off it.
                let own = columns(&s[line..n]);
                if (1..4).contains(&own) && item.is_some_and(|c| c > own) {
                    readings.push((own.into(), String::new(), line));
                }
                // Indented code in the item (4 columns past its content column, after a
                // blank line): shown from the line's start, its code indentation kept.
                if let Some(c) = item.filter(|&c| columns(&s[line..n]) >= c + 4)
                    && src.is_code_line(line)
                {
                    readings.push((c.into(), String::new(), line));
                }
            }
        },
        // In a list item's text: de-indented by the item's content column.
        None => readings.extend(item.map(|c| (c.into(), String::new(), n))),
    }
    // Each reading again under a repeated table header, when the send starts with one.
    if let Some(rest) = repeated_table_header(s, n, text) {
        let head = &text[..text.len() - rest.len()];
        let with_head: Vec<_> = readings
            .iter()
            .filter(|(_, h, _)| h.is_empty())
            .map(|(cols, _, from)| (*cols, head.to_owned(), *from))
            .collect();
        readings.extend(with_head);
    }
    readings
        .into_iter()
        .find_map(|(cols, head, from)| dedented_span(src, text, cols, &head, from, rule))
}

/// The de-indentation a piece starting in a fence in list items inside a block quote is
/// shown with: `prefix` (the fence's container prefix as written) is quote markers (each
/// after at most 3 spaces, with one space after it), then the items' columns (spaces and
/// list markers, no tab, no further `>`); with the fence's own `indent` they reach 4
/// columns or more (alone, the fence would read as the quote's indented code), and they
/// are taken off after the markers.
fn quoted_items_columns(prefix: &str, indent: usize) -> Option<Dedent> {
    let mut rest = prefix;
    let mut quotes = 0;
    loop {
        let lead = rest.len() - rest.trim_start_matches(' ').len();
        match rest[lead..].strip_prefix('>') {
            Some(after) if lead <= 3 => {
                quotes += 1;
                rest = after.strip_prefix(' ').unwrap_or(after);
            }
            _ => break,
        }
    }
    let cols = rest.len();
    let plain = !rest.contains(['>', '\t']);
    (quotes > 0 && cols > 0 && plain && cols + indent >= 4).then_some(Dedent { cols, quotes })
}

/// [`match_send_dedented`] for one reading: `text` is `head` then the source from `from`
/// de-indented by `cols` columns, maybe ending with a synthetic closing line.
fn dedented_span(
    src: &Source,
    text: &str,
    cols: Dedent,
    head: &str,
    from: usize,
    rule: &Rule,
) -> Option<(usize, usize)> {
    let body = text.strip_prefix(head)?;
    let first_line = from == 0 || src.text.as_bytes()[from - 1] == b'\n';
    let end = dedented_walk(src, body, cols, from, first_line, rule)?;
    Some((from, end))
}

/// Matches `body` against the source from `from` de-indented by `cols` columns (its first
/// line too when `first_line`), maybe ending with a synthetic closing line; at a text
/// boundary with only separator whitespace after it, the body may go on with the joiner
/// and the source after that whitespace, de-indented by the columns then in force (two
/// blocks joined). Returns where the span ends in the source.
fn dedented_walk(
    src: &Source,
    body: &str,
    cols: Dedent,
    from: usize,
    first_line: bool,
    rule: &Rule,
) -> Option<usize> {
    use super::containers::dedent_view as dedent_lines;
    let s = src.text.as_str();
    // The longest stretch of source from `from` whose de-indented text the body starts
    // with, line by line; and, past it, the longest start of the next line it goes on
    // with (a cut in the line's middle). Each is tried as the end.
    let mut b = from;
    let mut shown = String::new();
    let mut part = None;
    for piece in s[from..].split_inclusive('\n') {
        let next = format!("{}{piece}", &s[from..b]);
        let view = dedent_lines(&next, cols, first_line);
        if body.starts_with(&view) {
            b += piece.len();
            shown = view;
            continue;
        }
        part = piece
            .char_indices()
            .skip(1)
            .map(|(k, _)| k)
            // (A cut in a line's indentation shows nothing of it.)
            .filter(|&k| !piece[..k].bytes().all(|b| b == b' ' || b == b'\t'))
            // (Nor does a cut inside a fence's opening marker run: no piece ends there. A
            // synthetic closing line may read as the start of such a line: "```" of a
            // "`````js" line after the code a fence's container ended.)
            .filter(|&k| !src.in_opening_marker(b + k))
            .filter_map(|k| {
                let view =
                    dedent_lines(&format!("{}{}", &s[from..b], &piece[..k]), cols, first_line);
                body.starts_with(&view).then_some((b + k, view))
            })
            .last();
        break;
    }
    let ends = part.into_iter().chain([(b, shown)]);
    ends.into_iter()
        .find_map(|(b, shown)| dedented_end(src, body, cols, from, first_line, rule, b, &shown))
}

/// [`dedented_walk`] where the body shows the source `from..b` as `shown`: the end of the
/// span, when the rest of the body is nothing, a joined block, or a synthetic closing line.
#[allow(clippy::too_many_arguments)]
fn dedented_end(
    src: &Source,
    body: &str,
    cols: Dedent,
    from: usize,
    first_line: bool,
    rule: &Rule,
    b: usize,
    shown: &str,
) -> Option<usize> {
    use super::containers::{dedent_view as dedent_lines, dedent_view_to as dedent_lines_to};
    let s = src.text.as_str();
    let rest = &body[shown.len()..];
    if rest.is_empty() {
        // A span that ends inside a fence it leaves open is no span: a send ending there
        // closes it (as in `match_rest`). (So the synthetic closing line is never taken for
        // the start of the code line after the cut: `  ```` of `    ```not a closer`.)
        let open = src.left_open_at(b, rule).is_some();
        return (!open).then_some(b);
    }
    // Two blocks joined at a text boundary: the joiner instead of the separator
    // whitespace there.
    let joined = src
        .boundaries
        .iter()
        .filter(|&&q| q > from && q <= b && s[q..b].bytes().all(is_sep))
        .find_map(|&q| {
            let (view, cols) = dedent_lines_to(&s[from..q], cols, first_line);
            let after = body
                .strip_prefix(view.as_str())?
                .strip_prefix(rule.joiner)?;
            let r = src.next_non_sep(q);
            // The block after may start at its line's indentation.
            let line = s[..r].rfind('\n').map_or(0, |i| i + 1).max(q);
            [r, line].into_iter().find_map(|r| {
                let first_line = r == 0 || s.as_bytes()[r - 1] == b'\n';
                dedented_walk(src, after, cols, r, first_line, rule)
            })
        });
    if joined.is_some() {
        return joined;
    }
    // A synthetic closing line: the stretch ends before a line break the body keeps.
    let end = b - usize::from(s[..b].ends_with('\n'));
    let kept = shown.strip_suffix('\n').unwrap_or(shown);
    let close = body[kept.len()..].strip_prefix('\n')?;
    let f = src.open_at(end).or_else(|| src.container_ended_at(end))?;
    let want = dedent_lines(
        &format!("{}\n{}x", &s[from..end], f.close_line(s)),
        cols,
        first_line,
    );
    let want = &want[want.rfind('\n')? + 1..want.len() - 1];
    (body.len() == kept.len() + 1 + close.len() && close == want).then_some(end)
}

/// [`match_send`] without synthetic inline delimiters.
fn match_send_exact(
    src: &Source,
    cursor: usize,
    text: &str,
    rule: &Rule,
) -> Result<(usize, usize), String> {
    let n = src.next_non_sep(cursor);
    if n >= src.text.len() {
        return Err(format!("nothing left at {cursor} for {text:?}"));
    }
    // A span starting inside a fence starts with a reopening line: the fence's own opening
    // line, or its bare marker.
    let inside = src.inside(n).is_some();
    // A span starting in the middle of an opening line goes on with the rest of that line
    // after the fence's bare marker (a space between when the rest starts with the
    // marker's char), so the rest still reads as the info string.
    if let Some(f) = src
        .opening_line_around(n)
        .filter(|f| !unrepairable(f.marker, rule.metric, rule.limit))
    {
        let m = f.marker;
        // Its indentation (up to 3 spaces) does not change a fence line; a container
        // prefix is repeated first.
        let prefix = f.prefix(&src.text);
        let mut marker: String = std::iter::repeat_n(m.ch as char, m.len).collect();
        if src.text.as_bytes()[n] == m.ch {
            marker.push(' ');
        }
        let text = text.strip_prefix(prefix.as_str()).unwrap_or(text);
        let unindented = text.trim_start_matches(' ');
        let indented = text.len() - unindented.len() <= 3;
        let Some(body) = unindented
            .strip_prefix(marker.as_str())
            .filter(|_| indented)
        else {
            return Err(format!(
                "starts in the opening line at {n} without the bare marker {marker:?}: {text:?}"
            ));
        };
        // Spaces before the rest are part of the info string (shown like code is).
        return match_rest(src, cursor, n, body, true, rule);
    }
    let inside = inside
        && src
            .inside(n)
            .is_some_and(|f| !unrepairable(f.marker, rule.metric, rule.limit));
    let body = match src
        .inside(n)
        .filter(|f| !unrepairable(f.marker, rule.metric, rule.limit))
    {
        Some(f) => {
            let Some((first, rest)) = text.split_once('\n') else {
                return Err(format!(
                    "starts inside a fence at {n} without reopening: {text:?}"
                ));
            };
            if !reopens(f, &src.text, text) {
                return Err(format!(
                    "starts inside a fence at {n}, reopened with {first:?}, not {:?}",
                    &src.text[f.open_start..f.open_end]
                ));
            }
            if f.close_start == Some(n) {
                return Err(format!("starts with an empty code block: {text:?}"));
            }
            // In the middle of a code line in a quote, the quote prefix goes on before the
            // rest of the line (else the line would leave the quote, and the fence).
            let prefix = f.prefix(&src.text);
            // (The cut may fall before spaces of the line: they are code, after the prefix.)
            let mid_line = cursor > 0
                && src.text.as_bytes()[cursor - 1] != b'\n'
                && !src.text[cursor..n].contains('\n');
            match rest.strip_prefix(prefix.as_str()) {
                Some(after) if mid_line && prefix.contains('>') => after,
                _ => rest,
            }
        }
        None => repeated_table_header(&src.text, n, text).unwrap_or(text),
    };
    match_rest(src, cursor, n, body, inside, rule)
}

/// A send that goes on with the rows of a table cut before `n` starts with the table's
/// header row and delimiter row again (a flagged repair, synthetic like a reopened fence
/// line): `text` without them, when its first two lines are the last header and delimiter
/// rows that stand together in the source before `n` (as a piece shows them: a container
/// prefix blanked, list markers as spaces, or de-indented), and the source at `n` is not
/// those lines.
fn repeated_table_header<'t>(source: &str, n: usize, text: &'t str) -> Option<&'t str> {
    let mut lines = text.splitn(3, '\n');
    let (header, delimiter) = (lines.next()?, lines.next()?);
    lines.next()?;
    if !is_delimiter_row(delimiter) || !header.contains('|') {
        return None;
    }
    let head_len = header.len() + delimiter.len() + 2;
    let before: Vec<&str> = source[..n].split('\n').collect();
    // The nearest header and delimiter pair before `n` (the line holding `n` aside).
    let i = (1..before.len().saturating_sub(1))
        .rev()
        .find(|&i| is_delimiter_row(before[i]) && before[i - 1].contains('|'))?;
    let same = shown_as(before[i - 1], header) && shown_as(before[i], delimiter);
    let again = source[n..].starts_with(&text[..head_len]);
    (same && !again).then(|| &text[head_len..])
}

/// A GFM delimiter row, as far as these checks need: dashes, colons, pipes and spaces,
/// with a pipe and a dash, after any container prefix.
fn is_delimiter_row(line: &str) -> bool {
    let row = strip_cr(line)
        .trim_start_matches([' ', '\t', '>'])
        .trim_end();
    row.contains('|') && row.contains('-') && row.bytes().all(|b| b"|-: ".contains(&b))
}

/// Whether the source line `source` may show as `shown` at the top of a piece: the same
/// but for a container prefix whose list markers show as spaces and whose leading columns
/// may be taken off (the same quote markers kept).
fn shown_as(source: &str, shown: &str) -> bool {
    let split = |l: &str| {
        let l = strip_cr(l);
        let rest = l.trim_start_matches(|c: char| " \t>-*+.)".contains(c) || c.is_ascii_digit());
        let prefix = &l[..l.len() - rest.len()];
        (prefix.matches('>').count(), rest.to_owned())
    };
    split(source) == split(shown)
}

/// Matches `body` (the send after its synthetic start) from the first non-separator byte
/// `n`: the source, then a synthetic close where a fence is open at the span's end.
fn match_rest(
    src: &Source,
    cursor: usize,
    n: usize,
    body: &str,
    inside: bool,
    rule: &Rule,
) -> Result<(usize, usize), String> {
    let text = body;
    // A synthetic close at the end: the last line is a bare marker that the source does
    // not have right there.
    if let Some((head, last)) = body.rsplit_once('\n')
        && let Ok((a, b)) = walk_body(src, cursor, n, head, inside, rule)
        && let Some(f) = src.open_at(b).or_else(|| src.container_ended_at(b))
        && ((f.marker.prefix == 0 && bare_marker_line(last) && closes(f.marker, last))
            || strip_cr(last) == f.close_line(&src.text))
    {
        // The source's own closing line right there (as the fence reading split it: a
        // forced flush may have ended it), not a synthetic one.
        let real = src.text[b..].starts_with('\n')
            && f.close_start == Some(b + 1)
            && f.close_end.is_some_and(|e| {
                src.text[b + 1..e] == *strip_cr(last).trim_end_matches([' ', '\t'])
            });
        if !real {
            return Ok((a, b));
        }
    }
    let (a, b) = walk_body(src, cursor, n, body, inside, rule)?;
    if let Some(f) = src.left_open_at(b, rule) {
        return Err(format!(
            "span {a}..{b} ends inside the fence opened at {} without closing it: {text:?}",
            f.open_start
        ));
    }
    Ok((a, b))
}

/// Matches `body` (the send without its fence repairs) at the first non-separator byte `n`
/// after `cursor`, allowing leading whitespace that indents a line of code or is code after
/// a reopened fence line, 4 synthetic spaces before the rest of an indented code line cut
/// in its middle, and the joiner at text boundaries.
fn walk_body(
    src: &Source,
    cursor: usize,
    n: usize,
    body: &str,
    reopened: bool,
    rule: &Rule,
) -> Result<(usize, usize), String> {
    // A send that goes on with an indented code line cut in its middle may start with 4
    // synthetic spaces, so the rest of the line stays code.
    let line_start = src.text[..n].rfind('\n').map_or(0, |i| i + 1);
    let line = &src.text[line_start..];
    let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
    let mid_code_line = !reopened && columns(&line[..indent]) >= 4 && n > line_start + indent;
    // In a block quote, the quote's markers and a space come first, where the limit leaves
    // room for them and a cluster after the 4 spaces (else the 4 spaces alone: the line
    // leaves the quote, a known limit at the smallest limits).
    let quoted = (!reopened)
        .then(|| src.quoted_code_line_prefix(n))
        .flatten()
        .and_then(|q| body.strip_prefix(q.as_str()))
        .and_then(|rest| rest.strip_prefix("    "));
    let (body, continued) = match (quoted, body.strip_prefix("    ")) {
        (Some(rest), _) => (rest, true),
        (None, Some(rest)) if mid_code_line => (rest, true),
        _ => (body, false),
    };
    // After a reopened fence line, leading whitespace (blank lines included) is code.
    let lead = if reopened {
        body.len() - body.trim_start_matches([' ', '\t', '\r', '\n']).len()
    } else {
        body.len() - body.trim_start_matches([' ', '\t']).len()
    };
    let code_indent = src.is_line_start(n - lead.min(n))
        && columns(&body[..lead]) >= 4
        && src.is_code_line(n - lead.min(n));
    // A fence opening line keeps its indentation (its code lines are indented alike).
    // So does a fence-like line indented 4 or more (in a list item, or a paragraph's
    // continuation): shown bare it would open a fence the text does not have there.
    let rest = &body[lead..];
    let fence_indent = src.is_line_start(n - lead.min(n))
        && ((lead <= 3 && opener(body.split('\n').next().unwrap_or("")).is_some())
            || (columns(&body[..lead]) >= 4
                && (rest.starts_with("```") || rest.starts_with("~~~"))));
    let code_indent = code_indent || fence_indent;
    // After the 4 synthetic spaces, spaces from the middle of the code line are code.
    if lead > n - cursor || !reopened && !continued && !code_indent && lead > 0 {
        return Err(format!("leading separator whitespace at {n}: {body:?}"));
    }
    let a = n - lead;
    if src.text.as_bytes()[a..n] != body.as_bytes()[..lead] {
        return Err(format!("leading whitespace differs at {a}: {body:?}"));
    }
    match walk(src, body.as_bytes(), 0, a, rule) {
        Some(b) => Ok((a, b)),
        None => Err(format!(
            "not the source from {a}: send {body:?}\nsource {:?}",
            excerpt(&src.text, a, body.len() + 40)
        )),
    }
}

/// Walks `body[i..]` against the source from `j`: equal bytes, or, where the source has only
/// separator whitespace up to a text boundary, the joiner. Returns the source end.
fn walk(src: &Source, body: &[u8], mut i: usize, mut j: usize, rule: &Rule) -> Option<usize> {
    let s = src.text.as_bytes();
    loop {
        if i == body.len() {
            return Some(j);
        }
        // A text boundary ahead with only separator whitespace before it: try the joiner.
        if let Some(&q) = src
            .boundaries
            .iter()
            .find(|&&q| q >= j && s[j..q].iter().all(|&b| is_sep(b)))
            && (j == 0 || !is_sep(s[j - 1]))
            && let Some(r) = joined(src, body, i, q, rule)
            && let Some(end) = walk(src, body, r.0, r.1, rule)
        {
            return Some(end);
        }
        if j < s.len() && body[i] == s[j] {
            i += 1;
            j += 1;
        } else {
            return None;
        }
    }
}

/// At boundary `q`, `body[i..]` starts with the joiner (a line break instead of `" "` next
/// to a fence line); the block after it starts past blank lines (and past all leading
/// whitespace unless it indents a line and the joiner ends a line).
fn joined(src: &Source, body: &[u8], i: usize, q: usize, rule: &Rule) -> Option<(usize, usize)> {
    let s = src.text.as_bytes();
    let mut r = q;
    while r < s.len() && is_sep(s[r]) {
        r += 1;
    }
    let run = &s[q..r];
    let nl = run.iter().rposition(|&b| b == b'\n');
    // Without a line break after the boundary, the indentation may have begun before it
    // (a `TextEnd` after the first spaces of an indented line).
    let line_start = src.text[..q].rfind('\n').map_or(0, |i| i + 1);
    let blank_before = s[line_start..q].iter().all(|&b| b == b' ' || b == b'\t');
    let indent_at = match nl {
        Some(i) => q + i + 1,
        None if blank_before => line_start,
        None => q,
    };
    let code_indent = (nl.is_some() || src.is_line_start(indent_at))
        && columns(&src.text[indent_at..r]) >= 4
        && src.is_code_line(indent_at);
    let next = if rule.joiner.contains('\n') && code_indent {
        indent_at
    } else {
        r
    };
    let before = std::str::from_utf8(&body[..i]).ok()?;
    let last_line = before.rsplit('\n').next().unwrap_or("");
    let next_line = src.text[r..].split('\n').next().unwrap_or("");
    let joiner =
        if !rule.joiner.contains('\n') && (is_fence_line(last_line) || is_fence_line(next_line)) {
            "\n"
        } else {
            rule.joiner
        };
    body[i..]
        .starts_with(joiner.as_bytes())
        .then_some((i + joiner.len(), next))
}

/// A send as the checker sees it.
pub(crate) struct SeenSend {
    pub(crate) id: SendId,
    pub(crate) kind: SendKind,
    pub(crate) text: String,
    pub(crate) delivered: bool,
}

/// The sends of a run, first emission of each id, in emission order, with whether the host
/// confirmed them.
pub(crate) fn seen_sends<'a>(
    log: impl Iterator<Item = &'a SendRequest>,
    delivered: &HashSet<SendId>,
) -> Vec<SeenSend> {
    let mut seen = HashSet::new();
    log.filter(|s| seen.insert(s.send_id))
        .map(|s| SeenSend {
            id: s.send_id,
            kind: s.kind,
            text: s.payload.text.clone(),
            delivered: delivered.contains(&s.send_id),
        })
        .collect()
}

/// Checks every answer send of a run against the sources (one per assistant message):
/// shape, exact spans, order, and that the delivered spans cover every non-separator byte
/// exactly once. Returns the spans, in emission order.
pub(crate) fn check_answer(
    sources: &[Source],
    sends: &[SeenSend],
    rule: &Rule,
) -> Result<Vec<Span>, String> {
    let mut run = Tiling {
        sources,
        covered: sources.iter().map(|s| vec![0u8; s.text.len()]).collect(),
        spans: Vec::new(),
        m: 0,
        cursor: 0,
    };
    let mut finals_started = false;
    let mut final_at = (0usize, 0usize);
    for send in sends {
        let text = send.text.as_str();
        check_shape(text, rule).map_err(|e| format!("send {:?}: {e}", send.id))?;
        let span = match send.kind {
            SendKind::Block => {
                if finals_started {
                    return Err(format!("block send {:?} after a final", send.id));
                }
                run.match_block(text, rule)?
            }
            SendKind::Final => {
                if !finals_started {
                    finals_started = true;
                    run.absorb_closer(rule)?;
                }
                run.match_final(&mut final_at, text, rule)?
            }
            other => return Err(format!("unexpected send kind {other:?}")),
        };
        let src = &sources[span.message];
        if rule.all_fences_repairable
            && !balanced(text)
            && !src.container_ends_fence_in(span.start..span.end)
        {
            return Err(format!("send {:?}: unbalanced fences: {text:?}", send.id));
        }
        if rule.graphemes
            && (!src.graphemes.contains(&span.start) || !src.graphemes.contains(&span.end))
        {
            return Err(format!("span {span:?} cuts a grapheme: {text:?}"));
        }
        if send.delivered {
            run.cover(span.message, span.start..span.end);
        }
        run.spans.push((span, send.delivered));
    }
    if !finals_started {
        run.absorb_closer(rule)?;
    }
    run.cover_shown_closers(rule);
    for (i, src) in sources.iter().enumerate() {
        for (p, &b) in src.text.as_bytes().iter().enumerate() {
            let c = run.covered[i][p];
            if !is_sep(b) && c != 1 {
                return Err(format!(
                    "message {i} byte {p} delivered {c} times, near {:?}",
                    excerpt(&src.text, p.saturating_sub(20), 40)
                ));
            }
        }
    }
    Ok(run.spans.into_iter().map(|(s, _)| s).collect())
}

/// The sends matched so far and what of the sources they delivered.
struct Tiling<'a> {
    sources: &'a [Source],
    /// Per message and byte: how many delivered sends showed it.
    covered: Vec<Vec<u8>>,
    /// Every send's span, with whether it was delivered.
    spans: Vec<(Span, bool)>,
    /// Where the next block send starts looking.
    m: usize,
    cursor: usize,
}

impl Tiling<'_> {
    fn cover(&mut self, m: usize, range: std::ops::Range<usize>) {
        for c in &mut self.covered[m][range] {
            *c += 1;
        }
    }

    /// A fence's closing line right at the cursor was shown by the synthetic close of the
    /// send before: the cursor moves past it (it is counted as delivered by
    /// [`Tiling::cover_shown_closers`], whichever delivered send closed the fence there).
    fn absorb_closer(&mut self, rule: &Rule) -> Result<(), String> {
        let Some(src) = self.sources.get(self.m) else {
            return Ok(());
        };
        let Some(closer) = src.shown_closer(self.cursor, rule) else {
            return Ok(());
        };
        let m = self.m;
        if !self
            .spans
            .iter()
            .any(|(p, _)| p.message == m && p.end <= closer.start)
        {
            return Err(format!(
                "a closing line at {} shown by no send",
                closer.start
            ));
        }
        self.cursor = closer.end;
        Ok(())
    }

    fn match_block(&mut self, text: &str, rule: &Rule) -> Result<Span, String> {
        loop {
            self.absorb_closer(rule)?;
            let src = self
                .sources
                .get(self.m)
                .ok_or_else(|| format!("no message left for {text:?}"))?;
            match match_send(src, self.cursor, text, rule) {
                Ok((a, b)) => {
                    self.cursor = b;
                    return Ok(Span {
                        message: self.m,
                        start: a,
                        end: b,
                    });
                }
                Err(e) => {
                    // The message is done only if nothing but separators is left of it.
                    self.absorb_closer(rule)?;
                    let left = src.next_non_sep(self.cursor) < src.text.len();
                    if left || self.m + 1 >= self.sources.len() {
                        return Err(format!("message {}: {e}", self.m));
                    }
                    self.m += 1;
                    self.cursor = 0;
                }
            }
        }
    }

    fn match_final(
        &mut self,
        at: &mut (usize, usize),
        text: &str,
        rule: &Rule,
    ) -> Result<Span, String> {
        // The next byte that is neither a separator nor delivered; a closing line there
        // that the final does not reopen was shown by the send that closed the fence.
        let (mut m, mut p) = *at;
        loop {
            let src = self
                .sources
                .get(m)
                .ok_or_else(|| format!("final {text:?} with nothing undelivered"))?;
            let s = src.text.as_bytes();
            while p < s.len() && (is_sep(s[p]) || self.covered[m][p] > 0) {
                p += 1;
            }
            if p < s.len() {
                if let Some(closer) = src.shown_closer(p, rule)
                    && self.closed_by_delivered(m, closer.start)
                {
                    self.cover(m, closer.clone());
                    p = closer.end;
                    continue;
                }
                break;
            }
            m += 1;
            p = 0;
        }
        let src = &self.sources[m];
        // Separators before it belong to the gap: match from the start of its run.
        let mut from = p;
        while from > 0 && is_sep(src.text.as_bytes()[from - 1]) && self.covered[m][from - 1] == 0 {
            from -= 1;
        }
        let (a, b) = match_send(src, from, text, rule)
            .map_err(|e| format!("final {text:?} from {from}: {e}"))?;
        if self.covered[m][a..b].iter().any(|&c| c > 0) {
            return Err(format!("final {text:?} repeats delivered text at {a}..{b}"));
        }
        *at = (m, b);
        Ok(Span {
            message: m,
            start: a,
            end: b,
        })
    }

    /// Closing lines no send showed as source, right after a delivered send that ended
    /// inside their fence (its synthetic close showed them), count as delivered once. A
    /// fence that cannot be repaired gets no synthetic close: a send must show its closer.
    fn cover_shown_closers(&mut self, rule: &Rule) {
        for m in 0..self.sources.len() {
            let closers: Vec<_> = self.sources[m]
                .fences
                .iter()
                .filter(|f| !unrepairable(f.marker, rule.metric, rule.limit))
                .filter_map(|f| Some(f.close_start?..f.close_end?))
                .collect();
            for closer in closers {
                let uncovered = self.covered[m][closer.clone()].iter().all(|&c| c == 0);
                if uncovered && self.closed_by_delivered(m, closer.start) {
                    self.cover(m, closer);
                }
            }
        }
    }

    /// Whether a delivered send ended right before `closer_start` (only separators
    /// between), so its synthetic close showed that closing line.
    fn closed_by_delivered(&self, m: usize, closer_start: usize) -> bool {
        let s = self.sources[m].text.as_bytes();
        self.spans.iter().any(|(span, delivered)| {
            *delivered
                && span.message == m
                && span.end <= closer_start
                && s[span.end..closer_start].iter().all(|&b| is_sep(b))
        })
    }
}

/// About `len` bytes of `text` from `from`, on char boundaries.
pub(crate) fn excerpt(text: &str, from: usize, len: usize) -> &str {
    let mut a = from.min(text.len());
    while !text.is_char_boundary(a) {
        a -= 1;
    }
    let mut b = (a + len).min(text.len());
    while !text.is_char_boundary(b) {
        b += 1;
    }
    &text[a..b]
}

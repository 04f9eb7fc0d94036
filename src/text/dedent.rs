//! De-indenting a piece that starts inside deep list-item code (SPEC §15, containers).
//!
//! Under `1. ` a fence indented 4 spaces is a fence of the item; a message that starts
//! inside it (or at its opening line) has lost the item, and at the top level the same
//! lines read as indented code: the fence lines would show as code text. Such a piece is
//! shown as the item's content reads, every line de-indented by the columns of the item's
//! prefix ([`Block::dedent`](super::block::Block::dedent)). This is done once per piece,
//! when it is emitted, never per push.

use super::cut::{Reopen, build_piece};
use super::limits::Limits;
use super::markdown::{FenceMarker, MarkdownScanner};
use super::metric::LengthMetric;

/// Columns to take off the lines of a piece, bytes `start..end` of the scanned `text`
/// (`line_start`: `start` starts a line):
///
/// - in or at a fence: the fence's container prefix, when the containers are list items
///   only (the prefix is spaces; in a quote in items, the spaces before its `>`) and the
///   fence would read as indented code without them (prefix and indentation reach 4
///   columns);
/// - with `item` (the content column of the list items holding `start`, as the scanner
///   followed the containers line by line, lazy continuation lines included
///   ([`MarkdownScanner::item_column_at`])): at a line in a list item indented 4 columns or more that the
///   scanner, following the containers, does not read as indented code (the item's
///   paragraph), that line's indentation (outside items, such a line is a paragraph's
///   lazy continuation, and the lines after it keep their columns); at a nested item's own
///   first line, indented less than the items' content column, with an indented line after
///   it or no line with content after it, that line's indentation (the send trims it); in
///   a list item's text, with a line 4 or more columns deep after it, the item's content
///   column.
///
/// 0 otherwise. Without `item`, only fences count.
pub(crate) fn item_dedent(
    scanner: &MarkdownScanner,
    text: &str,
    start: usize,
    end: usize,
    line_start: bool,
    item: Option<impl FnOnce() -> usize>,
) -> Dedent {
    let fence = scanner
        .fence_at(start)
        .or_else(|| scanner.fence_at(start + 1).filter(|f| f.start == start));
    if let Some(f) = fence {
        return match deep_prefix(&f.marker) {
            0 => deep_after_quote(&f.marker),
            cols => Dedent::cols(cols),
        };
    }
    Dedent::cols(item_text_dedent(
        scanner, text, start, end, line_start, item,
    ))
}

/// Columns to take off the lines of a piece, and after how many quote markers (see
/// [`Block::dedent`](super::block::Block::dedent) and
/// [`Block::dedent_quotes`](super::block::Block::dedent_quotes)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Dedent {
    /// Columns taken off each line (0: none).
    pub cols: usize,
    /// Quote markers kept before them at each line's start (0: from the line's start).
    pub quotes: usize,
}

impl Dedent {
    /// `cols` columns from each line's start.
    pub(crate) fn cols(cols: usize) -> Dedent {
        Dedent { cols, quotes: 0 }
    }
}

/// [`item_dedent`] outside fences.
fn item_text_dedent(
    scanner: &MarkdownScanner,
    text: &str,
    start: usize,
    end: usize,
    line_start: bool,
    item: Option<impl FnOnce() -> usize>,
) -> usize {
    // Likewise in a table of list items 4 columns deep or more, or at its header row when
    // that line is indented only (not an item's first line: a piece starting there holds
    // the item).
    let bytes = text.as_bytes();
    if let Some(t) = scanner.table_at(start) {
        return match t.items_only && t.prefix_len >= 4 {
            true => t.prefix_len,
            false => 0,
        };
    }
    if let Some(t) = scanner
        .table_at(start + 1)
        .filter(|t| t.start == start && !t.continued)
    {
        let prefix = &bytes[start..(start + t.prefix_len).min(bytes.len())];
        return match t.prefix_len >= 4 && prefix.iter().all(|&b| b == b' ') {
            true => t.prefix_len,
            false => 0,
        };
    }
    let Some(item) = item else {
        return 0;
    };
    let own = match line_start {
        true => bytes[start.min(bytes.len())..]
            .iter()
            .take_while(|&&b| b == b' ')
            .count(),
        false => 0,
    };
    let content = line_start
        && bytes
            .get(start + own)
            .is_some_and(|b| !b" \t\r\n".contains(b));
    // A piece that starts in a list item's text: its lines 4 or more columns deep would
    // read as indented code at the top level. The item's column is asked first: outside
    // list items (most pieces) the piece's lines are not read at all.
    let c = item();
    // A list item's paragraph line 4 columns deep or more (not indented code). Outside list
    // items such a line is a paragraph's lazy continuation: the send trims its indentation
    // and the lines after it keep theirs (indented code after it stays indented code).
    if own >= 4 && content && c > 0 && scanner.indented_at(start + own).is_none() {
        return own;
    }
    // At a block quote's line in a list item, 4 columns deep or more (the code the
    // scanner finds there is the quote's own): alone it would read as indented code, a
    // `>` in it. By its indentation, as an item's paragraph line.
    if own >= 4 && c > 0 && c <= own && bytes.get(start + own) == Some(&b'>') {
        return own;
    }
    if c == 0 {
        return 0;
    }
    let piece = &text[start..end.max(start)];
    // A piece cut inside a line of the item's text with no line after it: no line of it is
    // de-indented either way, but the item's column is what is in force at its end, so
    // that the item's next lines (de-indented by it when they come as blocks of their own)
    // join it as they show, not as written (a table 5 columns deep as indented code).
    if !line_start && memchr::memchr(b'\n', piece.as_bytes()).is_none() {
        return c;
    }
    if line_start && let Some(own) = content_indent(piece).filter(|&own| own < c) {
        // A piece that starts at a line with less indentation holds the item whole. When
        // that line is the item's own first line (a nested item's, indented under an outer
        // one), the send trims its indentation: the indented lines after it lose as much,
        // so they keep their place in the item (alone, `   2.` after an item's paragraph
        // indented that far would read as its lazy text, and `   3)` after a trimmed
        // `2)` as that item's paragraph text). With no line after it, no line of it is
        // de-indented but the first (which the send trims anyway), and its indentation is
        // what is in force at its end: the item's next lines, de-indented when they come as
        // blocks of their own, join it where they show under it (a fence 6 columns deep
        // under a trimmed `   - ` reads as indented code, 2 columns deep as the item's).
        let opens_item = item_content_column(piece).is_some();
        return match opens_item && (line_after_indented(piece, 1) || first_line_only(piece)) {
            true => own,
            false => 0,
        };
    }
    match line_after_indented(piece, 4) {
        true => c,
        false => 0,
    }
}

/// Whether a line of `piece` after its first is indented `cols` columns or more: with 4,
/// whether a list item's content column matters at a message's start.
fn line_after_indented(piece: &str, cols: usize) -> bool {
    // Line starts found with a vector search, and only those starting with a space or a
    // tab read further (the chunker asks this of every piece it emits).
    memchr::memchr_iter(b'\n', piece.as_bytes()).any(|nl| {
        let line = &piece[nl + 1..];
        matches!(line.as_bytes().first(), Some(b' ' | b'\t'))
            && content_indent(line).is_some_and(|c| c >= cols)
    })
}

/// Whether `piece` holds no line with content after its first.
fn first_line_only(piece: &str) -> bool {
    match memchr::memchr(b'\n', piece.as_bytes()) {
        None => true,
        Some(nl) => piece[nl + 1..].bytes().all(|b| b" \t\r\n".contains(&b)),
    }
}

/// The content column of the list item that `line` opens (indented less than 4 columns,
/// a marker `-`, `*`, `+`, `1.`, `1)` followed by 1 to 4 spaces, or by 5 or more: then
/// one counts), or `None`.
fn item_content_column(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    let indent = bytes.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let rest = &bytes[indent..];
    let digits = rest
        .iter()
        .take(10)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let marker = match rest.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' if digits <= 9 && matches!(rest.get(digits), Some(b'.' | b')')) => digits + 1,
        _ => return None,
    };
    let spaces = rest[marker..].iter().take_while(|&&b| b == b' ').count();
    let after = rest.get(marker + spaces);
    if spaces == 0 || after.is_none_or(|b| matches!(b, b'\n' | b'\r')) {
        return None;
    }
    Some(indent + marker + if spaces <= 4 { spaces } else { 1 })
}

/// The prefix columns of `marker` when they push it to 4 columns or more and hold only
/// spaces (list items alone); 0 otherwise.
///
/// Under a quote in list items (`     > ` before the fence) it is the spaces before the
/// first `>`, when they reach 4 columns (the `>` itself would read as indented code).
pub(crate) fn deep_prefix(marker: &FenceMarker) -> usize {
    let prefix = marker.prefix.as_str();
    let lead = prefix
        .bytes()
        .take_while(|&b| b == b' ' || b == b'\t')
        .count();
    // In columns: a tab in the items' indentation reaches the next multiple of 4.
    let cols = prefix[..lead].bytes().fold(0, |c, b| match b {
        b'\t' => c + 4 - c % 4,
        _ => c + 1,
    });
    match prefix.as_bytes().get(lead) {
        None if cols > 0 && cols + marker.indent >= 4 => cols,
        Some(b'>') if cols >= 4 => cols,
        _ => 0,
    }
}

/// For a fence in list items in a block quote (`> 1)     ```` under `> 1) `), the list
/// items' columns after the quote markers when they push the fence to 4 columns or more
/// past the last `>` (alone, without the items, it would read as the quote's indented
/// code): taken off after the quote markers, which stay. Only for a prefix with no list
/// item before its first `>`, at most 3 spaces before each `>`, no tab.
pub(crate) fn deep_after_quote(marker: &FenceMarker) -> Dedent {
    let prefix = marker.prefix.as_str();
    let none = Dedent::default();
    if prefix.contains('\t') || !prefix.contains('>') {
        return none;
    }
    // The quote markers, each after at most 3 spaces.
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
    // What is left: the items' columns (spaces only, the prefix being blanked).
    let cols = rest.len();
    match quotes > 0 && cols > 0 && !rest.contains('>') && cols + marker.indent >= 4 {
        true => Dedent { cols, quotes },
        false => none,
    }
}

/// The text of a piece: `source` with `reopen` before it and `close` after it, de-indented
/// by `dedent` columns (see [`build_dedented_piece`]); returns `(head_len, tail_len,
/// dedent)` as built. A tab that the de-indentation splits turns into spaces, so a
/// de-indented piece can be longer than its source, which is what the cut was planned on:
/// where it would pass `limits.max` (with `extra` units still to be added after it), the
/// piece is built as written and `dedent` is 0 (the limit wins over the de-indentation).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build_piece_within(
    source: &str,
    line_start: bool,
    reopen: Option<Reopen<'_>>,
    close: Option<FenceMarker>,
    dedent: Dedent,
    limits: &Limits,
    extra: usize,
    out: &mut String,
) -> (usize, usize, Dedent) {
    let plain = |out: &mut String| {
        build_piece(source, reopen, close, out);
        let head = reopen.map_or(0, |r| r.cost(LengthMetric::Bytes));
        let tail = close.map_or(0, |m| m.close_len() + 1);
        (head, tail, Dedent::default())
    };
    if dedent.cols == 0 {
        return plain(out);
    }
    let from = out.len();
    let (head, tail) = build_dedented_piece(source, line_start, reopen, close, dedent, out);
    let grew = source.contains('\t') && limits.metric.len(&out[from..]) + extra > limits.max;
    if grew {
        out.truncate(from);
        return plain(out);
    }
    (head, tail, dedent)
}

/// Builds a piece's text as [`build_piece`] does, with every line
/// de-indented by up to `cols` columns (see [`Block::dedent`](super::block::Block::dedent)).
/// `line_start` says whether `source` starts a line of the original text. Returns the
/// byte lengths of the synthetic head and tail as shown.
pub(crate) fn build_dedented_piece(
    source: &str,
    line_start: bool,
    reopen: Option<Reopen<'_>>,
    close: Option<FenceMarker>,
    d: Dedent,
    out: &mut String,
) -> (usize, usize) {
    let mut head = String::new();
    if let Some(r) = reopen {
        r.push_to(&mut head);
    }
    dedent_lines_into(&head, d, true, out);
    let head_len = out.len();
    let source_at_line_start = match head.is_empty() {
        true => line_start,
        false => line_start && head.ends_with('\n'),
    };
    // (A quoted head's last line, the quote prefix before the rest of a code line, was
    // de-indented above: the source goes on in that line.)
    let d = dedent_lines_into(source, d, source_at_line_start, out);
    let before = out.len();
    if let Some(m) = close {
        let mut tail = String::from("\n");
        m.push_close(&mut tail);
        dedent_lines_into(&tail, d, false, out);
    }
    (head_len, out.len() - before)
}

/// Appends `text` with up to `cols` leading columns of spaces and tabs taken off each line
/// that starts in it (its first line too when `at_line_start`).
///
/// A line that starts in `text` with content indented fewer than `cols` columns has left
/// the item, for an outer one or the top level: from it on, `cols` is its indentation (it
/// and the lines after it are shown relative to where it stands). Returns the columns in
/// force at the end (for a synthetic closing line after `text`).
pub(crate) fn dedent_into(text: &str, cols: usize, at_line_start: bool, out: &mut String) -> usize {
    dedent_lines_into(text, Dedent::cols(cols), at_line_start, out).cols
}

/// [`dedent_into`] after `d.quotes` quote markers at each line's start (kept as written,
/// each with the space after it): the columns are taken off after them. A line that does
/// not carry them has left the quote (and the items in it): from it on nothing is taken.
/// Returns what is in force at the end.
pub(crate) fn dedent_lines_into(
    text: &str,
    mut d: Dedent,
    at_line_start: bool,
    out: &mut String,
) -> Dedent {
    // Lines found with a vector search; the usual line (nothing kept before the columns
    // taken, no tab split) is one copy, and once nothing is taken (0 columns in force
    // stay 0) the rest is one copy.
    let bytes = text.as_bytes();
    let mut line = 0;
    while line < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[line..]).map_or(bytes.len(), |i| line + i + 1);
        if d.cols == 0 {
            out.push_str(&text[line..]);
            break;
        }
        if line == 0 && !at_line_start {
            out.push_str(&text[..end]);
            line = end;
            continue;
        }
        let (keep, taken, pad);
        (d, keep, taken, pad) = quoted_line_cut(&text[line..end], d);
        if keep > 0 {
            out.push_str(&text[line..line + keep]);
        }
        if pad > 0 {
            out.extend(std::iter::repeat_n(' ', pad));
        }
        out.push_str(&text[line + keep + taken..end]);
        line = end;
    }
    d
}

/// Bytes of `line`'s first `quotes` quote markers (each after at most 3 spaces, with one
/// space after it), or `None` when it does not carry them all.
fn quote_markers(line: &str, quotes: usize) -> Option<usize> {
    let bytes = line.as_bytes();
    let mut i = 0;
    for _ in 0..quotes {
        let lead = bytes[i..]
            .iter()
            .take(4)
            .take_while(|&&b| b == b' ')
            .count();
        if lead > 3 || bytes.get(i + lead) != Some(&b'>') {
            return None;
        }
        i += lead + 1;
        if bytes.get(i) == Some(&b' ') {
            i += 1;
        }
    }
    Some(i)
}

/// How [`dedent_lines_into`] de-indents `line` (one that starts a line) with `d` in force:
/// (what is in force from this line on, the bytes of quote markers kept, the bytes of
/// indentation taken off after them, the spaces put back for a tab that crossed the
/// columns).
fn quoted_line_cut(line: &str, d: Dedent) -> (Dedent, usize, usize, usize) {
    let Some(keep) = quote_markers(line, d.quotes) else {
        // Out of the quote: shown as written from here on.
        return (Dedent { cols: 0, ..d }, 0, 0, 0);
    };
    let (cols, taken, pad) = line_cut(&line[keep..], d.cols);
    (Dedent { cols, ..d }, keep, taken, pad)
}

/// How [`dedent_into`] de-indents `line` (one that starts a line) with `cols` in force:
/// (the columns in force from this line on, the bytes of indentation taken off, the spaces
/// put back for a tab that crossed the columns).
fn line_cut(line: &str, mut cols: usize) -> (usize, usize, usize) {
    if let Some(own) = content_indent(line) {
        cols = cols.min(own);
    }
    let bytes = line.as_bytes();
    let (mut col, mut i, mut pad) = (0, 0, 0);
    while i < bytes.len() && col < cols {
        let next = match bytes[i] {
            b'\t' => col + 4 - col % 4,
            b' ' => col + 1,
            _ => break,
        };
        i += 1;
        pad = next.saturating_sub(cols);
        col = next;
    }
    (cols, i, pad)
}

/// [`quoted_source_position`] for leading columns (the unit tests' shorthand).
#[cfg(test)]
pub(crate) fn source_position(
    source: &str,
    cols: usize,
    at_line_start: bool,
    at: usize,
) -> (usize, usize) {
    let (p, d) = quoted_source_position(source, Dedent::cols(cols), at_line_start, at);
    (p, d.cols)
}

/// Where byte `at` of `source` de-indented by [`dedent_lines_into`] (`d`, `at_line_start`)
/// lies in `source`, and the de-indentation in force there: (byte of `source`, what is in
/// force). A position at a line's start maps to the start of the source line (its
/// indentation goes with what follows), one in the quote markers a line keeps to the same
/// marker, one in a line's text to the same text in the source. So a stretch of the
/// de-indented text that starts and ends at such positions shows the source between them
/// de-indented by what is in force at its start.
pub(crate) fn quoted_source_position(
    source: &str,
    mut d: Dedent,
    at_line_start: bool,
    at: usize,
) -> (usize, Dedent) {
    let (mut from, mut shown) = (0, 0);
    for (k, line) in source.split_inclusive('\n').enumerate() {
        let (mut keep, mut taken, mut pad) = (0, 0, 0);
        if d.cols > 0 && (k > 0 || at_line_start) {
            (d, keep, taken, pad) = quoted_line_cut(line, d);
        }
        let len = pad + line.len() - taken;
        if at < shown + len || (at == shown && len == 0) {
            let rel = at - shown;
            return match rel {
                0 => (from, d),
                // In the markers kept.
                r if r < keep => (from + r, d),
                r => (from + keep + taken + (r - keep).saturating_sub(pad), d),
            };
        }
        from += line.len();
        shown += len;
    }
    (source.len(), d)
}

/// The columns of de-indentation in force at the end of `block`, whose source is
/// `text[block.source]`: its [`Block::dedent`](super::block::Block::dedent), lowered by
/// every line that left the item. A block that goes on from this one reads as it did
/// apart only if it is de-indented by as much. For a block de-indented after quote
/// markers, [`QUOTED_END`] plus those columns.
pub(crate) fn end_columns(block: &super::block::Block, text: &str) -> usize {
    if block.dedent_quotes > 0 {
        // (Once a line left the quote, what follows is shown as written.)
        return match end_quoted(block, text).cols {
            0 => 0,
            cols => QUOTED_END + cols,
        };
    }
    let mut cols = block.dedent;
    let Some(source) = text.get(block.source.clone()) else {
        return cols;
    };
    let at_line = source_starts_line(block, text);
    for (k, line) in source.split_inclusive('\n').enumerate() {
        if cols == 0 {
            break;
        }
        if k == 0 && !at_line {
            continue;
        }
        if let Some(own) = content_indent(line) {
            cols = cols.min(own);
        }
    }
    cols
}

/// Whether the first line of `block`'s source (`text[block.source]`) is shown from its
/// start: the source starts a line of `text` and the block's synthetic head, if any, ends
/// with a line break (a reopened fence line before it).
fn source_starts_line(block: &super::block::Block, text: &str) -> bool {
    let start = block.source.start;
    let head = &block.text[..block.head_len.min(block.text.len())];
    (start == 0 || text.as_bytes()[start - 1] == b'\n') && (head.is_empty() || head.ends_with('\n'))
}

/// Added to what [`end_columns`] returns for a block de-indented after quote markers
/// ([`Block::dedent_quotes`](super::block::Block::dedent_quotes)): no block de-indented
/// otherwise reads as it did apart when joined to it, and [`redented`] declines it, so it
/// is joined only as it came (a line's length stays far below it).
pub(crate) const QUOTED_END: usize = 1 << 20;

/// [`end_columns`] for a block de-indented after quote markers.
pub(crate) fn end_quoted(block: &super::block::Block, text: &str) -> Dedent {
    let d = Dedent {
        cols: block.dedent,
        quotes: block.dedent_quotes,
    };
    let Some(source) = text.get(block.source.clone()) else {
        return d;
    };
    let at_line = source_starts_line(block, text);
    let mut sink = String::new();
    dedent_lines_into(source, d, at_line, &mut sink)
}

/// `block` (its source `text[block.source]`) as it reads de-indented by `cols` columns
/// instead of its own [`Block::dedent`](super::block::Block::dedent): what it shows where
/// it goes on from text de-indented by `cols` (0: shown as written), as when the coalescer
/// joins it to a message that did not start in its item. `None` when its synthetic start
/// cannot be told back (only a reopened fence line, or none, can).
pub(crate) fn redented(
    block: &super::block::Block,
    text: &str,
    cols: usize,
) -> Option<super::block::Block> {
    // (A block de-indented after quote markers is joined only as it came.)
    if block.dedent_quotes > 0 || cols >= QUOTED_END {
        return None;
    }
    let source = text.get(block.source.clone())?;
    let d = block.dedent;
    let head = block.text.get(..block.head_len)?;
    let tail = block
        .text
        .get(block.text.len().checked_sub(block.tail_len)?..)?;
    if head.contains('\t') || tail.contains('\t') {
        return None;
    }
    // A reopened fence line (and the quote prefix after it) lost exactly `d` columns (they
    // stand at the fence's depth).
    let head = match (d, block.fence_reopened) {
        (0, _) => head.to_owned(),
        (_, true) => head
            .split_inclusive('\n')
            .map(|line| format!("{}{line}", " ".repeat(d)))
            .collect(),
        (_, false) if head.is_empty() => String::new(),
        _ => return None,
    };
    let mut out = String::with_capacity(block.text.len() + d * 4);
    dedent_into(&head, cols, true, &mut out);
    let head_len = out.len();
    let at_line = source_starts_line(block, text);
    let end_cols = dedent_into(source, cols, at_line, &mut out);
    let before = out.len();
    match tail.strip_prefix('\n').filter(|_| block.fence_closed) {
        // The closing line lost exactly the columns in force at the end.
        Some(line) => {
            out.push('\n');
            let line = format!("{}{line}", " ".repeat(end_columns(block, text)));
            dedent_into(&line, end_cols, true, &mut out);
        }
        None => out.push_str(tail),
    }
    let tail_len = out.len() - before;
    let mut b = block.clone();
    b.text = out;
    b.head_len = head_len;
    b.tail_len = tail_len;
    b.dedent = cols;
    Some(b)
}

/// The columns of indentation before `line`'s content; `None` for a blank line.
fn content_indent(line: &str) -> Option<usize> {
    let mut col = 0;
    for b in line.bytes() {
        match b {
            b' ' => col += 1,
            b'\t' => col += 4 - col % 4,
            b'\n' | b'\r' => return None,
            _ => return Some(col),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::dedent_into;

    fn dedent(text: &str, cols: usize, at_line_start: bool) -> String {
        let mut out = String::new();
        dedent_into(text, cols, at_line_start, &mut out);
        out
    }

    #[test]
    fn lines_lose_at_most_the_columns() {
        assert_eq!(
            dedent("    ```sh\n      x\n  y\nz", 4, true),
            "```sh\n  x\ny\nz"
        );
        assert_eq!(dedent("ab  \n    c", 4, false), "ab  \nc");
        assert_eq!(dedent("\tx\n  \tx", 3, true), " x\n x");
        // A line with content indented less has left the item: the rest is shown
        // relative to it.
        assert_eq!(dedent("    a\n  b\n    c", 4, true), "a\nb\n  c");
        assert_eq!(dedent("    a\n```\n    c", 4, true), "a\n```\n    c");
        assert_eq!(dedent("\n\n   \r\n", 2, true), "\n\n \r\n");
    }

    #[test]
    fn lines_lose_the_columns_after_their_quote_markers() {
        use super::{Dedent, dedent_lines_into, quoted_source_position};
        let d = Dedent { cols: 3, quotes: 1 };
        let quoted = |text: &str, at_line_start| {
            let mut out = String::new();
            let end = dedent_lines_into(text, d, at_line_start, &mut out);
            (out, end.cols)
        };
        assert_eq!(
            quoted(">     ```\n>     x\n>\n>     ```", true),
            (">  ```\n>  x\n>\n>  ```".to_owned(), 3)
        );
        // A line indented less has left the item; one without the `>` the quote.
        assert_eq!(
            quoted(">     a\n> b\n>     c\nd\n>     e", true),
            (">  a\n> b\n>     c\nd\n>     e".to_owned(), 0)
        );
        // Two markers, the second after an outer item's 2 columns.
        let two = Dedent { cols: 3, quotes: 2 };
        let mut out = String::new();
        dedent_lines_into(">   >     x", two, true, &mut out);
        assert_eq!(out, ">   >  x");
        // Positions in the markers kept map to themselves, those after past the columns.
        let source = ">     ```\n>     x";
        let at = |p| quoted_source_position(source, d, true, p).0;
        assert_eq!((at(0), at(1), at(2), at(3), at(7)), (0, 1, 5, 6, 10));
        assert_eq!((at(9), at(10)), (15, 16));
    }

    #[test]
    fn positions_map_back_to_the_source() {
        use super::source_position;
        // " b" lowers the columns to 1, so "  c" shows " c".
        let source = "   a\n b\n  c";
        assert_eq!(dedent(source, 3, true), "a\nb\n c");
        let at = |p| source_position(source, 3, true, p);
        assert_eq!(at(0), (0, 3));
        assert_eq!(at(1), (4, 3));
        assert_eq!(at(2), (5, 1));
        assert_eq!(at(4), (8, 1));
        assert_eq!(at(5), (10, 1));
        assert_eq!(at(6), (11, 1));
        // A first line that does not start a line keeps its indentation.
        assert_eq!(source_position("  x\n  y", 2, false, 2), (2, 2));
        assert_eq!(source_position("  x\n  y", 2, false, 4), (4, 2));
        assert_eq!(source_position("  x\n  y", 2, false, 5), (7, 2));
        // A tab that crosses the columns: its pad maps after it.
        assert_eq!(dedent("\tx", 2, true), "  x");
        assert_eq!(source_position("\tx", 2, true, 2), (1, 2));
    }
}

//! Block reading of one send: CommonMark's container and leaf blocks as a chat reply uses
//! them. Fences come from the shared scanner's [`FenceMarker`]; list items (`-`, `*`, `+`,
//! `1.`, `1)`) take their content column from the marker and the spaces after it; block
//! quotes take lazy continuation lines; indented code cannot interrupt a paragraph; a GFM
//! table needs a header row and a delimiter row with as many cells. A line that starts none
//! of these is paragraph text, so nothing is dropped.

use super::inline::parse_inlines;
use super::ir::{Align, Block, Located, Table};
use crate::text::markdown::FenceMarker;

/// Reads `text` into top-level blocks with the byte range of their source lines.
pub(crate) fn parse_document(text: &str) -> Vec<Located> {
    // Line starts and contents (line endings, `\r\n` or `\n`, removed), sized by one
    // count of the line breaks.
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut starts = Vec::with_capacity(breaks + 2);
    let mut lines = Vec::with_capacity(breaks + 1);
    let mut at = 0;
    for nl in memchr::memchr_iter(b'\n', text.as_bytes()) {
        starts.push(at);
        let line = &text[at..nl];
        lines.push(line.strip_suffix('\r').unwrap_or(line));
        at = nl + 1;
    }
    if at < text.len() {
        starts.push(at);
        let line = &text[at..];
        lines.push(line.strip_suffix('\r').unwrap_or(line));
    }
    starts.push(text.len());
    parse_lines(&lines)
        .into_iter()
        .map(|(block, span)| Located {
            block,
            range: starts[span.0]..starts[span.1],
        })
        .collect()
}

/// Reads lines (a container's content) into blocks with the line index range of each.
fn parse_lines(lines: &[&str]) -> Vec<(Block, (usize, usize))> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            i += 1;
            continue;
        }
        let start = i;
        let block;
        if columns(line) >= 4 {
            let mut end = i;
            let mut j = i;
            while j < lines.len() && (is_blank(lines[j]) || columns(lines[j]) >= 4) {
                if !is_blank(lines[j]) {
                    end = j + 1;
                }
                j += 1;
            }
            let text: Vec<String> = lines[i..end].iter().map(|l| strip_columns(l, 4)).collect();
            block = Block::Code {
                language: None,
                text: text.join("\n"),
            };
            i = end;
        } else if let Some(marker) = FenceMarker::parse_open(line) {
            let info = line.trim_start()[marker.len..].trim();
            let language = info
                .split_whitespace()
                .next()
                .map(unescape)
                .filter(|l| !l.is_empty());
            let mut j = i + 1;
            while j < lines.len() && !marker.is_closed_by(lines[j]) {
                j += 1;
            }
            // The code lines joined by `\n`, written once into a string of their size.
            let body = &lines[i + 1..j];
            let mut text = String::with_capacity(body.iter().map(|l| l.len() + 1).sum());
            for (k, line) in body.iter().enumerate() {
                if k > 0 {
                    text.push('\n');
                }
                text.push_str(strip_spaces(line, marker.indent));
            }
            block = Block::Code { language, text };
            i = (j + 1).min(lines.len());
        } else if let Some(content) = atx_heading(line) {
            block = Block::Heading(parse_inlines(content));
            i += 1;
        } else if is_rule(line) {
            block = Block::Rule;
            i += 1;
        } else if line.trim_start().starts_with('>') {
            let (inner, end) = quote_lines(lines, i);
            let refs: Vec<&str> = inner.iter().map(String::as_str).collect();
            block = Block::Quote(parse_lines(&refs).into_iter().map(|(b, _)| b).collect());
            i = end;
        } else if let Some(item) = list_marker(line) {
            let (inner, end) = item_lines(lines, i, &item);
            let refs: Vec<&str> = inner.iter().map(String::as_str).collect();
            let children = parse_lines(&refs).into_iter().map(|(b, _)| b).collect();
            block = Block::ListItem {
                number: item.number,
                marker: item.marker,
                children,
            };
            i = end;
        } else if let Some((table, end)) = table(lines, i) {
            block = Block::Table(table);
            i = end;
        } else {
            let mut j = i + 1;
            let mut heading = None;
            while j < lines.len() {
                let next = lines[j];
                if is_blank(next) {
                    break;
                }
                if columns(next) < 4 {
                    let t = next.trim();
                    if !t.is_empty() && t.bytes().all(|b| b == b'=') {
                        heading = Some(j);
                        break;
                    }
                    if !t.is_empty() && t.bytes().all(|b| b == b'-') && !t.contains(' ') {
                        heading = Some(j);
                        break;
                    }
                }
                if interrupts_paragraph(next) {
                    break;
                }
                j += 1;
            }
            let mut text = String::with_capacity(lines[i..j].iter().map(|l| l.len() + 1).sum());
            for (k, line) in lines[i..j].iter().enumerate() {
                if k > 0 {
                    text.push('\n');
                }
                text.push_str(line.trim_start());
            }
            let inlines = parse_inlines(&text);
            match heading {
                Some(h) => {
                    block = Block::Heading(inlines);
                    i = h + 1;
                }
                None => {
                    block = Block::Paragraph(inlines);
                    i = j;
                }
            }
        }
        out.push((block, (start, i)));
    }
    out
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ' || b == b'\t')
}

/// The indentation of `line` in columns (a tab advances to the next multiple of 4).
fn columns(line: &str) -> usize {
    columns_from(line, 0)
}

/// The column the indentation of `line` reaches when `line` starts at column `col`.
fn columns_from(line: &str, mut col: usize) -> usize {
    for b in line.bytes() {
        match b {
            b' ' => col += 1,
            b'\t' => col += 4 - col % 4,
            _ => break,
        }
    }
    col
}

/// `line` with `n` columns of indentation removed (tabs expanded as needed).
fn strip_columns(line: &str, n: usize) -> String {
    strip_columns_from(line, 0, n)
}

/// [`strip_columns`] for a `line` that starts at column `col` (after `col` columns that
/// are removed too).
fn strip_columns_from(line: &str, mut col: usize, n: usize) -> String {
    for (i, b) in line.bytes().enumerate() {
        if col >= n {
            return line[i..].to_owned();
        }
        match b {
            b' ' => col += 1,
            b'\t' => {
                let next = col + 4 - col % 4;
                if next > n {
                    return " ".repeat(next - n) + &line[i + 1..];
                }
                col = next;
            }
            _ => return line[i..].to_owned(),
        }
    }
    String::new()
}

/// `line` with up to `n` leading spaces removed.
fn strip_spaces(line: &str, n: usize) -> &str {
    let k = line.bytes().take(n).take_while(|&b| b == b' ').count();
    &line[k..]
}

/// Backslash escapes in an info string decoded.
fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(char::is_ascii_punctuation) {
            out.extend(chars.next());
        } else {
            out.push(c);
        }
    }
    out
}

/// An ATX heading's content, its closing `#` run removed.
fn atx_heading(line: &str) -> Option<&str> {
    if columns(line) >= 4 {
        return None;
    }
    let t = line.trim_start();
    let level = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &t[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    let content = rest.trim();
    let without = content.trim_end_matches('#');
    if without.is_empty() {
        return Some("");
    }
    if without.ends_with([' ', '\t']) {
        return Some(without.trim_end());
    }
    Some(content)
}

/// A thematic break: three or more `*`, `-` or `_`, spaces between allowed.
fn is_rule(line: &str) -> bool {
    if columns(line) >= 4 {
        return false;
    }
    let t = line.trim();
    let Some(c) = t.bytes().next().filter(|b| b"*-_".contains(b)) else {
        return false;
    };
    let n = t.bytes().filter(|&b| b == c).count();
    n >= 3 && t.bytes().all(|b| b == c || b == b' ' || b == b'\t')
}

/// A list item's marker on its first line.
struct ItemMarker<'a> {
    number: Option<u64>,
    /// `-`, `*`, `+`, `.` or `)`.
    marker: u8,
    /// Column where the item's content starts.
    content: usize,
    /// Whether the item has nothing after its marker on the first line.
    empty: bool,
    /// The first line after the marker, which ends at column `marker_end`.
    after: &'a str,
    marker_end: usize,
}

impl ItemMarker<'_> {
    /// The first line's content (after the marker and the spaces that belong to it): the
    /// line with the marker turned into spaces, then the content column removed. Built only
    /// for an item that is read (a paragraph line is asked whether it starts one).
    fn first(&self) -> String {
        if self.empty {
            String::new()
        } else {
            strip_columns_from(self.after, self.marker_end, self.content)
        }
    }
}

fn list_marker(line: &str) -> Option<ItemMarker<'_>> {
    let indent = columns(line);
    if indent >= 4 || is_rule(line) {
        return None;
    }
    let t = line.trim_start();
    let lead = line.len() - t.len();
    let bytes = t.as_bytes();
    let (number, width, marker) = match *bytes.first()? {
        b @ (b'-' | b'*' | b'+') => (None, 1, b),
        b'0'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > 9 || !matches!(bytes.get(digits), Some(b'.' | b')')) {
                return None;
            }
            (Some(t[..digits].parse().ok()?), digits + 1, bytes[digits])
        }
        _ => return None,
    };
    let after = &line[lead + width..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let empty = is_blank(after);
    let marker_end = indent + width;
    let spaces = columns_from(after, marker_end) - marker_end;
    let content = if empty || spaces > 4 {
        marker_end + 1
    } else {
        marker_end + spaces
    };
    Some(ItemMarker {
        number,
        marker,
        content,
        empty,
        after,
        marker_end,
    })
}

/// Whether `line` starts a block that may interrupt a paragraph.
fn interrupts_paragraph(line: &str) -> bool {
    if columns(line) >= 4 {
        return false;
    }
    let t = line.trim_start();
    FenceMarker::parse_open(line).is_some()
        || atx_heading(line).is_some()
        || is_rule(line)
        || t.starts_with('>')
        || list_marker(line).is_some_and(|m| !m.empty && m.number.is_none_or(|n| n == 1))
}

/// The content lines of the block quote starting at `i` (markers removed; lazy
/// continuation lines kept) and the index after it.
fn quote_lines(lines: &[&str], mut i: usize) -> (Vec<String>, usize) {
    let mut inner: Vec<String> = Vec::new();
    let mut in_paragraph = false;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if columns(line) < 4 && t.starts_with('>') {
            let rest = &t[1..];
            let rest = rest.strip_prefix(' ').unwrap_or(rest);
            in_paragraph = !is_blank(rest) && !interrupts_paragraph(rest) && columns(rest) < 4
                || (in_paragraph && !is_blank(rest) && !interrupts_paragraph(rest));
            inner.push(rest.to_owned());
        } else if in_paragraph && !is_blank(line) && !interrupts_paragraph(line) {
            inner.push(line.to_owned());
        } else {
            break;
        }
        i += 1;
    }
    (inner, i)
}

/// The content lines of the list item starting at `i` and the index after it (trailing
/// blank lines are left to what follows).
fn item_lines(lines: &[&str], mut i: usize, item: &ItemMarker) -> (Vec<String>, usize) {
    let first = item.first();
    let mut in_paragraph = !item.empty && !interrupts_paragraph(&first) && columns(&first) < 4;
    let mut inner = vec![first];
    let mut last_blank = item.empty;
    i += 1;
    let mut end = i;
    let mut kept = 1;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            // An item that starts empty ends at its first blank line.
            if item.empty && kept == 1 && inner[0].is_empty() {
                break;
            }
            inner.push(String::new());
            last_blank = true;
            in_paragraph = false;
        } else if columns(line) >= item.content {
            let content = strip_columns(line, item.content);
            in_paragraph =
                !interrupts_paragraph(&content) && (in_paragraph || columns(&content) < 4);
            inner.push(content);
            last_blank = false;
            end = i + 1;
            kept = inner.len();
        } else if !last_blank
            && in_paragraph
            && !interrupts_paragraph(line)
            && list_marker(line).is_none()
        {
            inner.push(line.trim_start().to_owned());
            end = i + 1;
            kept = inner.len();
        } else {
            break;
        }
        i += 1;
    }
    inner.truncate(kept);
    (inner, end)
}

/// A GFM table starting at `i`: header row, delimiter row with as many cells, body rows up
/// to a blank line or a line that starts another block.
fn table(lines: &[&str], i: usize) -> Option<(Table, usize)> {
    let header_line = lines[i];
    // A header row holds a `|`.
    memchr::memchr(b'|', header_line.as_bytes())?;
    let delimiter = lines.get(i + 1)?;
    let align = delimiter_row(delimiter)?;
    let header = split_row(header_line);
    if header.len() != align.len() {
        return None;
    }
    let mut raw_rows = Vec::new();
    let mut j = i + 2;
    while j < lines.len() && !is_blank(lines[j]) && !interrupts_paragraph(lines[j]) {
        let mut cells = split_row(lines[j]);
        cells.resize(align.len(), String::new());
        raw_rows.push(cells);
        j += 1;
    }
    let source = lines[i..j].join("\n");
    let parse = |cells: &Vec<String>| cells.iter().map(|c| parse_inlines(c)).collect::<Vec<_>>();
    let rows = raw_rows.iter().map(parse).collect();
    let table = Table {
        align,
        header: parse(&header),
        rows,
        source,
        raw_header: header,
        raw_rows,
    };
    Some((table, j))
}

/// The cells of a table row: split at unescaped `|`, the outer pipes dropped, `\|` kept as
/// `|`, each cell trimmed.
fn split_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let bytes = t.as_bytes();
    let mut cells = Vec::new();
    // The cell read so far: `cell` (only once it holds an escaped pipe) then `t[from..i]`.
    let mut cell = String::new();
    let mut from = 0;
    let mut i = 0;
    let mut ended_with_pipe = false;
    while i < bytes.len() {
        ended_with_pipe = false;
        match bytes[i] {
            b'\\' if bytes.get(i + 1) == Some(&b'|') => {
                cell.push_str(&t[from..i]);
                cell.push('|');
                i += 2;
                from = i;
            }
            b'|' => {
                if cell.is_empty() {
                    cells.push(t[from..i].trim().to_owned());
                } else {
                    cell.push_str(&t[from..i]);
                    cells.push(cell.trim().to_owned());
                    cell.clear();
                }
                i += 1;
                from = i;
                ended_with_pipe = true;
            }
            _ => i += 1,
        }
    }
    cell.push_str(&t[from..]);
    if !ended_with_pipe || !cell.trim().is_empty() {
        cells.push(cell.trim().to_owned());
    }
    cells
}

/// The alignments of a delimiter row (`| :--- | ---: |`), if `line` is one.
fn delimiter_row(line: &str) -> Option<Vec<Align>> {
    if columns(line) >= 4 {
        return None;
    }
    let t = line.trim();
    if !t.contains('-') {
        return None;
    }
    let has_pipe = t.contains('|');
    let cells = split_row(t);
    if cells.len() < 2 && !has_pipe {
        return None;
    }
    cells
        .iter()
        .map(|c| {
            let left = c.starts_with(':');
            let right = c.ends_with(':') && c.len() > 1;
            let dashes = c.trim_start_matches(':').trim_end_matches(':');
            (!dashes.is_empty() && dashes.bytes().all(|b| b == b'-')).then_some(
                match (left, right) {
                    (true, true) => Align::Center,
                    (false, true) => Align::Right,
                    _ => Align::Left,
                },
            )
        })
        .collect()
}

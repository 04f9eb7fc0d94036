//! De-indenting a piece that starts inside deep list-item code (SPEC §15, containers).
//!
//! Under `1. ` a fence indented 4 spaces is a fence of the item; a message that starts
//! inside it (or at its opening line) has lost the item, and at the top level the same
//! lines read as indented code: the fence lines would show as code text. Such a piece is
//! shown as the item's content reads, every line de-indented by the columns of the item's
//! prefix ([`Block::dedent`](super::block::Block::dedent)). This is done once per piece,
//! when it is emitted, never per push.

use super::cut::Reopen;
use super::markdown::{FenceMarker, MarkdownScanner};

/// Columns to take off the lines of a piece that starts at byte `start` of the scanned
/// text: the container prefix of the fence the piece starts in or at, when the containers
/// are list items only (the prefix is spaces) and the fence would read as indented code
/// without them (prefix and indentation reach 4 columns). 0 otherwise.
///
/// A piece that starts at a line of a list item's paragraph indented 4 columns or more
/// (`text` is the scanned text), which the scanner, following the containers, does not
/// read as indented code, is de-indented by that line's indentation: shown with it, the
/// paragraph would read as indented code.
pub(crate) fn item_dedent(scanner: &MarkdownScanner, text: &str, start: usize) -> usize {
    let fence = scanner
        .fence_at(start)
        .or_else(|| scanner.fence_at(start + 1).filter(|f| f.start == start));
    if let Some(f) = fence {
        return deep_prefix(&f.marker);
    }
    let bytes = text.as_bytes();
    if start > 0 && bytes.get(start - 1) != Some(&b'\n') {
        return 0;
    }
    let own = bytes[start.min(bytes.len())..]
        .iter()
        .take_while(|&&b| b == b' ')
        .count();
    let content = bytes
        .get(start + own)
        .is_some_and(|b| !b" \t\r\n".contains(b));
    match own >= 4 && content && scanner.indented_at(start + own).is_none() {
        true => own,
        false => 0,
    }
}

/// The prefix columns of `marker` when they push it to 4 columns or more and hold only
/// spaces (list items alone); 0 otherwise.
///
/// Under a quote in list items (`     > ` before the fence) it is the spaces before the
/// first `>`, when they reach 4 columns (the `>` itself would read as indented code).
fn deep_prefix(marker: &FenceMarker) -> usize {
    let prefix = marker.prefix.as_str();
    let lead = prefix.bytes().take_while(|&b| b == b' ').count();
    match prefix.as_bytes().get(lead) {
        None if lead > 0 && lead + marker.indent >= 4 => lead,
        Some(b'>') if lead >= 4 => lead,
        _ => 0,
    }
}

/// Builds a piece's text as [`build_piece`](super::cut::build_piece) does, with every line
/// de-indented by up to `cols` columns (see [`Block::dedent`](super::block::Block::dedent)).
/// `line_start` says whether `source` starts a line of the original text. Returns the
/// byte lengths of the synthetic head and tail as shown.
pub(crate) fn build_dedented_piece(
    source: &str,
    line_start: bool,
    reopen: Option<Reopen<'_>>,
    close: Option<FenceMarker>,
    cols: usize,
    out: &mut String,
) -> (usize, usize) {
    let mut head = String::new();
    if let Some(r) = reopen {
        r.push_to(&mut head);
    }
    dedent_into(&head, cols, true, out);
    let head_len = out.len();
    let source_at_line_start = match head.is_empty() {
        true => line_start,
        false => line_start && head.ends_with('\n'),
    };
    let left = dedent_into(source, cols, source_at_line_start, out);
    let before = out.len();
    if let Some(m) = close {
        let mut tail = String::from("\n");
        m.push_close(&mut tail);
        match left {
            true => out.push_str(&tail),
            false => _ = dedent_into(&tail, cols, false, out),
        }
    }
    (head_len, out.len() - before)
}

/// Appends `text` with up to `cols` leading columns of spaces and tabs taken off each line
/// that starts in it (its first line too when `at_line_start`).
///
/// The first line that starts in `text` with some content and fewer than `cols` columns of
/// indentation has left the item: it and every line after it keep their indentation.
/// Returns whether that happened (the caller stops de-indenting what follows).
pub(crate) fn dedent_into(text: &str, cols: usize, at_line_start: bool, out: &mut String) -> bool {
    let mut first = true;
    let mut left = false;
    for line in text.split_inclusive('\n') {
        if left || (first && !at_line_start) {
            out.push_str(line);
        } else if leaves(line, cols) {
            left = true;
            out.push_str(line);
        } else {
            let bytes = line.as_bytes();
            let (mut col, mut i) = (0, 0);
            while i < bytes.len() && col < cols {
                let next = match bytes[i] {
                    b'\t' => col + 4 - col % 4,
                    b' ' => col + 1,
                    _ => break,
                };
                i += 1;
                if next > cols {
                    out.extend(std::iter::repeat_n(' ', next - cols));
                }
                col = next;
            }
            out.push_str(&line[i..]);
        }
        first = false;
    }
    left
}

/// Whether `line` has content indented fewer than `cols` columns.
fn leaves(line: &str, cols: usize) -> bool {
    let mut col = 0;
    for b in line.bytes() {
        match b {
            b' ' => col += 1,
            b'\t' => col += 4 - col % 4,
            b'\n' | b'\r' => return false,
            _ => return col < cols,
        }
        if col >= cols {
            return false;
        }
    }
    false
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
            "```sh\n  x\n  y\nz"
        );
        assert_eq!(dedent("ab  \n    c", 4, false), "ab  \nc");
        assert_eq!(dedent("\tx\n  \tx", 3, true), " x\n x");
        // A line with content indented less has left the item: the rest keeps its own.
        assert_eq!(dedent("    a\n  b\n    c", 4, true), "a\n  b\n    c");
        assert_eq!(dedent("\n\n   \r\n", 2, true), "\n\n \r\n");
    }
}

//! Whether a line is indented code: the look-back that decides it without a scanner.

use super::lines::*;
use super::spans::*;

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

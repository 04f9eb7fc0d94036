//! List items that a piece must not show right after paragraph text it starts in.
//!
//! CommonMark lets a list item interrupt a paragraph only when it may start a list there: a
//! bullet or a `1.` item, with text. In the reply, `5. Shape` right after a line of item 4's
//! paragraph is the next item of item 4's list, which is open. A piece that starts after that
//! list's earlier items (inside item 4: in its paragraph, in a nested list, after a cut in
//! its first line) shows the paragraph text at its top level, and then `5. Shape` reads as
//! that paragraph's continuation: its number shows as text. No synthetic text can fix that at
//! the piece's edges without showing a marker the reply does not (an item marker, a quote
//! bar), so the piece ends before such an item instead: see
//! [`MarkdownScanner::list_cut`].

use super::MarkdownScanner;
use super::spans::FenceSpan;

/// The column and the kind of the list marker that starts `line` (after spaces, tabs and
/// quote markers), if it starts with one: `-`, `*`, `+`, or 1 to 9 digits and `.` or `)`,
/// then a space, a tab or the line's end. The kind is the bullet char or the ordered
/// marker's delimiter: an item goes on only with a list of its own kind. Also the marker's
/// byte offset in `line` (a position inside the line's code, when the line is code).
fn marker_column(line: &[u8]) -> Option<(usize, u8, usize)> {
    let mut col = 0;
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        match b {
            b' ' | b'>' => col += 1,
            b'\t' => col += 4 - col % 4,
            _ => break,
        }
        i += 1;
    }
    let digits = line[i..]
        .iter()
        .take(10)
        .take_while(|b| b.is_ascii_digit())
        .count();
    let (len, kind) = match *line.get(i)? {
        b @ (b'-' | b'*' | b'+') => (1, b),
        _ if (1..=9).contains(&digits) && matches!(line.get(i + digits), Some(b'.' | b')')) => {
            (digits + 1, line[i + digits])
        }
        _ => return None,
    };
    matches!(line.get(i + len), None | Some(b' ' | b'\t' | b'\r' | b'\n')).then_some((col, kind, i))
}

/// Where the first line that may be a fence line starts (the text's length if none): a
/// run of 3 or more backticks or tildes after only spaces, tabs, quote markers and list
/// marker chars on its line. No code block opens before it but indented code.
fn first_fence_run(text: &[u8]) -> usize {
    for at in memchr::memchr2_iter(b'`', b'~', text) {
        let run = text[at..].iter().take_while(|&&b| b == text[at]).count();
        let line = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
        let lead = |b: &u8| {
            matches!(
                b,
                b' ' | b'\t' | b'>' | b'-' | b'*' | b'+' | b'.' | b')' | b'0'..=b'9'
            )
        };
        if run >= 3 && text[line..at].iter().all(lead) {
            return line;
        }
    }
    text.len()
}

/// Whether a message that shows `shown` and then the list item line `item` (one that goes on
/// with a list begun before it, see the module docs) has that list open there: `shown` holds
/// a line starting with a list marker of the item's kind at the item's column or left of it,
/// outside code. `shown` is read as the message renders it, on its own: a line of a fenced
/// or an indented code block that looks like a marker (`1. listen on port 8080` in a fence)
/// opens no list. The scanner reads `shown`, up to the first such line outside code, only
/// when one may be code: indented 4 columns or more, or after a line that may be a fence
/// line (the coalescer asks this for a block that continues a list, not per delta).
pub(crate) fn shows_list_for(shown: &str, item: &str) -> bool {
    let Some((col, kind, _)) = marker_column(item.as_bytes()) else {
        return true;
    };
    let fence_from = first_fence_run(shown.as_bytes());
    let mut scanner: Option<MarkdownScanner> = None;
    let mut line = 0;
    for text in shown.split_inclusive('\n') {
        let start = line;
        line += text.len();
        let Some((c, k, at)) = marker_column(text.as_bytes()) else {
            continue;
        };
        if k != kind || c > col {
            continue;
        }
        if c < 4 && start < fence_from {
            return true;
        }
        // Read up to this line's end (incrementally, the lines before read once).
        let scanner = scanner.get_or_insert_with(MarkdownScanner::new);
        match text.ends_with('\n') {
            true => scanner.scan(&shown[..line]),
            false => scanner.finish(shown),
        }
        // Probed at the marker: a cut there falls inside the code holding the line (an
        // indented block's first line too, which starts at the line's start).
        let p = start + at;
        if scanner.fence_at(p).is_none() && scanner.indented_at(p).is_none() {
            return true;
        }
    }
    false
}

impl MarkdownScanner {
    /// Whether the line starting at `p` is a list item that goes on with a list open
    /// before it right after paragraph text, and could not start a list there.
    pub(crate) fn continues_list_at(&self, p: usize) -> bool {
        self.inline.list_items().binary_search(&p).is_ok()
    }

    /// Where a piece starting at `start` must end at the latest, when it holds (at or
    /// before `to`) a list item that goes on with a list open before `start` right after
    /// paragraph text and could not start a list there (see the module docs): the piece's
    /// end, just past the text before that item's line, and the item line's start (the
    /// separator runs between them). An item whose list the piece opens itself (an earlier
    /// item marker line of the piece, of its kind, at its column or left of it, as the piece
    /// shows them) is no such item. Cost: a lookup, and the lines of `text[start..to]` only
    /// when such an item lies there.
    ///
    /// Also where a fence in list items that a line leaving its item ends (no closing line)
    /// ends, at or before `to` (see [`MarkdownScanner::fence_end_cut`]).
    pub(crate) fn list_cut(&self, text: &str, start: usize, to: usize) -> Option<(usize, usize)> {
        let item = self.item_cut(text, start, to);
        match self.fence_end_cut(text, start, to) {
            Some(f) if item.is_none_or(|i| f.0 < i.0) => Some(f),
            _ => item,
        }
    }

    /// Where a piece starting at `start` must end at the latest because a fence of a list
    /// item (not in a quote) ends in it with a line that leaves the item (CommonMark
    /// ends the fence there, with no closing line): the fence's end, and the start of that
    /// line. A piece that lost the container (it starts inside the fence, or after the
    /// item's marker line) reads the fence at its top level, where no line leaves it: the
    /// line and the text after it would show as code. No synthetic line can stand in the
    /// middle of a piece, so the piece ends there. A piece whose first line opens
    /// containers itself (a list marker or a `>` starts it) or stands outside list items is
    /// taken to hold the fence's containers, and goes on. Cost: a lookup among the fences
    /// that end after `start`.
    fn fence_end_cut(&self, text: &str, start: usize, to: usize) -> Option<(usize, usize)> {
        let fences = self.fences();
        let upto = fences.partition_point(|f| f.start < to);
        let bytes = text.as_bytes();
        // Asked only when such a fence lies in the piece.
        let holds_containers = || {
            let line = &bytes[start..];
            let first = line.iter().find(|&&b| b != b' ' && b != b'\t');
            (start == 0 || bytes[start - 1] == b'\n')
                && (first == Some(&b'>')
                    || marker_column(line).is_some()
                    || self.item_column_at(start) == 0)
        };
        let mut cut = None;
        for f in fences[..upto].iter().rev() {
            let Some(end) = f.end else { continue };
            if end <= start {
                break;
            }
            // Ended by its container (its end is where its last line with content ends),
            // in list items alone: a fence in a quote is reopened with the quote's
            // markers, so the piece keeps the quote and the line that leaves it ends the
            // fence there too.
            if end != f.close_start || end >= to || f.marker.prefix.as_str().contains('>') {
                continue;
            }
            // A piece that would hold the fence's opening line alone is no better: it goes
            // on as before.
            let opening_alone = start >= f.start && end <= f.open_end;
            if opening_alone || (start <= f.start && holds_containers()) {
                continue;
            }
            let next = memchr::memchr(b'\n', &bytes[end..]).map_or(bytes.len(), |k| end + k + 1);
            // Only whitespace (or `>` markers) after it: nothing the piece shows reads
            // otherwise, and alone it would be no message.
            let shown = |b: &u8| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'>');
            if bytes[next.min(to)..to].iter().any(shown) {
                cut = Some((end, next));
            }
        }
        cut
    }

    /// Whether a fence of list items (not in a quote) that a line leaving its item ends,
    /// with no closing line, ends at `end` (see [`MarkdownScanner::fence_end_cut`]): a
    /// piece ending there that lost the item showed the fence open to its end, so the text
    /// after it must not join that piece. Cost: a lookup.
    pub(crate) fn item_fence_ends_at(&self, end: usize) -> bool {
        self.item_fence_ending_at(end).is_some()
    }

    /// The fence [`MarkdownScanner::item_fence_ends_at`] finds at `end`.
    pub(crate) fn item_fence_ending_at(&self, end: usize) -> Option<&FenceSpan> {
        // The candidate is the last fence starting before `end`: most often the last of
        // all (blocks end after the fences read so far), found without a search.
        let fences = self.fences();
        let f = match fences.last() {
            Some(f) if f.start < end => Some(f),
            _ => fences[..fences.partition_point(|f| f.start < end)].last(),
        };
        // (Only a fence in containers is ended by one: a fence's `close_start` and `end`
        // otherwise meet only where a drained fence's positions were cut to 0.)
        f.filter(|f| {
            f.depth > 0
                && f.end == Some(end)
                && f.close_start == end
                && !f.marker.prefix.as_str().contains('>')
        })
    }

    /// The fence a piece that ends at `end` closes with a synthetic
    /// closing line although no cut falls inside it: one its list item's end ended right at
    /// `end` (see [`MarkdownScanner::item_fence_ends_at`]), with code (the piece shows code
    /// of it, or ends in its opening line's container otherwise: a piece ends there only
    /// after some of it).
    /// CommonMark shows such a fence's code to the message's end, but a platform that needs
    /// the closing line (Discord) shows its fence lines as text without it. Nothing reopens
    /// it: the fence is over.
    pub(crate) fn fence_to_close_at_end(&self, end: usize) -> Option<&FenceSpan> {
        self.item_fence_ending_at(end).filter(|f| f.open_end < end)
    }

    /// [`MarkdownScanner::list_cut`] for list items.
    fn item_cut(&self, text: &str, start: usize, to: usize) -> Option<(usize, usize)> {
        let all = self.inline.list_items();
        let items = &all[all.partition_point(|&l| l <= start)..];
        if items.first().is_none_or(|&l| l > to) {
            return None;
        }
        let bytes = text.as_bytes();
        // The leftmost marker column of each kind among the piece's lines seen so far
        // (outside code): bullets `-`, `*`, `+`, ordered `.`, `)`.
        const KINDS: [u8; 5] = [b'-', b'*', b'+', b'.', b')'];
        let mut leftmost = [usize::MAX; 5];
        let slot = |kind: u8| KINDS.iter().position(|&k| k == kind).unwrap_or(0);
        let mut line = start;
        for &item in items.iter().take_while(|&&l| l <= to && l < bytes.len()) {
            while line < item {
                let end = memchr::memchr(b'\n', &bytes[line..item]).map_or(item, |k| line + k + 1);
                if let Some((col, kind, at)) = marker_column(&bytes[line..end])
                    && self.fence_at(line + at).is_none()
                    && self.indented_at(line + at).is_none()
                {
                    leftmost[slot(kind)] = leftmost[slot(kind)].min(col);
                }
                line = end;
            }
            let (col, kind, _) = marker_column(&bytes[item..]).unwrap_or((0, b'.', 0));
            if leftmost[slot(kind)] <= col {
                continue;
            }
            let mut end = item;
            while end > start && crate::text::cut::is_ws(bytes[end - 1]) {
                end -= 1;
            }
            return (end > start).then_some((end, item));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, start: usize) -> Option<(usize, usize)> {
        let mut s = MarkdownScanner::new();
        s.finish(text);
        s.list_cut(text, start, text.len())
    }

    #[test]
    fn an_item_after_a_piece_started_in_the_item_before() {
        let text = "1. a\n2. b\n   more b\n3. c\n";
        let at = text.find("more").unwrap();
        let item = text.find("3.").unwrap();
        assert_eq!(cut(text, at), Some((item - 1, item)));
        // A piece that holds item 2's marker line has the list open.
        assert_eq!(cut(text, text.find("2.").unwrap()), None);
        // Item 2 goes on with item 1's list: a piece starting in item 1 ends before it.
        assert_eq!(cut(text, 3), Some((4, 5)));
    }

    #[test]
    fn crlf_and_nested_lists() {
        let text = "1) a\r\n   - x\r\n   - y\r\n2) b\r\n";
        let item = text.find("2)").unwrap();
        // From the nested bullet list (shown from its marker, at the piece's column 0): a
        // bullet list does not go on with `2)`.
        let y = text.find("- y").unwrap();
        assert_eq!(cut(text, y), Some((item - 2, item)));
        assert_eq!(cut(text, 0), None);
        // `2)` after a `1.` list's paragraph starts a list of its own in the reply (the `1.`
        // list is open there); a piece that shows only the `1.` list still ends before it.
        let text = "1) a\n   b\n1. c\n2) d\n";
        let item = text.find("2)").unwrap();
        assert_eq!(cut(text, 8), Some((item - 1, item)));
    }

    #[test]
    fn items_that_may_interrupt_a_paragraph_are_no_such_items() {
        assert_eq!(cut("- a\n  b\n- c\n", 6), None);
        assert_eq!(cut("1. a\n   b\n1. c\n", 8), None);
        // Not in a list: the line is the paragraph's text in the reply too.
        assert_eq!(cut("a\n2. b\n", 0), None);
    }

    #[test]
    fn code_lines_that_look_like_markers_open_no_list() {
        assert!(shows_list_for("1. a\n", "3. c"));
        assert!(!shows_list_for("```\n1. a\n```\ntext", "3. c"));
        assert!(!shows_list_for("~~~\r\n1. a\r\n~~~\r\ntext", "3. c"));
        // The first line of an indented code block, and a later one.
        assert!(!shows_list_for(
            "Intro:\n\n    1. a\n    2. b\n\ntext",
            "    3. c"
        ));
        // A real marker after the code counts.
        assert!(shows_list_for("```\n1. a\n```\n1. b\n   text", "3. c"));
        // Another kind, or a column right of the item's, never did.
        assert!(!shows_list_for("1) a\n   - b\n", "3. c"));
    }

    #[test]
    fn markers_are_read_after_indentation_and_quotes() {
        assert_eq!(marker_column(b"> 12. x"), Some((2, b'.', 2)));
        assert_eq!(marker_column(b"\t- x"), Some((4, b'-', 1)));
        assert_eq!(marker_column(b"-x"), None);
        assert_eq!(marker_column(b"1234567890. x"), None);
        assert_eq!(marker_column(b"3)"), Some((0, b')', 0)));
    }
}

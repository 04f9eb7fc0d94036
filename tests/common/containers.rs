//! The tests' own reading of fenced code blocks inside CommonMark container blocks (list
//! items and block quotes), written apart from the library's scanner: whole lines at a time,
//! columns counted up front.
//!
//! For each line it tells where the content starts once the containers' prefixes are read
//! (a quote's `>` and one space, a list item's content column), and which fences there are:
//! opened at up to 3 columns into their container's content, closed by a closing line that
//! carries the same containers, or ended by a line that leaves one of them (CommonMark
//! closes the fence with its container; code is never a lazy continuation).

/// A fence marker: character, length, indentation within its container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Marker {
    pub(crate) ch: u8,
    pub(crate) len: usize,
    pub(crate) indent: usize,
}

/// A fenced code block in byte offsets of the text read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    /// Start of the opening line (its container prefix included).
    pub(crate) open_start: usize,
    /// Where the opening line's content (after the container prefix) starts.
    pub(crate) open_content: usize,
    /// End of the opening line (before its `\n`).
    pub(crate) open_end: usize,
    pub(crate) marker: Marker,
    /// How many containers it lies in.
    pub(crate) depth: usize,
    /// Start of its closing line, when a closing line closes it.
    pub(crate) close_start: Option<usize>,
    /// End of the closing marker run, or, when a line leaving its containers ends it, the
    /// end of its last line. `None` while open at the end of the text.
    pub(crate) end: Option<usize>,
    /// A line leaving its containers ended it (no closing line).
    pub(crate) by_container: bool,
}

/// One line's reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Line {
    pub(crate) start: usize,
    /// Before the `\n` (a `\r` included).
    pub(crate) end: usize,
    /// Where the content starts, past the container prefixes.
    pub(crate) content: usize,
    /// An opening or closing fence line.
    pub(crate) fence_line: bool,
    /// The content column of the innermost list item the line lies in, lazily or not,
    /// when every container it lies in is a list item (0 otherwise).
    pub(crate) item: usize,
    /// The content columns of the list items around that innermost one (before any quote),
    /// nearest first, at most 3 (0: none): the columns of de-indentation that a block
    /// started in one of them may still have in force on this line.
    pub(crate) outer_items: [usize; 3],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cont {
    Quote,
    /// A list item whose content starts at this column.
    Item(usize),
}

/// The columns of `line` (bytes) from byte `i` at column `col`: (columns of whitespace, the
/// byte after it).
fn ws(line: &[u8], mut i: usize, mut col: usize) -> (usize, usize) {
    let from = col;
    while i < line.len() && (line[i] == b' ' || line[i] == b'\t') {
        col += if line[i] == b'\t' { 4 - col % 4 } else { 1 };
        i += 1;
    }
    (col - from, i)
}

/// Moves from byte `i` (column `col`, `extra` columns of a tab already taken) over `n`
/// columns of whitespace: (byte, column, columns of the last tab left over).
fn take(
    line: &[u8],
    mut i: usize,
    mut col: usize,
    extra: usize,
    n: usize,
) -> (usize, usize, usize) {
    let mut left = n;
    let mut over = extra;
    if over > 0 {
        let used = over.min(left);
        over -= used;
        left -= used;
    }
    while left > 0 && i < line.len() {
        let w = if line[i] == b'\t' { 4 - col % 4 } else { 1 };
        col += w;
        i += 1;
        if w > left {
            over = w - left;
            left = 0;
        } else {
            left -= w;
        }
    }
    (i, col, over)
}

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `line` as an opening fence line, with `extra` columns of indentation before it.
pub(crate) fn opener_at(line: &[u8], extra: usize) -> Option<Marker> {
    let line = strip_cr(line);
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    if indent + extra > 3 {
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
    Some(Marker { ch, len, indent })
}

/// The length of the closing marker run when `line` closes a fence with marker `m`.
fn closer(m: Marker, line: &[u8]) -> Option<usize> {
    let line = strip_cr(line);
    let indent = line.iter().take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return None;
    }
    let len = line[indent..].iter().take_while(|&&b| b == m.ch).count();
    (len >= m.len
        && line[indent + len..]
            .iter()
            .all(|&b| b == b' ' || b == b'\t'))
    .then_some(indent + len)
}

/// A list marker at the start of `rest`: its byte length, and whether it may interrupt a
/// paragraph (a bullet, or the number 1).
fn list_marker(rest: &[u8]) -> Option<(usize, bool)> {
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let len = match rest.first()? {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' if digits <= 9 && matches!(rest.get(digits), Some(b'.' | b')')) => digits + 1,
        _ => return None,
    };
    match rest.get(len) {
        None | Some(b' ' | b'\t' | b'\r') => Some((len, len == 1 || &rest[..digits] == b"1")),
        _ => None,
    }
}

fn thematic_break(rest: &[u8]) -> bool {
    let rest = strip_cr(rest);
    let Some(&c) = rest.first() else { return false };
    matches!(c, b'-' | b'*' | b'_')
        && rest.iter().all(|&b| b == c || b == b' ' || b == b'\t')
        && rest.iter().filter(|&&b| b == c).count() >= 3
}

fn blank(rest: &[u8]) -> bool {
    rest.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Reads `text`, whose lines end at each `\n` and also at each of `line_ends` (where a
/// forced flush ended a line in its middle).
pub(crate) fn read(text: &str, line_ends: &[usize]) -> (Vec<Line>, Vec<Fence>) {
    let mut lines = Vec::new();
    let mut at = 0;
    for piece in text.split('\n') {
        let end = at + piece.len();
        let mut from = at;
        for &p in line_ends.iter().filter(|&&p| p > at && p < end) {
            lines.push((from, p));
            from = p;
        }
        lines.push((from, end));
        at = end + 1;
    }
    let bytes = text.as_bytes();
    let mut stack: Vec<Cont> = Vec::new();
    let mut fences: Vec<Fence> = Vec::new();
    let mut open: Option<Fence> = None;
    let mut paragraph = false;
    let mut out = Vec::new();
    for (start, end) in lines {
        let line = &bytes[start..end];
        // The containers the line carries.
        let (mut i, mut col, mut over) = (0, 0, 0);
        let mut matched = 0;
        // In a fence, only its own containers' prefixes come before its lines.
        let carried = open.map_or(stack.len(), |f| f.depth.min(stack.len()));
        for c in &stack[..carried] {
            let (w, next) = ws(line, i, col);
            let w = w + over;
            match c {
                Cont::Quote => {
                    if w > 3 || line.get(next) != Some(&b'>') {
                        break;
                    }
                    (_, col, _) = take(line, i, col, over, w - over.min(w));
                    i = next + 1;
                    col += 1;
                    over = 0;
                    if line.get(i) == Some(&b' ') {
                        i += 1;
                        col += 1;
                    } else if line.get(i) == Some(&b'\t') {
                        (i, col, over) = take(line, i, col, 0, 1);
                    }
                }
                Cont::Item(content) => {
                    if blank(&line[next..]) {
                        i = next;
                        over = 0;
                    } else if col + w >= *content {
                        (i, col, over) = take(line, i, col, over, *content - col.min(*content));
                    } else {
                        break;
                    }
                }
            }
            matched += 1;
        }
        if let Some(mut f) = open {
            if matched >= f.depth {
                let content = &line[i..];
                if let Some(run) = closer(f.marker, content) {
                    f.close_start = Some(start);
                    f.end = Some(start + i + run);
                    fences.push(f);
                    open = None;
                    out.push(Line {
                        start,
                        end,
                        content: start + i,
                        fence_line: true,
                        item: item_of(&stack),
                        outer_items: outer_items_of(&stack),
                    });
                    paragraph = false;
                    continue;
                }
                out.push(Line {
                    start,
                    end,
                    content: start + i,
                    fence_line: false,
                    item: item_of(&stack),
                    outer_items: outer_items_of(&stack),
                });
                continue;
            }
            // The line leaves the fence's containers: the fence ends with its last line.
            // (A line that a forced flush ended has no `\n`: it ends where the next starts.)
            let newline = start > 0 && bytes[start - 1] == b'\n';
            // (Its `\r` is no part of it, the opening line's too when that is its last.)
            let mut last = (start - usize::from(newline)).max(f.open_end);
            if last > f.open_start && bytes[last - 1] == b'\r' {
                last -= 1;
            }
            f.end = Some(last);
            f.by_container = true;
            fences.push(f);
            open = None;
            paragraph = false;
        }
        // Containers the line opens.
        let mut opened = false;
        let mut depth = matched;
        loop {
            let (w, next) = ws(line, i, col);
            if w + over > 3 {
                break;
            }
            let rest = &line[next..];
            if rest.first() == Some(&b'>') {
                stack.truncate(depth);
                stack.push(Cont::Quote);
                depth += 1;
                opened = true;
                (_, col, _) = take(line, i, col, over, w);
                i = next + 1;
                col += 1;
                over = 0;
                if line.get(i) == Some(&b' ') {
                    i += 1;
                    col += 1;
                } else if line.get(i) == Some(&b'\t') {
                    (i, col, over) = take(line, i, col, 0, 1);
                }
                continue;
            }
            if thematic_break(rest) {
                break;
            }
            let Some((len, may_interrupt)) = list_marker(rest) else {
                break;
            };
            let empty = blank(&rest[len..]);
            if paragraph && matched == stack.len() && depth == matched && (empty || !may_interrupt)
            {
                break;
            }
            (_, col, _) = take(line, i, col, over, w);
            i = next + len;
            col += len;
            over = 0;
            let (after, _) = ws(line, i, col);
            let spaces = if empty || after > 4 { 1 } else { after };
            if empty {
                col += 1;
                i = ws(line, i, col).1;
            } else {
                (i, col, over) = take(line, i, col, 0, spaces);
            }
            stack.truncate(depth);
            stack.push(Cont::Item(col - over));
            depth += 1;
            opened = true;
            if empty {
                break;
            }
        }
        let rest = &line[i..];
        if !opened && matched < stack.len() {
            let (w, next) = ws(line, i, col);
            let interrupts = w + over < 4
                && (opener_at(&line[next..], 0).is_some()
                    || thematic_break(&line[next..])
                    || line[next..].starts_with(b"#"));
            if !(paragraph && !blank(rest) && !interrupts) {
                stack.truncate(matched);
            }
        }
        let (w, next) = ws(line, i, col);
        let marker = opener_at(&line[i..], over).filter(|_| w + over < 4);
        // A fence in list items alone (no quote) that reads as a fence at the top level too
        // (3 spaces at most) keeps the top-level reading: a message that lost the items
        // shows it that way (the library's documented rule).
        let top = opener_at(line, 0).filter(|_| !line[..i].contains(&b'>'));
        match marker {
            Some(m) => {
                let (m, i, depth) = match top {
                    Some(t) => (t, 0, 0),
                    None => (m, i, stack.len()),
                };
                open = Some(Fence {
                    open_start: start,
                    open_content: start + i,
                    open_end: end,
                    marker: m,
                    depth,
                    close_start: None,
                    end: None,
                    by_container: false,
                });
                paragraph = false;
                out.push(Line {
                    start,
                    end,
                    content: start + i,
                    fence_line: true,
                    item: item_of(&stack),
                    outer_items: outer_items_of(&stack),
                });
            }
            None => {
                let heading = w + over < 4 && rest[next - i..].starts_with(b"#");
                // Indented code (4 columns past the content of its containers, where no
                // paragraph goes on: indented code cannot interrupt one) is no paragraph:
                // a line after it that leaves a container is no lazy continuation.
                let code = (opened || !paragraph) && w + over >= 4 && !blank(rest);
                paragraph = !blank(rest) && !heading && !code;
                out.push(Line {
                    start,
                    end,
                    content: start + i,
                    fence_line: false,
                    item: item_of(&stack),
                    outer_items: outer_items_of(&stack),
                });
            }
        }
    }
    fences.extend(open);
    (out, fences)
}

/// The content column of the innermost item of `stack` when it holds list items alone.
fn item_of(stack: &[Cont]) -> usize {
    match stack.contains(&Cont::Quote) {
        true => 0,
        false => stack.last().map_or(0, |c| match c {
            Cont::Item(col) => *col,
            Cont::Quote => 0,
        }),
    }
}

/// [`Line::outer_items`] for the containers `stack` (outermost first).
fn outer_items_of(stack: &[Cont]) -> [usize; 3] {
    let items: Vec<usize> = stack
        .iter()
        .map_while(|c| match c {
            Cont::Item(col) => Some(*col),
            Cont::Quote => None,
        })
        .collect();
    let mut out = [0; 3];
    let outer = &items[..items.len().saturating_sub(1)];
    for (slot, &col) in out.iter_mut().zip(outer.iter().rev()) {
        *slot = col;
    }
    out
}

/// The fence still open at the end of `text`, if any.
pub(crate) fn open_at_end(text: &str) -> Option<Fence> {
    read(text, &[]).1.into_iter().find(|f| f.end.is_none())
}

/// A de-indentation: `cols` columns taken off each line, after its first `quotes` quote
/// markers (`Block::dedent`, `Block::dedent_quotes`; 0 quotes: a line's leading columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dedent {
    pub(crate) cols: usize,
    pub(crate) quotes: usize,
}

impl From<usize> for Dedent {
    fn from(cols: usize) -> Dedent {
        Dedent { cols, quotes: 0 }
    }
}

/// What a block de-indented by `d` shows for `source` ([`dedent_lines`], or
/// [`dedent_after_quotes`] after quote markers).
pub(crate) fn dedent_view(source: &str, d: Dedent, first_starts_line: bool) -> String {
    dedent_view_to(source, d, first_starts_line).0
}

/// [`dedent_view`], with what is still in force at the end of `source`.
pub(crate) fn dedent_view_to(source: &str, d: Dedent, first_starts_line: bool) -> (String, Dedent) {
    match d.quotes {
        0 => {
            let (view, cols) = dedent_lines_to(source, d.cols, first_starts_line);
            (view, Dedent { cols, quotes: 0 })
        }
        quotes => {
            let (view, cols) = dedent_after_quotes_to(source, d.cols, quotes, first_starts_line);
            (view, Dedent { cols, quotes })
        }
    }
}

/// What a block de-indented by `cols` columns (`Block::dedent`) shows for `source`, read
/// here on its own: each line that starts in `source` (the first one only when
/// `first_starts_line`) loses up to `cols` columns of leading spaces and tabs (a tab to the
/// next multiple of 4; spaces stand for the columns a tab reaches past `cols`); a line
/// whose content is indented fewer than `cols` columns has left the item, and from it on
/// `cols` is its indentation.
#[allow(dead_code)]
pub(crate) fn dedent_lines(source: &str, cols: usize, first_starts_line: bool) -> String {
    dedent_lines_to(source, cols, first_starts_line).0
}

/// [`dedent_lines`], with the columns still in force at the end of `source` (lowered by
/// every line that left the item).
pub(crate) fn dedent_lines_to(
    source: &str,
    cols: usize,
    first_starts_line: bool,
) -> (String, usize) {
    let mut cols = cols;
    let mut out = String::new();
    for (i, line) in source.split_inclusive('\n').enumerate() {
        if i == 0 && !first_starts_line {
            out.push_str(line);
            continue;
        }
        let ws: String = line
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let rest = &line[ws.len()..];
        let mut widths = Vec::new();
        let mut col = 0;
        for c in ws.chars() {
            let next = if c == '\t' {
                (col / 4 + 1) * 4
            } else {
                col + 1
            };
            widths.push((col, next));
            col = next;
        }
        if !rest.trim_end_matches(['\r', '\n']).is_empty() {
            cols = cols.min(col);
        }
        // Columns past `cols` stay, as spaces where a tab straddles the limit.
        for (c, (from, to)) in ws.chars().zip(widths) {
            if from >= cols {
                out.push(c);
            } else if to > cols {
                out.extend(std::iter::repeat_n(' ', to - cols));
            }
        }
        out.push_str(rest);
    }
    (out, cols)
}

/// What `b` must show between its synthetic edges for its source in `text`: the source
/// itself, or, for a de-indented block, the source de-indented ([`dedent_lines`]; its first
/// line counts when the source starts a line and no synthetic head runs into it).
#[allow(dead_code)]
pub(crate) fn expected_shown(text: &str, b: &replystream::Block) -> String {
    let source = &text[b.source.clone()];
    if b.dedent == 0 {
        return source.to_owned();
    }
    let at_line = b.source.start == 0 || text.as_bytes()[b.source.start - 1] == b'\n';
    let head_ends_line = b.head_len == 0 || b.text[..b.head_len].ends_with('\n');
    if b.dedent_quotes > 0 {
        let d = Dedent {
            cols: b.dedent,
            quotes: b.dedent_quotes,
        };
        return dedent_view(source, d, at_line && head_ends_line);
    }
    dedent_lines(source, b.dedent, at_line && head_ends_line)
}

/// What a block de-indented by `cols` columns after `quotes` quote markers
/// (`Block::dedent_quotes`) shows for `source`: each line that starts in it (the first only
/// when `first_starts_line`) keeps its first `quotes` markers (each after at most 3 spaces,
/// with one space after it) and loses up to `cols` columns after them, as [`dedent_lines`]
/// takes them; a line without those markers has left the quote, and from it on the lines
/// are shown as written.
fn dedent_after_quotes_to(
    source: &str,
    cols: usize,
    quotes: usize,
    first_starts_line: bool,
) -> (String, usize) {
    let mut cols = cols;
    let mut out = String::new();
    for (i, line) in source.split_inclusive('\n').enumerate() {
        if (i == 0 && !first_starts_line) || cols == 0 {
            out.push_str(line);
            continue;
        }
        let mut kept = 0;
        for _ in 0..quotes {
            let rest = &line[kept..];
            let lead = rest.len() - rest.trim_start_matches(' ').len();
            if lead > 3 || !rest[lead..].starts_with('>') {
                kept = usize::MAX;
                break;
            }
            kept += lead + 1;
            if line[kept..].starts_with(' ') {
                kept += 1;
            }
        }
        if kept == usize::MAX {
            cols = 0;
            out.push_str(line);
            continue;
        }
        out.push_str(&line[..kept]);
        let (rest, left) = dedent_lines_to(&line[kept..], cols, true);
        cols = left;
        out.push_str(&rest);
    }
    (out, cols)
}

//! CommonMark container blocks: list items and block quotes, nested.
//!
//! A fence or an indented code block inside a container is recognised relative to the
//! container's content, not to the line's start: under `- ` a fence may stand at up to 5
//! spaces, under `1. ` at up to 6, after `> ` at up to 3 more. This reader follows the
//! containers open at each line and says where the line's content starts.
//!
//! - A block quote goes on on a line that carries its `>` (after at most 3 spaces), or, as a
//!   lazy continuation, on a paragraph line that carries no `>` while a paragraph is open in
//!   it. A fence in a quote is no paragraph: a line without the `>` ends the quote, and the
//!   fence with it.
//! - A list item (`-`, `*`, `+`, or 1 to 9 digits and `.` or `)`, then 1 to 4 spaces or a
//!   tab) has a content column: its marker's width plus the spaces after it (one when five or
//!   more follow, or none; then the rest is indented code). It goes on on a blank line and
//!   on a line indented at least that far; otherwise only as a lazy continuation.
//!
//! Limits that keep the reader small and allocation free: at most [`MAX_DEPTH`] containers
//! are followed (deeper markers are read as text), and a fence's container prefix, which its
//! synthetic closing and reopening lines repeat, holds at most [`PREFIX_CAP`] bytes (a fence
//! under a longer prefix is read as text, as it was before containers were read). A tab in a
//! container's indentation counts to the next multiple of 4 columns and is taken whole.

/// The most containers followed at once.
pub(crate) const MAX_DEPTH: usize = 8;

/// The longest container prefix (in bytes) a fence can carry; see [`ContainerPrefix`].
pub(crate) const PREFIX_CAP: usize = 22;

/// The container prefix of a fence's opening line, as its synthetic closing and reopening
/// lines show it: the bytes before the fence's own indentation, with every quote marker `>`
/// and tab kept and every other byte (list markers, digits, spaces) shown as a space. Under
/// `1. ` it is three spaces; in `> - ` it is `>   `. Empty for a fence outside containers.
/// Its length equals the source prefix's in every metric (both are ASCII).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContainerPrefix {
    len: u8,
    bytes: [u8; PREFIX_CAP],
}

impl Default for ContainerPrefix {
    fn default() -> Self {
        Self::NONE
    }
}

impl ContainerPrefix {
    /// No container.
    pub const NONE: ContainerPrefix = ContainerPrefix {
        len: 0,
        bytes: [b' '; PREFIX_CAP],
    };

    /// The prefix shown for the source prefix `source` (ASCII: spaces, tabs, `>`, list
    /// markers), or `None` when it is longer than [`PREFIX_CAP`].
    pub(crate) fn blanked(source: &[u8]) -> Option<ContainerPrefix> {
        if source.len() > PREFIX_CAP {
            return None;
        }
        let mut p = ContainerPrefix::NONE;
        for (i, &b) in source.iter().enumerate() {
            p.bytes[i] = match b {
                b'>' | b'\t' => b,
                _ => b' ',
            };
        }
        p.len = source.len() as u8;
        Some(p)
    }

    /// The prefix's text.
    pub fn as_str(&self) -> &str {
        // Only ASCII bytes are ever stored.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or("")
    }

    /// Its length in bytes (and in every metric: it is ASCII).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the fence stands outside any container.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One open container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    /// A block quote: its lines carry `>`.
    Quote,
    /// A list item whose content starts `width` columns right of where the item's marker
    /// line content (its own indentation included) starts.
    Item { width: u8 },
}

/// Where a line's content starts, once its container prefixes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineContent {
    /// The byte where the content starts (past the container prefixes).
    pub(crate) at: usize,
    /// Columns of indentation already passed at `at` that belong to the content (a tab
    /// taken whole by a container that needed only part of it; less than 4).
    pub(crate) carry: u8,
    /// The column of `at` (tabs to the next multiple of 4), for counting the rest.
    pub(crate) col: u32,
    /// How many containers the content lies in (at most [`MAX_DEPTH`]).
    pub(crate) depth: u8,
    /// The line opened a container (a list item or a quote starts on it).
    pub(crate) opened: bool,
    /// The line keeps containers it does not carry only as a paragraph's lazy
    /// continuation (no table row goes on that way).
    pub(crate) lazy: bool,
    /// The line is a list item that goes on with a list open before it right after
    /// paragraph text, and could not start a list there (an ordered item not numbered 1, or
    /// an empty item: neither interrupts a paragraph). Shown after that paragraph text
    /// without the list's earlier items, it would read as the paragraph's continuation.
    pub(crate) continues_list: bool,
}

impl LineContent {
    /// A line whose content starts at its first byte `at`, column 0, inside `depth`
    /// containers it does not mark (none opened, no list continued).
    #[inline]
    pub(crate) fn at_line_start(at: usize, depth: u8, lazy: bool) -> Self {
        Self {
            at,
            carry: 0,
            col: 0,
            depth,
            opened: false,
            lazy,
            continues_list: false,
        }
    }
}

/// How a line goes on with the containers of a fence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Continues {
    /// It carries them all: its content starts there.
    Yes(LineContent),
    /// It leaves one of them: the fence ends before the line.
    No,
    /// The text ends before that can be told.
    NotYet,
}

/// The containers open at the current line (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Containers {
    stack: [Container; MAX_DEPTH],
    depth: u8,
    /// Tests only: every line takes the full reading (no [`letter_line`]).
    #[cfg(test)]
    pub(super) full_reads: bool,
}

impl Default for Containers {
    fn default() -> Self {
        Containers {
            stack: [Container::Quote; MAX_DEPTH],
            depth: 0,
            #[cfg(test)]
            full_reads: false,
        }
    }
}

/// A cursor over one line: byte position and column.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    at: usize,
    col: usize,
    carry: usize,
}

/// What `bytes[at]` is: `None` past the end of the text (more may come).
#[inline]
fn byte(bytes: &[u8], at: usize) -> Option<u8> {
    bytes.get(at).copied()
}

/// Whether `b` ends a line.
#[inline]
fn is_eol(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// The width of whitespace byte `b` at column `col`.
#[inline]
fn width(b: u8, col: usize) -> usize {
    if b == b'\t' { 4 - col % 4 } else { 1 }
}

impl Cursor {
    /// Spaces and tabs from here: (columns, the byte after them). `None` when the text ends
    /// inside them.
    fn indent(&self, bytes: &[u8]) -> Option<(usize, usize)> {
        let mut at = self.at;
        let mut col = self.col;
        loop {
            match byte(bytes, at)? {
                b @ (b' ' | b'\t') => {
                    col += width(b, col);
                    at += 1;
                }
                _ => return Some((self.carry + col - self.col, at)),
            }
        }
    }

    /// Takes `cols` columns of indentation (a tab whole, its excess carried).
    fn take(&mut self, bytes: &[u8], cols: usize) {
        let mut need = cols;
        if self.carry > 0 {
            let used = self.carry.min(need);
            self.carry -= used;
            need -= used;
        }
        while need > 0 {
            let b = bytes[self.at];
            let w = width(b, self.col);
            self.col += w;
            self.at += 1;
            if w > need {
                self.carry = w - need;
                need = 0;
            } else {
                need -= w;
            }
        }
    }
}

/// Whether the rest of the line at `at` is blank; `None` when the text ends first.
fn blank_rest(bytes: &[u8], at: usize) -> Option<bool> {
    let mut i = at;
    loop {
        match byte(bytes, i)? {
            b' ' | b'\t' => i += 1,
            b => return Some(is_eol(b)),
        }
    }
}

/// A list marker at `at` (indentation already passed): (marker bytes, ordered number is 1,
/// the item is empty so far). `Some(None)` when there is none, `None` when the text ends
/// before that can be told.
#[allow(clippy::type_complexity)]
fn list_marker(bytes: &[u8], at: usize) -> Option<Option<(usize, bool)>> {
    let first = byte(bytes, at)?;
    let len = match first {
        b'-' | b'*' | b'+' => 1,
        b'0'..=b'9' => {
            let mut n = 0;
            while n < 10 && byte(bytes, at + n)?.is_ascii_digit() {
                n += 1;
            }
            if n > 9 || !matches!(byte(bytes, at + n)?, b'.' | b')') {
                return Some(None);
            }
            n + 1
        }
        _ => return Some(None),
    };
    let after = byte(bytes, at + len)?;
    if !(after == b' ' || after == b'\t' || is_eol(after)) {
        return Some(None);
    }
    let one = len == 1 || (len == 2 && first == b'1');
    Some(Some((len, one)))
}

/// Whether the line at `at` is a thematic break (`***`, `- - -`, `___`); `None` when the
/// text ends before that can be told.
fn thematic_break(bytes: &[u8], at: usize) -> Option<bool> {
    let c = byte(bytes, at)?;
    if !matches!(c, b'-' | b'*' | b'_') {
        return Some(false);
    }
    let mut n = 0;
    let mut i = at;
    loop {
        match byte(bytes, i)? {
            b if b == c => n += 1,
            b' ' | b'\t' => {}
            b if is_eol(b) => return Some(n >= 3),
            _ => return Some(false),
        }
        i += 1;
    }
}

/// Whether the line at `at` (its first byte) tells whether it is a thematic break: false
/// while it holds only the break's char and spaces and has not ended.
pub(super) fn decides_thematic_break(bytes: &[u8], at: usize) -> bool {
    thematic_break(bytes, at).is_some()
}

impl Containers {
    /// Forgets every container.
    pub(crate) fn reset(&mut self) {
        self.depth = 0;
    }

    /// How many containers are open.
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        usize::from(self.depth)
    }

    /// The content column of the list items among the first `depth` open containers that
    /// come before any quote (the sum of their widths): how far a line of their content may
    /// be indented before it would read as indented code without them. In a quote nested in
    /// list items, the column where its `>` stands.
    pub(crate) fn item_column(&self, depth: usize) -> usize {
        let mut col = 0;
        for c in &self.stack[..depth.min(self.depth())] {
            match *c {
                Container::Quote => return col,
                Container::Item { width } => col += usize::from(width),
            }
        }
        col
    }

    /// Reads the prefixes of the first `limit` open containers on the line at `line`:
    /// (how many it carries, the cursor after them). `None` when the text ends first, unless
    /// `at_end` says no more text will come: then the end of the text ends the line.
    fn carried(
        &self,
        bytes: &[u8],
        line: usize,
        limit: usize,
        at_end: bool,
    ) -> Option<(usize, Cursor)> {
        let mut cur = Cursor {
            at: line,
            col: 0,
            carry: 0,
        };
        // The byte at `at`, the end of a finished text reading as a line break.
        let byte_or_end = |at: usize| byte(bytes, at).or(at_end.then_some(b'\n'));
        for (i, c) in self.stack[..limit].iter().enumerate() {
            let (cols, next) = match cur.indent(bytes) {
                Some(read) => read,
                // (Only spaces and tabs are left of the finished text: its line ends there.)
                None if at_end => (0, bytes.len()),
                None => return None,
            };
            match *c {
                Container::Quote => {
                    if cols > 3 || byte_or_end(next)? != b'>' {
                        return Some((i, cur));
                    }
                    cur.take(bytes, cols);
                    cur.carry = 0;
                    cur.at = next + 1;
                    cur.col += 1;
                    // One space (or one column of a tab) after `>` belongs to the marker.
                    match byte(bytes, cur.at) {
                        Some(b' ') => {
                            cur.at += 1;
                            cur.col += 1;
                        }
                        Some(b'\t') => cur.take(bytes, 1),
                        _ => {}
                    }
                }
                Container::Item { width } => {
                    if is_eol(byte_or_end(next)?) {
                        // A blank line goes on in the item.
                        cur.at = next;
                        cur.carry = 0;
                        continue;
                    }
                    if cols < usize::from(width) {
                        return Some((i, cur));
                    }
                    cur.take(bytes, usize::from(width));
                }
            }
        }
        Some((limit, cur))
    }

    /// Whether the line at `line` goes on in the first `depth` containers, as a line of a
    /// fence in them must (no lazy continuation in code).
    pub(crate) fn continues(&self, bytes: &[u8], line: usize, depth: usize) -> Continues {
        self.continues_when(bytes, line, depth, false)
    }

    /// [`Containers::continues`] for the last line of a finished text: its end ends the
    /// line, so the answer is never [`Continues::NotYet`] (a last line `>` that carries only
    /// the outer of two quotes leaves the inner one, and a fence in it ends there).
    pub(crate) fn continues_at_end(&self, bytes: &[u8], line: usize, depth: usize) -> Continues {
        self.continues_when(bytes, line, depth, true)
    }

    fn continues_when(&self, bytes: &[u8], line: usize, depth: usize, at_end: bool) -> Continues {
        match self.carried(bytes, line, depth.min(self.depth()), at_end) {
            None => Continues::NotYet,
            Some((n, cur)) if n == depth => Continues::Yes(LineContent {
                at: cur.at,
                carry: cur.carry as u8,
                col: cur.col.min(u32::MAX as usize) as u32,
                depth: depth as u8,
                opened: false,
                lazy: false,
                continues_list: false,
            }),
            Some(_) => Continues::No,
        }
    }

    /// Reads the line at `line` outside fences: the containers it carries, those it
    /// opens, and those it leaves (kept open when the line is a lazy paragraph
    /// continuation; `paragraph` says whether a paragraph is open). `None` when the text
    /// ends before that can be told (nothing changes then).
    pub(crate) fn read_line(
        &mut self,
        bytes: &[u8],
        line: usize,
        paragraph: bool,
    ) -> Option<LineContent> {
        #[cfg(test)]
        let fast = !self.full_reads;
        #[cfg(not(test))]
        let fast = true;
        if fast {
            match bytes.get(line) {
                Some(b) if b.is_ascii_alphabetic() => {
                    return Some(self.letter_line(line, paragraph));
                }
                Some(b'\n' | b'\r') => return Some(self.blank_line(line)),
                Some(b' ') => {
                    if let Some(c) = self.spaced_letter_line(bytes, line, paragraph) {
                        return Some(c);
                    }
                    if let Some(c) = self.bullet_line(bytes, line) {
                        return Some(c);
                    }
                }
                Some(b'-' | b'*' | b'+') => {
                    if let Some(c) = self.bullet_line(bytes, line) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        let (matched, mut cur) = self.carried(bytes, line, self.depth(), false)?;
        let mut depth = matched;
        let mut opened = false;
        let mut continues_list = false;
        let mut stack = self.stack;
        // New containers: a quote marker or a list marker, each after at most 3 columns.
        while depth < MAX_DEPTH {
            let (cols, next) = cur.indent(bytes)?;
            if cols > 3 {
                break;
            }
            let b = byte(bytes, next)?;
            if b == b'>' {
                cur.take(bytes, cols);
                cur.carry = 0;
                cur.at = next + 1;
                cur.col += 1;
                match byte(bytes, cur.at) {
                    Some(b' ') => {
                        cur.at += 1;
                        cur.col += 1;
                    }
                    Some(b'\t') => cur.take(bytes, 1),
                    Some(_) => {}
                    None => return None,
                }
                stack[depth] = Container::Quote;
                depth += 1;
                opened = true;
                continue;
            }
            if thematic_break(bytes, next)? {
                break;
            }
            let Some((len, one)) = list_marker(bytes, next)? else {
                break;
            };
            let empty = blank_rest(bytes, next + len)?;
            // An item interrupting a paragraph must not be empty and, ordered, must start
            // at 1 (a sibling item leaves its container first, so it interrupts nothing).
            let interrupts = paragraph && matched == self.depth() && depth == matched;
            if interrupts && (empty || !one) {
                break;
            }
            // A sibling of an item the line leaves, after paragraph text: it goes on with
            // that item's list, which it could not start.
            continues_list |= paragraph
                && depth == matched
                && matched < self.depth()
                && matches!(self.stack[matched], Container::Item { .. })
                && (empty || !one);
            cur.take(bytes, cols);
            cur.carry = 0;
            let marker_col = cur.col;
            cur.at = next + len;
            cur.col += len;
            // The spaces after the marker: 1 to 4 belong to it; 5 or more, or none before
            // the line's end, count as one (the rest is the content's indentation).
            let (spaces, _) = cur.indent(bytes)?;
            let taken = if empty || spaces > 4 { 1 } else { spaces };
            if empty {
                cur.col += 1;
                cur.at = blank_end(bytes, cur.at);
            } else {
                cur.take(bytes, taken);
            }
            let width = (cur.col - cur.carry) - marker_col + cols;
            stack[depth] = Container::Item {
                width: width.min(u8::MAX as usize) as u8,
            };
            depth += 1;
            opened = true;
            if empty {
                break;
            }
        }
        let mut kept_lazily = false;
        if !opened && matched < self.depth() {
            // The line leaves containers: a paragraph's continuation keeps them (lazily).
            let lazy = paragraph && !blank_rest(bytes, cur.at)? && {
                let (cols, next) = cur.indent(bytes)?;
                cols >= 4 || !interrupts_paragraph(bytes, next)?
            };
            if lazy {
                depth = self.depth();
            }
            kept_lazily = lazy;
        }
        self.stack = stack;
        self.depth = depth as u8;
        Some(LineContent {
            at: cur.at,
            carry: cur.carry as u8,
            col: cur.col.min(u32::MAX as usize) as u32,
            depth: depth as u8,
            opened,
            lazy: kept_lazily,
            continues_list,
        })
    }
}

impl Containers {
    /// [`Containers::read_line`] for a line whose first byte is an ASCII letter, as the
    /// full reading reads it: the letter carries no quote (no `>`) and no list item (it
    /// stands left of every item's content, at least 2 columns in), opens none (neither a
    /// marker nor a thematic break), and interrupts no paragraph: it leaves every
    /// container, kept lazily when it continues a paragraph.
    #[inline]
    fn letter_line(&mut self, line: usize, paragraph: bool) -> LineContent {
        let lazy = paragraph && self.depth > 0;
        if !paragraph {
            self.depth = 0;
        }
        LineContent::at_line_start(line, self.depth, lazy)
    }

    /// [`Containers::read_line`] for a line of spaces then an ASCII letter, as the full
    /// reading reads it; `None` for any other line. The list items carry it while their
    /// widths fit in its spaces (a quote needs its `>`: it stops there too); the letter
    /// opens nothing and interrupts no paragraph: the containers it leaves are kept lazily
    /// when it continues one.
    #[inline]
    fn spaced_letter_line(
        &mut self,
        bytes: &[u8],
        line: usize,
        paragraph: bool,
    ) -> Option<LineContent> {
        let spaces = bytes[line..].iter().take_while(|&&b| b == b' ').count();
        if !bytes.get(line + spaces)?.is_ascii_alphabetic() {
            return None;
        }
        let (matched, consumed) = self.items_in(spaces);
        let lazy = paragraph && matched < self.depth();
        if !lazy {
            self.depth = matched as u8;
        }
        Some(LineContent {
            at: line + consumed,
            carry: 0,
            col: consumed as u32,
            depth: self.depth,
            opened: false,
            lazy,
            continues_list: false,
        })
    }

    /// How many of the open containers, from the outermost, a line indented by `spaces`
    /// spaces carries (list items whose widths fit in them; a quote needs its `>`: it
    /// stops there), and the columns they take.
    #[inline(always)]
    fn items_in(&self, spaces: usize) -> (usize, usize) {
        let mut consumed = 0;
        let mut matched = 0;
        for c in &self.stack[..self.depth()] {
            match *c {
                Container::Item { width } if spaces - consumed >= usize::from(width) => {
                    consumed += usize::from(width);
                    matched += 1;
                }
                _ => break,
            }
        }
        (matched, consumed)
    }

    /// [`Containers::read_line`] for the usual list item line, as the full reading reads
    /// it: spaces, a bullet (`-`, `*` or `+`), one space, then a byte that starts no
    /// container and no thematic break (not whitespace, `>`, `-`, `*`, `+`, `_` or a
    /// digit). The list items carry the line while their widths fit in its spaces (a quote
    /// needs its `>`: it stops there); at most 3 spaces are left before the bullet, so it
    /// opens an item whose content column is 2 past them. A bullet item is never empty
    /// here, so it may interrupt a paragraph and does not go on with a list it leaves.
    /// `None` for any other line.
    #[inline]
    fn bullet_line(&mut self, bytes: &[u8], line: usize) -> Option<LineContent> {
        let spaces = bytes[line..].iter().take_while(|&&b| b == b' ').count();
        let marker = line + spaces;
        if !matches!(bytes.get(marker)?, b'-' | b'*' | b'+')
            || *bytes.get(marker + 1)? != b' '
            || !bytes.get(marker + 2).is_some_and(|&b| {
                !matches!(
                    b,
                    b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'-' | b'*' | b'+' | b'_' | b'0'..=b'9'
                )
            })
        {
            return None;
        }
        let (matched, consumed) = self.items_in(spaces);
        let cols = spaces - consumed;
        if cols > 3 || matched >= MAX_DEPTH {
            return None;
        }
        self.stack[matched] = Container::Item {
            width: (cols + 2) as u8,
        };
        self.depth = (matched + 1) as u8;
        Some(LineContent {
            at: marker + 2,
            carry: 0,
            col: (spaces + 2) as u32,
            depth: self.depth,
            opened: true,
            lazy: false,
            continues_list: false,
        })
    }

    /// [`Containers::read_line`] for a line whose first byte ends it (a blank line, `\n`
    /// or `\r` first), as the full reading reads it: it goes on in the list items up to
    /// the first quote (a blank line carries no `>`), and leaves that quote and what is in
    /// it (no lazy continuation of a blank line); it opens nothing.
    #[inline]
    pub(super) fn blank_line(&mut self, line: usize) -> LineContent {
        let kept = self.stack[..self.depth()]
            .iter()
            .take_while(|c| matches!(c, Container::Item { .. }))
            .count();
        self.depth = kept as u8;
        LineContent::at_line_start(line, self.depth, false)
    }
}

/// Past the spaces and tabs at `at`.
fn blank_end(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

/// Whether a line whose content starts at `at` (indented less than 4) starts a block that
/// interrupts a paragraph (so it is no lazy continuation): a fence, an ATX heading, a
/// thematic break. `None` when the text ends before that can be told.
fn interrupts_paragraph(bytes: &[u8], at: usize) -> Option<bool> {
    let b = byte(bytes, at)?;
    Some(match b {
        b'`' | b'~' => {
            let mut n = 0;
            while byte(bytes, at + n)? == b {
                n += 1;
                if n == 3 {
                    return Some(true);
                }
            }
            false
        }
        b'#' => {
            let mut n = 0;
            while byte(bytes, at + n)? == b'#' {
                n += 1;
                if n > 6 {
                    return Some(false);
                }
            }
            let after = byte(bytes, at + n)?;
            after == b' ' || after == b'\t' || is_eol(after)
        }
        _ => thematic_break(bytes, at)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick readings of a line that starts with a letter, is blank, or is spaces then
    /// a letter give what the full reading gives, line after line: random lines of list
    /// markers, quote markers, spaces and tabs (exactly an item's width among them), then
    /// letters, blanks (`\n`, `\r\n`), more markers, digits or CJK, each read with a
    /// paragraph open or not, by containers with the quick readings and without; their
    /// states (depth, item columns) stay the same too.
    #[test]
    fn quick_line_readings_agree_with_the_full_reading() {
        const PREFIXES: &[&str] = &[
            "", "", " ", "  ", "   ", "    ", "     ", "      ", "\t", " \t", "> ", ">", "- ",
            "* ", "1. ", "10) ", "  - ", "   > ", "-    ", "- > ", "+ ", "    * ", "-\t",
        ];
        const CONTENTS: &[&str] = &[
            "word",
            "a",
            "Z",
            "",
            "\r",
            "- x",
            "* ",
            "1. one",
            "> q",
            "***",
            "```",
            "# h",
            "漢字",
            "7",
            "-",
            "`code` x",
            "[link](u)",
            "_a",
            "+",
            "\t",
        ];
        for seed in 0..300 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut text = String::new();
            for _ in 0..40 {
                text.push_str(PREFIXES[rng.usize(..PREFIXES.len())]);
                if rng.bool() {
                    text.push_str(PREFIXES[rng.usize(..PREFIXES.len())]);
                }
                text.push_str(CONTENTS[rng.usize(..CONTENTS.len())]);
                text.push('\n');
            }
            let bytes = text.as_bytes();
            let mut quick = Containers::default();
            let mut full = Containers {
                full_reads: true,
                ..Containers::default()
            };
            let mut line = 0;
            while line < bytes.len() {
                let paragraph = rng.bool();
                let q = quick.read_line(bytes, line, paragraph);
                let f = full.read_line(bytes, line, paragraph);
                assert_eq!(q, f, "seed {seed} line at {line} of {text:?}");
                assert_eq!(quick.depth(), full.depth(), "seed {seed} at {line}");
                for d in 0..=MAX_DEPTH {
                    assert_eq!(quick.item_column(d), full.item_column(d), "seed {seed}");
                }
                line += memchr::memchr(b'\n', &bytes[line..]).expect("a line") + 1;
            }
        }
    }

    /// Reads every complete line of `text`, returning each line's content start and depth.
    fn read(text: &str) -> Vec<(String, usize)> {
        let mut c = Containers::default();
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut line = 0;
        while line < bytes.len() {
            let r = c.read_line(bytes, line, true).expect("complete line");
            let end = memchr::memchr(b'\n', &bytes[line..]).map_or(bytes.len(), |i| line + i);
            out.push((text[r.at..end].to_owned(), usize::from(r.depth)));
            line = end + 1;
        }
        out
    }

    #[test]
    fn list_items_have_their_content_column() {
        let got = read("- a\n  b\n1. c\n   d\n10) e\n    f\n");
        let want = [("a", 1), ("b", 1), ("c", 1), ("d", 1), ("e", 1), ("f", 1)];
        for ((g, gd), (w, wd)) in got.iter().zip(want) {
            assert_eq!((g.as_str(), *gd), (w, wd));
        }
    }

    #[test]
    fn quotes_nest_in_items_and_items_in_quotes() {
        let got = read("- > a\n  > b\n> - c\n>   d\n");
        assert_eq!(got[0], ("a".into(), 2));
        assert_eq!(got[1], ("b".into(), 2));
        assert_eq!(got[2], ("c".into(), 2));
        assert_eq!(got[3], ("d".into(), 2));
    }

    #[test]
    fn a_lazy_line_keeps_the_quote_a_fence_does_not() {
        let mut c = Containers::default();
        let t = b"> a\nlazy\n```\n";
        let r = c.read_line(t, 0, false).unwrap();
        assert_eq!(r.depth, 1);
        let r = c.read_line(t, 4, true).unwrap();
        assert_eq!((r.depth, r.at), (1, 4));
        let r = c.read_line(t, 9, true).unwrap();
        assert_eq!(r.depth, 0);
    }

    #[test]
    fn five_spaces_after_a_marker_make_indented_content() {
        let t = b"-     code\n";
        let r = Containers::default().read_line(t, 0, false).unwrap();
        // The content column is 2; the content starts with 4 columns of indentation.
        assert_eq!((r.at, r.depth), (2, 1));
    }

    #[test]
    fn an_unfinished_prefix_waits() {
        let mut c = Containers::default();
        assert!(c.read_line(b"  ", 0, false).is_none());
        assert!(c.read_line(b"1", 0, false).is_none());
        assert!(c.read_line(b"- ", 0, false).is_none());
        assert_eq!(c.depth(), 0);
    }

    #[test]
    fn a_fence_line_must_carry_its_containers() {
        let mut c = Containers::default();
        let t = b"- ```\n  code\n\n```\n";
        c.read_line(t, 0, false).unwrap();
        assert!(matches!(c.continues(t, 6, 1), Continues::Yes(l) if l.at == 8));
        assert!(matches!(c.continues(t, 13, 1), Continues::Yes(_)));
        assert_eq!(c.continues(t, 14, 1), Continues::No);
        assert_eq!(c.continues(b"- ```\n ", 6, 1), Continues::NotYet);
    }

    #[test]
    fn the_end_of_a_finished_text_ends_its_last_line() {
        // A quote in an item in a quote, and a last line that carries only the outer `>`.
        let t = b"> * a\n>   > ```\n>   > x\n>";
        let mut c = Containers::default();
        c.read_line(t, 0, false).unwrap();
        let inner = c.read_line(t, 6, false).unwrap();
        assert_eq!(inner.depth, 3);
        assert_eq!(c.continues(t, 24, 3), Continues::NotYet);
        assert_eq!(c.continues_at_end(t, 24, 3), Continues::No);
        // Blank in the items alone, a finished line goes on in them.
        let t = b"- ```\n  x\n ";
        let mut c = Containers::default();
        c.read_line(t, 0, false).unwrap();
        assert_eq!(c.continues(t, 10, 1), Continues::NotYet);
        assert!(matches!(c.continues_at_end(t, 10, 1), Continues::Yes(l) if l.at == 11));
    }

    #[test]
    fn prefixes_show_quotes_and_blank_markers() {
        let p = ContainerPrefix::blanked(b"> 12. > ").unwrap();
        assert_eq!(p.as_str(), ">     > ");
        assert!(ContainerPrefix::blanked(&[b' '; PREFIX_CAP + 1]).is_none());
    }
}

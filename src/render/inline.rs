//! Inline reading of one paragraph (or heading, or table cell): CommonMark's rules for what
//! matters in chat replies. Backslash escapes, entity references (numeric and the common
//! named ones), code spans (a backtick run closed by a run of the same length), autolinks
//! (`<https://…>`), bare `http(s)://` URLs, inline links and images with their destinations
//! and titles, hard and soft breaks, and emphasis by delimiter runs with the flanking rules
//! (`_` does not open or close inside a word, the rule of three) plus GFM strikethrough
//! (`~` or `~~`, closed by a run of the same length).
//!
//! Anything that does not form a construct is literal text: an unclosed `**`, a stray `[`,
//! `<b>` or `&` shows as written. The cost is linear in the text apart from the delimiter
//! matching, which is bounded by the size of one send.

use super::ir::Inline;

/// One piece of the inline list while delimiters are still unmatched.
#[derive(Debug)]
enum Piece {
    /// A finished inline.
    Node(Inline),
    /// A run of `*`, `_` or `~` that may open or close emphasis.
    Delim(Delim),
    /// A `[` or `![` that may start a link or image.
    Bracket {
        /// `![`.
        image: bool,
        /// False once a link formed after it (links do not nest).
        active: bool,
    },
}

/// A delimiter run.
#[derive(Debug, Clone, Copy)]
struct Delim {
    ch: char,
    /// Characters left in the run.
    count: usize,
    /// The run's length as written (for the rule of three).
    orig: usize,
    open: bool,
    close: bool,
}

/// Reads `text` (the lines of one paragraph joined by `\n`, lines' leading spaces removed)
/// into inlines.
pub(crate) fn parse_inlines(text: &str) -> Vec<Inline> {
    let mut reader = Reader {
        pieces: Vec::with_capacity(8),
        pending: String::with_capacity(text.len()),
    };
    reader.read(text);
    reader.flush();
    let mut pieces = reader.pieces;
    // Trailing spaces at the end of the paragraph are not content.
    if let Some(Piece::Node(Inline::Text(t))) = pieces.last_mut() {
        let kept = t.trim_end_matches([' ', '\t']).len();
        t.truncate(kept);
    }
    into_inlines(resolve_emphasis(pieces))
}

/// The bytes [`Reader::read`] stops at: each may start an escape, a code span, emphasis, a
/// link or image, an autolink, an entity, a line break or a bare URL (`h`). A table, so the
/// run of plain text between them is found with one look-up per byte.
const MAY_MATTER: [bool; 256] = {
    let mut table = [false; 256];
    let bytes = b"\\`*_~![]<&\nh";
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
};

struct Reader {
    pieces: Vec<Piece>,
    pending: String,
}

impl Reader {
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            // A copy of its exact size; `pending` keeps its room for the next text.
            let text = self.pending.as_str().to_owned();
            self.pending.clear();
            self.pieces.push(Piece::Node(Inline::Text(text)));
        }
    }

    fn push(&mut self, piece: Piece) {
        self.flush();
        self.pieces.push(piece);
    }

    fn read(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            match b {
                b'\\' => {
                    match bytes.get(i + 1) {
                        Some(&n) if n.is_ascii_punctuation() => {
                            self.pending.push(n as char);
                            i += 2;
                        }
                        Some(b'\n') => {
                            self.push(Piece::Node(Inline::HardBreak));
                            i += 2;
                        }
                        _ => {
                            self.pending.push('\\');
                            i += 1;
                        }
                    }
                    continue;
                }
                b'`' => {
                    let n = run_len(bytes, i, b'`');
                    if let Some((content, end)) = code_span(text, i, n) {
                        self.push(Piece::Node(Inline::Code(content)));
                        i = end;
                    } else {
                        self.pending.push_str(&text[i..i + n]);
                        i += n;
                    }
                    continue;
                }
                b'*' | b'_' | b'~' => {
                    let n = run_len(bytes, i, b);
                    if b == b'~' && n > 2 {
                        self.pending.push_str(&text[i..i + n]);
                        i += n;
                        continue;
                    }
                    let before = text[..i].chars().next_back();
                    let after = text[i + n..].chars().next();
                    let (left, right) = flanking(before, after);
                    let (open, close) = if b == b'_' {
                        (
                            left && (!right || before.is_some_and(is_punct)),
                            right && (!left || after.is_some_and(is_punct)),
                        )
                    } else {
                        (left, right)
                    };
                    let ch = b as char;
                    self.push(Piece::Delim(Delim {
                        ch,
                        count: n,
                        orig: n,
                        open,
                        close,
                    }));
                    i += n;
                    continue;
                }
                b'!' if bytes.get(i + 1) == Some(&b'[') => {
                    self.push(Piece::Bracket {
                        image: true,
                        active: true,
                    });
                    i += 2;
                    continue;
                }
                b'[' => {
                    self.push(Piece::Bracket {
                        image: false,
                        active: true,
                    });
                    i += 1;
                    continue;
                }
                b']' => {
                    i = self.close_bracket(text, i);
                    continue;
                }
                b'<' => {
                    if let Some((url, end)) = autolink(text, i) {
                        let children = vec![Inline::Text(text[i + 1..end - 1].to_owned())];
                        self.push(Piece::Node(Inline::Link { children, url }));
                        i = end;
                    } else {
                        self.pending.push('<');
                        i += 1;
                    }
                    continue;
                }
                b'&' => {
                    if let Some((decoded, end)) = entity(text, i) {
                        self.pending.push(decoded);
                        i = end;
                    } else {
                        self.pending.push('&');
                        i += 1;
                    }
                    continue;
                }
                b'\n' => {
                    let kept = self.pending.trim_end_matches([' ', '\t']).len();
                    let hard = self.pending[kept..].matches(' ').count() >= 2;
                    self.pending.truncate(kept);
                    let brk = if hard {
                        Inline::HardBreak
                    } else {
                        Inline::SoftBreak
                    };
                    self.push(Piece::Node(brk));
                    i += 1;
                    continue;
                }
                b'h' => {
                    if let Some(end) = bare_url(text, i) {
                        let url = text[i..end].to_owned();
                        let children = vec![Inline::Text(url.clone())];
                        self.push(Piece::Node(Inline::Link { children, url }));
                        i = end;
                        continue;
                    }
                }
                _ => {}
            }
            // Plain text up to the next byte that may matter.
            let next = bytes[i + 1..]
                .iter()
                .position(|&b| MAY_MATTER[usize::from(b)])
                .map_or(bytes.len(), |p| i + 1 + p);
            self.pending.push_str(&text[i..next]);
            i = next;
        }
    }

    /// A `]` at `i`: forms a link or image with the last open bracket when an inline
    /// destination follows; otherwise the bracket and the `]` are text. Returns where to go on.
    fn close_bracket(&mut self, text: &str, i: usize) -> usize {
        self.flush();
        let Some(at) = self
            .pieces
            .iter()
            .rposition(|p| matches!(p, Piece::Bracket { .. }))
        else {
            self.pending.push(']');
            return i + 1;
        };
        let Piece::Bracket { image, active } = self.pieces[at] else {
            unreachable!()
        };
        let dest = if active {
            destination(text, i + 1)
        } else {
            None
        };
        let Some((url, end)) = dest else {
            self.pieces[at] = Piece::Node(Inline::Text(if image { "![" } else { "[" }.into()));
            self.pending.push(']');
            return i + 1;
        };
        let inner: Vec<Piece> = self.pieces.drain(at + 1..).collect();
        let children = into_inlines(resolve_emphasis(inner));
        self.pieces[at] = Piece::Node(if image {
            Inline::Image { alt: children, url }
        } else {
            Inline::Link { children, url }
        });
        if !image {
            for piece in &mut self.pieces[..at] {
                if let Piece::Bracket {
                    image: false,
                    active,
                } = piece
                {
                    *active = false;
                }
            }
        }
        end
    }
}

fn run_len(bytes: &[u8], i: usize, b: u8) -> usize {
    bytes[i..].iter().take_while(|&&c| c == b).count()
}

/// Whether `c` counts as punctuation for the flanking rules (ASCII punctuation and the
/// common Unicode punctuation and symbol blocks).
fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c as u32,
            0xA1..=0xBF | 0x2010..=0x2027 | 0x2030..=0x205E | 0x3001..=0x3003 | 0x3008..=0x3011
            | 0x3014..=0x301F | 0xFF01..=0xFF0F | 0xFF1A..=0xFF20 | 0xFF3B..=0xFF40
            | 0xFF5B..=0xFF65)
}

/// Left- and right-flanking for a run between `before` and `after` (`None` = line edge,
/// which counts as whitespace).
fn flanking(before: Option<char>, after: Option<char>) -> (bool, bool) {
    let ws = |c: Option<char>| c.is_none_or(char::is_whitespace);
    let punct = |c: Option<char>| c.is_some_and(is_punct);
    let left = !ws(after) && (!punct(after) || ws(before) || punct(before));
    let right = !ws(before) && (!punct(before) || ws(after) || punct(after));
    (left, right)
}

/// A code span opened by `n` backticks at `i`: its normalised content and where it ends,
/// if a run of exactly `n` backticks closes it.
fn code_span(text: &str, i: usize, n: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    let mut j = i + n;
    while let Some(p) = memchr::memchr(b'`', &bytes[j..]) {
        let start = j + p;
        let len = run_len(bytes, start, b'`');
        if len == n {
            let mut content = text[i + n..start].replace('\n', " ");
            if content.len() >= 2
                && content.starts_with(' ')
                && content.ends_with(' ')
                && content.bytes().any(|b| b != b' ')
            {
                content = content[1..content.len() - 1].to_owned();
            }
            return Some((content, start + n));
        }
        j = start + len;
    }
    None
}

/// An autolink `<scheme:…>` or `<user@host>` at `i`: the URL and where it ends.
fn autolink(text: &str, i: usize) -> Option<(String, usize)> {
    let rest = &text[i + 1..];
    let close = rest.find(['>', '<', ' ', '\n', '\t'])?;
    if rest.as_bytes()[close] != b'>' {
        return None;
    }
    let inner = &rest[..close];
    let end = i + 1 + close + 1;
    if let Some(colon) = inner.find(':') {
        let scheme = &inner[..colon];
        let ok = (2..=32).contains(&scheme.len())
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b));
        return ok.then(|| (inner.to_owned(), end));
    }
    let (user, host) = inner.split_once('@')?;
    let ok = !user.is_empty()
        && user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".!#$%&'*+/=?^_`{|}~-".contains(&b))
        && !host.is_empty()
        && host.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    ok.then(|| (format!("mailto:{inner}"), end))
}

/// A bare `http://` or `https://` URL starting at `i` (at a word start): where it ends,
/// trailing punctuation and unbalanced `)` left out.
fn bare_url(text: &str, i: usize) -> Option<usize> {
    if text[..i]
        .chars()
        .next_back()
        .is_some_and(|c| c.is_alphanumeric())
    {
        return None;
    }
    let rest = &text[i..];
    let scheme = if rest.starts_with("https://") {
        8
    } else if rest.starts_with("http://") {
        7
    } else {
        return None;
    };
    let len = rest
        .find(|c: char| c.is_whitespace() || c == '<' || c.is_control())
        .unwrap_or(rest.len());
    let mut url = &rest[..len];
    loop {
        let trimmed =
            url.trim_end_matches(['?', '!', '.', ',', ':', ';', '*', '_', '~', '\'', '"']);
        let trimmed = if trimmed.ends_with(')')
            && trimmed.matches(')').count() > trimmed.matches('(').count()
        {
            &trimmed[..trimmed.len() - 1]
        } else {
            trimmed
        };
        if trimmed.len() == url.len() {
            break;
        }
        url = trimmed;
    }
    // A host is needed after the scheme.
    (url.len() > scheme + 1 && url[scheme..].starts_with(|c: char| c.is_alphanumeric()))
        .then_some(i + url.len())
}

/// An entity reference at `i`: the character and where it ends. Numeric references and the
/// named ones models write; any other `&` is text.
fn entity(text: &str, i: usize) -> Option<(char, usize)> {
    let rest = &text[i + 1..];
    let semi = rest.bytes().take(34).position(|b| b == b';')?;
    let name = &rest[..semi];
    let end = i + 1 + semi + 1;
    let c = if let Some(num) = name.strip_prefix('#') {
        let (digits, radix, max) = match num.strip_prefix(['x', 'X']) {
            Some(hex) => (hex, 16, 6),
            None => (num, 10, 7),
        };
        if digits.is_empty() || digits.len() > max || !digits.chars().all(|c| c.is_digit(radix)) {
            return None;
        }
        let code = u32::from_str_radix(digits, radix).ok()?;
        if code == 0 {
            '\u{FFFD}'
        } else {
            char::from_u32(code).unwrap_or('\u{FFFD}')
        }
    } else {
        match name {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" => '\u{A0}',
            _ => return None,
        }
    };
    Some((c, end))
}

/// An inline link destination `(url "title")` starting at `i` (just after the `]`): the URL
/// (escapes decoded) and where the `)` ends.
fn destination(text: &str, i: usize) -> Option<(String, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    let mut j = skip_space(bytes, i + 1);
    let mut url = String::new();
    if bytes.get(j) == Some(&b'<') {
        j += 1;
        loop {
            match *bytes.get(j)? {
                b'>' => {
                    j += 1;
                    break;
                }
                b'<' | b'\n' => return None,
                b'\\' if bytes.get(j + 1).is_some_and(u8::is_ascii_punctuation) => {
                    url.push(bytes[j + 1] as char);
                    j += 2;
                }
                _ => {
                    let c = text[j..].chars().next()?;
                    url.push(c);
                    j += c.len_utf8();
                }
            }
        }
    } else {
        let mut depth = 0usize;
        while let Some(&b) = bytes.get(j) {
            match b {
                b'\\' if bytes.get(j + 1).is_some_and(u8::is_ascii_punctuation) => {
                    url.push(bytes[j + 1] as char);
                    j += 2;
                    continue;
                }
                b'(' => depth += 1,
                b')' if depth == 0 => break,
                b')' => depth -= 1,
                _ if b <= b' ' || b == 0x7F => break,
                _ => {}
            }
            let c = text[j..].chars().next()?;
            url.push(c);
            j += c.len_utf8();
        }
        if depth != 0 {
            return None;
        }
    }
    let before_title = j;
    j = skip_space(bytes, j);
    if j > before_title
        && let Some(&q) = bytes.get(j).filter(|&&q| matches!(q, b'"' | b'\'' | b'('))
    {
        let close = if q == b'(' { b')' } else { q };
        j += 1;
        loop {
            match *bytes.get(j)? {
                b'\\' => j += 2,
                c if c == close => {
                    j += 1;
                    break;
                }
                b'(' if q == b'(' => return None,
                _ => j += 1,
            }
        }
        j = skip_space(bytes, j);
    }
    (bytes.get(j) == Some(&b')')).then(|| (url, j + 1))
}

/// Skips spaces and tabs and at most one line ending.
fn skip_space(bytes: &[u8], mut j: usize) -> usize {
    let mut newline = false;
    while let Some(&b) = bytes.get(j) {
        match b {
            b' ' | b'\t' => j += 1,
            b'\n' if !newline => {
                newline = true;
                j += 1;
            }
            _ => break,
        }
    }
    j
}

/// CommonMark's "process emphasis" over a list of pieces: each closer, left to right, is
/// matched with the nearest opener of the same character; what lies between becomes the
/// emphasis node's children, delimiters in between that found no partner stay text.
fn resolve_emphasis(mut pieces: Vec<Piece>) -> Vec<Piece> {
    let mut c = 0;
    while c < pieces.len() {
        let Piece::Delim(closer) = pieces[c] else {
            c += 1;
            continue;
        };
        if !closer.close {
            c += 1;
            continue;
        }
        let opener_at = (0..c).rev().find(|&o| match pieces[o] {
            Piece::Delim(op) => op.ch == closer.ch && op.open && compatible(op, closer),
            _ => false,
        });
        let Some(o) = opener_at else {
            c += 1;
            continue;
        };
        let Piece::Delim(opener) = pieces[o] else {
            unreachable!()
        };
        let n = if closer.ch == '~' {
            closer.count
        } else if opener.count >= 2 && closer.count >= 2 {
            2
        } else {
            1
        };
        let inner: Vec<Piece> = pieces.drain(o + 1..c).collect();
        let children = into_inlines(inner);
        let node = match (closer.ch, n) {
            ('~', _) => Inline::Strike(children),
            (_, 2) => Inline::Bold(children),
            _ => Inline::Italic(children),
        };
        pieces.insert(o + 1, Piece::Node(node));
        let mut closer_at = o + 2;
        if let Piece::Delim(d) = &mut pieces[o] {
            d.count -= n;
            if d.count == 0 {
                pieces.remove(o);
                closer_at -= 1;
            }
        }
        if let Piece::Delim(d) = &mut pieces[closer_at] {
            d.count -= n;
            if d.count == 0 {
                pieces.remove(closer_at);
            }
        }
        c = closer_at;
    }
    pieces
}

/// Whether an opener and a closer may pair: strikethrough runs of the same length; for
/// `*` and `_` the rule of three.
fn compatible(opener: Delim, closer: Delim) -> bool {
    if closer.ch == '~' {
        return opener.count == closer.count;
    }
    if (opener.open && opener.close) || (closer.open && closer.close) {
        let sum = opener.orig + closer.orig;
        return !sum.is_multiple_of(3)
            || (opener.orig.is_multiple_of(3) && closer.orig.is_multiple_of(3));
    }
    true
}

/// The pieces as inlines: leftover delimiters and brackets are text, adjacent texts merged.
fn into_inlines(pieces: Vec<Piece>) -> Vec<Inline> {
    let mut out: Vec<Inline> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let inline = match piece {
            Piece::Node(inline) => inline,
            Piece::Delim(d) => Inline::Text(d.ch.to_string().repeat(d.count)),
            Piece::Bracket { image, .. } => Inline::Text(if image { "![" } else { "[" }.into()),
        };
        match (out.last_mut(), inline) {
            (Some(Inline::Text(prev)), Inline::Text(t)) => prev.push_str(&t),
            (_, Inline::Text(t)) if t.is_empty() => {}
            (_, inline) => out.push(inline),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Inline::*;

    fn t(s: &str) -> Inline {
        Text(s.into())
    }

    #[test]
    fn emphasis_and_strong() {
        assert_eq!(
            parse_inlines("a **b** c"),
            [t("a "), Bold(vec![t("b")]), t(" c")]
        );
        assert_eq!(parse_inlines("***x***"), [Italic(vec![Bold(vec![t("x")])])]);
        assert_eq!(parse_inlines("snake_case_name"), [t("snake_case_name")]);
        assert_eq!(parse_inlines("**unclosed"), [t("**unclosed")]);
        assert_eq!(parse_inlines("~~gone~~"), [Strike(vec![t("gone")])]);
        assert_eq!(
            parse_inlines("*a **b** c*"),
            [Italic(vec![t("a "), Bold(vec![t("b")]), t(" c")])]
        );
    }

    #[test]
    fn code_links_and_escapes() {
        assert_eq!(parse_inlines("`` a`b ``"), [Code("a`b".into())]);
        assert_eq!(parse_inlines("`*x*`"), [Code("*x*".into())]);
        assert_eq!(
            parse_inlines("[a *b*](http://x.y/(1) \"t\")"),
            [Link {
                children: vec![t("a "), Italic(vec![t("b")])],
                url: "http://x.y/(1)".into()
            }]
        );
        assert_eq!(
            parse_inlines("\\*x\\* &amp; &bogus; <b>"),
            [t("*x* & &bogus; <b>")]
        );
        assert_eq!(
            parse_inlines("see https://x.io/a_b."),
            [
                t("see "),
                Link {
                    children: vec![t("https://x.io/a_b")],
                    url: "https://x.io/a_b".into()
                },
                t(".")
            ]
        );
        assert_eq!(parse_inlines("[no link] (x)"), [t("[no link] (x)")]);
        assert_eq!(
            parse_inlines("a  \nb\nc"),
            [t("a"), HardBreak, t("b"), SoftBreak, t("c")]
        );
    }
}

//! `MEDIA:` lines: where one starts, and how its payload splits into media items (SPEC §2).
//!
//! A line is a `MEDIA:` line when it starts (after at most 3 spaces) with `MEDIA:` in upper
//! case, as the model is instructed to write it (`Media:` in prose is text). Its payload —
//! the rest of the line — holds one or more items, read the way the newest OpenClaw's media
//! parser reads them:
//!
//! - **Quoted** (`"…"`, `'…'` or `` `…` ``): the value runs to the first matching quote that
//!   is followed by whitespace, a comma or the end of the line, so a quote inside the value
//!   stays in it (`'https://example.com/v.mp4?token=it's'`); when what follows that quote
//!   starts no new item (`'/tmp/parents' photos/a.png'`), the value runs on to the last
//!   such quote, so it is never cut short. The value keeps everything
//!   inside the quotes, punctuation included; spaces at its edges are trimmed. A quote that
//!   never closes does not quote: the item is read unquoted, without that quote.
//! - **Unquoted**: a path may hold spaces, so the words after it join it until a word that
//!   starts a new item (a quote, `scheme://`, `/`, `./`, `../`, `~/`, a drive) comes after a
//!   value that already ends in a file extension (`/tmp/a.png /tmp/b.png` is two items,
//!   `/Users/pete/My Files/render final.png` is one, and `/tmp/project screenshots/../../.env`
//!   is one — so `/tmp/project` alone is never sent). A URL holds no spaces: it ends at the
//!   first whitespace. Trailing punctuation that is not part of the reference goes: `, . ; :
//!   ! ? ' " \ `` ` `` and a `)`, `]` or `}` that closes nothing inside the value
//!   (`https://example.com/a_(1).png` keeps its parenthesis). A JSON tail glued to a value
//!   (`/path/image.png"}],"details":{…}`, escaped quotes too) ends the value, and the tail
//!   is removed with it.
//! - **JSON array**: a payload that is a JSON array of strings (`["/tmp/a.png","/tmp/b.png"]`)
//!   holds one item per string.
//! - A payload wrapped whole in one pair of backticks is read as if unquoted inside.
//!
//! Each item keeps its raw extent (what to remove from the text) and its value (what the
//! policy judges). A line of more than [`MAX_MEDIA_LINE_LEN`] bytes is never a directive.

use std::ops::Range;

use memchr::memchr;

use super::policy::starts_like_path;

/// The longest `MEDIA:` line, in bytes, indentation included, line break excluded.
pub(crate) const MAX_MEDIA_LINE_LEN: usize = 8192;

/// How a `MEDIA:` line's start looks.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum LineStart {
    /// Could still be a `MEDIA:` line: wait for more text.
    Hold,
    NotMedia,
    /// A `MEDIA:` line: marker at `marker`, line content ends at `end` (the line break or
    /// the end of the text), offsets from the line start.
    Line {
        marker: usize,
        end: usize,
        newline: bool,
    },
}

/// Decides whether the line starting at `s[0]` is a `MEDIA:` line. `at_end`: no more text.
#[inline]
pub(super) fn media_line_start(s: &[u8], at_end: bool) -> LineStart {
    let wait = if at_end {
        LineStart::NotMedia
    } else {
        LineStart::Hold
    };
    let indent = s.iter().take(4).take_while(|&&b| b == b' ').count();
    if indent > 3 {
        return LineStart::NotMedia;
    }
    for (k, &want) in b"MEDIA:".iter().enumerate() {
        match s.get(indent + k) {
            None => return wait,
            Some(&b) if b != want => return LineStart::NotMedia,
            Some(_) => {}
        }
    }
    let after = indent + b"MEDIA:".len();
    match memchr(b'\n', &s[after..]) {
        Some(j) if after + j <= MAX_MEDIA_LINE_LEN => LineStart::Line {
            marker: indent,
            end: after + j,
            newline: true,
        },
        Some(_) => LineStart::NotMedia,
        None if s.len() > MAX_MEDIA_LINE_LEN => LineStart::NotMedia,
        None if at_end => LineStart::Line {
            marker: indent,
            end: s.len(),
            newline: false,
        },
        None => LineStart::Hold,
    }
}

/// One item of a `MEDIA:` payload: offsets into the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct MediaItem {
    /// What the item occupies in the text, quotes, stripped punctuation and JSON tail
    /// included: removed when the item is media.
    pub raw: Range<usize>,
    /// The reference itself.
    pub value: Range<usize>,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Splits a `MEDIA:` payload (the line after the marker, without its line break) into items
/// (module docs).
pub(super) fn media_items(line: &str) -> Vec<MediaItem> {
    let b = line.as_bytes();
    let start = b.iter().position(|&c| !is_blank(c)).unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|&c| !is_blank(c))
        .map_or(start, |i| i + 1);
    if start == end {
        return Vec::new();
    }
    if b[start] == b'['
        && b[end - 1] == b']'
        && let Some(items) = json_array(b, start, end)
    {
        return items;
    }
    let wrapped = end - start >= 2
        && b[start] == b'`'
        && b[end - 1] == b'`'
        && !b[start + 1..end - 1].contains(&b'`');
    if wrapped {
        let mut items = split_items(b, start + 1, end - 1, false);
        if let Some(first) = items.first_mut() {
            first.raw.start = start;
        }
        if let Some(last) = items.last_mut() {
            last.raw.end = end;
        }
        return items;
    }
    split_items(b, start, end, true)
}

/// Items of `b[from..to]`; `quotes`: quoted items are recognised.
fn split_items(b: &[u8], from: usize, to: usize, quotes: bool) -> Vec<MediaItem> {
    let mut items = Vec::new();
    let mut i = from;
    loop {
        while i < to && is_blank(b[i]) {
            i += 1;
        }
        if i >= to {
            return items;
        }
        if quotes && let Some(item) = quoted_item(b, i, to) {
            i = item.raw.end;
            items.push(item);
            continue;
        }
        // An unclosed quote does not quote: read on without it.
        let value_start = if quotes && matches!(b[i], b'"' | b'\'' | b'`') {
            i + 1
        } else {
            i
        };
        let (value, raw_end) = unquoted_item(b, value_start, to);
        items.push(MediaItem {
            raw: i..raw_end,
            value,
        });
        i = raw_end;
    }
}

/// A quoted item at `b[i]`, if its quote closes (module docs).
fn quoted_item(b: &[u8], i: usize, to: usize) -> Option<MediaItem> {
    let q = b[i];
    if !matches!(q, b'"' | b'\'' | b'`') {
        return None;
    }
    let closes = |j: usize| b[j] == q && (j + 1 == to || matches!(b[j + 1], b' ' | b'\t' | b','));
    let mut close = (i + 1..to).find(|&j| closes(j))?;
    // What follows the quote is no new item (`'/tmp/parents' photos/a.png'`): the quote
    // was part of the value, which runs to the last closing quote.
    let next = (close + 1..to).find(|&j| !matches!(b[j], b' ' | b'\t' | b','));
    if let Some(n) = next
        && !starts_item(&b[n..to])
        && let Some(last) = (n..to).rev().find(|&j| closes(j))
    {
        close = last;
    }
    let mut value = i + 1..close;
    while value.start < value.end && is_blank(b[value.start]) {
        value.start += 1;
    }
    while value.end > value.start && is_blank(b[value.end - 1]) {
        value.end -= 1;
    }
    let mut raw_end = close + 1;
    if raw_end < to && b[raw_end] == b',' {
        raw_end += 1;
    }
    Some(MediaItem {
        raw: i..raw_end,
        value,
    })
}

/// An unquoted item starting at `b[s]`: its value and where its raw extent ends.
fn unquoted_item(b: &[u8], s: usize, to: usize) -> (Range<usize>, usize) {
    let word_end = |k: usize| (k..to).find(|&j| is_blank(b[j])).unwrap_or(to);
    let first_end = word_end(s);
    if let Some(cut) = json_tail(&b[s..first_end]) {
        return (s..s + cut, to);
    }
    let is_url = scheme_len(&b[s..first_end]).is_some();
    let mut e = first_end;
    if !is_url {
        loop {
            let n = (e..to).find(|&j| !is_blank(b[j])).unwrap_or(to);
            if n == to {
                break;
            }
            if starts_item(&b[n..to]) && has_extension(&b[s..trim_punct(b, s, e)]) {
                break;
            }
            let ne = word_end(n);
            if let Some(cut) = json_tail(&b[n..ne]) {
                return (s..n + cut, to);
            }
            e = ne;
        }
    }
    (s..trim_punct(b, s, e), e)
}

/// The length of `scheme://` at the start of `w`, if any.
fn scheme_len(w: &[u8]) -> Option<usize> {
    let colon = w.iter().position(|&c| c == b':')?;
    let scheme = &w[..colon];
    let valid = !scheme.is_empty()
        && scheme[0].is_ascii_alphabetic()
        && scheme
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'));
    (valid && w[colon..].starts_with(b"://")).then_some(colon + 3)
}

/// Whether a word starts a new item: a quote, a URL, or a path start.
fn starts_item(w: &[u8]) -> bool {
    if matches!(w.first(), Some(b'"' | b'\'' | b'`')) {
        return true;
    }
    if scheme_len(w).is_some() || w.starts_with(b"../") || w.starts_with(b"..\\") {
        return true;
    }
    // Paths are ASCII at the start; a cut through a multi-byte char is no path start.
    let head = &w[..w.len().min(3)];
    std::str::from_utf8(head).is_ok_and(starts_like_path)
}

/// Whether the last component of `v` ends in a file extension: a dot, then 1 to 10 ASCII
/// letters or digits.
fn has_extension(v: &[u8]) -> bool {
    let name = v.rsplit(|&c| c == b'/' || c == b'\\').next().unwrap_or(v);
    let Some(dot) = name.iter().rposition(|&c| c == b'.') else {
        return false;
    };
    let ext = &name[dot + 1..];
    (1..=10).contains(&ext.len()) && ext.iter().all(u8::is_ascii_alphanumeric)
}

/// The end of `b[s..e]` without trailing punctuation that is not part of a reference
/// (module docs).
fn trim_punct(b: &[u8], s: usize, mut e: usize) -> usize {
    while e > s + 1 {
        let last = b[e - 1];
        let unbalanced = |open: u8, close: u8| {
            let v = &b[s..e];
            v.iter().filter(|&&c| c == close).count() > v.iter().filter(|&&c| c == open).count()
        };
        let strip = match last {
            b',' | b'.' | b';' | b':' | b'!' | b'?' | b'\'' | b'"' | b'\\' | b'`' => true,
            b')' => unbalanced(b'(', b')'),
            b']' => unbalanced(b'[', b']'),
            b'}' => unbalanced(b'{', b'}'),
            _ => false,
        };
        if !strip {
            break;
        }
        e -= 1;
    }
    e
}

/// Where a JSON tail starts in an unquoted word: a quote (or an escaped quote) followed by
/// `}`, `]` or `,`.
fn json_tail(w: &[u8]) -> Option<usize> {
    (1..w.len()).find_map(|k| {
        let next = |at: usize| matches!(w.get(at), Some(b'}' | b']' | b','));
        if w[k] == b'"' && next(k + 1) {
            Some(if w[k - 1] == b'\\' { k - 1 } else { k })
        } else {
            None
        }
    })
}

/// The items of a payload that is a JSON array of strings, or `None` when it is not one.
fn json_array(b: &[u8], start: usize, end: usize) -> Option<Vec<MediaItem>> {
    let mut items: Vec<MediaItem> = Vec::new();
    let mut i = start + 1;
    let skip = |mut k: usize| {
        while k < end && is_blank(b[k]) {
            k += 1;
        }
        k
    };
    loop {
        i = skip(i);
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let open = i;
        let mut j = i + 1;
        while j < end && !(b[j] == b'"' && b[j - 1] != b'\\') {
            j += 1;
        }
        if j >= end {
            return None;
        }
        let raw_start = if items.is_empty() { start } else { open };
        let mut after = skip(j + 1);
        match b.get(after) {
            Some(b',') if after + 1 < end => {
                after += 1;
                items.push(MediaItem {
                    raw: raw_start..after,
                    value: open + 1..j,
                });
                i = after;
            }
            Some(b']') if after + 1 == end => {
                items.push(MediaItem {
                    raw: raw_start..end,
                    value: open + 1..j,
                });
                return Some(items);
            }
            _ => return None,
        }
    }
}

/// Strips one pair of matching quotes around a bracket directive's value.
pub(super) fn unquote(value: &str) -> &str {
    let b = value.as_bytes();
    if b.len() >= 2 && matches!(b[0], b'"' | b'\'' | b'`') && b[b.len() - 1] == b[0] {
        &value[1..value.len() - 1]
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values of the items of `payload`.
    fn values(payload: &str) -> Vec<&str> {
        media_items(payload)
            .into_iter()
            .map(|it| &payload[it.value])
            .collect()
    }

    #[test]
    fn several_items_and_spaces_in_paths() {
        assert_eq!(
            values("/tmp/a.png /tmp/b.png"),
            ["/tmp/a.png", "/tmp/b.png"]
        );
        assert_eq!(
            values("/Users/pete/My Files/Project Assets/render final.png"),
            ["/Users/pete/My Files/Project Assets/render final.png"]
        );
        assert_eq!(
            values("C:\\Users\\First Last\\workspace\\shot.png D:\\Other User\\second.png"),
            [
                "C:\\Users\\First Last\\workspace\\shot.png",
                "D:\\Other User\\second.png"
            ]
        );
        assert_eq!(
            values("/tmp/project screenshots/../../.env /tmp/safe/second.png"),
            [
                "/tmp/project screenshots/../../.env",
                "/tmp/safe/second.png"
            ]
        );
        assert_eq!(
            values("/tmp/a.png https://example.com/b.png"),
            ["/tmp/a.png", "https://example.com/b.png"]
        );
        assert_eq!(
            values("C:\\Users\\First Last\\workspace\\shot.png https://127.0.0.1/secret.png"),
            [
                "C:\\Users\\First Last\\workspace\\shot.png",
                "https://127.0.0.1/secret.png"
            ]
        );
        assert_eq!(
            values("/tmp/album 'best' photos/image.png /tmp/second.png"),
            ["/tmp/album 'best' photos/image.png", "/tmp/second.png"]
        );
        assert_eq!(
            values("/tmp/project /first image.png"),
            ["/tmp/project /first image.png"]
        );
        assert_eq!(
            values("https://example.com/a.png nice chart"),
            ["https://example.com/a.png", "nice chart"]
        );
    }

    #[test]
    fn trailing_punctuation_is_not_part_of_an_unquoted_reference() {
        let base = "https://example.com/video.mp4?token=ends";
        for suffix in [",", "\"", "'", "\\", ")", "}", "]", "`", ".", ";"] {
            let line = format!("{base}{suffix}");
            assert_eq!(values(&line), [base], "{line}");
        }
        assert_eq!(
            values("https://example.com/a_(1).png"),
            ["https://example.com/a_(1).png"]
        );
        assert_eq!(values("/tmp/render,final.png"), ["/tmp/render,final.png"]);
        assert_eq!(
            values("/tmp/first.png, /tmp/second.png"),
            ["/tmp/first.png", "/tmp/second.png"]
        );
    }

    #[test]
    fn quoted_values_keep_their_punctuation_and_inner_quotes() {
        let base = "https://example.com/video.mp4?token=ends";
        for suffix in [",", ")", "]", "\\"] {
            for q in ['"', '\''] {
                let line = format!("{q}{base}{suffix}{q} /tmp/second.png");
                assert_eq!(
                    values(&line),
                    [format!("{base}{suffix}").as_str(), "/tmp/second.png"],
                    "{line}"
                );
            }
        }
        assert_eq!(
            values("'https://example.com/video.mp4?token=it's' /tmp/second.png"),
            [
                "https://example.com/video.mp4?token=it's",
                "/tmp/second.png"
            ]
        );
        assert_eq!(
            values("\"https://example.com/video.mp4?token=it\"s\" /tmp/second.png"),
            [
                "https://example.com/video.mp4?token=it\"s",
                "/tmp/second.png"
            ]
        );
        assert_eq!(
            values("'/tmp/team's.v1 final/image.png'"),
            ["/tmp/team's.v1 final/image.png"]
        );
        assert_eq!(
            values("\"https://example.com/v.mp4?token=ends\"\"\""),
            ["https://example.com/v.mp4?token=ends\"\""]
        );
        assert_eq!(
            values("\"/tmp/first image.png\", \"/tmp/second image.png\""),
            ["/tmp/first image.png", "/tmp/second image.png"]
        );
        assert_eq!(
            values("\"/tmp/first.png\" \"second\""),
            ["/tmp/first.png", "second"]
        );
        assert_eq!(values("' /tmp/photo.png'"), ["/tmp/photo.png"]);
        assert_eq!(
            values("'/tmp/parents' photos/photo.png'"),
            ["/tmp/parents' photos/photo.png"]
        );
        assert_eq!(
            values("'/tmp/parents' photos/photo.png' '/tmp/second.png'"),
            ["/tmp/parents' photos/photo.png' '/tmp/second.png"]
        );
        assert_eq!(
            values("\"/tmp/first.png\", the picture above"),
            ["/tmp/first.png", "the picture above"]
        );
        assert_eq!(
            values("`/tmp/first image.png` `/tmp/second image.png`"),
            ["/tmp/first image.png", "/tmp/second image.png"]
        );
    }

    #[test]
    fn unclosed_quotes_do_not_quote() {
        assert_eq!(values("'/tmp/photo.png"), ["/tmp/photo.png"]);
        assert_eq!(values("\"/tmp/photo.png"), ["/tmp/photo.png"]);
        assert_eq!(values("/tmp/photo.png'"), ["/tmp/photo.png"]);
        assert_eq!(
            values("/tmp/photo.png '/tmp/second.png"),
            ["/tmp/photo.png", "/tmp/second.png"]
        );
    }

    #[test]
    fn json_tails_arrays_and_backtick_wrapping() {
        let line = "/path/to/image.png\"}],\"details\":{\"provider\":\"openai\",\"model\":\"gpt-image-2\"}";
        let items = media_items(line);
        assert_eq!(items.len(), 1);
        assert_eq!(&line[items[0].value.clone()], "/path/to/image.png");
        assert_eq!(items[0].raw, 0..line.len(), "the tail goes with the item");
        let escaped = "/path/to/image.png\\\"}],\\\"details\\\":{\\\"provider\\\":\\\"openai\\\"}";
        assert_eq!(values(escaped), ["/path/to/image.png"]);
        assert_eq!(
            values("[\"/tmp/a.png\",\"/tmp/b.png\"]"),
            ["/tmp/a.png", "/tmp/b.png"]
        );
        assert_eq!(
            values(" [\"/tmp/a.png\", \"/tmp/b.png\"]"),
            ["/tmp/a.png", "/tmp/b.png"]
        );
        assert_eq!(
            values("[\"/tmp/render,final.png\",\"/tmp/b.png\"]"),
            ["/tmp/render,final.png", "/tmp/b.png"]
        );
        assert_eq!(
            values("`/tmp/a.png /tmp/b.png`"),
            ["/tmp/a.png", "/tmp/b.png"]
        );
        let items = media_items("`/tmp/a.png /tmp/b.png`");
        assert_eq!((items[0].raw.start, items[1].raw.end), (0, 23));
    }

    #[test]
    fn line_starts() {
        assert_eq!(media_line_start(b"MEDI", false), LineStart::Hold);
        assert_eq!(media_line_start(b"MEDI", true), LineStart::NotMedia);
        assert_eq!(
            media_line_start(b"    MEDIA: x\n", false),
            LineStart::NotMedia
        );
        assert_eq!(media_line_start(b"Media: x\n", false), LineStart::NotMedia);
        assert_eq!(
            media_line_start(b"  MEDIA: x\nmore", false),
            LineStart::Line {
                marker: 2,
                end: 10,
                newline: true
            }
        );
    }
}

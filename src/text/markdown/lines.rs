//! Byte-level line helpers for the scanner: text stops, block starts, quote markers, blanks.

use memchr::{memchr, memchr3};

use super::groups::{first_of, first_of_from};

/// The first backtick, `\n` or `|` of `bytes`: the bytes
/// [`MarkdownScanner::scan_text`](super::MarkdownScanner::scan_text) stops at.
///
/// The first [`SHORT_STOP`] bytes are looked at sixteen at a time (see [`first_of`]), and a
/// vector search goes on from there; where fewer than sixteen bytes are left, they are
/// looked at eight at a time, as one word (a bit trick finds a byte equal to a given one:
/// see [`zero_bytes`]), then one by one. Text lines are short (a few dozen bytes between
/// stops), and a vector search's set-up cost per call was most of its time there.
#[inline]
pub(super) fn find_text_stop(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    let mut base = 0;
    // Most stops lie in the first group: no set-up before it.
    while base < SHORT_STOP
        && let Some(g) = bytes.get(base..base + 16)
    {
        if let Some(k) = first_of(g.try_into().expect("16 bytes"), [b'`', b'\n', b'|']) {
            return Some(base + k);
        }
        base += 16;
    }
    if base == SHORT_STOP {
        return memchr3(b'`', b'\n', b'|', &bytes[base..]).map(|k| base + k);
    }
    // Fewer than 16 bytes left.
    let mut chunks = bytes[base..].chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let hits = zero_bytes(w ^ (ONES * u64::from(b'`')))
            | zero_bytes(w ^ (ONES * u64::from(b'\n')))
            | zero_bytes(w ^ (ONES * u64::from(b'|')));
        if hits != 0 {
            return Some(base + hits.trailing_zeros() as usize / 8);
        }
        base += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| matches!(b, b'`' | b'\n' | b'|'))
        .map(|k| base + k)
}

/// Whether `bytes[from..]`, at most sixteen bytes, holds a backtick, `\n` or `|` (a stop
/// of [`find_text_stop`]). Tested as the last sixteen bytes of `bytes`, the ones before
/// `from` masked out (see [`first_of_from`]): one group, with no loop exit to mispredict.
#[inline(always)]
pub(super) fn tail_has_text_stop(bytes: &[u8], from: usize) -> bool {
    let stop = |b: &u8| matches!(b, b'`' | b'\n' | b'|');
    match bytes.len().checked_sub(16) {
        Some(back) if from < bytes.len() => first_of_from(
            bytes[back..].try_into().expect("16 bytes"),
            [b'`', b'\n', b'|'],
            from - back,
        )
        .is_some(),
        _ => bytes[from..].iter().any(stop),
    }
}

/// The first `\n` of `bytes` (the end of a fence line or a code line). The first
/// [`SHORT_STOP`] bytes are looked at sixteen at a time (see [`first_of`]), fewer than
/// sixteen one by one, and a vector search goes on past them: such lines are short, and
/// the vector search's set-up cost per call was most of its time there.
#[inline(never)]
pub(super) fn find_newline(bytes: &[u8]) -> Option<usize> {
    let mut base = 0;
    while base < SHORT_STOP
        && let Some(g) = bytes.get(base..base + 16)
    {
        if let Some(k) = first_of(g.try_into().expect("16 bytes"), [b'\n']) {
            return Some(base + k);
        }
        base += 16;
    }
    let rest = &bytes[base..];
    match rest.len() < 16 {
        true => rest.iter().position(|&b| b == b'\n'),
        false => memchr(b'\n', rest),
    }
    .map(|k| base + k)
}

/// How many bytes [`find_text_stop`] looks at a word at a time before a vector search.
const SHORT_STOP: usize = 64;

/// The high bit of each zero byte of `w` set (and maybe of bytes above a zero byte: the
/// lowest set bit always marks the first zero byte, in little-endian order).
#[inline(always)]
fn zero_bytes(w: u64) -> u64 {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    w.wrapping_sub(ONES) & !w & HIGHS
}

/// Whether a line that starts with byte `b` (outside containers, not indented) is an
/// ordinary text line whatever follows: `b` starts no container marker (`>`, a bullet, a
/// digit), no thematic break (`_`), no heading, fence or table row, and is neither
/// whitespace nor a line's end.
#[inline]
pub(super) fn starts_plain_line(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b'>' | b'-' | b'*' | b'+' | b'_' | b'0'
            ..=b'9' | b'#' | b'`' | b'~' | b'|'
    )
}

/// What a line starts, as far as inline code spans care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BlockStart {
    /// Nothing: the line may continue a paragraph.
    None,
    /// An ATX heading (`#` to `######` then a space or the line's end).
    Heading,
    /// A list item (`-`, `*`, `+`, or 1 to 9 digits and `.` or `)`, then a space or the
    /// line's end) or a block quote (`>`).
    Other,
}

/// What the line whose first non-indentation bytes are `rest` starts, or `None` when
/// `rest` ends before that can be told.
pub(super) fn block_start(rest: &[u8]) -> Option<BlockStart> {
    // After a marker: a space, a tab or the line's end makes it a block start.
    let ends_marker = |i: usize| -> Option<bool> {
        rest.get(i)
            .map(|&b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    };
    let kind = match rest.first() {
        None => return None,
        Some(b'>') => BlockStart::Other,
        Some(b'#') => {
            let n = rest.iter().take(7).take_while(|&&b| b == b'#').count();
            if n == rest.len() && n < 7 {
                return None;
            }
            if n <= 6 && ends_marker(n)? {
                BlockStart::Heading
            } else {
                BlockStart::None
            }
        }
        Some(b'-' | b'*' | b'+') => {
            if ends_marker(1)? {
                BlockStart::Other
            } else {
                BlockStart::None
            }
        }
        Some(b'0'..=b'9') => {
            let n = rest
                .iter()
                .take(10)
                .take_while(|b| b.is_ascii_digit())
                .count();
            if n == rest.len() && n < 10 {
                return None;
            }
            if n <= 9 && matches!(rest.get(n), Some(b'.' | b')')) && ends_marker(n + 1)? {
                BlockStart::Other
            } else {
                BlockStart::None
            }
        }
        Some(_) => BlockStart::None,
    };
    Some(kind)
}

/// Whether byte `x` is a block quote's `>` in a line's prefix (only spaces, tabs and `>`
/// before it on its line): markup, not content a piece may show alone. Looks back at most
/// 64 bytes; `zero_starts_line` says whether byte 0 starts a line (a drained text may
/// start after other text on its line).
#[inline]
pub(super) fn is_quote_marker(bytes: &[u8], x: usize, zero_starts_line: bool) -> bool {
    if bytes[x] != b'>' {
        return false;
    }
    let from = x.saturating_sub(64);
    let mut i = x;
    while i > from {
        match bytes[i - 1] {
            b'\n' => return true,
            b' ' | b'\t' | b'>' => i -= 1,
            _ => return false,
        }
    }
    i == 0 && zero_starts_line
}

/// ASCII whitespace: space, tab, `\r`, `\n`.
#[inline]
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// Whether `bytes` holds only spaces, tabs and `\r`.
#[inline]
pub(super) fn is_blank(bytes: &[u8]) -> bool {
    bytes.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r')
}

#[inline]
pub(super) fn trim_cr(bytes: &[u8]) -> &[u8] {
    bytes.strip_suffix(b"\r").unwrap_or(bytes)
}

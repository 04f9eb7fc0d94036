//! Length metrics: how a channel counts the length of a text.
//!
//! Platforms disagree on what "4000 characters" means. Telegram and WhatsApp count UTF-16
//! code units (JavaScript's `String.length`), Discord counts Unicode scalar values, some
//! transports count bytes, and a person counts graphemes. Every limit in replystream is
//! expressed in the channel's [`LengthMetric`].
//!
//! Counting is done on the UTF-8 bytes without decoding: a scalar value is a byte that is not
//! a continuation byte, and a UTF-16 surrogate pair is a 4-byte sequence (leading byte
//! `0xF0..`). Both loops vectorise. Only [`LengthMetric::Graphemes`] runs grapheme
//! segmentation, and only over the text it is asked to measure; two ASCII chars in a row
//! are told apart without it.

use unicode_segmentation::GraphemeCursor;

/// How the length of a text is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LengthMetric {
    /// UTF-16 code units: JavaScript's `String.length`, Telegram's entity offsets.
    Utf16,
    /// Unicode scalar values (Rust `char`s), as Discord counts.
    #[default]
    Chars,
    /// UTF-8 bytes.
    Bytes,
    /// Extended grapheme clusters: what a reader sees as one character.
    Graphemes,
}

impl LengthMetric {
    /// Every metric, for tests and option parsing.
    pub const ALL: [LengthMetric; 4] = [
        LengthMetric::Utf16,
        LengthMetric::Chars,
        LengthMetric::Bytes,
        LengthMetric::Graphemes,
    ];

    /// The metric's name as the CLI and the C ABI spell it.
    pub fn name(self) -> &'static str {
        match self {
            LengthMetric::Utf16 => "utf16",
            LengthMetric::Chars => "chars",
            LengthMetric::Bytes => "bytes",
            LengthMetric::Graphemes => "graphemes",
        }
    }

    /// Parses a metric name (`utf16`/`utf-16`, `chars`, `bytes`, `graphemes`), ignoring case.
    pub fn from_name(name: &str) -> Option<LengthMetric> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
            .or_else(|| {
                name.eq_ignore_ascii_case("utf-16")
                    .then_some(LengthMetric::Utf16)
            })
    }

    /// The smallest text limit (and chunk max) accepted in this metric: room to close and
    /// reopen a fenced code block (at its widest standard form, `"   ```"`) around the
    /// widest grapheme cluster kept whole (the longest recommended emoji sequence, 10 code
    /// points): 24 chars, 29 UTF-16 units, 49 bytes, 15 graphemes. Smaller limits are
    /// refused with [`crate::Error::InvalidConfig`].
    pub const fn min_limit(self) -> usize {
        super::limits::min_limit(self)
    }

    /// The length of `text` in this metric.
    #[inline]
    pub fn len(self, text: &str) -> usize {
        match self {
            LengthMetric::Bytes => text.len(),
            LengthMetric::Chars => count_chars(text.as_bytes()),
            LengthMetric::Utf16 => count_utf16(text.as_bytes()),
            LengthMetric::Graphemes => count_graphemes(text),
        }
    }

    /// The length of one `char` in this metric. For [`LengthMetric::Graphemes`] this is 1,
    /// an upper bound: a char may extend the previous cluster and add nothing.
    #[inline]
    pub fn char_len(self, c: char) -> usize {
        match self {
            LengthMetric::Bytes => c.len_utf8(),
            LengthMetric::Utf16 => c.len_utf16(),
            LengthMetric::Chars | LengthMetric::Graphemes => 1,
        }
    }

    /// The largest byte index `i` such that `self.len(&text[..i]) <= budget` and `i` is a
    /// char boundary (a grapheme boundary for [`LengthMetric::Graphemes`]). Cost is
    /// proportional to the returned prefix, not to the whole text.
    pub fn floor_index(self, text: &str, budget: usize) -> usize {
        if budget == 0 {
            return 0;
        }
        // ASCII (the usual case) is one unit per byte in these metrics: a prefix of
        // `budget` ASCII bytes is the answer, found without counting.
        if self != LengthMetric::Graphemes && text.as_bytes().get(..budget).is_some_and(all_ascii) {
            return budget;
        }
        match self {
            LengthMetric::Bytes => floor_char_boundary(text, budget),
            LengthMetric::Chars => {
                // The budget+1-th char starts where the prefix must end.
                let (i, seen) = skip_blocks(text.as_bytes(), budget, |block| {
                    block.iter().map(|&b| usize::from(is_char_start(b))).sum()
                });
                let mut seen = seen;
                for (k, &b) in text.as_bytes()[i..].iter().enumerate() {
                    if is_char_start(b) {
                        if seen == budget {
                            return i + k;
                        }
                        seen += 1;
                    }
                }
                text.len()
            }
            LengthMetric::Utf16 => {
                let (i, used) = skip_blocks(text.as_bytes(), budget, |block| {
                    block.iter().map(|&b| utf16_units(b)).sum()
                });
                let mut used = used;
                for (k, &b) in text.as_bytes()[i..].iter().enumerate() {
                    if is_char_start(b) {
                        let w = utf16_units(b);
                        if used + w > budget {
                            return i + k;
                        }
                        used += w;
                    }
                }
                text.len()
            }
            LengthMetric::Graphemes => {
                let mut at = 0;
                for _ in 0..budget {
                    if at == text.len() {
                        break;
                    }
                    at = next_grapheme_boundary(text, at);
                }
                at
            }
        }
    }
}

/// The bytes of a block examined at once by [`skip_blocks`].
const BLOCK: usize = 32;

/// Skips whole blocks of `BLOCK` bytes from the start of `bytes` while the units counted in
/// them (`units` sums the units of the chars that start in a block) stay within `budget`.
/// Returns the byte index reached and the units before it; the caller walks on byte by
/// byte. No answer of that walk can fall inside a skipped block: every char starting in it
/// fits the budget with the chars before it. The index may be inside a char (a block can
/// end mid-char); the walk counts units at start bytes only, so that is harmless.
#[inline]
fn skip_blocks(
    bytes: &[u8],
    budget: usize,
    units: impl Fn(&[u8; BLOCK]) -> usize,
) -> (usize, usize) {
    let mut i = 0;
    let mut used = 0;
    while let Some(block) = bytes.get(i..i + BLOCK) {
        // A fixed-size block: the sum vectorises.
        let u = units(block.try_into().expect("BLOCK bytes"));
        if used + u > budget {
            break;
        }
        used += u;
        i += BLOCK;
    }
    (i, used)
}

/// UTF-16 units of the char starting with byte `b` (0 for a continuation byte).
#[inline(always)]
fn utf16_units(b: u8) -> usize {
    usize::from(is_char_start(b)) + usize::from(b >= 0xF0)
}

/// The grapheme boundary after the one at byte `at` of `text` (`at < text.len()`).
///
/// Fast path: an ASCII char followed by an ASCII char (or the end) is a whole cluster,
/// except CR LF, which is one. No rule of UAX #29 joins two ASCII chars other than CR LF
/// (the joining classes Extend, ZWJ, SpacingMark, Prepend, regional indicators, Hangul and
/// Extended_Pictographic hold no ASCII char), and the boundary before an ASCII char that
/// follows a non-ASCII cluster is found by the segmenter below, from `at`.
#[inline]
pub(crate) fn next_grapheme_boundary(text: &str, at: usize) -> usize {
    let bytes = text.as_bytes();
    let b = bytes[at];
    if b < 0x80 {
        match bytes.get(at + 1) {
            None => return at + 1,
            Some(&b'\n') if b == b'\r' => return at + 2,
            Some(&n) if n < 0x80 => return at + 1,
            _ => {}
        }
    }
    let mut cursor = GraphemeCursor::new(at, text.len(), true);
    match cursor.next_boundary(text, 0) {
        Ok(Some(next)) => next,
        _ => text.len(),
    }
}

/// Extended grapheme clusters in `text` (see [`next_grapheme_boundary`]).
fn count_graphemes(text: &str) -> usize {
    let mut at = 0;
    let mut n = 0;
    while at < text.len() {
        at = next_grapheme_boundary(text, at);
        n += 1;
    }
    n
}

impl std::fmt::Display for LengthMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for LengthMetric {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LengthMetric::from_name(s).ok_or_else(|| {
            format!("unknown length metric {s:?} (expected utf16, chars, bytes or graphemes)")
        })
    }
}

/// Whether `bytes` is all ASCII, as [`<[u8]>::is_ascii`] says, without its byte-by-byte
/// tail: the standard test reads 64-byte blocks, then the rest one byte at a time, which
/// was most of its cost on the few hundred bytes the chunker asks about. Here the rest is
/// one more block (the last 64 bytes, overlapping), or, below 64 bytes, 16-byte groups
/// with the last one overlapping.
#[inline]
pub(crate) fn all_ascii(bytes: &[u8]) -> bool {
    let n = bytes.len();
    if n >= 64 {
        return bytes[..n - n % 64].is_ascii() && bytes[n - 64..].is_ascii();
    }
    if n >= 16 {
        // An OR over the group, which the compiler makes one vector test.
        let high = |g: &[u8]| g.iter().fold(0u8, |any, &b| any | b) >= 0x80;
        return !bytes.chunks_exact(16).any(high) && !high(&bytes[n - 16..]);
    }
    bytes.is_ascii()
}

/// True for a byte that starts a UTF-8 sequence (is not a continuation byte `10xxxxxx`).
#[inline(always)]
fn is_char_start(b: u8) -> bool {
    (b as i8) >= -0x40
}

#[inline]
fn count_chars(bytes: &[u8]) -> usize {
    sum_bytes(bytes, |b| u8::from(is_char_start(b)))
}

/// Sums `f` over `bytes`, `f` giving at most 2 per byte. Blocks of `BLOCK` bytes are summed
/// in `u8` lanes (at most 64 per block, no overflow), which vectorises well.
#[inline(always)]
fn sum_bytes(bytes: &[u8], f: impl Fn(u8) -> u8) -> usize {
    let mut blocks = bytes.chunks_exact(BLOCK);
    let mut total = 0usize;
    for block in &mut blocks {
        total += usize::from(block.iter().fold(0u8, |acc, &b| acc + f(b)));
    }
    total
        + blocks
            .remainder()
            .iter()
            .map(|&b| usize::from(f(b)))
            .sum::<usize>()
}

#[inline]
fn count_utf16(bytes: &[u8]) -> usize {
    // One unit per scalar, plus one more for each 4-byte sequence (a surrogate pair).
    // Two simple passes vectorise better than one with two tests.
    count_chars(bytes) + sum_bytes(bytes, |b| u8::from(b >= 0xF0))
}

/// The largest char boundary `<= index` (clamped to `text.len()`).
#[inline]
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    let mut i = index;
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Whether byte index `index` of `text` lies on an extended grapheme cluster boundary.
/// Looks only at the text near `index` (regional-indicator runs excepted, which the
/// segmenter walks back through).
pub(crate) fn is_grapheme_boundary(text: &str, index: usize) -> bool {
    if index == 0 || index >= text.len() {
        return true;
    }
    if !text.is_char_boundary(index) {
        return false;
    }
    let mut cursor = GraphemeCursor::new(index, text.len(), true);
    // The whole text is offered as one chunk, so the cursor never asks for more context.
    cursor.is_boundary(text, 0).unwrap_or(true)
}

/// The largest grapheme boundary `<= index`, stepping back from `index` one boundary at a
/// time. Returns 0 when the cluster containing `index` starts the text. Looks only at the
/// text near `index`.
pub(crate) fn floor_grapheme_boundary(text: &str, index: usize) -> usize {
    let index = floor_char_boundary(text, index);
    if index == 0 || index == text.len() || is_grapheme_boundary(text, index) {
        return index;
    }
    let mut cursor = GraphemeCursor::new(index, text.len(), true);
    match cursor.prev_boundary(text, 0) {
        Ok(Some(b)) => b,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use unicode_segmentation::UnicodeSegmentation;

    /// One byte of 0x80 or more at each position of slices of every length around the
    /// group and block sizes (the overlapping last group or block included), against the
    /// standard test.
    #[test]
    fn all_ascii_agrees_with_the_standard_test() {
        for len in 0..200 {
            let text = vec![b'a'; len];
            assert!(all_ascii(&text), "{len}");
            for at in 0..len {
                for high in [0x80, 0xC3, 0xFF] {
                    let mut t = text.clone();
                    t[at] = high;
                    assert!(!all_ascii(&t), "{len} {at} {high:#x}");
                    assert_eq!(all_ascii(&t[..at]), t[..at].is_ascii(), "{len} {at}");
                    assert_eq!(
                        all_ascii(&t[at + 1..]),
                        t[at + 1..].is_ascii(),
                        "{len} {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn counts_match_std_definitions() {
        let samples = [
            "",
            "hello",
            "héllo wörld",
            "日本語のテキスト",
            "👨‍👩‍👧‍👦 family",
            "🇫🇷🇩🇪",
            "e\u{301}\u{302}",
            "a\r\nb",
        ];
        for s in samples {
            assert_eq!(LengthMetric::Bytes.len(s), s.len());
            assert_eq!(LengthMetric::Chars.len(s), s.chars().count());
            assert_eq!(LengthMetric::Utf16.len(s), s.encode_utf16().count());
            assert_eq!(LengthMetric::Graphemes.len(s), s.graphemes(true).count());
        }
    }

    #[test]
    fn floor_index_is_the_longest_fitting_prefix() {
        let s = "a😀b👨‍👩‍👧c🇫🇷é\u{301}日本";
        for metric in LengthMetric::ALL {
            for budget in 0..=metric.len(s) + 2 {
                let i = metric.floor_index(s, budget);
                assert!(s.is_char_boundary(i));
                assert!(metric.len(&s[..i]) <= budget, "{metric} {budget}");
                if i < s.len() {
                    // One more unit of text would not fit.
                    let next = s[i..].char_indices().nth(1).map_or(s.len(), |(j, _)| i + j);
                    if metric != LengthMetric::Graphemes {
                        assert!(metric.len(&s[..next]) > budget, "{metric} {budget}");
                    }
                }
            }
        }
    }

    #[test]
    fn grapheme_floor_steps_out_of_clusters() {
        let s = "x👨‍👩‍👧y";
        let family_start = 1;
        for i in family_start + 1..s.len() - 1 {
            if s.is_char_boundary(i) {
                assert_eq!(floor_grapheme_boundary(s, i), family_start, "at {i}");
            }
        }
        assert_eq!(floor_grapheme_boundary(s, s.len() - 1), s.len() - 1);
        let flags = "🇫🇷🇩🇪";
        assert_eq!(floor_grapheme_boundary(flags, 12), 8);
        assert_eq!(floor_grapheme_boundary(flags, 4), 0);
    }

    #[test]
    fn names_round_trip() {
        for m in LengthMetric::ALL {
            assert_eq!(m.name().parse::<LengthMetric>(), Ok(m));
        }
        assert_eq!(LengthMetric::from_name("UTF-16"), Some(LengthMetric::Utf16));
        assert!("furlongs".parse::<LengthMetric>().is_err());
    }
}

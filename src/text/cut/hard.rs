//! Hard cuts: the largest grapheme boundary that fits, when no break does.

use crate::text::markdown::FenceMarker;
use crate::text::metric::{
    floor_char_boundary, floor_grapheme_boundary, is_grapheme_boundary, next_grapheme_boundary,
};

use super::bounds::*;
use super::candidate::*;
use super::find::*;

/// The largest grapheme boundary `<= hi` after `start` that leaves some non-whitespace after
/// `shown_from` (`>= start`) in the piece, counting boundaries from `start`. When a single
/// grapheme is wider than the budget, the limit wins: the largest char boundary. When even
/// one char does not fit, progress wins: the end of the first non-whitespace char.
pub(crate) fn hard_cut(text: &str, start: usize, shown_from: usize, hi: usize) -> usize {
    let hi = hi.min(text.len());
    if hi > start {
        let g = start + floor_grapheme_boundary(&text[start..], hi - start);
        if shows(text, shown_from, g) {
            return g;
        }
        let c = floor_char_boundary(text, hi);
        if shows(text, shown_from, c) {
            return c;
        }
    }
    let first = text.as_bytes()[shown_from.min(text.len())..]
        .iter()
        .position(|&b| !is_ws(b))
        .map_or(text.len(), |i| shown_from + i);
    text[first..]
        .chars()
        .next()
        .map_or(text.len(), |c| first + c.len_utf8())
}

/// The largest hard cut of a piece starting at `start`, at most `hi`, that shows something
/// after `shown_from`, that `bounds` allow, whose cut line reads as it does in the text (no
/// fence line made by the cut, at either side), and inside the fence with marker `fence`
/// does not start the next piece with a line of marker chars only. With `whole_clusters`, a
/// cluster wider than the room is not cut into (`None` instead). Steps back one cluster at a
/// time.
#[allow(clippy::too_many_arguments)]
pub(super) fn checked_hard_cut(
    text: &str,
    start: usize,
    shown_from: usize,
    hi: usize,
    fence: Option<FenceMarker>,
    bounds: Option<ContentBounds>,
    whole_clusters: bool,
    complete: bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let hi = bounds.map_or(hi, |b| hi.min(b.last));
    if hi <= shown_from {
        return None;
    }
    let mut h = hard_cut(text, start, shown_from, hi);
    // Within bounds, a cut that would split a cluster is no cut: the unbounded plan decides.
    let whole_clusters = whole_clusters || bounds.is_some();
    if h > hi || (whole_clusters && !is_grapheme_boundary(&text[start..], h - start)) {
        return None;
    }
    let mut lines = LineStarts::new(start);
    loop {
        let next_line_ok = match fence {
            // The rest of the line, or the next line holding anything, is code.
            Some(m) => match bytes[h..].iter().position(|&b| !is_ws(b)) {
                Some(i) => {
                    let at = h + i;
                    let line = memchr::memrchr(b'\n', &bytes[h..at]).map_or(h, |j| h + j + 1);
                    starts_code(text, line, m)
                }
                None => true,
            },
            None => true,
        };
        // Inside a fence only a closing line would misread (checked above); outside, an
        // opening line.
        if next_line_ok
            && allows(bounds, h, h)
            && (fence.is_some() || !reads_as_fence_line_after_cut(bytes, h, complete))
            && !truncates_into_fence_line(text, &mut lines, h, fence)
        {
            return Some(h);
        }
        h = step_back(text, start, shown_from, h)?;
    }
}

/// The largest char boundary in `(shown_from, hi]`, inside the fence with marker `fence`,
/// inside a cluster glued to a run of marker chars (up to 3 spaces between), at which a piece starting at `start` may end with its cut line
/// reading as in the text and the next piece starting with the rest of that line as code
/// (not a closing line). Looks at most a few dozen chars back.
pub(super) fn char_cut_reading_right(
    text: &str,
    start: usize,
    shown_from: usize,
    hi: usize,
    fence: FenceMarker,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut lines = LineStarts::new(start);
    let mut h = floor_char_boundary(text, hi.min(text.len()));
    for _ in 0..64 {
        if h <= shown_from {
            return None;
        }
        let rest_is_code = match bytes[h..].iter().position(|&b| !is_ws(b)) {
            Some(i) => {
                let at = h + i;
                let line = memchr::memrchr(b'\n', &bytes[h..at]).map_or(h, |j| h + j + 1);
                starts_code(text, line, fence)
            }
            None => true,
        };
        // Only inside a cluster glued to a run of marker chars, or with up to 3 spaces
        // between (cutting after the cluster would start the next piece with a closing
        // line).
        let cluster_end = next_grapheme_boundary(text, floor_grapheme_boundary(text, h));
        let after = &bytes[cluster_end..];
        let spaces = after.iter().take(4).take_while(|&&b| b == b' ').count();
        let glued = spaces <= 3
            && after[spaces..]
                .iter()
                .take(3)
                .filter(|&&b| b == fence.ch)
                .count()
                == 3;
        if glued
            && shows(text, shown_from, h)
            && line_continues(bytes, h)
            && rest_is_code
            && !truncates_into_fence_line(text, &mut lines, h, Some(fence))
        {
            return Some(h);
        }
        h = floor_char_boundary(text, h - 1);
    }
    None
}

/// Whether a cut at `h` in the middle of a line starts the next piece with text that reads
/// as a fence line (or, unless `complete`, may still grow into one).
fn reads_as_fence_line_after_cut(bytes: &[u8], h: usize, complete: bool) -> bool {
    let rest = &bytes[h..];
    let indent = rest.iter().take(4).take_while(|&&b| b == b' ').count();
    h > 0
        && bytes[h - 1] != b'\n'
        && (reads_as_fence_line(rest)
            || (!complete && indent < 4 && partial_fence_at_end(&rest[indent..])))
}

/// A hard cut one grapheme earlier than `h`: before the last non-whitespace grapheme, if the
/// piece still shows something after `shown_from`.
pub(super) fn step_back(text: &str, start: usize, shown_from: usize, h: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let last = bytes[shown_from..h].iter().rposition(|&b| !is_ws(b))? + shown_from;
    let g = start + floor_grapheme_boundary(&text[start..], last - start);
    (g > shown_from && shows(text, shown_from, g)).then_some(g)
}

/// A line-break cut right before the line starting at `line_start`.
pub(super) fn cut_before_line(text: &str, start: usize, line_start: usize) -> Option<Cut> {
    let bytes = text.as_bytes();
    let mut p = line_start;
    while p > start && is_ws(bytes[p - 1]) {
        p -= 1;
    }
    (p > start && p < line_start && boundary_at(text, p)).then_some(Cut {
        end: p,
        sep_end: line_start,
        class: BreakClass::Line,
    })
}

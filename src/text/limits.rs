//! The limits a piece must respect, and the smallest limits under which every rule of the
//! text core can hold.
//!
//! A piece cut inside a fenced code block carries two synthetic lines, a reopening line
//! before its code and a closing line after it, and must still hold at least one whole
//! grapheme cluster of code. So the smallest workable limit is the cost of those two lines
//! plus the widest cluster that must never be split, counted in the channel's metric:
//!
//! - the synthetic lines of a fence at its widest standard form: 3 spaces of indent (the most
//!   CommonMark allows) and a 3-character marker, `"   ```\n"` and `"\n   ```"`, 7 + 7 units;
//! - the widest cluster kept whole: the longest emoji sequence recommended for general
//!   interchange (a kiss with two skin tones, 10 code points: 10 chars, 15 UTF-16 units,
//!   35 bytes; 1 grapheme).
//!
//! Hence 24 chars, 29 UTF-16 units, 49 bytes or 15 graphemes ([`min_limit`]). Under a smaller
//! limit a fence could not be closed and reopened around such a cluster, so the configuration
//! is refused ([`crate::Error::InvalidConfig`]). The same room also holds the 4 spaces that
//! continue an indented code line cut in its middle. Fences with longer markers or wider
//! clusters (e.g. long runs of combining marks) are kept balanced as long as a closing and a
//! reopening line fit around one char; a cluster wider than a piece's room is then cut at a
//! char boundary (the limit wins).

use super::cut::Reopen;
use super::markdown::FenceMarker;
use super::metric::LengthMetric;
use crate::Error;

/// The widest reopening line of a standard fence: 3 spaces of indent, a 3-char marker, `\n`.
const REOPEN_LINE: &str = "   ```\n";

/// The widest closing line of a standard fence, with the `\n` before it.
const CLOSE_LINE: &str = "\n   ```";

/// The widest grapheme cluster a cut never splits under an accepted limit: the longest RGI
/// emoji sequence (kiss: woman, man, light and medium-light skin tones; 10 code points).
pub(crate) const WIDEST_GRAPHEME: &str =
    "\u{1F469}\u{1F3FB}\u{200D}\u{2764}\u{FE0F}\u{200D}\u{1F48B}\u{200D}\u{1F468}\u{1F3FC}";

/// The line cap below which a fence cannot be repaired: a reopening line, one line of code
/// and a closing line.
pub(crate) const MIN_LINES: usize = 3;

/// Units of `text` in `metric`, at compile time (graphemes: only for texts whose clusters
/// are single chars, or a single cluster, as used here).
const fn const_len(text: &str, metric: LengthMetric) -> usize {
    let bytes = text.as_bytes();
    let mut units = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let starts = (b as i8) >= -0x40;
        units += match metric {
            LengthMetric::Bytes => 1,
            LengthMetric::Chars | LengthMetric::Graphemes => starts as usize,
            LengthMetric::Utf16 => starts as usize + (b >= 0xF0) as usize,
        };
        i += 1;
    }
    units
}

/// The widest grapheme cluster kept whole, in `metric` units.
pub(crate) const fn widest_grapheme(metric: LengthMetric) -> usize {
    match metric {
        LengthMetric::Graphemes => 1,
        _ => const_len(WIDEST_GRAPHEME, metric),
    }
}

/// The smallest limit (text limit, chunk max, split limit) accepted in `metric`: the
/// synthetic lines of a repaired standard fence plus the widest cluster kept whole. See the
/// module docs.
pub(crate) const fn min_limit(metric: LengthMetric) -> usize {
    const_len(REOPEN_LINE, metric) + const_len(CLOSE_LINE, metric) + widest_grapheme(metric)
}

/// Checks a limit against [`min_limit`]: an [`Error::InvalidConfig`] naming `field`, the
/// smallest value that works and why, when `value` is below it.
pub(crate) fn check_limit(field: &str, value: usize, metric: LengthMetric) -> Result<(), Error> {
    let min = min_limit(metric);
    if value >= min {
        return Ok(());
    }
    Err(Error::InvalidConfig(
        format!(
            "{field} must be at least {min}, counted in {metric} (got {value}): the smallest \
             limit that holds a code fence's closing and reopening lines around the widest \
             character cluster kept whole"
        )
        .into(),
    ))
}

/// The widest char in the metric: the least room that always allows progress.
pub(crate) const fn widest_char(metric: LengthMetric) -> usize {
    match metric {
        LengthMetric::Bytes => 4,
        LengthMetric::Utf16 => 2,
        LengthMetric::Chars | LengthMetric::Graphemes => 1,
    }
}

/// The limits a piece must respect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Limits {
    /// How lengths are counted.
    pub metric: LengthMetric,
    /// The largest piece, synthetic lines included.
    pub max: usize,
    /// The most lines in a piece, synthetic lines included.
    pub max_lines: Option<usize>,
}

impl Limits {
    /// How a fence with opening line `open_line` is reopened after a cut inside it: the
    /// original line when it leaves room for the widest cluster kept whole, else the bare
    /// marker; `None` when the limits leave no room to close and reopen it around even one
    /// char (then a cut inside it is a plain cut: the limit wins over fence balance).
    pub(crate) fn repair<'a>(&self, marker: FenceMarker, open_line: &'a str) -> Option<Reopen<'a>> {
        if self.max_lines.is_some_and(|m| m < MIN_LINES) {
            return None;
        }
        let close = marker.close_len() + 1;
        let widest = widest_grapheme(self.metric);
        let full = Reopen::Fence {
            marker,
            line: Some(open_line),
            quoted: false,
        };
        // An opening line that is not known (never the case for a fence that was seen) is
        // reopened bare.
        if !open_line.is_empty() && full.cost(self.metric) + close + widest <= self.max {
            return Some(full);
        }
        let bare = Reopen::Fence {
            marker,
            line: None,
            quoted: false,
        };
        (bare.cost(self.metric) + close + widest_char(self.metric) <= self.max).then_some(bare)
    }

    /// The largest `end` such that `text[start..end]` holds at most `units` and, with
    /// `extra_lines` synthetic lines, at most `max_lines` lines.
    pub(crate) fn window_end(
        &self,
        text: &str,
        start: usize,
        units: usize,
        extra_lines: usize,
    ) -> usize {
        let mut hi = start + self.metric.floor_index(&text[start..], units);
        if let Some(max_lines) = self.max_lines {
            let newlines = max_lines.saturating_sub(1 + extra_lines);
            if let Some(nl) = memchr::memchr_iter(b'\n', &text.as_bytes()[start..hi]).nth(newlines)
            {
                hi = start + nl;
            }
        }
        hi
    }

    /// Whether `text[start..end]`, with synthetic lines costing `extra_units` and
    /// `extra_lines`, fits. Cost is bounded by the limit, not by the text.
    pub(crate) fn fits(
        &self,
        text: &str,
        start: usize,
        end: usize,
        extra_units: usize,
        extra_lines: usize,
    ) -> bool {
        extra_units <= self.max
            && self.window_end(&text[..end], start, self.max - extra_units, extra_lines) == end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_limits_come_from_the_real_costs() {
        for metric in LengthMetric::ALL {
            assert_eq!(
                min_limit(metric),
                metric.len(REOPEN_LINE) + metric.len(CLOSE_LINE) + metric.len(WIDEST_GRAPHEME),
                "{metric}"
            );
            assert_eq!(widest_grapheme(metric), metric.len(WIDEST_GRAPHEME));
        }
        assert_eq!(min_limit(LengthMetric::Chars), 24);
        assert_eq!(min_limit(LengthMetric::Utf16), 29);
        assert_eq!(min_limit(LengthMetric::Bytes), 49);
        assert_eq!(min_limit(LengthMetric::Graphemes), 15);
    }
}

//! The synthetic text a piece starts with when it continues code, and what it costs.

use crate::text::limits::{Limits, widest_char, widest_grapheme};
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{ContainerPrefix, FenceMarker};
use crate::text::metric::LengthMetric;

/// Whether the piece that starts at byte `at` of `text`, inside a fence with `marker`, goes
/// on in the middle of a line of its code in a block quote (the prefix holds a `>`), and
/// `limits` leave room for the prefix after the reopening line and the closing line, as
/// [`Limits::repair`] asks for a reopened fence: room for the widest cluster after the
/// fence's own opening line, for one char after the bare marker (a cluster wider than the
/// room left is then cut at a char boundary: the limit wins).
///
/// `line` is the reopening line (`None`: the bare marker).
pub(crate) fn quoted_after(
    text: &str,
    limits: &Limits,
    marker: &FenceMarker,
    line: Option<&str>,
    at: usize,
) -> bool {
    // (A piece that starts with the line's break holds nothing more of the line.)
    let mid_line = at > 0
        && at < text.len()
        && text.as_bytes()[at - 1] != b'\n'
        && !matches!(text.as_bytes()[at], b'\n' | b'\r');
    let reopen = line.map_or(marker.close_len(), |l| limits.metric.len(l)) + 1;
    let room = match line {
        Some(_) => widest_grapheme(limits.metric),
        None => widest_char(limits.metric),
    };
    mid_line
        && marker.prefix.as_str().contains('>')
        && reopen + marker.prefix.len() + marker.close_len() + 1 + room <= limits.max
}

/// The synthetic text a piece starts with when it continues code cut in the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reopen<'a> {
    /// A fence that continues: its original opening line (info string included), or the
    /// bare marker (`None`) when that line leaves no room for code.
    Fence {
        /// The fence's marker.
        marker: FenceMarker,
        /// The original opening line, or `None` for the bare marker.
        line: Option<&'a str>,
        /// The piece goes on in the middle of a code line of a fence in a block quote: the
        /// container prefix (its `>` markers) follows the reopened line, so that the rest of
        /// the line stays in the quote, and in the fence.
        quoted: bool,
    },
    /// A fence whose opening line was cut in its middle (a long info string): the next
    /// piece starts with the bare marker and goes on with the rest of that line, so the rest
    /// is read as the info string again, never as code or prose.
    Marker {
        /// The fence's marker.
        marker: FenceMarker,
        /// A space after the marker, as the rest of the line starts with the marker's
        /// char (glued, it would lengthen the marker run).
        space: bool,
    },
    /// An indented code line cut in its middle continues after 4 spaces of indentation,
    /// so that it still reads as code; in a block quote, after the quote's markers and the
    /// space after them first (`quote`, empty outside quotes), so that it still reads as
    /// code in the quote.
    Indent {
        /// The quote markers of the code's container prefix (see
        /// [`IndentedSpan::quote`](crate::text::markdown::IndentedSpan::quote)).
        quote: ContainerPrefix,
    },
    /// A table cut between two rows goes on under its header and delimiter rows again, so
    /// that the rest still renders as a table.
    Table {
        /// The header row, its line break and the delimiter row (no final `\n`), as
        /// written, container prefixes included.
        head: &'a str,
        /// How many bytes at `head`'s start are the header line's container prefix, shown
        /// blanked (`>` and tabs kept, list markers as spaces: a list item's first line
        /// repeated must not open another item).
        blank: usize,
    },
    /// Inline delimiters open at the cut (an inline code span's backtick run, emphasis)
    /// open again.
    Delims(SpanDelims),
}

impl Reopen<'_> {
    /// The indentation that continues an indented code line.
    pub(crate) const INDENT: &'static str = "    ";

    /// The continuation of an indented code line outside any quote: 4 spaces.
    pub(crate) const PLAIN_INDENT: Reopen<'static> = Reopen::Indent {
        quote: ContainerPrefix::NONE,
    };

    /// The synthetic start of a piece that goes on in the middle of a line of an indented
    /// code block whose lines carry the quote markers `quote`: they and a space come
    /// before the 4 spaces where `limits` leave room after them for the widest cluster,
    /// else (the smallest limits) the 4 spaces alone, which leave the quote.
    pub(crate) fn indent_in(quote: ContainerPrefix, limits: &Limits) -> Reopen<'static> {
        let fits = !quote.is_empty()
            && quote.len() + 1 + Self::INDENT.len() + widest_grapheme(limits.metric) <= limits.max;
        match fits {
            true => Reopen::Indent { quote },
            false => Self::PLAIN_INDENT,
        }
    }

    /// The length of the synthetic text (a fence line with its `\n`, or the indentation).
    pub(crate) fn cost(&self, metric: LengthMetric) -> usize {
        match self {
            Reopen::Fence {
                marker,
                line,
                quoted,
            } => {
                line.map_or(marker.close_len(), |l| metric.len(l))
                    + 1
                    + if *quoted { marker.prefix.len() } else { 0 }
            }
            Reopen::Marker { marker, space } => marker.close_len() + usize::from(*space),
            Reopen::Indent { quote } => match quote.is_empty() {
                true => Self::INDENT.len(),
                false => quote.len() + 1 + Self::INDENT.len(),
            },
            // Blanking keeps the length: the prefix is ASCII.
            Reopen::Table { head, .. } => metric.len(head) + 1,
            Reopen::Delims(d) => d.len(),
        }
    }

    /// The synthetic lines it adds.
    pub(crate) fn lines(&self) -> usize {
        match self {
            Reopen::Fence { .. } => 1,
            Reopen::Table { head, .. } => 1 + memchr::memchr_iter(b'\n', head.as_bytes()).count(),
            Reopen::Marker { .. } | Reopen::Indent { .. } | Reopen::Delims(_) => 0,
        }
    }

    /// The cost of the closing line the piece may need (a reopened fence can be cut again).
    pub(crate) fn close_cost(&self) -> usize {
        match self {
            Reopen::Fence { marker, .. } | Reopen::Marker { marker, .. } => marker.close_len() + 1,
            Reopen::Indent { .. } | Reopen::Table { .. } => 0,
            // The piece may be cut inside the same delimiters again.
            Reopen::Delims(d) => d.len(),
        }
    }

    /// Appends the synthetic text.
    pub(crate) fn push_to(&self, out: &mut String) {
        match self {
            Reopen::Fence {
                marker,
                line,
                quoted,
            } => {
                match line {
                    Some(l) => marker.push_open_line(l, out),
                    None => marker.push_close(out),
                }
                out.push('\n');
                if *quoted {
                    out.push_str(marker.prefix.as_str());
                }
            }
            Reopen::Marker { marker, space } => {
                marker.push_close(out);
                if *space {
                    out.push(' ');
                }
            }
            Reopen::Indent { quote } => {
                if !quote.is_empty() {
                    out.push_str(quote.as_str());
                    out.push(' ');
                }
                out.push_str(Self::INDENT);
            }
            Reopen::Table { head, blank } => {
                let blank = (*blank).min(head.len());
                out.extend(head.as_bytes()[..blank].iter().map(|&b| match b {
                    b'>' | b'\t' => char::from(b),
                    _ => ' ',
                }));
                out.push_str(&head[blank..]);
                out.push('\n');
            }
            Reopen::Delims(d) => d.push_open(out),
        }
    }
}

/// What the synthetic start of a piece costs: units and lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReopenCost {
    /// Units of the synthetic text.
    pub units: usize,
    /// Lines it adds.
    pub lines: usize,
}

impl ReopenCost {
    /// The cost of `reopen` in `metric`.
    pub(crate) fn of(reopen: Option<Reopen<'_>>, metric: LengthMetric) -> ReopenCost {
        reopen.map_or(ReopenCost::default(), |r| ReopenCost {
            units: r.cost(metric),
            lines: r.lines(),
        })
    }
}

/// Appends the display text of a piece: the synthetic start, the source, the synthetic
/// closing line.
pub(crate) fn build_piece(
    source: &str,
    reopen: Option<Reopen<'_>>,
    close: Option<FenceMarker>,
    out: &mut String,
) {
    if let Some(r) = reopen {
        r.push_to(out);
    }
    out.push_str(source);
    if let Some(m) = close {
        out.push('\n');
        m.push_close(out);
    }
}

/// The least room a piece keeps after a synthetic start `reopen`: the synthetic text, and
/// the closing line it may need.
pub(crate) fn reserve_after(reopen: Option<Reopen<'_>>, metric: LengthMetric) -> usize {
    reopen.map_or(0, |r| r.cost(metric) + r.close_cost())
}

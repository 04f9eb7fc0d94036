//! Where a piece starts showing, how strictly a cut avoids code, and the content a cut must leave.

use crate::text::dedent::deep_prefix;
use crate::text::limits::{Limits, widest_grapheme};
use crate::text::markdown::FenceMarker;
use crate::text::metric::{is_grapheme_boundary, next_grapheme_boundary};

use super::candidate::*;
use super::reopen::*;

/// Where a piece whose separator ends at `q`, and which starts with the synthetic text
/// `reopen`, starts showing text. The whitespace up to the last line break before the next
/// non-whitespace belongs to the separator (a piece never starts with a blank line), and so
/// does the part of the indentation after it that would not leave room, within `max`, for
/// the synthetic lines (`reopen` and the closing line it may need) and the first cluster (as wide as the widest cluster kept whole while it may still grow, unless
/// `complete`). An indentation kept before a fence-like run keeps at least 4 columns, so that
/// the line does not start to read as a fence line. Returns `text.len()` when only
/// whitespace follows `q`.
pub(crate) fn shown_start(
    text: &str,
    q: usize,
    limits: &Limits,
    reopen: Option<Reopen<'_>>,
    complete: bool,
) -> usize {
    let reserve = reserve_after(reopen, limits.metric);
    let bytes = text.as_bytes();
    let mut s = q;
    let mut r = q;
    while r < bytes.len() && is_ws(bytes[r]) {
        if bytes[r] == b'\n' {
            s = r + 1;
        }
        r += 1;
    }
    if r == bytes.len() {
        return r;
    }
    if r > s && bytes[r] >= 0x80 && !is_grapheme_boundary(text, r) {
        // The last whitespace char carries the combining mark that follows it.
        r -= 1;
    }
    if matches!(reopen, Some(Reopen::Delims(_))) {
        // After reopened inline delimiters, whitespace would be inside the span (shown in a
        // code span, or breaking the delimiter's flanking): all of it is the separator.
        return r;
    }
    // Spaces, tabs and `\r` are one unit each in every metric.
    let indent = r - s;
    if indent == 0 {
        return s;
    }
    // A cluster that the text ends in may still grow: count the widest one kept whole.
    let next = next_grapheme_boundary(text, r);
    let mut first = limits.metric.len(&text[r..next]);
    if next == text.len() && !complete {
        first = first.max(widest_grapheme(limits.metric));
    }
    let room = limits.max.saturating_sub(reserve + first);
    if indent <= room {
        return s;
    }
    // In a fence that the piece shows de-indented by its items' columns, only the columns
    // past them are the code's own: shown from inside the indentation (the first line is
    // not de-indented then), the piece keeps exactly those, as the de-indented line has
    // them, where they fit.
    if let Some(own) = own_code_indent(reopen, &bytes[s..r])
        && own <= room
    {
        return r - own;
    }
    // A line indented 4 or more is not a fence line; shown with less it might read as one:
    // outside a fence as an opening line, inside the reopened fence as its closing line.
    let line_end = memchr::memchr(b'\n', &bytes[r..]).map_or(bytes.len(), |i| r + i);
    let misreads = match reopen {
        Some(Reopen::Fence { marker, .. }) => marker.is_closed_by(&text[r..line_end]),
        _ => starts_like_fence(&bytes[r..]),
    };
    let keep = if room < 4 && indent >= 4 && misreads {
        4
    } else {
        room
    };
    r - keep
}

/// The columns of `indent` (a code line's indentation, a piece starting inside it) that
/// are the code's own, past the container columns that de-indenting a piece which reopens
/// the fence takes off ([`deep_prefix`]); `None` outside such a fence, in a quote, or where
/// a tab makes bytes and columns differ.
fn own_code_indent(reopen: Option<Reopen<'_>>, indent: &[u8]) -> Option<usize> {
    let Some(Reopen::Fence {
        marker,
        quoted: false,
        ..
    }) = reopen
    else {
        return None;
    };
    let cols = deep_prefix(&marker);
    (cols > 0 && indent.iter().all(|&b| b == b' ')).then(|| indent.len().saturating_sub(cols))
}

/// How strictly a cut must avoid code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Safety {
    /// Outside fences, indented code, inline code spans and undecided lines.
    Strict,
    /// Inline code spans may be cut (for a span longer than a piece).
    InCodeSpan,
    /// Tables may be cut (for a row longer than a piece).
    InTable,
    /// Tables, and links, images, autolinks and URLs in them, may be cut (for a row longer
    /// than a piece whose window holds no cut outside them).
    InTableLink,
    /// Links, images, autolinks and URLs may be cut (for a window that holds no cut
    /// outside them).
    InLink,
    /// A stretch before a quoted line that a message starting in it would show as indented
    /// code may be cut (for a stretch longer than a piece: any cut there shows it so).
    InQuotedStretch,
}

/// A cut must leave content in its piece and after it: the piece must end after `first`
/// and the next piece must start at or before `last` (byte positions of content, see
/// [`MarkdownScanner::first_content`](crate::text::markdown::MarkdownScanner::first_content)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ContentBounds {
    /// The first content byte of the piece's text.
    pub first: usize,
    /// The last content byte of the text known.
    pub last: usize,
}

impl ContentBounds {
    /// Whether a cut ending the piece at `end`, the next piece starting at `sep_end`, leaves
    /// content on both sides.
    #[inline]
    pub(crate) fn allows(&self, end: usize, sep_end: usize) -> bool {
        end > self.first && sep_end <= self.last
    }
}

/// [`ContentBounds::allows`], with no bounds allowing everything.
#[inline]
pub(super) fn allows(bounds: Option<ContentBounds>, end: usize, sep_end: usize) -> bool {
    bounds.is_none_or(|b| b.allows(end, sep_end))
}

/// The start of the line that positions at or below the last one asked about lie on,
/// for searches that walk backward (each line is found once).
pub(super) struct LineStarts {
    /// The piece's start: a line is shown from there at the earliest.
    floor: usize,
    known: Option<usize>,
}

impl LineStarts {
    pub(super) fn new(floor: usize) -> Self {
        LineStarts { floor, known: None }
    }

    /// The start of the displayed line holding byte position `p` (queried at decreasing
    /// `p`).
    fn at(&mut self, bytes: &[u8], p: usize) -> usize {
        match self.known {
            Some(ls) if ls <= p => ls,
            _ => {
                let ls = memchr::memrchr(b'\n', &bytes[self.floor..p])
                    .map_or(self.floor, |i| self.floor + i + 1);
                self.known = Some(ls);
                ls
            }
        }
    }
}

/// Whether a cut at `end` leaves the piece's last line reading as a fence line it was not:
/// the line is cut in its middle, and its shown part reads as a closing line of the fence
/// `fence` the cut falls in, or, outside fences, as an opening line. (The source line itself
/// is neither: a real opening line is only cut by
/// [`Planner::plan`](super::Planner::plan)'s opening-line rule.)
pub(super) fn truncates_into_fence_line(
    text: &str,
    lines: &mut LineStarts,
    end: usize,
    fence: Option<FenceMarker>,
) -> bool {
    let bytes = text.as_bytes();
    line_continues(bytes, end) && {
        let shown = &text[lines.at(bytes, end)..end];
        match fence {
            Some(m) => m.is_closed_by(shown),
            None => FenceMarker::parse_open(shown).is_some(),
        }
    }
}

//! The planner: one forced cut in a window, and how the next piece starts.

use crate::text::limits::{Limits, widest_grapheme};
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{
    CodeSpan, ContainerPrefix, FenceMarker, FenceSpan, IndentedSpan, MarkdownScanner, TableSpan,
};
use crate::text::metric::floor_grapheme_boundary;

use super::bounds::*;
use super::candidate::*;
use super::find::*;
use super::hard::*;
use super::reopen::*;

/// How the piece after a cut starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextStart {
    /// With its own text.
    Plain,
    /// With a synthetic opening line of the fence closed at the end of the cut piece:
    /// the original line, or the bare marker.
    Fence {
        /// Reopen with the bare marker.
        bare: bool,
    },
    /// With the bare marker of the fence whose opening line the cut fell in, the rest of
    /// that line right after it (after a space when the rest starts with the marker's
    /// char).
    OpenLine {
        /// A space between the marker and the rest.
        space: bool,
    },
    /// With the indentation of an indented code line cut in its middle.
    Indent,
    /// With the header and delimiter rows of the table cut between two of its rows.
    Table,
    /// The piece ends with these inline delimiters closed (synthetic), and the next one
    /// starts with them reopened: the cut fell inside an inline code span longer than a
    /// piece, or inside emphasis.
    Delims(SpanDelims),
}

/// A cut chosen when a piece must end (forced, or over the limit), whether the piece must
/// close a fence it ends inside, and how the next piece starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Planned {
    /// The cut.
    pub cut: Cut,
    /// The fence the piece ends inside and closes with a synthetic line.
    pub close: Option<FenceSpan>,
    /// How the next piece starts.
    pub next: NextStart,
}

impl Planned {
    fn plain(cut: Cut) -> Planned {
        Planned {
            cut,
            close: None,
            next: NextStart::Plain,
        }
    }
}

/// Everything a forced cut needs to know about the text.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Planner<'a> {
    /// The text known so far; cuts fall inside it.
    pub text: &'a str,
    /// The scanner, fed through `text` (positions relative to `text`).
    pub scanner: &'a MarkdownScanner,
    /// The limits.
    pub limits: Limits,
    /// The break classes in preference order.
    pub order: &'a [BreakClass],
    /// No more text will come (a forced drain): a whitespace run at the end of `text` is a
    /// break, and its last line is final.
    pub complete: bool,
    /// The opening line of a fence whose opening line is no longer in `text`.
    pub continued_line: Option<&'a str>,
    /// The header and delimiter rows of a table whose header is no longer in `text`.
    pub continued_table: Option<&'a str>,
    /// Only cuts at breaks (code line breaks included): no hard cut, no cut inside a line.
    pub breaks_only: bool,
}

impl<'a> Planner<'a> {
    /// The opening line of `fence` (without `\r`).
    pub(crate) fn open_line(&self, fence: &FenceSpan) -> &'a str {
        if fence.continued {
            return self.continued_line.unwrap_or("");
        }
        let line = &self.text[fence.start..fence.open_end.min(self.text.len())];
        line.strip_suffix('\r').unwrap_or(line)
    }

    /// The header and delimiter rows of `table` (no final `\n`), when known, and the bytes
    /// of its container prefix to blank (see [`Reopen::Table`]).
    pub(crate) fn table_head(&self, table: &TableSpan) -> Option<(&'a str, usize)> {
        let head = match table.continued {
            // Saved with the prefix blanked already.
            true => (self.continued_table?, 0),
            false => (
                &self.text[table.start..table.delim_end.min(self.text.len())],
                table.prefix_len,
            ),
        };
        (!head.0.is_empty()).then_some(head)
    }

    /// Whether the piece that starts at `at`, inside a fence with `marker`, goes on in the
    /// middle of a code line of a block quote, and the limits leave room for the quote
    /// prefix after the reopened line (see [`Reopen::Fence`]).
    pub(crate) fn quoted_after(&self, marker: &FenceMarker, line: Option<&str>, at: usize) -> bool {
        quoted_after(self.text, &self.limits, marker, line, at)
    }

    /// How `fence` is reopened after a cut inside it, if it can be.
    pub(crate) fn repair(&self, fence: &FenceSpan) -> Option<Reopen<'a>> {
        self.limits.repair(fence.marker, self.open_line(fence))
    }

    /// The synthetic line that starts the piece after `planned`, if any.
    pub(crate) fn next_reopen(&self, planned: &Planned) -> Option<Reopen<'a>> {
        match (planned.next, planned.close) {
            (NextStart::Fence { bare }, Some(f)) => {
                let mut line = (!bare).then(|| self.open_line(&f));
                let at = planned.cut.sep_end;
                let mut quoted = self.quoted_after(&f.marker, line, at);
                // The bare marker where it leaves room for the quote prefix and the line
                // does not.
                if !quoted && line.is_some() && self.quoted_after(&f.marker, None, at) {
                    (line, quoted) = (None, true);
                }
                Some(Reopen::Fence {
                    marker: f.marker,
                    line,
                    quoted,
                })
            }
            (NextStart::OpenLine { space }, Some(f)) => Some(Reopen::Marker {
                marker: f.marker,
                space,
            }),
            (NextStart::Indent, _) => Some(Reopen::indent_in(
                self.scanner
                    .indented_at(planned.cut.end)
                    .map_or(ContainerPrefix::NONE, |b| b.quote),
                &self.limits,
            )),
            (NextStart::Table, _) => {
                let table = self.scanner.table_at(planned.cut.end)?;
                let (head, blank) = self.table_head(table)?;
                Some(Reopen::Table { head, blank })
            }
            (NextStart::Delims(d), _) => Some(Reopen::Delims(d)),
            _ => None,
        }
    }

    /// The content a piece starting at `start` and the text after it must keep (see
    /// [`ContentBounds`]); `None` when the text holds no content to keep on both sides.
    pub(crate) fn content_bounds(&self, start: usize) -> Option<ContentBounds> {
        let end = self.text.len();
        let first = self.scanner.first_content(self.text, start, end).ok()?;
        let last = self.scanner.last_content(self.text, start, end)?;
        (first < last).then_some(ContentBounds { first, last })
    }

    /// Chooses the cut for a piece starting at `start` (after synthetic text costing
    /// `reopen`) that must end before the text does: a break in `[min_units, max]` in
    /// `order`; then a break anywhere that fits, if `forced` (a forced drain) or if a hard
    /// cut would fall inside code or a line that may open a fence (never cut inside code
    /// while a cut outside it is possible); then, inside code, a line break of the code (or,
    /// in an inline code span, a break inside it); then a hard cut. Every cut leaves content
    /// on both sides when the text allows it (see [`ContentBounds`]).
    ///
    /// Unless `forced`, while the text's last line is still undecided (it may turn out to be
    /// a fence line), the cut falls at a break before that line and leaves content between
    /// them; `None` when there is no such cut: a streaming caller waits for more text (the
    /// line's end, or the code after it). A `forced` plan always has a cut.
    ///
    /// A cut inside emphasis, strong emphasis or strikethrough closes their delimiters at
    /// the end of the piece and reopens them at the start of the next
    /// ([`NextStart::Delims`]), within the limit: when they do not fit beside the cut, the
    /// plan is made again with room for them.
    pub(crate) fn plan(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
    ) -> Option<Planned> {
        let mut reserve = 0;
        let mut planned = None;
        for _ in 0..3 {
            let room = Planner {
                limits: Limits {
                    max: self.limits.max.saturating_sub(reserve),
                    ..self.limits
                },
                ..*self
            };
            let Some(plain) = room.plan_cut(start, reopen, min_units, forced) else {
                return planned;
            };
            let Some((with, extra)) = self.with_emphasis(start, reopen, plain) else {
                return Some(plain);
            };
            if let Some(with) = with {
                return Some(with);
            }
            planned = Some(plain);
            reserve += extra;
        }
        planned
    }

    /// `planned` with the emphasis open at its cut closed and reopened: `None` when none is
    /// open there (or it cannot be repaired: too many delimiters, too little room in any
    /// piece), else the repaired plan if it fits, and the units the delimiters need.
    fn with_emphasis(
        &self,
        start: usize,
        reopen: ReopenCost,
        planned: Planned,
    ) -> Option<(Option<Planned>, usize)> {
        let inner = match planned.next {
            NextStart::Plain => SpanDelims::NONE,
            NextStart::Delims(d) => d,
            _ => return None,
        };
        if planned.close.is_some() {
            return None;
        }
        let mut delims = self.scanner.emphasis_at(planned.cut.end);
        if delims.is_empty() || !delims.extend(inner) {
            return None;
        }
        let extra = delims.len() - inner.len();
        // The next piece holds them twice (reopened, maybe closed again) and a char.
        if 2 * delims.len() + crate::text::limits::widest_char(self.limits.metric) > self.limits.max
        {
            return None;
        }
        let fits = self.limits.fits(
            self.text,
            start,
            planned.cut.end,
            reopen.units + delims.len(),
            reopen.lines,
        );
        let repaired = Planned {
            next: NextStart::Delims(delims),
            ..planned
        };
        Some((fits.then_some(repaired), extra))
    }

    /// [`Planner::plan`] without the emphasis repair.
    fn plan_cut(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
    ) -> Option<Planned> {
        if !forced && self.scanner.last_line_undecided(self.text) {
            // Nothing may be cut inside or right before a line that may be a fence line:
            // plan within the text before it, keeping content after the cut, or wait.
            let line_start = self.scanner.line_start();
            if line_start <= start {
                return None;
            }
            // Only at a break: a hard cut now would be a poor one made for a line that may
            // still turn out to be text, or code that arrives next.
            let before = Planner {
                text: &self.text[..line_start],
                breaks_only: true,
                ..*self
            };
            let bounds = before.content_bounds(start)?;
            return before.plan_within(start, reopen, min_units, forced, Some(bounds));
        }
        let bounds = self.content_bounds(start);
        if let Some(planned) = self.plan_within(start, reopen, min_units, forced, bounds) {
            return Some(planned);
        }
        self.plan_within(start, reopen, min_units, forced, None)
    }

    /// [`Planner::plan`] within `bounds`. Always a cut without bounds.
    fn plan_within(
        &self,
        start: usize,
        reopen: ReopenCost,
        min_units: usize,
        forced: bool,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        // No cut may leave the text after it without content.
        let hi = limits
            .window_end(text, start, avail, reopen.lines)
            .min(bounds.map_or(usize::MAX, |b| b.last));
        let find = |lo: usize, hi: usize, safety: Safety| {
            find_cut(
                text,
                self.scanner,
                start,
                lo,
                hi,
                self.order,
                self.complete,
                safety,
                bounds,
            )
        };
        // A cut right before a fence whose opening line leaves no room for code would start
        // the next piece with fence lines only: the head of that line ends this piece instead,
        // after the text before it, and the fence goes on under a bare marker.
        let plain = |cut: Cut| {
            self.crowded_fence_at(cut.sep_end)
                .and_then(|f| self.head_after_text(start, reopen, &f, bounds))
                .unwrap_or(Planned::plain(cut))
        };
        let content_min = min_units.saturating_sub(reopen.units);
        // The end of the range the search below `min` must still look at.
        let mut below = hi;
        if content_min > 1 {
            let lo = start + limits.metric.floor_index(&text[start..], content_min - 1) + 1;
            if let Some(cut) = find(lo, hi, Safety::Strict) {
                return Some(plain(cut));
            }
            // `lo..=hi` holds no usable candidate: searching it again would find nothing.
            below = hi.min(lo - 1);
        }
        let hard = hard_cut(text, start, start, hi);
        // Outside code, a cut in a quoted line whose next line is not read yet (it may be one
        // that a message starting there shows as indented code) waits for that line, unless
        // forced: the cuts in the line may turn safe then.
        if !forced
            && self.scanner.quoted_cut_undecided(hard)
            && self.scanner.fence_at(hard).is_none()
            && self.scanner.indented_at(hard).is_none()
        {
            return None;
        }
        // Below `min` only when forced, or when the alternative cuts into code.
        if (forced || content_min <= 1 || !self.scanner.is_safe_cut(hard))
            && let Some(cut) = find(start + 1, below, Safety::Strict)
        {
            return Some(plain(cut));
        }
        // Inside code, a cut is made the code's way or not at all (a plain cut would break
        // the fence, or lose the line's indentation); a fence that cannot be repaired is cut
        // plainly (the limit wins).
        if let Some(fence) = self.scanner.fence_at(hard).copied() {
            if self.repair(&fence).is_some() {
                let planned = self
                    .plan_in_fence(start, reopen, &fence, bounds)
                    .map(|p| in_opening_line(text, p));
                if planned.is_some() || bounds.is_some() {
                    return planned;
                }
            }
        } else if let Some(block) = self.scanner.indented_at(hard).copied() {
            let planned = self.plan_in_indented(start, reopen, &block, bounds);
            if planned.is_some() || bounds.is_some() {
                return planned;
            }
        } else {
            if self.scanner.table_blocks_cut(hard) {
                if let Some(table) = self.scanner.table_at(hard).copied() {
                    if let Some(planned) = self.plan_in_table(start, reopen, &table, bounds) {
                        return Some(planned);
                    }
                    // Held back before a line that may still be a fence line, right after a
                    // body row that ends there: wait for that line rather than cut inside
                    // the row.
                    let bytes = text.as_bytes();
                    let tail = bytes.iter().rposition(|&b| !is_ws(b)).map_or(0, |i| i + 1);
                    if self.breaks_only
                        && bytes[tail..].contains(&b'\n')
                        && tail > start.max(table.rows_start)
                    {
                        return None;
                    }
                }
                // A row longer than a piece (or a line that may still be a header row): the
                // ordinary rules, inside the row; a link or URL is cut only when the window
                // holds no cut outside it.
                if let Some(cut) = find(start + 1, hi, Safety::InTable) {
                    return Some(Planned::plain(cut));
                }
                if self.scanner.inline_at(hard).is_some()
                    && let Some(cut) = find(start + 1, hi, Safety::InTableLink)
                {
                    return Some(Planned::plain(cut));
                }
            }
            if let Some(code) = self.scanner.code_at(hard).copied() {
                if let Some(planned) = self.plan_in_code_span(start, reopen, &code, bounds) {
                    return Some(planned);
                }
                // A span that cannot be closed and reopened: at a break inside it.
                if let Some(cut) = find(start + 1, hi, Safety::InCodeSpan) {
                    return Some(Planned::plain(cut));
                }
            } else if self.scanner.inline_at(hard).is_some()
                && let Some(cut) = find(start + 1, hi, Safety::InLink)
            {
                // No cut outside the link (or URL) in the window: a break inside it, then (a
                // URL longer than the window) a hard cut.
                return Some(Planned::plain(cut));
            }
        }
        if self.breaks_only {
            return None;
        }
        // A stretch before a quoted line that a message starting in it shows as indented
        // code, longer than the window: any cut in it shows that line so, and a break reads
        // better than a cut inside a word.
        if self.scanner.blocks_quoted_cut(hard)
            && let Some(cut) = find(start + 1, hi, Safety::InQuotedStretch)
        {
            return Some(plain(cut));
        }
        let cut = self.plain_hard_cut(start, hi, hard, bounds)?;
        // A hard cut that stepped back into a link, a URL or code (from a safe place right
        // after it that reads wrong), or that falls next to an emphasis delimiter run (a run cut
        // off from the text it wraps shows as raw markup: no delimiters are open there to
        // close), gives way to a break before it.
        let bytes = text.as_bytes();
        let delim = |b: Option<&u8>| matches!(b, Some(b'*' | b'_' | b'~'));
        let by_delims = cut.end > 0 && (delim(bytes.get(cut.end - 1)) || delim(bytes.get(cut.end)));
        if (by_delims || !self.scanner.is_safe_cut(cut.end))
            && let Some(before) = find(start + 1, below, Safety::Strict)
        {
            return Some(Planned::plain(before));
        }
        // No break before it either: the hard cut steps back off the run, keeping a char of
        // the text the run wraps with it (a closing run alone after the cut would reopen an
        // empty span: `****` shows as text).
        let cut = match by_delims {
            true => self.off_delimiter_run(start, cut, bounds).unwrap_or(cut),
            false => cut,
        };
        // Stepped back into a code span: cut it the span's way.
        if let Some(code) = self.scanner.code_at(cut.end).copied()
            && let Some(planned) = self.plan_in_code_span(start, reopen, &code, bounds)
        {
            return Some(planned);
        }
        Some(Planned::plain(ws_to_sep(text, start, cut)))
    }

    /// A cut inside `fence`, closing it and reopening it in the next piece.
    fn plan_in_fence(
        &self,
        start: usize,
        reopen: ReopenCost,
        fence: &FenceSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let repair = self.repair(fence)?;
        let text = self.text;
        let limits = self.limits;
        let marker = fence.marker;
        let close_cost = marker.close_len() + 1;
        let avail = limits.max.saturating_sub(reopen.units + close_cost);
        let hi = limits.window_end(text, start, avail, reopen.lines + 1);
        let opener_here = !fence.continued && fence.start >= start;
        let content_start = if opener_here {
            (fence.open_end + 1).min(text.len())
        } else {
            start
        };
        let bare = matches!(repair, Reopen::Fence { line: None, .. });
        let close = Some(*fence);
        if content_start < hi {
            if let Some(cut) = find_code_line_cut(text, content_start, hi, Some(marker), bounds) {
                return Some(Planned {
                    cut,
                    close,
                    next: NextStart::Fence { bare },
                });
            }
            if self.breaks_only {
                return None;
            }
            if let Some(h) =
                // Beside the opening line, a cluster that does not fit whole goes to the next
                // piece (it fits there, after a shorter reopening line).
                checked_hard_cut(
                    text,
                    start,
                    content_start,
                    hi,
                    Some(marker),
                    bounds,
                    opener_here,
                    self.complete,
                )
                && fence.contains_cut(h)
            {
                return Some(Planned {
                    cut: Cut::hard(h),
                    close,
                    next: NextStart::Fence { bare },
                });
            }
        }
        if self.breaks_only {
            return None;
        }
        if !opener_here {
            // What the checks above refuse everywhere: first a cut at a char boundary that
            // still reads right (a cluster glued to marker chars, such as an emoji right
            // before "````", may have to be split: balanced fences come first); last, for a
            // line cap that leaves room for one line, any cut inside the fence.
            if bounds.is_none()
                && let Some(h) = char_cut_reading_right(text, start, content_start, hi, marker)
            {
                return Some(Planned {
                    cut: Cut::hard(h),
                    close,
                    next: NextStart::Fence { bare },
                });
            }
            let h = hard_cut(text, start, content_start, hi);
            return (bounds.is_none() && h <= hi && fence.contains_cut(h)).then_some(Planned {
                cut: Cut::hard(h),
                close,
                next: NextStart::Fence { bare },
            });
        }
        // The opening line leaves no room for code beside it: after text, the piece ends
        // with its head (a piece before it would start the next one with fence lines only);
        // else end the piece before it, or, when it starts the piece, show its head.
        if fence.start > start
            && self.crowded_fence_at(fence.start).is_some()
            && let Some(planned) = self.opener_head(start, fence, hi, bounds)
        {
            return Some(planned);
        }
        if fence.start > start
            && let Some(cut) = cut_before_line(text, start, fence.start)
            && allows(bounds, cut.end, cut.sep_end)
        {
            return Some(Planned::plain(cut));
        }
        self.opener_head(start, fence, hi, bounds)
    }

    /// The fence whose opening line starts at `p`, when it holds code (as far as the text
    /// goes) and that line is too long for a piece starting with it to show any: the line,
    /// a line break, one char and the closing line do not fit.
    pub(crate) fn crowded_fence_at(&self, p: usize) -> Option<FenceSpan> {
        let f = *self.scanner.fence_at(p + 1)?;
        if f.continued || f.start != p || f.open_end >= self.text.len() {
            return None;
        }
        // An empty fence has no code to make room for.
        let code_end = f.end.map_or(self.text.len(), |_| f.close_start);
        let code = self.text.get(f.open_end + 1..code_end).unwrap_or("");
        if code.bytes().all(is_ws) {
            return None;
        }
        let line = self.open_line(&f);
        let needed = self.limits.metric.len(line) + 2 + f.marker.close_len() + 1;
        (needed > self.limits.max && self.repair(&f).is_some()).then_some(f)
    }

    /// The piece starting at `start` (after synthetic text costing `reopen`) ending with the
    /// head of `fence`'s opening line, closed, after the text before it (see
    /// [`Planner::opener_head`]); `None` when not even the marker fits after that text.
    fn head_after_text(
        &self,
        start: usize,
        reopen: ReopenCost,
        fence: &FenceSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        if fence.start <= start || self.breaks_only {
            return None;
        }
        let close_cost = fence.marker.close_len() + 1;
        let avail = self.limits.max.saturating_sub(reopen.units + close_cost);
        let hi = self
            .limits
            .window_end(self.text, start, avail, reopen.lines + 1);
        self.opener_head(start, fence, hi, bounds)
            .map(|p| in_opening_line(self.text, p))
    }

    /// The head of an opening line too long to fit beside any code, at the end of a piece:
    /// the marker and as much of the info string as fits, closed. The next piece reopens the
    /// fence with the bare marker and shows the rest of the line as its first line of code.
    /// Its own piece shows only fence lines: the one exception to that rule, as the line
    /// cannot be shown whole.
    fn opener_head(
        &self,
        start: usize,
        fence: &FenceSpan,
        hi: usize,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let marker_end = fence.start + fence.marker.marker_end();
        let mut line_end = fence.open_end.min(text.len());
        if line_end > fence.start && bytes[line_end - 1] == b'\r' {
            line_end -= 1;
        }
        if marker_end > hi {
            return None;
        }
        let mut h = (start + floor_grapheme_boundary(&text[start..], hi - start)).min(line_end);
        // The rest of the line, shown after the bare marker, must not read as a fence line.
        while h < line_end && reads_as_fence_line(&bytes[h..]) {
            h = start + floor_grapheme_boundary(&text[start..], h - 1 - start);
        }
        if h < marker_end {
            return None;
        }
        // The next piece must show something: the rest of the line, or code after it.
        let rest_shows = shows(text, h, line_end);
        if !rest_shows && bounds.is_some_and(|b| b.last < fence.open_end) {
            return None;
        }
        let cut = if h == line_end {
            Cut {
                end: h,
                sep_end: (fence.open_end + 1).min(text.len()),
                class: BreakClass::CodeLine,
            }
        } else {
            Cut::hard(h)
        };
        Some(Planned {
            cut,
            close: Some(*fence),
            next: NextStart::Fence { bare: true },
        })
    }

    /// A cut inside `table`, between two of its rows (the last line break that fits, with
    /// a row on both sides: a piece never shows the header and delimiter rows alone). The
    /// next piece starts with the header and delimiter rows again when they leave room
    /// for the row after the cut, else plainly (the limit wins). `None` when no row break
    /// fits: a row longer than a piece is cut by the ordinary rules.
    fn plan_in_table(
        &self,
        start: usize,
        reopen: ReopenCost,
        table: &TableSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        let hi = limits
            .window_end(text, start, avail, reopen.lines)
            .min(text.len());
        // Only between body rows, and the piece keeps at least one of them (it never ends
        // with the header and delimiter rows alone).
        let rows_from = start.max(table.rows_start).min(text.len());
        // An open table may take more rows: a cut right before the next line is one
        // between rows until that line proves otherwise (the chunker then drops the header
        // it planned).
        let table_end = table.end.unwrap_or(usize::MAX);
        // A line break right at the window's end, or after only whitespace there (a CRLF's
        // `\r`), still ends a row that fits.
        let mut search_end = hi
            + bytes[hi..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t' || b == b'\r')
                .count();
        if bytes.get(search_end) == Some(&b'\n') {
            search_end += 1;
        }
        while search_end > rows_from {
            let Some(i) = memchr::memrchr(b'\n', &bytes[rows_from..search_end]) else {
                break;
            };
            let nl = rows_from + i;
            let mut p = nl;
            while p > rows_from && is_ws(bytes[p - 1]) {
                p -= 1;
            }
            let q = self.row_start_after(table, nl);
            search_end = p.min(nl);
            // Streaming, the next row's content may not have arrived yet (its quote marker
            // may have): the cut right before it leaves the next piece nothing so far, but
            // what comes next goes there. (Not where the text was held back before a line
            // that may be a fence line: that line comes next.)
            let next_unknown = !self.complete
                && !self.breaks_only
                && bytes[q.min(text.len())..]
                    .iter()
                    .all(|&b| is_ws(b) || b == b'>');
            let content = match next_unknown {
                true => bounds.is_none_or(|b| p > b.first),
                false => allows(bounds, p, q),
            };
            // Right after the table's last row (the table ended there): a cut outside it,
            // over all the whitespace after it, that the search for safe cuts may have
            // refused only because what follows has not arrived.
            let at_end = p == table_end;
            let q = match at_end {
                true => {
                    let mut q = p + bytes[p..].iter().take_while(|&&b| is_ws(b)).count();
                    while q > p && !boundary_at(text, q) {
                        q -= 1;
                    }
                    q
                }
                false => q,
            };
            if p <= rows_from || (q >= table_end && !at_end) || !boundary_at(text, p) || !content {
                continue;
            }
            let next = match !at_end && self.header_fits_before_row(table, q) {
                true => NextStart::Table,
                false => NextStart::Plain,
            };
            return Some(Planned {
                cut: Cut {
                    end: p,
                    sep_end: q,
                    class: BreakClass::Line,
                },
                close: None,
                next,
            });
        }
        self.after_delimiter_row(start, table, hi)
    }

    /// Where the row after `table`'s line break at `nl` starts. Rows hold no blank line: right
    /// after the line break, past its indentation (a list item's; a quote's `>` stays with
    /// the row) unless the piece is de-indented (a table 4 columns deep or more in list
    /// items: the indentation goes with the row, to be taken off with the piece's), and
    /// not into a cluster (a space may carry a combining mark).
    fn row_start_after(&self, table: &TableSpan, nl: usize) -> usize {
        let (text, bytes) = (self.text, self.text.as_bytes());
        let indent = match table.items_only && table.prefix_len >= 4 {
            true => 0,
            false => bytes[nl + 1..]
                .iter()
                .take_while(|&&b| b == b' ' || b == b'\t')
                .count(),
        };
        match boundary_at(text, nl + 1 + indent) {
            true => nl + 1 + indent,
            false => nl + 1,
        }
    }

    /// Whether `table`'s header and delimiter rows, repeated, fit in a piece with the row
    /// that starts at `q` (up to its last non-blank byte). When they do not fit together no
    /// piece can show that row as a table: it goes on plainly, as a row longer than a piece
    /// does (README design notes, tables). A row whose end has not arrived is judged on
    /// what has, with room for the widest cluster beside the header (the piece must be able
    /// to hold one whatever comes).
    fn header_fits_before_row(&self, table: &TableSpan, q: usize) -> bool {
        let (text, bytes, limits) = (self.text, self.text.as_bytes(), self.limits);
        let Some((head, blank)) = self.table_head(table) else {
            return false;
        };
        let line_end = memchr::memchr(b'\n', &bytes[q..]).map(|i| q + i);
        let known = line_end.is_some() || self.complete;
        let row_end = line_end.unwrap_or(text.len());
        let row_end = q + bytes[q..row_end]
            .iter()
            .rposition(|&b| !is_ws(b))
            .map_or(0, |i| i + 1);
        let cost = ReopenCost::of(Some(Reopen::Table { head, blank }), limits.metric);
        limits.max_lines.is_none_or(|cap| cost.lines < cap)
            && (known || cost.units + widest_grapheme(limits.metric) <= limits.max)
            && limits.fits(text, q, row_end, cost.units, cost.lines)
    }

    /// A piece that starts before `table` and holds no body row of it within `hi` (other
    /// text, or code, fills the room before the header): the cut right after the delimiter
    /// row, with the header and delimiter rows repeated in the next piece, so its rows show
    /// as a table (a cut before the header could leave a piece of fence lines only, and a
    /// plain cut after the delimiter row would show the rows as raw pipes). `None` when the
    /// header does not fit beside the first row, or no row has arrived yet.
    fn after_delimiter_row(&self, start: usize, table: &TableSpan, hi: usize) -> Option<Planned> {
        let (text, bytes) = (self.text, self.text.as_bytes());
        let p = table.delim_end;
        if table.continued
            || start >= table.start
            || p > hi
            || table.rows_start == 0
            || table.rows_start > text.len()
        {
            return None;
        }
        let p = p - bytes[table.start..p]
            .iter()
            .rev()
            .take_while(|&&b| is_ws(b))
            .count();
        let q = self.row_start_after(table, table.rows_start - 1);
        // The first row, whole (streaming: its line has ended), with content.
        let line_end = memchr::memchr(b'\n', &bytes[q..]).map_or(text.len(), |i| q + i);
        if (line_end == text.len() && !self.complete)
            || bytes[q..line_end].iter().all(|&b| is_ws(b))
            || table.end.is_some_and(|end| q >= end)
        {
            return None;
        }
        self.header_fits_before_row(table, q).then_some(Planned {
            cut: Cut {
                end: p,
                sep_end: q,
                class: BreakClass::Line,
            },
            close: None,
            next: NextStart::Table,
        })
    }

    /// A cut inside the inline code span `code`, longer than a piece: the piece ends with
    /// the span closed by a synthetic run of its backticks, and the next piece reopens it
    /// with the same run, so both show code (a plain cut would show a literal backtick and
    /// the rest as prose in each). At a break inside the span (the whitespace goes to the
    /// separator), else a hard cut. The piece keeps some of the span's code, and the next
    /// one starts with some: a cut right after the opening run or right before the closing
    /// one would show an empty span. Neither side of the cut may be a backtick (a synthetic
    /// run beside it would make a longer run). `None` when the run is too long to repeat, or
    /// no such cut fits, the run is three backticks or more (a piece starting with it
    /// would read as a fence's opening line), or the span's closing run has not arrived and
    /// a line break came after its opening run: until its block ends an open run may prove
    /// a stray backtick, literal text, and closing it would show the text after it as code.
    /// A streaming chunker that must cut a span longer than `max` before its closing run
    /// arrives takes it for a span while it stays on one line (a choice: a long span in a
    /// reply is a line of code; a stray backtick's paragraph goes on over lines).
    fn plan_in_code_span(
        &self,
        start: usize,
        reopen: ReopenCost,
        code: &CodeSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let bytes = text.as_bytes();
        let limits = self.limits;
        let mut delims = SpanDelims::NONE;
        // A span whose closing run has not arrived may be a stray backtick: taken for a
        // span only while it stays on its line (a long span in a reply is one line of code;
        // a stray backtick's paragraph goes on over lines).
        let open_over_lines = code.end.is_none() && code.crossed_line;
        if open_over_lines || code.run >= 3 || !delims.push(b'`', code.run) {
            return None;
        }
        // The next piece must hold the run again, its close, and a cluster of code.
        if 2 * code.run + crate::text::limits::widest_char(limits.metric) > limits.max {
            return None;
        }
        let avail = limits.max.saturating_sub(reopen.units + code.run);
        let hi = limits.window_end(text, start, avail, reopen.lines);
        // Some code in this piece, and some in the next (before the closing run, if known).
        let content_start = (code.start + code.run).max(start);
        let content_end = code.end.map_or(bytes.len(), |e| e.saturating_sub(code.run));
        let inside = ContentBounds {
            first: content_start,
            last: content_end.saturating_sub(1),
        };
        let bounds = Some(match bounds {
            Some(b) => ContentBounds {
                first: b.first.max(inside.first),
                last: b.last.min(inside.last),
            },
            None => inside,
        });
        let beside_backtick = |end: usize, sep_end: usize| {
            bytes[end - 1] == b'`' || bytes.get(sep_end) == Some(&b'`')
        };
        let planned = |cut: Cut| Planned {
            cut,
            close: None,
            next: NextStart::Delims(delims),
        };
        if let Some(cut) = find_cut(
            text,
            self.scanner,
            start,
            content_start + 1,
            hi,
            self.order,
            self.complete,
            Safety::InCodeSpan,
            bounds,
        ) && code.contains_cut(cut.end)
            && !beside_backtick(cut.end, cut.sep_end)
        {
            return Some(planned(cut));
        }
        if self.breaks_only {
            return None;
        }
        let mut h = checked_hard_cut(
            text,
            start,
            content_start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        )?;
        while beside_backtick(h, h) {
            h = step_back(text, start, content_start, h)?;
        }
        code.contains_cut(h).then(|| planned(Cut::hard(h)))
    }

    /// A cut inside an indented code block: at a line break of the code (the next piece
    /// keeps the line's indentation), else in the middle of a line (the next piece goes on
    /// after 4 spaces of indentation, so it still reads as code; never as a fenced block).
    fn plan_in_indented(
        &self,
        start: usize,
        reopen: ReopenCost,
        block: &IndentedSpan,
        bounds: Option<ContentBounds>,
    ) -> Option<Planned> {
        let text = self.text;
        let limits = self.limits;
        let avail = limits.max.saturating_sub(reopen.units);
        let hi = limits.window_end(text, start, avail, reopen.lines);
        let content_start = start.max(block.start);
        if let Some(cut) = find_code_line_cut(text, content_start, hi, None, bounds) {
            return Some(Planned::plain(cut));
        }
        if self.breaks_only {
            return None;
        }
        let h = checked_hard_cut(
            text,
            start,
            content_start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        )?;
        let next = if line_continues(text.as_bytes(), h) {
            NextStart::Indent
        } else {
            NextStart::Plain
        };
        Some(Planned {
            cut: Cut::hard(h),
            close: None,
            next,
        })
    }

    /// A hard cut before `cut` (a hard cut next to an emphasis delimiter run) with no
    /// delimiter char on either side of it: before the char that precedes the run it
    /// touches, so that the run keeps some of the text it wraps. `None` when there is none
    /// after `start`, or when it would be unsafe where `cut` is safe.
    fn off_delimiter_run(
        &self,
        start: usize,
        cut: Cut,
        bounds: Option<ContentBounds>,
    ) -> Option<Cut> {
        let bytes = self.text.as_bytes();
        let delim = |i: usize| matches!(bytes.get(i), Some(b'*' | b'_' | b'~'));
        let mut hi = cut.end;
        // A few runs in a row (`**a**b`): step back over each, within reason.
        for _ in 0..4 {
            while hi > start && delim(hi - 1) {
                hi -= 1;
            }
            // `hi` touches a run that starts there: the piece ends a char before it.
            if hi <= start + 1 {
                return None;
            }
            let next = self.plain_hard_cut(
                start,
                hi - 1,
                hard_cut(self.text, start, start, hi - 1),
                bounds,
            )?;
            if next.end <= start || next.end >= cut.end {
                return None;
            }
            if !(delim(next.end - 1) || delim(next.end)) {
                let safe = self.scanner.is_safe_cut(next.end) || !self.scanner.is_safe_cut(cut.end);
                return safe.then_some(next);
            }
            hi = next.end;
        }
        None
    }

    /// A hard cut near `hard` that does not split a line that opens (or may open) a fence
    /// when the piece can end before that line, and that reads right (see
    /// [`checked_hard_cut`]). Without bounds there always is one: when no checked cut
    /// exists, `hard` itself (progress wins).
    fn plain_hard_cut(
        &self,
        start: usize,
        hi: usize,
        hard: usize,
        bounds: Option<ContentBounds>,
    ) -> Option<Cut> {
        let scanner = self.scanner;
        let opener_start = if scanner.in_undecided_fence_line(hard) {
            Some(scanner.line_start())
        } else {
            scanner
                .fence_at(hard)
                .filter(|f| !f.continued && hard <= f.open_end)
                .map(|f| f.start)
        };
        if let Some(line_start) = opener_start
            && line_start > start
            && let Some(cut) = cut_before_line(self.text, start, line_start)
            && allows(bounds, cut.end, cut.sep_end)
        {
            return Some(cut);
        }
        let end = match checked_hard_cut(
            self.text,
            start,
            start,
            hi,
            None,
            bounds,
            false,
            self.complete,
        ) {
            Some(h) => h,
            None if bounds.is_some() => return None,
            None => hard,
        };
        Some(Cut {
            end,
            sep_end: end,
            class: BreakClass::Hard,
        })
    }
}

/// A hard cut outside code that falls in separator whitespace (past a line break, in the
/// indentation of a paragraph's next line, when the room ends there) ends its piece at the
/// text before that whitespace: the whitespace is the separator, and the next piece still
/// starts where the cut fell. So no piece ends with whitespace of the line after it, and
/// where the next piece starts inside a line's indentation, the line's start is in the
/// source between the two (the coalescer joins them de-indented from there).
fn ws_to_sep(text: &str, start: usize, cut: Cut) -> Cut {
    let kept = sep_trimmed_end(text, start, cut.end);
    match cut.class == BreakClass::Hard && cut.sep_end == cut.end && kept > start {
        true => Cut { end: kept, ..cut },
        false => cut,
    }
}

/// A cut inside a fence that falls in the middle of the fence's opening line (before its
/// end, `\r` excluded): the next piece starts with the bare marker and the rest of the
/// line, not with a line of its own.
fn in_opening_line(text: &str, mut planned: Planned) -> Planned {
    // A continued fence keeps what is left of its opening line (nothing, once drained).
    if let Some(f) = planned.close
        && planned.cut.end > f.start
    {
        let line = &text[f.start..f.open_end.min(text.len())];
        let line_end = f.start + line.strip_suffix('\r').unwrap_or(line).len();
        // The next piece starts in the line only if more than whitespace is left of it.
        let rest = text.get(planned.cut.sep_end..line_end).unwrap_or("");
        if planned.cut.end < line_end && !rest.bytes().all(is_ws) {
            let space = rest.as_bytes()[0] == f.marker.ch;
            planned.next = NextStart::OpenLine { space };
        }
    }
    planned
}

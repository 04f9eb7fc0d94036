//! The platform splitter for whole texts (SPEC §9).
//!
//! A text longer than the platform's limit is cut, piece after piece, at the last paragraph
//! break that fits, else the last line break, else the last sentence end, else the last
//! whitespace, all outside fences and inline code; inside a fence that must be split, at the
//! last line break of the code; else at the largest grapheme boundary that fits (see
//! [`super::cut`], shared with the chunker). A piece cut inside a fence ends with a synthetic
//! closing line and the next one starts with the fence's opening line (the bare marker when
//! the opening line leaves no room for code); both count toward the limit and the line cap.
//!
//! Pieces are [`Block`]s: `lead + text[source] + sep` over the pieces gives back the text
//! exactly. The text's leading whitespace is the first piece's `lead`, its trailing
//! whitespace the last piece's `sep`, and whitespace that cannot be shown at a piece's start
//! (blank lines, indentation too wide for the limit) joins the separator before it. The text
//! is scanned once; the work per piece is bounded by the limit, so splitting is linear.

use super::block::Block;
use super::cut::{
    BreakClass, NextStart, Planner, Reopen, ReopenCost, candidate_at, is_ws, sep_trimmed_end,
    shown_start,
};
use super::dedent::{build_piece_within, item_dedent};
use super::limits::{Limits, MIN_LINES, check_limit};
use super::markdown::inline::SpanDelims;
use super::markdown::{FenceMarker, MarkdownScanner};
use super::metric::LengthMetric;
use crate::Error;
use crate::render::{
    Format, RenderOptions, cannot_grow, min_posted_limit, min_room, posted_bound, posted_len,
};

/// How the splitter chooses its cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SplitMode {
    /// Fill each piece up to the limit, cutting at the best break within it.
    #[default]
    Length,
    /// Split at every paragraph break first, then by length within long paragraphs.
    Newline,
}

/// Splitter settings. `limit` is in `metric` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitConfig {
    /// The platform's text limit; every piece fits it, synthetic fence lines included.
    pub limit: usize,
    /// How lengths are counted.
    pub metric: LengthMetric,
    /// Length or newline mode.
    pub mode: SplitMode,
    /// At most this many lines per piece (Discord: 17), a reopened fence line included.
    pub max_lines: Option<usize>,
    /// The format the pieces are posted in (SPEC §16). With any format but `markdown`,
    /// `limit` bounds each piece as the platform counts it once rendered
    /// ([`crate::posted_len`]): a piece whose rendering is over the limit (a table laid out
    /// in `code` mode, Slack's `&amp;`, a `plain` link's URL) is cut shorter.
    pub format: Format,
    /// The options pieces are rendered with (table mode, mass mentions, quote).
    pub render: RenderOptions,
}

impl Default for SplitConfig {
    fn default() -> Self {
        SplitConfig {
            limit: 4000,
            metric: LengthMetric::Chars,
            mode: SplitMode::Length,
            max_lines: None,
            format: Format::Markdown,
            render: RenderOptions::default(),
        }
    }
}

/// Splits whole texts to a platform's limit.
///
/// ```
/// use replystream::{LengthMetric, PlatformSplitter, SplitConfig};
///
/// let discord = PlatformSplitter::new(SplitConfig {
///     limit: 40,
///     metric: LengthMetric::Chars,
///     ..SplitConfig::default()
/// })
/// .expect("a valid configuration");
/// let text = "Intro line.\n```rust\nlet a = 1;\nlet b = 2;\nlet c = a + b;\n```";
/// let pieces: Vec<String> = discord.split(text).into_iter().map(|p| p.text).collect();
/// // Cut before the code block rather than inside it; the block itself is too long, so it
/// // is cut at a line break, closed, and reopened with its language.
/// assert_eq!(
///     pieces,
///     [
///         "Intro line.",
///         "```rust\nlet a = 1;\nlet b = 2;\n```",
///         "```rust\nlet c = a + b;\n```",
///     ]
/// );
/// assert!(pieces.iter().all(|p| p.chars().count() <= 40));
/// ```
#[derive(Clone, Debug)]
pub struct PlatformSplitter {
    config: SplitConfig,
}

/// The break classes the splitter uses, best first.
const ORDER: [BreakClass; 4] = BreakClass::TEXT;

impl PlatformSplitter {
    /// Validates `config`: `limit` at least the smallest limit that works in the metric
    /// ([`LengthMetric::min_limit`]: room to close and reopen a fence around the widest
    /// grapheme cluster kept whole), and `max_lines`, if set, at least 3 (a reopened fence
    /// line, a line of code, a closing fence line). Errors with [`Error::InvalidConfig`].
    pub fn new(config: SplitConfig) -> Result<Self, Error> {
        check_limit("text limit", config.limit, config.metric)?;
        let posted = min_posted_limit(config.format, config.metric);
        if config.limit < posted {
            return Err(Error::InvalidConfig(
                format!(
                    "text limit must be at least {posted} for format {}, counted in {} (got \
                     {}): the smallest room a piece is cut to, grown as much as rendering \
                     can grow it, must still fit",
                    config.format.name(),
                    config.metric,
                    config.limit
                )
                .into(),
            ));
        }
        if let Some(lines) = config.max_lines
            && lines < MIN_LINES
        {
            return Err(Error::InvalidConfig(
                format!(
                    "max_lines must be at least {MIN_LINES} (got {lines}): a reopened fence \
                     line, a line of code and a closing fence line"
                )
                .into(),
            ));
        }
        Ok(PlatformSplitter { config })
    }

    /// The configuration.
    pub fn config(&self) -> &SplitConfig {
        &self.config
    }

    /// The line that reopens a fence with marker `marker` and opening line `open_line` at
    /// the start of a text to be split, as a piece cut inside the fence would be reopened:
    /// the line itself when it leaves room for code within the limit, else the bare marker.
    /// Returns false, and writes nothing, for a fence the limits cannot close and reopen
    /// (a cut inside it is a plain cut: the limit wins, SPEC §9).
    pub(crate) fn reopen_line(
        &self,
        marker: FenceMarker,
        open_line: &str,
        out: &mut String,
    ) -> bool {
        match self.limits().repair(marker, open_line) {
            Some(Reopen::Fence {
                line: Some(line), ..
            }) => marker.push_open_line(line, out),
            Some(_) => marker.push_close(out),
            None => return false,
        }
        true
    }

    /// Whether a text split here that ends inside a fence with marker `marker` and opening
    /// line `open_line` ends with a synthetic close of it.
    pub(crate) fn closes(&self, marker: FenceMarker, open_line: &str) -> bool {
        self.limits().repair(marker, open_line).is_some()
    }

    fn limits(&self) -> Limits {
        Limits {
            metric: self.config.metric,
            max: self.config.limit,
            max_lines: self.config.max_lines,
        }
    }

    /// Splits `text` into pieces, appended to `out`. Never an empty piece; always progress.
    pub fn split_into(&self, text: &str, out: &mut Vec<Block>) {
        let mut scanner = MarkdownScanner::new();
        scanner.finish(text);
        // The whole text is here: a backtick run or emphasis delimiter still open at its end
        // is literal.
        scanner.end_block(text);
        self.split_scanned(text, &scanner, out);
    }

    /// Splits `text`, which goes on inside a fence opened by `open_line` (a line not part of
    /// `text`): its first fence line that closes that fence is read as a closing line, as it
    /// is in the source, not as the opening line of a new fence. The fence is not reopened
    /// at `text`'s start.
    pub(crate) fn split_in_fence(&self, open_line: &str, text: &str) -> Vec<Block> {
        let mut context = String::with_capacity(open_line.len() + 1 + text.len());
        context.push_str(open_line);
        context.push('\n');
        context.push_str(text);
        let mut scanner = MarkdownScanner::new();
        scanner.finish(&context);
        scanner.end_block(&context);
        scanner.drain(open_line.len() + 1);
        let mut out = Vec::new();
        self.split_scanned(text, &scanner, &mut out);
        out
    }

    fn split_scanned(&self, text: &str, scanner: &MarkdownScanner, out: &mut Vec<Block>) {
        self.split_scanned_span(text, scanner, 0..text.len(), out);
    }

    /// Splits bytes `span` of `text`, read in the whole of `text` by `scanner` (which has
    /// read all of it), as the pieces after a cut at `span.start` would be: each piece shows
    /// the containers it is in as they read there (a piece in a list item's text or deep
    /// code is de-indented, see `text::dedent`), a fence open at `span.start` is reopened,
    /// and one open at `span.end` is closed. The pieces' `source` ranges index `text`.
    pub(crate) fn split_span(
        &self,
        text: &str,
        scanner: &MarkdownScanner,
        span: std::ops::Range<usize>,
    ) -> Vec<Block> {
        let mut out = Vec::new();
        self.split_scanned_span(text, scanner, span, &mut out);
        out
    }

    /// [`PlatformSplitter::split_span`] into `out`.
    fn split_scanned_span(
        &self,
        text: &str,
        scanner: &MarkdownScanner,
        span: std::ops::Range<usize>,
        out: &mut Vec<Block>,
    ) {
        let limits = self.limits();
        let first = out.len();
        let mut run = SplitRun {
            config: &self.config,
            text,
            scanner,
            limits,
            reopen: None,
            out,
            first,
            lead: span.start..span.start,
        };
        // A fence open at the span's start (past its opening line) is reopened, as after a
        // cut there.
        run.reopen = scanner
            .fence_at(span.start)
            .filter(|f| f.continued || span.start >= f.open_end)
            .and_then(|f| run.planner(span.end).repair(f));
        match self.config.mode {
            SplitMode::Length => run.split_range(span.start, span.end, span.end),
            SplitMode::Newline => {
                let mut start = span.start;
                while let Some((end, sep_end)) =
                    next_paragraph_break(&text[..span.end], scanner, start)
                {
                    run.split_range(start, end, sep_end);
                    start = sep_end;
                }
                run.split_range(start, span.end, span.end);
            }
        }
    }

    /// Splits `text` into a new vector of pieces.
    pub fn split(&self, text: &str) -> Vec<Block> {
        let mut out = Vec::new();
        self.split_into(text, &mut out);
        out
    }
}

/// What [`SplitRun::plan_piece`] emitted.
enum Piece {
    /// The last piece of the range.
    Last,
    /// A piece; the next one starts after the separator ending here.
    Next(usize),
}

/// One call of [`PlatformSplitter::split_into`].
struct SplitRun<'a, 'o> {
    config: &'a SplitConfig,
    text: &'a str,
    scanner: &'a MarkdownScanner,
    limits: Limits,
    /// The synthetic start of the next piece.
    reopen: Option<Reopen<'a>>,
    out: &'o mut Vec<Block>,
    /// The number of pieces in `out` before this call.
    first: usize,
    /// Whitespace before the first piece (its lead), once known.
    lead: std::ops::Range<usize>,
}

impl<'a> SplitRun<'a, '_> {
    fn planner(&self, end: usize) -> Planner<'a> {
        Planner {
            text: &self.text[..end],
            scanner: self.scanner,
            limits: self.limits,
            order: &ORDER,
            complete: true,
            continued_line: None,
            continued_table: None,
            breaks_only: false,
        }
    }

    /// Splits `text[start..end]`; the last piece's separator runs to `sep_end`.
    ///
    /// With a rendered format, each piece planned within the limit is rendered and measured
    /// as the platform counts it; one over the limit is planned again with less room (in
    /// proportion to the overshoot, at least one unit less), down to the smallest limit of
    /// the metric, so that the cuts are the renderer's own measure, never an estimate.
    fn split_range(&mut self, start: usize, end: usize, sep_end: usize) {
        let full = self.limits;
        let mut start = self.begin(start, end);
        let mut room = full.max;
        loop {
            let before = self.reopen;
            self.limits = Limits { max: room, ..full };
            // A piece that starts inside a list item ends before a later item of its list
            // that its paragraph text would swallow (see `MarkdownScanner::list_cut`).
            let list_cut = self
                .scanner
                .list_cut(self.text, start, end)
                .filter(|&(_, item)| item < end);
            let (piece_end, piece_sep_end) = list_cut.unwrap_or((end, sep_end));
            let done = self.plan_piece(start, piece_end, piece_sep_end);
            self.limits = full;
            let Some(done) = done else {
                return;
            };
            if let Some(smaller) = self.over_limit(room) {
                // Take the piece back and plan it again with less room.
                self.out.pop();
                self.reopen = before;
                room = smaller;
                continue;
            }
            room = full.max;
            match (done, list_cut) {
                (Piece::Last, None) => return,
                (Piece::Last, Some((_, item))) => start = self.begin(item, end),
                (Piece::Next(q), _) => start = self.begin(q, end),
            }
        }
    }

    /// When the piece just emitted is over the limit once rendered, the room to plan it
    /// with again; `None` when it fits (or the format is Markdown, counted as planned), or
    /// when the room is already the smallest the metric allows.
    fn over_limit(&self, room: usize) -> Option<usize> {
        let config = self.config;
        if config.format == Format::Markdown && !config.render.quote {
            return None;
        }
        let piece = &self.out.last()?.text;
        if config.metric.len(piece) <= config.limit
            && cannot_grow(piece, config.format, config.render.quote)
        {
            return None;
        }
        let units = config.metric.len(piece);
        let tables = config.render.table_mode_for(config.format);
        // A bound within the limit spares the render (a table laid out in `code` mode).
        if units <= config.limit
            && posted_bound(piece, units, config.format, config.render.quote, tables)
                .is_some_and(|b| b <= config.limit)
        {
            return None;
        }
        let posted = posted_len(piece, config.format, &config.render, config.metric);
        if posted <= config.limit {
            return None;
        }
        let floor = min_room(config.metric);
        let units = config.metric.len(piece).min(room);
        if units <= floor {
            return None;
        }
        let scaled = (units as u128 * config.limit as u128 / posted as u128) as usize;
        Some(scaled.min(units - 1).max(floor))
    }

    /// Plans and emits the next piece of `text[start..end]` within `self.limits`: `None`
    /// when nothing is left to show.
    fn plan_piece(&mut self, start: usize, end: usize, sep_end: usize) -> Option<Piece> {
        let text = self.text;
        let planner = self.planner(end);
        let last = sep_trimmed_end(text, start, end);
        if last <= start {
            return None;
        }
        let reopen = ReopenCost::of(self.reopen, self.limits.metric);
        let open = self
            .scanner
            .fence_at(last)
            .filter(|f| planner.repair(f).is_some());
        // Or a fence its list item's end ended right there: closed, never reopened.
        let ended = match open {
            Some(_) => None,
            None => self
                .scanner
                .fence_to_close_at_end(last)
                .filter(|f| planner.repair(f).is_some()),
        };
        let closed = open.or(ended);
        let (close_cost, close_lines) = closed.map_or((0, 0), |f| (f.marker.close_len() + 1, 1));
        if self.limits.fits(
            text,
            start,
            last,
            reopen.units + close_cost,
            reopen.lines + close_lines,
        ) || self.tail_over_line_cap(start, last, reopen.units + close_cost, reopen.lines)
        {
            self.emit(start, last, sep_end, closed.map(|f| f.marker));
            self.reopen = open.and_then(|f| planner.repair(f));
            return Some(Piece::Last);
        }
        let planned = planner
            .plan(start, reopen, 1, true)
            .expect("a forced plan always has a cut");
        let cut = planned.cut;
        let delims = match planned.next {
            NextStart::Delims(d) => d,
            _ => SpanDelims::NONE,
        };
        self.emit_with(
            start,
            cut.end,
            cut.sep_end,
            planned.close.map(|f| f.marker),
            delims,
        );
        self.reopen = planner.next_reopen(&planned);
        debug_assert!(planned.next != NextStart::Plain || self.reopen.is_none());
        Some(Piece::Next(cut.sep_end))
    }

    /// Whether the rest of the range, `text[start..last]`, goes out whole although it is over
    /// the line cap: it fits the limit, and the cap only because of fence lines (and blank
    /// lines) after its last line of content, which with that line are more lines than the
    /// cap. Any cut would leave a piece of fence lines only (an empty fence at the end:
    /// `"for:\n\n```\n```"` under a cap of 3), and a line cap is the softer rule.
    fn tail_over_line_cap(&self, start: usize, last: usize, extra: usize, lines: usize) -> bool {
        let Some(cap) = self.limits.max_lines else {
            return false;
        };
        let text = self.text;
        let Some(y) = self.scanner.last_content(text, start, last) else {
            return false;
        };
        let bytes = text.as_bytes();
        let content_end = memchr::memchr(b'\n', &bytes[y..last]).map_or(last, |i| y + i);
        let content_line =
            memchr::memrchr(b'\n', &bytes[start..y]).map_or(start, |i| start + i + 1);
        let unlimited = Limits {
            max_lines: None,
            ..self.limits
        };
        // Only when no cut can help: the last line of content and what follows it are more
        // lines than the cap on their own (with the line that reopens the fence, where that
        // line is code: a piece starting there starts with it).
        let fence = self
            .scanner
            .fence_at(content_line)
            .filter(|f| f.continued || content_line > f.open_end);
        // Then the piece that goes over holds that fence only: text before its opening line
        // goes in a piece of its own first.
        if fence.is_some_and(|f| !f.continued && start < f.start) {
            return false;
        }
        let reopened = fence.is_some();
        content_end < last
            && memchr::memchr_iter(b'\n', &bytes[content_line..last]).count()
                + 1
                + usize::from(reopened)
                > cap
            && unlimited.fits(text, start, last, extra, 0)
            && memchr::memchr_iter(b'\n', &text.as_bytes()[start..content_end]).count() + lines
                < cap
    }

    /// Where the piece after a separator ending at `q` starts showing text (see
    /// [`shown_start`]); the whitespace skipped joins the last piece's separator, or, before
    /// the first piece, becomes its lead.
    fn begin(&mut self, q: usize, end: usize) -> usize {
        let s = shown_start(&self.text[..end], q, &self.limits, self.reopen, true);
        if s > q {
            if self.out.len() > self.first {
                let last = self.out.last_mut().expect("a piece");
                last.sep.push_str(&self.text[q..s]);
            } else {
                self.lead = q..s;
            }
        }
        s
    }

    fn emit(&mut self, start: usize, end: usize, sep_end: usize, close: Option<FenceMarker>) {
        self.emit_with(start, end, sep_end, close, SpanDelims::NONE);
    }

    /// [`SplitRun::emit`], the piece ending with `delims` closed.
    fn emit_with(
        &mut self,
        start: usize,
        end: usize,
        sep_end: usize,
        close: Option<FenceMarker>,
        delims: SpanDelims,
    ) {
        let mut text = String::with_capacity(end - start + 16);
        let line_start = start == 0 || self.text.as_bytes()[start - 1] == b'\n';
        // The item's column as the scanner followed the containers line by line, as the
        // chunker asks it: lazy continuation lines and a line a forced flush ended (the
        // engine's finals) included, which a look back over the text cannot tell.
        let item = || self.scanner.item_column_at(start);
        let dedent = item_dedent(self.scanner, self.text, start, end, line_start, Some(item));
        let source = &self.text[start..end];
        let (head_len, tail_len, dedent) = build_piece_within(
            source,
            line_start,
            self.reopen,
            close,
            dedent,
            &self.limits,
            delims.len(),
            &mut text,
        );
        delims.push_close(&mut text);
        let lead = if self.out.len() == self.first {
            self.text[self.lead.clone()].to_owned()
        } else {
            String::new()
        };
        self.out.push(Block {
            text,
            lead,
            sep: self.text[end..sep_end].to_owned(),
            source: start..end,
            fence_reopened: matches!(
                self.reopen,
                Some(Reopen::Fence { .. } | Reopen::Marker { .. })
            ),
            indent_reopened: matches!(self.reopen, Some(Reopen::Indent { .. })),
            fence_closed: close.is_some(),
            table_header_repeated: matches!(self.reopen, Some(Reopen::Table { .. })),
            head_len,
            tail_len: tail_len + delims.len(),
            spans_reopened: matches!(self.reopen, Some(Reopen::Delims(_))),
            spans_closed: !delims.is_empty(),
            dedent: dedent.cols,
            dedent_quotes: dedent.quotes,
            continues_list: self.reopen.is_none() && self.scanner.continues_list_at(start),
            ends_item_fence: self.scanner.item_fence_ends_at(end),
            table_head: None,
        });
    }
}

/// The first safe paragraph break after `from` that has content (more than fence lines)
/// before and after it: the paragraph's end and the next paragraph's start.
fn next_paragraph_break(
    text: &str,
    scanner: &MarkdownScanner,
    from: usize,
) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut i = from;
    while let Some(k) = memchr::memchr(b'\n', &bytes[i..]) {
        let nl = i + k;
        let mut p = nl;
        while p > from && is_ws(bytes[p - 1]) {
            p -= 1;
        }
        let mut r = nl + 1;
        while r < bytes.len() && is_ws(bytes[r]) {
            r += 1;
        }
        if r == bytes.len() {
            return None;
        }
        if p > from
            && let Some(c) = candidate_at(text, p, false)
            && c.has(BreakClass::Paragraph)
            && scanner.is_safe_cut(p)
            // No piece of fence lines only (an empty fence stays with its neighbours).
            && scanner.first_content(text, from, c.end).is_ok()
            && scanner.first_content(text, c.sep_end, text.len()).is_ok()
        {
            return Some((c.end, c.sep_end));
        }
        i = r;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn splitter(limit: usize) -> PlatformSplitter {
        PlatformSplitter::new(SplitConfig {
            limit,
            ..SplitConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn rejects_bad_configs() {
        for config in [
            SplitConfig {
                limit: 0,
                ..SplitConfig::default()
            },
            SplitConfig {
                max_lines: Some(0),
                ..SplitConfig::default()
            },
            SplitConfig {
                limit: 3,
                metric: LengthMetric::Bytes,
                ..SplitConfig::default()
            },
        ] {
            assert!(matches!(
                PlatformSplitter::new(config),
                Err(Error::InvalidConfig(_))
            ));
        }
    }

    #[test]
    fn prefers_paragraphs_then_lines() {
        let text = "aaa bbb ccc\nddd eee fff\n\nggg hhh";
        let pieces = splitter(24).split(text);
        let texts: Vec<&str> = pieces.iter().map(|b| b.text.as_str()).collect();
        assert_eq!(texts, ["aaa bbb ccc\nddd eee fff", "ggg hhh"]);
        assert_eq!(pieces[0].sep, "\n\n");
    }
}

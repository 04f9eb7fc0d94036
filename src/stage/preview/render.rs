//! What a live preview shows: the reasoning quoted at the top (its last
//! [`REASONING_UNITS`] units), then the latest answer text, then the cursor — and, past the
//! preview limit, a tail window of the answer behind a one-line header, so the preview keeps
//! moving instead of stopping at the limit.
//!
//! Every rendered text is within the preview limit in the channel's metric (quote, header,
//! synthetic fence lines and cursor included), never starts inside a grapheme cluster, and
//! never leaves a fence open: a fence still open at the end gets a synthetic closing line
//! (the cursor stays inside it, where the model is writing), and a window that starts inside
//! a fence begins with the fence's opening line again; one that starts among a table's body
//! rows begins with the table's header and delimiter rows again (without them the rows show
//! as raw pipes). Fences and tables are found by the crate's one
//! Markdown scanner ([`MarkdownScanner`]), fed incrementally.
//!
//! Choices where the spec is silent:
//! - The window prefers to start at a line start (after a line break within its first
//!   [`LINE_SNAP`] bytes) and never starts inside an inline code span that closes in it.
//! - The header is [`TAIL_HEADER`] on its own line. The response prefix belongs to the top
//!   of the reply, so a tail window does not show it.
//! - Trailing whitespace of the answer is not shown, so the cursor sits right after the
//!   last visible character and whitespace alone never causes an edit.
//! - The reasoning is a Markdown block quote (`> ` lines). Where the channel supports an
//!   expandable quote (`Config::preview_expandable_quote`), it uses Telegram's notation for
//!   one: the first line starts with `**>`, the others with `>`, and the last ends with `||`
//!   (a host rendering HTML maps it to `<blockquote expandable>`). A quote cut to its tail
//!   starts with `…`.
//!
//! # Cost
//!
//! Rendering is called only when an update is due. It scans the answer text that arrived
//! since the previous render (so the scanning over a whole reply is linear), then looks at
//! no more than the window: counting back from the end, the quote's tail, and the output.
//! A long reply's updates cost O(window) each, not O(reply).

use crate::action::{SendKind, SendOp};
use crate::payload::Payload;
use crate::render::send::SendRenderer;
use crate::stage::prefix::prefix_joiner;
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{FenceMarker, MarkdownScanner};
use crate::text::metric::{LengthMetric, is_grapheme_boundary};

/// The tail window holds at most this many units of the answer (SPEC §10).
pub(crate) const TAIL_UNITS: usize = 3800;

/// The reasoning shown at the top of a preview is capped to its last this many units.
pub(crate) const REASONING_UNITS: usize = 600;

/// The header line above a tail window: earlier text is hidden while the reply streams.
pub(crate) const TAIL_HEADER: &str = "…";

/// A window starts after a line break found within this many bytes of its first choice.
pub(crate) const LINE_SNAP: usize = 256;

/// How many bytes the scanner keeps behind the window before it drops them (amortises the
/// drop, which moves the spans it still holds).
const DRAIN_BATCH: usize = 4096;

/// How far back the last line shown is looked for (fence lines are shorter).
const LAST_LINE_LOOK: usize = 1024;

/// The end layout of a text whose last line is a fence line that needs no closing: the
/// cursor on its own line, no synthetic closing line (a marker of length 0).
const NO_FENCE: FenceMarker = FenceMarker {
    ch: b'`',
    len: 0,
    indent: 0,
    prefix: crate::text::markdown::ContainerPrefix::NONE,
};

/// The renderer's settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RenderConfig {
    /// How the channel counts length.
    pub metric: LengthMetric,
    /// The longest preview text, in `metric` units.
    pub limit: usize,
    /// Appended while streaming (`None`: no cursor).
    pub cursor: Option<String>,
    /// Quote reasoning with the expandable notation.
    pub expandable_quote: bool,
    /// The renderer of the channel's format (none for `markdown`): each preview must fit
    /// the limit once rendered too, counted as the platform counts it.
    pub posted: Option<SendRenderer>,
}

impl RenderConfig {
    /// The room every preview may need besides its content: the header line, a reopened
    /// and a closed fence line with a short marker, the cursor, and the widest character.
    /// A preview limit below this cannot hold a tail window; the configuration refuses it.
    pub(crate) fn overhead_floor(metric: LengthMetric, cursor: Option<&str>) -> usize {
        let header = metric.len(TAIL_HEADER) + 1;
        // "```\n" to reopen, "\n```" to close, with up to 3 spaces of indent each.
        let fences = 2 * (3 + 3 + 1);
        let widest = metric.char_len('\u{10000}');
        header + fences + cursor.map_or(0, |c| metric.len(c)) + widest
    }
}

/// Renders the previews of one segment. See the module docs.
#[derive(Debug)]
pub(crate) struct PreviewRenderer {
    config: RenderConfig,
    cursor_units: usize,
    header_units: usize,
    /// Fences and inline code of the answer, from byte `base` on.
    scanner: MarkdownScanner,
    /// Bytes of the answer dropped from the scanner: its offsets start here.
    base: usize,
    /// Units of `answer[..counted]`.
    units: usize,
    counted: usize,
    /// Where the last tail window started (0: none yet). A window never starts before it:
    /// the scanner may have dropped what lies there, and a preview that jumped back and
    /// forth would only distract.
    min_start: usize,
}

/// The layout chosen for one render.
#[derive(Clone, Copy, Debug)]
struct Tail {
    /// Where the window starts in the answer.
    start: usize,
    /// The fence the window starts inside: reopened at its top.
    reopen: Option<Reopen>,
    /// The header and delimiter rows (a byte range of the answer) of the table whose body
    /// rows the window starts among: shown again at its top, so the rows render as a table.
    table: Option<(usize, usize)>,
}

#[derive(Clone, Copy, Debug)]
struct Reopen {
    /// The opening line, as a byte range of the answer; `None`: the bare marker.
    line: Option<(usize, usize)>,
    marker: FenceMarker,
}

impl PreviewRenderer {
    pub(crate) fn new(config: RenderConfig) -> Self {
        let cursor_units = config.cursor.as_deref().map_or(0, |c| config.metric.len(c));
        let header_units = config.metric.len(TAIL_HEADER) + 1;
        PreviewRenderer {
            config,
            cursor_units,
            header_units,
            scanner: MarkdownScanner::new(),
            base: 0,
            units: 0,
            counted: 0,
            min_start: 0,
        }
    }

    /// A new segment begins: forget the previous answer.
    pub(crate) fn reset(&mut self) {
        self.scanner.reset();
        self.base = 0;
        self.units = 0;
        self.counted = 0;
        self.min_start = 0;
    }

    /// Writes the preview into `out` (cleared first) and returns how many of its bytes are
    /// content (before the cursor and the synthetic closing lines).
    ///
    /// `answer` is the segment's visible answer text; between [`PreviewRenderer::reset`]s it
    /// may only grow. `reasoning` is shown quoted above it (may be empty). `prefix` is the
    /// response prefix, shown when the whole answer fits and does not already start with it.
    pub(crate) fn render(
        &mut self,
        answer: &str,
        reasoning: &str,
        prefix: Option<&str>,
        out: &mut String,
    ) -> usize {
        out.clear();
        let metric = self.config.metric;
        let limit = self.config.limit;
        self.scanner.scan(&answer[self.base..]);
        let end = answer.trim_end().len().max(self.counted.min(answer.len()));
        if end > self.counted {
            self.units += metric.len(&answer[self.counted..end]);
            self.counted = end;
        }
        self.write_quote(reasoning, out);
        let quote_units = if out.is_empty() { 0 } else { metric.len(out) };
        let close = self.open_fence_at_end(answer, end);
        let close_units = close.map_or(0, |(m, own_line)| {
            let line = if m.len > 0 { m.close_len() + 1 } else { 0 };
            line + usize::from(own_line && self.cursor_units > 0)
        });
        // Outside a fence, inline code and emphasis still open at the end are closed for
        // display (ASCII delimiters: as many units as bytes).
        let heal = match close {
            None => self.inline_open_at_end(answer, end),
            Some(_) => SpanDelims::NONE,
        };
        let fixed = quote_units + self.cursor_units + close_units + heal.len();
        let joiner = prefix.and_then(|p| prefix_joiner(p, &answer[..end]).map(|j| (p, j)));
        let prefix_units = joiner.map_or(0, |(p, j)| metric.len(p) + j.len());
        let quote_len = out.len();

        // Once the preview shows a tail window it keeps showing one.
        let mut fits = self.min_start == 0 && fixed + prefix_units + self.units <= limit;
        if !fits && self.min_start == 0 && metric == LengthMetric::Graphemes && end <= 8 * limit {
            // Grapheme counts of separate increments may overcount a cluster split between
            // them: count exactly before giving up the whole text (bounded by the limit).
            self.units = metric.len(&answer[..end]);
            fits = fixed + prefix_units + self.units <= limit;
        }
        let mut layout = None;
        let mut excess = 0;
        // Rendering can grow a window (a table laid out as code), so a rendered format may
        // need more rounds, each taking off what the last one overflowed.
        let rounds = if self.config.posted.is_some() { 12 } else { 3 };
        for _ in 0..rounds {
            out.truncate(quote_len);
            let body = if fits && excess == 0 {
                if let Some((p, j)) = joiner {
                    out.push_str(p);
                    out.push_str(j);
                }
                out.push_str(&answer[..end]);
                out.len()
            } else {
                let budget = limit
                    .saturating_sub(fixed + self.header_units)
                    .min(TAIL_UNITS)
                    .saturating_sub(excess);
                let tail = self.tail(answer, end, budget);
                layout = Some(tail);
                self.write_tail(answer, end, tail, out)
            };
            heal.push_close(out);
            self.write_end(close, out);
            let len = self.posted_len(out);
            if len <= limit {
                if let Some(tail) = layout {
                    self.min_start = tail.start;
                    self.drop_before(answer, tail);
                }
                // Without a cursor, a quote with no answer after it loses its blank line.
                return body.min(out.len());
            }
            excess += (len - limit).max(excess / 2);
        }
        // Unreachable with a limit the configuration accepts; keep the limit regardless.
        out.truncate(metric.floor_index(out, limit));
        out.len()
    }

    /// The length of preview text `out` in the metric and, with a rendered format, once
    /// posted: the larger of the two.
    fn posted_len(&self, out: &str) -> usize {
        let metric = self.config.metric;
        let len = metric.len(out);
        match &self.config.posted {
            None => len,
            Some(r) => {
                // The renderer reads a payload; a preview is small (bounded by the limit).
                let payload = Payload::text(out);
                let op = SendOp::Edit {
                    key: crate::MessageKey(0),
                };
                len.max(r.posted_units(&payload, SendKind::Preview, op, metric))
            }
        }
    }

    /// The quoted reasoning (its tail) and a blank line, when there is any.
    fn write_quote(&self, reasoning: &str, out: &mut String) {
        let reasoning = reasoning.trim();
        if reasoning.is_empty() {
            return;
        }
        let cap = REASONING_UNITS.min(self.config.limit / 4).max(1);
        let start = self.suffix_start(reasoning, reasoning.len(), cap);
        let shown = reasoning[start..].trim_start();
        let expandable = self.config.expandable_quote;
        for (i, line) in shown.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(if expandable && i == 0 { "**>" } else { ">" });
            if i == 0 && start > 0 {
                out.push_str(" …");
            }
            let line = line.trim_end();
            if !line.is_empty() {
                out.push(' ');
                out.push_str(line);
            }
        }
        if expandable {
            out.push_str("||");
        }
        out.push_str("\n\n");
    }

    /// The fence open at the end of `answer[..end]`, if any, and whether the last line shown
    /// is a fence line (then the cursor goes on a line of its own: after an opening line it
    /// would become the info string, after a closing line it would stop it closing).
    fn open_fence_at_end(&self, answer: &str, end: usize) -> Option<(FenceMarker, bool)> {
        // The scanner knows where its unfinished last line starts; a finished last line is
        // looked for backwards, up to a bound (a fence line longer than that is an opening
        // line with a long info string, which the scanner has decided).
        let line = self.base + self.scanner.line_start();
        let last_start = if line <= end {
            line
        } else {
            let lo = end.saturating_sub(LAST_LINE_LOOK);
            match memchr::memrchr(b'\n', &answer.as_bytes()[lo..end]) {
                Some(i) => lo + i + 1,
                None if lo == 0 => 0,
                None => end,
            }
        };
        let last = &answer[last_start..end];
        let own_line = FenceMarker::parse_open(last).is_some()
            || self
                .scanner
                .open_fence()
                .is_some_and(|f| self.base + f.open_end == end);
        match self.scanner.open_fence() {
            // Its own opening line is the last line, or a line that does not close it.
            Some(f) if self.base + f.open_end >= end || !f.marker.is_closed_by(last) => {
                Some((f.marker, own_line))
            }
            Some(_) => None,
            None if last_start >= line => FenceMarker::parse_open(last).map(|m| (m, true)),
            None => None,
        }
        .or_else(|| own_line.then_some((NO_FENCE, true)))
    }

    /// The inline code span and the emphasis, strong emphasis and strikethrough still open
    /// at the end of `answer[..end]` (SPEC §15, the healed tail): their closing delimiters,
    /// shown before the cursor so that the text being written renders as it will. Nothing
    /// while the text ends with a delimiter char (a closing run may be arriving), nor for a
    /// run of three backticks or more (it would close as a fence line might).
    fn inline_open_at_end(&self, answer: &str, end: usize) -> SpanDelims {
        let ends_in_delims = answer.as_bytes()[..end]
            .last()
            .is_none_or(|b| matches!(b, b'*' | b'_' | b'~' | b'`'));
        if ends_in_delims || end < self.base {
            return SpanDelims::NONE;
        }
        let p = end - self.base;
        let mut heal = self.scanner.emphasis_at(p);
        if let Some(code) = self.scanner.code_at(p).filter(|c| c.end.is_none()) {
            let mut run = SpanDelims::NONE;
            if code.run >= 3 || !run.push(b'`', code.run) || !heal.extend(run) {
                return SpanDelims::NONE;
            }
        }
        heal
    }

    /// The cursor and the synthetic closing fence line.
    fn write_end(&self, close: Option<(FenceMarker, bool)>, out: &mut String) {
        let cursor = self.config.cursor.as_deref();
        if let Some((marker, own_line)) = close {
            if let Some(c) = cursor {
                if own_line {
                    out.push('\n');
                }
                out.push_str(c);
            }
            if marker.len > 0 {
                out.push('\n');
                marker.push_close(out);
            }
        } else if let Some(c) = cursor {
            out.push_str(c);
        } else if out.ends_with("\n\n") {
            // Only a quote so far and no cursor: no trailing blank line.
            out.truncate(out.len() - 2);
        }
    }

    /// Chooses the window: at most `budget` units (its reopened fence line included) ending
    /// at `end`.
    fn tail(&self, answer: &str, end: usize, budget: usize) -> Tail {
        let mut start = self.window_start(answer, end, budget);
        let mut reopen = None;
        for _ in 0..3 {
            let Some(f) = self.scanner.fence_at(start - self.base) else {
                return self.table_tail(answer, end, budget, start);
            };
            let (line_start, line_end) = (self.base + f.start, self.base + f.open_end);
            let metric = self.config.metric;
            let line = (!f.continued)
                .then_some((line_start, line_end))
                .filter(|&(s, e)| metric.len(&answer[s..e]) < budget / 4);
            let cost = line.map_or(f.marker.indent + f.marker.len, |(s, e)| {
                metric.len(&answer[s..e])
            }) + 1;
            reopen = Some(Reopen {
                line,
                marker: f.marker,
            });
            if !f.continued && start <= line_end {
                // Inside the opening line itself: the reopened line stands for it.
                start = (line_end + 1).min(end);
                return Tail {
                    start,
                    reopen,
                    table: None,
                };
            }
            let next = self.window_start(answer, end, budget.saturating_sub(cost));
            if self
                .scanner
                .fence_at(next - self.base)
                .is_some_and(|g| g.start == f.start)
            {
                return Tail {
                    start: next,
                    reopen,
                    table: None,
                };
            }
            // The smaller window left this fence: decide again where it starts now.
            start = next;
            reopen = None;
        }
        Tail {
            start,
            reopen,
            table: None,
        }
    }

    /// The window starting at `start` (outside any fence): when it starts among a table's
    /// body rows, the table's header and delimiter rows go on top and the window shrinks by
    /// their size. Rows too wide for a quarter of the budget are not repeated (the window
    /// then shows raw rows, as a message cut from such a table would).
    fn table_tail(&self, answer: &str, end: usize, budget: usize, mut start: usize) -> Tail {
        let mut table = None;
        for _ in 0..3 {
            let Some((s, e)) = self.table_head_before(start) else {
                return Tail {
                    start,
                    reopen: None,
                    table: None,
                };
            };
            let cost = self.config.metric.len(&answer[s..e]) + 1;
            if cost > budget / 4 {
                break;
            }
            table = Some((s, e));
            let next = self.window_start(answer, end, budget - cost);
            match self.table_head_before(next) {
                Some(h) if h == (s, e) => {
                    return Tail {
                        start: next,
                        reopen: None,
                        table,
                    };
                }
                // The smaller window left this table: decide again for where it starts now.
                _ => {
                    start = next;
                    table = None;
                }
            }
        }
        Tail {
            start,
            reopen: None,
            table,
        }
    }

    /// The header and delimiter rows of the table whose body rows a window starting at
    /// `start` would begin among (its first body row included), if the scanner still holds
    /// them.
    fn table_head_before(&self, start: usize) -> Option<(usize, usize)> {
        let p = start.checked_sub(self.base)?;
        let t = self.scanner.table_at(p)?;
        let among_rows = p >= t.rows_start && t.end.is_none_or(|e| p < e);
        (!t.continued && among_rows).then_some((self.base + t.start, self.base + t.delim_end))
    }

    /// The start of the last `budget` units before `end`: after a line break if one is near,
    /// on a grapheme boundary, outside an inline code span that closes in the window, and
    /// never before the previous window's start.
    fn window_start(&self, answer: &str, end: usize, budget: usize) -> usize {
        let floor = self.min_start.max(self.base + usize::from(self.base > 0));
        let mut start = self.suffix_start(answer, end, budget).max(floor).min(end);
        if start == floor && floor == self.min_start && floor > 0 {
            // Where the previous window started: already a good place.
            return start;
        }
        if start > 0 && answer.as_bytes()[start - 1] != b'\n' {
            let look = (start + LINE_SNAP).min(end);
            if let Some(i) = memchr::memchr(b'\n', &answer.as_bytes()[start..look]) {
                start += i + 1;
            }
        }
        if let Some(span) = self.scanner.code_at(start - self.base)
            && let Some(span_end) = span.end
        {
            start = (self.base + span_end).min(end);
        }
        // Never between a table's header row and its delimiter row: a window starting with
        // the delimiter row would show it as text. It starts after it, at the first body row.
        if let Some(t) = self.scanner.table_at(start - self.base)
            && start - self.base <= t.delim_end
        {
            start = (self.base + t.rows_start).min(end);
        }
        // Never inside a list item's text before a later item of its list that the text
        // would swallow (`12.` would show as text): the window starts at that item.
        if let Some((_, item)) =
            self.scanner
                .list_cut(&answer[self.base..], start - self.base, end - self.base)
        {
            start = (self.base + item).min(end);
        }
        ceil_grapheme(answer, start, end)
    }

    /// The smallest char boundary `s` with `text[s..end]` within `budget` units (a
    /// grapheme counts as its chars: an upper bound), moved forward to a grapheme boundary.
    /// Walks back over at most the window.
    fn suffix_start(&self, text: &str, end: usize, budget: usize) -> usize {
        let metric = self.config.metric;
        let mut used = 0;
        let mut start = end;
        for (i, c) in text[..end].char_indices().rev() {
            let w = metric.char_len(c);
            if used + w > budget {
                break;
            }
            used += w;
            start = i;
        }
        ceil_grapheme(text, start, end)
    }

    /// Writes the header, the reopened fence line and the window; returns the content end.
    fn write_tail(&self, answer: &str, end: usize, tail: Tail, out: &mut String) -> usize {
        out.push_str(TAIL_HEADER);
        out.push('\n');
        if let Some((s, e)) = tail.table {
            out.push_str(answer[s..e].trim_end_matches('\r'));
            out.push('\n');
        }
        if let Some(r) = tail.reopen {
            match r.line {
                Some((s, e)) => out.push_str(answer[s..e].trim_end_matches('\r')),
                None => {
                    for _ in 0..r.marker.indent {
                        out.push(' ');
                    }
                    for _ in 0..r.marker.len {
                        out.push(r.marker.ch as char);
                    }
                }
            }
            out.push('\n');
        }
        out.push_str(&answer[tail.start..end]);
        out.len()
    }

    /// The window only moves forward: the scanner forgets what lies before it (never the
    /// opening line of a fence the window starts in, nor the line it is still reading).
    fn drop_before(&mut self, answer: &str, tail: Tail) {
        let rel = tail.start - self.base;
        let keep = match (self.scanner.fence_at(rel), tail.table) {
            (Some(f), _) => f.start,
            (None, Some((s, _))) => s - self.base,
            (None, None) => rel,
        };
        // Keep a byte before every position still asked about (a span that began in dropped
        // text starts at 0, and "inside" means after its start), like the crate's other
        // scanner users, and never cut through a backtick run the scanner may be counting.
        let mut n = self
            .scanner
            .drain_limit(keep.min(self.scanner.line_start()))
            .saturating_sub(1);
        if n < DRAIN_BATCH {
            return;
        }
        let bytes = answer.as_bytes();
        while n > 0 && (!answer.is_char_boundary(self.base + n) || bytes[self.base + n - 1] == b'`')
        {
            n -= 1;
        }
        if n == 0 {
            return;
        }
        self.scanner.drain(n);
        self.base += n;
    }
}

/// The first grapheme boundary at or after `i` (at most `end`).
fn ceil_grapheme(text: &str, mut i: usize, end: usize) -> usize {
    while i < end && !is_grapheme_boundary(text, i) {
        i += 1;
        while i < end && !text.is_char_boundary(i) {
            i += 1;
        }
    }
    i.min(end)
}

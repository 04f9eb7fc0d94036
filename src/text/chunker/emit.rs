//! Emission: cutting blocks at candidates or at max, building their text, and starting the
//! next block.

use crate::text::block::Block;
use crate::text::cut::{NextStart, Planned, Reopen, is_ws, quoted_after, shown_start};
use crate::text::dedent::{build_piece_within, dedent_into, item_dedent};
use crate::text::markdown::inline::SpanDelims;
use crate::text::markdown::{ContainerPrefix, FenceMarker};
use crate::text::metric::next_grapheme_boundary;

use super::synthetic::*;
use super::*;

impl BlockChunker {
    /// Cuts at the best eligible fresh candidate, again and again in what remains.
    pub(super) fn cut_fresh(&mut self, t: usize, out: &mut Vec<Block>) {
        loop {
            let reopen = self.reopen_cost().units;
            let content = self.block_content(t);
            let (min, max, start, start_units) = (
                self.config.min,
                self.config.max,
                self.start,
                self.start_units,
            );
            let scanner = &self.scanner;
            let best = self
                .fresh
                .iter()
                .filter(|(c, u)| {
                    let display = reopen + u.saturating_sub(start_units);
                    c.end > start
                        && *u >= start_units
                        && display >= min
                        && display <= max
                        && content.is_some_and(|x| x < c.end)
                        // Emphasis open at the cut is closed in the block (see `emit`).
                        && display + scanner.emphasis_at(c.end).len() <= max
                })
                .filter_map(|(c, _)| c.rank(self.eager).map(|r| (r, c)))
                .min_by_key(|(r, c)| (*r, std::cmp::Reverse(c.end)))
                .map(|(_, c)| *c);
            let Some(c) = best else {
                break;
            };
            let delims = self.scanner.emphasis_at(c.end);
            let widest = crate::text::limits::widest_char(self.config.metric);
            let next = match delims.is_empty() || 2 * delims.len() + widest > max {
                true => NextStart::Plain,
                false => NextStart::Delims(delims),
            };
            self.emit_before_list_items(c.end, t, false, out);
            self.emit(c.end, c.sep_end, None, next, out);
            self.begin_block(c.sep_end, t, false, out);
        }
        self.fresh.clear();
    }

    /// What a cut at max that waits is waiting on: the last line (to be decided as a fence
    /// line or not), and, in a quote, whether the line after a quoted one is read.
    fn wait_key(&self) -> (usize, bool) {
        (
            self.scanner.line_start(),
            self.scanner.quoted_line_pending(),
        )
    }

    /// The block exceeds `max` at moment `t`: cut it. Returns false when the cut must wait
    /// for the last line to be decided.
    pub(super) fn cut_at_max(&mut self, t: usize, out: &mut Vec<Block>) -> bool {
        self.sync_scanner(t, false);
        let text = &self.buffer[..t];
        if self.max_wait == Some(self.wait_key())
            && (self.scanner.last_line_undecided(text) || self.scanner.quoted_line_undecided())
        {
            return false;
        }
        let waited = self.max_wait.take().is_some();
        let planned =
            self.planner(t, false)
                .plan(self.start, self.reopen_cost(), self.config.min, false);
        let Some(planned) = planned else {
            self.max_wait = Some(self.wait_key());
            return false;
        };
        self.emit_before_list_items(planned.cut.end, t, false, out);
        self.emit_planned(&planned, out);
        self.begin_block(planned.cut.sep_end, t, false, out);
        // After a wait, the cut lies before candidates decided meanwhile, while the block
        // was past `max`: they are considered now, as the block they are in is new.
        if waited && !self.leading {
            self.collect_safe(self.start, t);
        }
        true
    }

    /// Before the block that is to end at `end` (at moment `t`; `complete` when no more text
    /// comes): where it starts inside a list item and holds a later item of that list that
    /// its paragraph text would swallow (see `MarkdownScanner::list_cut`), the text before
    /// that item goes out as a block of its own, whatever its size, and the block starts at
    /// the item. Cost: a lookup, unless such an item lies in the block.
    pub(super) fn emit_before_list_items(
        &mut self,
        end: usize,
        t: usize,
        complete: bool,
        out: &mut Vec<Block>,
    ) {
        while let Some((e, item)) = self.scanner.list_cut(&self.buffer, self.start, end)
            && item < end
        {
            self.emit(e, item, None, NextStart::Plain, out);
            self.begin_block(item, t, complete, out);
        }
    }

    /// The marker of the fence a block ending at `end` closes although no cut falls inside
    /// it (see `MarkdownScanner::fence_to_close_at_end`), where the closing line fits the
    /// block's room (it was planned without it).
    fn ended_fence_close(&self, end: usize) -> Option<FenceMarker> {
        let f = self.scanner.fence_to_close_at_end(end)?;
        self.planner(self.buffer.len(), true).repair(f)?;
        let reopen = self.reopen_cost();
        let close = f.marker.close_len() + 1;
        self.limits()
            .fits(
                &self.buffer,
                self.start,
                end,
                reopen.units + close,
                reopen.lines + 1,
            )
            .then_some(f.marker)
    }

    pub(super) fn emit_planned(&mut self, planned: &Planned, out: &mut Vec<Block>) {
        self.emit(
            planned.cut.end,
            planned.cut.sep_end,
            planned.close.map(|f| f.marker),
            planned.next,
            out,
        );
    }

    /// Emits `buffer[start..end]` with separator `buffer[end..sep_end]`, closing the fence
    /// open at `end` with marker `close` if given; the next block starts as `next` says.
    pub(super) fn emit(
        &mut self,
        end: usize,
        sep_end: usize,
        close: Option<FenceMarker>,
        next: NextStart,
        out: &mut Vec<Block>,
    ) {
        // Emitted before its start was settled: it starts where it was put for the widest
        // first cluster.
        self.release_held(out);
        let mut text = String::with_capacity(end - self.start + 16);
        if matches!(self.reopen, Some(ReopenKind::Fence { .. })) && !self.reopens_open_fence() {
            // The fence a flush closed ended with its container right after it (the next
            // line left its list item or quote): nothing reopens it.
            self.clear_reopen();
        }
        if matches!(self.reopen, Some(ReopenKind::Table)) {
            // The row after the cut was planned on before it had all arrived: where it
            // proved no row (the table ended before it), or too long to stand whole under
            // the header (the block ends inside it), no header goes before it.
            let bytes = &self.buffer.as_bytes()[self.start..];
            let row_end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| {
                bytes[..i]
                    .iter()
                    .rposition(|&b| !is_ws(b))
                    .map_or(0, |k| k + 1)
            });
            if self.scanner.table_at(self.start).is_none() || self.start + row_end > end {
                self.clear_reopen();
            }
        }
        let reopen = self.current_reopen();
        // A fence its list item's end ended right at `end` is closed where the closing line
        // fits (see `MarkdownScanner::fence_to_close_at_end`; nothing reopens it).
        let ended = self.scanner.item_fence_ending_at(end);
        let close = close.or_else(|| self.ended_fence_close(end));
        let line_start = match self.start {
            0 => self.buffer_start == BufferStart::Line,
            s => self.buffer.as_bytes()[s - 1] == b'\n',
        };
        let source = &self.buffer[self.start..end];
        let dedent = item_dedent(
            &self.scanner,
            &self.buffer,
            self.start,
            end,
            line_start,
            // The scanner followed the containers as it read the lines.
            Some(|| self.scanner.item_column_at(self.start)),
        );
        let delims = match next {
            NextStart::Delims(d) => d,
            _ => SpanDelims::NONE,
        };
        let (head_len, tail_len, dedent) = build_piece_within(
            source,
            line_start,
            reopen,
            close,
            dedent,
            &self.limits(),
            delims.len(),
            &mut text,
        );
        delims.push_close(&mut text);
        let table_head = match reopen.is_none() && self.starts_whole_row(sep_end) {
            true => self.table_head_shown(dedent.cols),
            false => None,
        };
        out.push(Block {
            text,
            lead: self.buffer[self.lead_from..self.start].to_owned(),
            sep: self.buffer[end..sep_end].to_owned(),
            source: self.base + self.start..self.base + end,
            fence_reopened: matches!(reopen, Some(Reopen::Fence { .. } | Reopen::Marker { .. })),
            indent_reopened: matches!(reopen, Some(Reopen::Indent { .. })),
            fence_closed: close.is_some(),
            table_header_repeated: matches!(reopen, Some(Reopen::Table { .. })),
            head_len,
            tail_len: tail_len + delims.len(),
            spans_reopened: matches!(reopen, Some(Reopen::Delims(_))),
            spans_closed: !delims.is_empty(),
            dedent: dedent.cols,
            dedent_quotes: dedent.quotes,
            continues_list: reopen.is_none() && self.scanner.continues_list_at(self.start),
            ends_item_fence: ended.is_some(),
            table_head,
        });
        self.lead_from = self.start;
        self.clear_reopen();
        match next {
            NextStart::Fence { bare } if close.is_some() => {
                let Some(f) = self.scanner.fence_at(end).copied() else {
                    return;
                };
                if !f.continued {
                    self.save_fence_line(f.start, f.open_end);
                }
                let line_fits = self
                    .limits()
                    .repair(f.marker, &self.reopen_line)
                    .is_some_and(|r| matches!(r, Reopen::Fence { line: Some(_), .. }));
                let mut bare = bare || !line_fits;
                let line = (!bare).then_some(self.reopen_line.as_str());
                let limits = self.limits();
                let mut quoted = quoted_after(&self.buffer, &limits, &f.marker, line, sep_end);
                // The bare marker where it leaves room for the quote prefix and the line
                // does not.
                if !quoted && !bare && quoted_after(&self.buffer, &limits, &f.marker, None, sep_end)
                {
                    (bare, quoted) = (true, true);
                }
                self.set_reopen(ReopenKind::Fence {
                    marker: f.marker,
                    bare,
                    quoted,
                });
            }
            NextStart::OpenLine { space } => {
                if let Some(m) = close {
                    self.set_reopen(ReopenKind::Marker(m, space));
                }
            }
            NextStart::Indent => {
                // In a quote, its markers first (where the limit leaves room after them).
                let quote = self
                    .scanner
                    .indented_at(end)
                    .map_or(ContainerPrefix::NONE, |b| b.quote);
                let quote = match Reopen::indent_in(quote, &self.limits()) {
                    Reopen::Indent { quote } => quote,
                    _ => ContainerPrefix::NONE,
                };
                self.set_reopen(ReopenKind::Indent(quote));
            }
            NextStart::Table => {
                let Some(t) = self.scanner.table_at(end).copied() else {
                    return;
                };
                if !t.continued {
                    self.save_table_head(&t);
                }
                if !self.reopen_table.is_empty() {
                    self.set_reopen(ReopenKind::Table);
                }
            }
            NextStart::Delims(d) => self.set_reopen(ReopenKind::Delims(d)),
            _ => {}
        }
    }

    /// Whether the block being built, its separator ending at `sep_end`, starts with a
    /// whole body row of a table: at the row's start (only indentation before it on its
    /// line: a list item's; a quote's `>` stays with the row), among the table's body rows,
    /// and the row's line ends in the block or its separator (so the scanner has decided
    /// that it is a row). Read from the block and what the buffer keeps of its line
    /// ([`BufferStart`]), never from when the text arrived, so the answer does not depend
    /// on how it was cut into deltas.
    fn starts_whole_row(&self, sep_end: usize) -> bool {
        let start = self.start;
        let Some(t) = self.scanner.table_at(start) else {
            return false;
        };
        let bytes = self.buffer.as_bytes();
        let indent = bytes[..start]
            .iter()
            .rev()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        let row_start = match start - indent {
            0 => self.buffer_start != BufferStart::Inside,
            k => bytes[k - 1] == b'\n',
        };
        // The row's line ends in the block or its separator: the scanner has decided it
        // is a row. (A row longer than the block is left out: how long it is, and so
        // whether a message has room for it under the header, is not known yet.)
        row_start
            && start >= t.rows_start
            && memchr::memchr(b'\n', &bytes[start..sep_end]).is_some()
    }

    /// The header and delimiter rows of the table the block being built starts among the
    /// rows of, as a repeated header shows them ([`Block::table_head`]): its container
    /// prefix blanked, de-indented by the block's `dedent` columns.
    fn table_head_shown(&self, dedent: usize) -> Option<Box<str>> {
        let planner = self.planner(self.buffer.len(), false);
        let table = self.scanner.table_at(self.start)?;
        let (head, blank) = planner.table_head(table)?;
        let mut repeat = String::new();
        Reopen::Table { head, blank }.push_to(&mut repeat);
        if dedent == 0 {
            return Some(repeat.into_boxed_str());
        }
        let mut shown = String::with_capacity(repeat.len());
        dedent_into(&repeat, dedent, true, &mut shown);
        Some(shown.into_boxed_str())
    }

    /// Keeps the opening line `buffer[start..end]` of the fence open at the block start.
    pub(super) fn save_fence_line(&mut self, start: usize, end: usize) {
        let line = &self.buffer[start..end];
        let line = line.strip_suffix('\r').unwrap_or(line);
        self.reopen_line.clear();
        self.reopen_line.push_str(line);
        if let Some(kind) = self.reopen {
            self.set_reopen(kind);
        }
    }

    /// Whether the fence that the block being built reopens is still open at its start: a
    /// fence in a container ends, with no closing line, when a line leaves the container.
    fn reopens_open_fence(&self) -> bool {
        self.scanner
            .fence_at(self.start)
            .is_some_and(|f| f.depth == 0 || f.end.is_none_or(|e| e > self.start))
    }

    /// Saves the header and delimiter rows of `t` for repeating them, its container prefix
    /// blanked (see [`Reopen::Table`]).
    pub(super) fn save_table_head(&mut self, t: &crate::text::markdown::TableSpan) {
        let end = t.delim_end.min(self.buffer.len());
        self.reopen_table.clear();
        Reopen::Table {
            head: &self.buffer[t.start..end],
            blank: t.prefix_len,
        }
        .push_to(&mut self.reopen_table);
        self.reopen_table.pop();
        if let Some(kind) = self.reopen {
            self.set_reopen(kind);
        }
    }

    /// A new block starts at `q`, with `buffer[q..t]` already arrived (all the text, if
    /// `complete`): whitespace that cannot be shown at its start (blank lines, indentation
    /// too wide) joins the separator of the block just emitted, the last of `out`.
    pub(super) fn begin_block(&mut self, q: usize, t: usize, complete: bool, out: &mut Vec<Block>) {
        let metric = self.config.metric;
        let s = shown_start(
            &self.buffer[..t],
            q,
            &self.limits(),
            self.current_reopen(),
            complete,
        );
        // Where the indentation shown waits for the first cluster, the block just emitted
        // waits too: its separator ends where this block starts.
        let line = match complete {
            false => self.waiting_start(q, t, s),
            true => None,
        };
        let sep_to = line.unwrap_or(s);
        if sep_to > q
            && let Some(last) = out.last_mut()
        {
            last.sep.push_str(&self.buffer[q..sep_to]);
        }
        if line.is_some() {
            self.held = out.pop().map(Box::new);
        }
        self.start_waits = line.is_some();
        self.start = s;
        self.lead_from = sep_to;
        self.start_units = self.units - metric.len(&self.buffer[s..t]);
        self.content = Err(s);
        self.leading = s == t;
        if self.leading || self.run.is_some_and(|(p, _)| p < self.start) {
            self.run = None;
        }
        self.waiting.retain(|(c, _)| c.end > s);
    }

    /// Where a block whose whitespace starts at `q`, shown from `s` with the text up to `t`
    /// (see [`shown_start`]), waits to know where it starts: the start of the line of its
    /// first cluster, when that cluster may still grow (it ends the text) and the room
    /// counted for the widest one it may grow into keeps less of the line's indentation
    /// than the cluster as it stands would. Without this, the start would depend on where
    /// the deltas fall (whole, the text after the cluster tells its width).
    pub(super) fn waiting_start(&self, q: usize, t: usize, s: usize) -> Option<usize> {
        let text = &self.buffer[..t];
        let now = shown_start(text, q, &self.limits(), self.current_reopen(), true);
        (now != s).then(|| text[q..s].rfind('\n').map_or(q, |i| q + i + 1))
    }

    /// Decides where the block starts showing, once its first cluster after `lead_from` is
    /// complete in the text up to `t` (or `complete`): the indentation before it that
    /// `shown_start` keeps for that cluster's width; the rest stays the block's lead.
    pub(super) fn settle_start(&mut self, t: usize, complete: bool, out: &mut Vec<Block>) {
        let q = self.lead_from;
        let text = &self.buffer[..t];
        let r = q + text[q..].bytes().take_while(|&b| is_ws(b)).count();
        if !complete && (r == t || next_grapheme_boundary(text, r) == t) {
            return;
        }
        self.start_waits = false;
        let s = shown_start(text, q, &self.limits(), self.current_reopen(), true);
        self.start = s;
        self.start_units = self.units - self.config.metric.len(&self.buffer[s..self.cursor]);
        self.content = Err(s);
        if self.run.is_some_and(|(p, _)| p < s) {
            self.run = None;
        }
        self.waiting.retain(|(c, _)| c.end > s);
        self.release_held(out);
    }

    /// The block held back (see `held`) goes out, its separator reaching the start of the
    /// block being built; that start is decided from now on.
    pub(super) fn release_held(&mut self, out: &mut Vec<Block>) {
        self.start_waits = false;
        if let Some(mut block) = self.held.take() {
            block.sep.push_str(&self.buffer[self.lead_from..self.start]);
            out.push(*block);
            self.lead_from = self.start;
        }
    }
}

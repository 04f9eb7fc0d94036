//! The coalescer itself: the buffer, when it goes out and how blocks join it.

use std::ops::Range;

use crate::render::{BoundScan, ResumedScan};
use crate::text::block::Block;
use crate::text::dedent::{QUOTED_END, dedent_into, redented};
use crate::text::markdown::shows_list_for;
use crate::text::markdown::{FenceMarker, is_indented_code_line};
use crate::{Format, Lane, LengthMetric, Time};

use super::piece::*;
use super::table;
use super::*;

/// The last block of a message the coalescer was given: where the next block must start
/// to continue it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Tail {
    message: usize,
    lane: Lane,
    /// The end of the block's source range.
    end: usize,
    /// False after [`Coalescer::end_of_text`]: the next block comes from another text block,
    /// a tool or media, and is joined by the configured joiner.
    continues: bool,
    /// The block ended where its list item's end ended a fence ([`Block::ends_item_fence`]).
    ends_item_fence: bool,
}

/// What stands between the buffer and an incoming block.
enum Seam {
    /// The incoming block continues the buffer's last block in the source: this is the
    /// source text between them (whitespace, possibly empty).
    Source(Range<usize>),
    /// The source text between them, as carried by the blocks' own separators.
    CarriedSep,
    /// No separator in the source: the configured joiner.
    Joiner,
}

/// Merges consecutive small blocks into larger texts (SPEC §4), keeping the message rule
/// (DESIGN §4).
///
/// Blocks go in with [`Coalescer::push_block`]; merged texts come out into a caller-supplied
/// vector, when:
/// - the incoming block would make the buffer exceed `max` (the buffer goes out, the block
///   starts a new one; a block of `max` units or more goes out alone, unsplit);
/// - the buffer reaches `max`;
/// - the idle timer fires ([`Coalescer::on_timer`]) and the buffer holds at least `min`
///   units (below `min` the timer is re-armed `idle_ms` later);
/// - a forced [`Coalescer::flush`] (tool start, media, message end, finish);
/// - the incoming block's [`BlockMeta`] differs from the buffer's (conflict);
/// - with a line cap ([`CoalescerConfig::max_lines`]), the incoming block would make the
///   buffer exceed it (the buffer goes out, the block starts a new one);
/// - in paragraph mode, always: every block goes out as it comes.
///
/// How blocks are joined (the message rule):
/// - A block that continues the previous block of the same message in the source is joined
///   by the exact source text between them, and a synthetic fence close at the end of the
///   buffer and a synthetic reopen at the start of the block are both removed: the merged
///   text is the source span, with synthetic fence lines only at its two edges.
/// - Otherwise (another text block, after a tool or media) the configured joiner is used:
///   trailing whitespace of the buffer is dropped first, the block's leading separator
///   whitespace is dropped after it, and a `" "` joiner next to a fence line becomes a line
///   break, so a fence line never shares its line.
/// - A merged text never starts or ends with separator whitespace: a block that starts a
///   buffer loses its leading whitespace unless it indents a line of code (four columns or
///   more at a line start), and the buffer loses its trailing whitespace when it goes out.
///   The dropped whitespace stays in [`CoalescedText::sources`]: it counts as shown.
/// - A block that starts a buffer (or follows a joiner) with a synthetic reopen line right
///   before the fence's own closing line loses both: the buffer before it already closed
///   that fence, and they would show an empty code block.
///
/// - A block that starts with a table's body row without the table's header (it did not
///   fit in a block, [`Block::table_head`]) and starts a message shows the header again
///   before it, where the message has room (see [`table`]).
///
/// A block that shows nothing else (empty, only whitespace, only fence lines) is ignored.
///
/// Layout (`repr(C)`): `deadline`, which the engine reads after every input, comes last, so
/// that it shares a cache line with the dispatcher's per-input fields that follow it in the
/// engine.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Coalescer {
    config: CoalescerConfig,
    buffer: Option<CoalescedText>,
    /// The buffer's length in `metric` units (for graphemes an upper bound: joining may only
    /// merge clusters across a seam, never split one).
    buffer_len: usize,
    /// The number of line breaks in the buffer (kept only with a line cap).
    buffer_breaks: usize,
    /// Bytes at the end of the buffer's text that are a synthetic fence close (`"\n"` and
    /// the closing line); 0 when it ends with source text. This and `buffer_dedent` (both
    /// a line's length at most) share a word: the engine's inline size counts against its
    /// memory per stream.
    buffer_trail: u32,
    /// The columns of de-indentation at the end of the buffer ([`Block::dedent`], lowered
    /// by lines that left their item): a block joins it only if de-indented by as much.
    buffer_dedent: u32,
    /// The last shown block given to [`Coalescer::push_block`].
    tail: Option<Tail>,
    /// The source text after the tail block, as its separator carried it (plus any ignored
    /// whitespace-only blocks after it): used when the caller has no source text to give.
    tail_gap: String,
    /// The posted bound's scan of the buffer's text kept at the start of its last line
    /// (see [`crate::render::posted_within_resumed`]): the next merge scans from there.
    /// Set by a merge that checked it, dropped whenever the text changes otherwise.
    /// Boxed: an idle stream keeps one pointer.
    bound_at: Option<Box<(usize, BoundScan)>>,
    deadline: Option<Time>,
}

impl Coalescer {
    /// A coalescer with `config`, clamped (see [`CoalescerConfig::clamped`]).
    pub(crate) fn new(config: CoalescerConfig) -> Coalescer {
        Coalescer {
            config: config.clamped(),
            buffer: None,
            buffer_len: 0,
            buffer_breaks: 0,
            buffer_trail: 0,
            buffer_dedent: 0,
            deadline: None,
            tail: None,
            tail_gap: String::new(),
            bound_at: None,
        }
    }

    /// The effective (clamped) configuration.
    #[cfg(test)]
    pub(crate) fn config(&self) -> &CoalescerConfig {
        &self.config
    }

    /// Offers one block (the [`Block`] contract: display text with synthetic fence lines
    /// flagged, source range, separator to the next block) with its metadata. Pushes every
    /// merged text that is now due onto `out`, in order, and moves the idle deadline to
    /// `now + idle_ms` when something stays buffered.
    ///
    /// `source` is the text the block's range indexes, when the caller has it (the answer
    /// lane: the message's cleaned text): the separator to the previous block is then read
    /// from it, exactly, even where a block's `sep` fell short. Without it the previous
    /// block's `sep` is used.
    pub(crate) fn push_block(
        &mut self,
        block: Block,
        meta: &BlockMeta,
        source: Option<&str>,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        // A block de-indented otherwise than the end of the buffer joins it rebuilt from its
        // source (de-indented as the buffer is); it starts a message as it came.
        let mut alone = None;
        let mut apart = false;
        // So does a block that starts inside a line's indentation whose start the source
        // gap holds (the room left no space for all of it), after a de-indented buffer: the
        // source joins them, so that line is de-indented whole, from its start.
        let indent_from = source.and_then(|t| self.indent_in_gap(&block, meta, t));
        let rebuilt = indent_from.map(|line| Block {
            source: line..block.source.end,
            lead: String::new(),
            ..block.clone()
        });
        let dedent_differs = self.buffer.is_some() && self.buffer_dedent as usize != block.dedent;
        let block = match rebuilt.is_some() || dedent_differs {
            true => match source.and_then(|t| {
                redented(
                    rebuilt.as_ref().unwrap_or(&block),
                    t,
                    self.buffer_dedent as usize,
                )
            }) {
                Some(joining) => {
                    alone = Some(block);
                    joining
                }
                None => {
                    apart = true;
                    block
                }
            },
            false => block,
        };
        let (head, trail) = synthetic_edges(&block);
        let closed_at = match block.fence_reopened {
            true => reopened_then_closed(&block.text, head),
            false => 0,
        };
        let shown = block
            .text
            .get(head.max(closed_at)..block.text.len() - trail)
            .unwrap_or("");
        let tail = self
            .tail
            .as_ref()
            .filter(|t| t.message == meta.message && t.lane == meta.lane);
        let start = block.source.start;
        // Whether the block starts a line of its source, so leading whitespace may be
        // indentation rather than a separator.
        let line_start = match source {
            Some(text) => start == 0 || text.as_bytes().get(start - 1) == Some(&b'\n'),
            None if !block.lead.is_empty() => block.lead.ends_with('\n'),
            None => tail.is_none_or(|_| self.tail_gap.ends_with('\n')),
        };
        // The source between the tail block and this one is the tail's separator and this
        // block's lead (whitespace after a flush that no separator holds).
        let contiguous = match (tail, source) {
            (Some(t), Some(text)) => match text.get(t.end..start) {
                Some(gap) if gap.bytes().all(is_sep_ws) => Some(Seam::Source(t.end..start)),
                _ => None,
            },
            (Some(t), None) if t.end + self.tail_gap.len() + block.lead.len() == start => {
                Some(Seam::CarriedSep)
            }
            _ => None,
        };
        // After a text boundary the joiner is used, except inside a fence that spans it (the
        // buffer ends with a synthetic close, the block reopens the same fence): a joiner
        // there would change the code, so the source joins them.
        // A flush in the middle of a line ended that line for the chunker: where the two
        // halves, joined without a line break, would not read as they did apart (`` `` ``
        // + `` ` `` makes a closing marker), the block goes out on its own instead.
        let seam = match (tail, contiguous) {
            (Some(t), Some(seam)) if t.continues => seam,
            (Some(_), Some(seam)) if self.buffer_trail > 0 && block.fence_reopened => {
                let gap = match &seam {
                    Seam::Source(r) => source.and_then(|t| t.get(r.clone())),
                    _ => Some(self.tail_gap.as_str()),
                };
                let across_line =
                    gap.is_some_and(|gap| gap.contains('\n') || block.lead.contains('\n'));
                if !(across_line || line_start) {
                    let before = self.buffer.as_ref().map_or("", |b| {
                        let kept = &b.text[..b.text.len() - self.buffer_trail as usize];
                        kept.rsplit('\n').next().unwrap_or("")
                    });
                    let after = block.text[head..].split('\n').next().unwrap_or("");
                    let joined = format!("{before}{}{after}", gap.unwrap_or(""));
                    apart |= [before, after, joined.as_str()]
                        .iter()
                        .any(|line| FenceMarker::parse_open(line).is_some());
                }
                seam
            }
            _ => Seam::Joiner,
        };

        let has_tail = tail.is_some();
        if shown.bytes().all(is_sep_ws) {
            // Nothing to show: the text stays part of the gap to the next block, unless it
            // holds a fence's closing line (that must not be skipped by a source join).
            if closed_at > 0 {
                // Right after the buffer's synthetic close of the same fence, the fence's own
                // closing line takes its place, joined by the source (when it fits).
                let gap = match &seam {
                    Seam::Source(r) => source.and_then(|t| t.get(r.clone())),
                    Seam::CarriedSep => Some(self.tail_gap.as_str()),
                    Seam::Joiner => None,
                }
                .map(str::to_owned);
                let closer = &block.text[head..closed_at];
                let gap = gap.map(|gap| self.seam_shown(&gap).into_owned());
                let swapped = gap.is_some_and(|gap| self.swap_in_closer(&gap, closer, meta));
                if swapped {
                    self.tail_gap.clear();
                    self.tail_gap.push_str(&block.sep);
                    self.tail = Some(Tail {
                        message: meta.message,
                        lane: meta.lane,
                        end: block.source.end,
                        continues: true,
                        ends_item_fence: block.ends_item_fence,
                    });
                    if let Some(last) = self.buffer.as_mut().and_then(|b| b.sources.last_mut()) {
                        last.end = block.source.end;
                    }
                    self.arm(now);
                } else {
                    self.end_of_text();
                }
            } else if has_tail && source.is_none() {
                self.tail_gap.push_str(&block.lead);
                self.tail_gap.push_str(shown);
                self.tail_gap.push_str(&block.sep);
            }
            return;
        }
        // A list item that goes on with a list the buffer does not show would read as the
        // continuation of the buffer's last paragraph: it starts a message instead.
        if block.continues_list
            && let Some(buffer) = &self.buffer
            && !shows_list_for(&buffer.text, shown)
        {
            apart = true;
        }
        // After a block that ended where its list item's end ended a fence, in a message
        // that shows the fence without its item (de-indented): there the fence reads open
        // at the top level, and the block's text would show as its code.
        if tail.is_some_and(|t| t.ends_item_fence) && self.buffer_dedent > 0 {
            apart = true;
        }
        if apart {
            self.flush(out);
        }
        // Where the block's first shown char sits in its source: is an indentation before
        // it code? (Without the source, as before: four columns make code.)
        // (Only asked when the block starts with whitespace.)
        let starts_ws = shown.as_bytes().first().is_some_and(|&b| is_sep_ws(b));
        let code_line = !starts_ws
            || source.is_none_or(|text| {
                let ws = shown.len() - trim_sep_start(shown).len();
                let p = (start + ws).min(text.len());
                let line = text[..p].rfind('\n').map_or(0, |i| i + 1);
                is_indented_code_line(text, line)
            });
        let mut gap = std::mem::take(&mut self.tail_gap);
        if matches!(seam, Seam::CarriedSep) {
            gap.push_str(&block.lead);
        }
        let seam_text = match &seam {
            Seam::Source(r) => source.and_then(|t| t.get(r.clone())),
            Seam::CarriedSep => Some(gap.as_str()),
            Seam::Joiner => None,
        };
        // Where the block's text starts a range of its own (a new buffer, after a joiner),
        // the range covers its lead too: that whitespace is never shown at a send's start,
        // but it counts as delivered.
        let lead_start = start - block.lead.len().min(start);
        let alone = alone.map(|a| {
            let (head, trail) = synthetic_edges(&a);
            // (It starts where it came from: after the indentation a rebuilt block took.)
            let own_start = a.source.start;
            Box::new(Piece {
                closed_at: match a.fence_reopened {
                    true => reopened_then_closed(&a.text, head),
                    false => 0,
                },
                end_cols: end_cols(&a, source),
                text: a.text,
                source: match own_start == start {
                    true => lead_start..a.source.end,
                    false => own_start - a.lead.len().min(own_start)..a.source.end,
                },
                head,
                trail,
                line_start: line_start && own_start == start,
                code_line,
                alone: None,
                table_head: a.table_head,
                verbatim: a.dedent == 0,
            })
        });
        // Between two de-indented blocks, the whitespace lines of the source between them
        // are de-indented alike (a blank code line of the item's fence keeps its own columns).
        let seam_text = seam_text.map(|gap| self.seam_shown(gap));
        self.push_piece(
            Piece {
                end_cols: end_cols(&block, source),
                text: block.text,
                source: lead_start..block.source.end,
                head,
                trail,
                closed_at,
                line_start,
                code_line,
                alone,
                table_head: block.table_head,
                verbatim: block.dedent == 0,
            },
            seam_text.as_deref(),
            meta,
            now,
            out,
        );
        gap.clear();
        gap.push_str(&block.sep);
        self.tail_gap = gap;
        self.tail = Some(Tail {
            message: meta.message,
            lane: meta.lane,
            end: block.source.end,
            continues: true,
            ends_item_fence: block.ends_item_fence,
        });
    }

    /// What the source `gap` between the buffer and the next block shows in the message:
    /// as written, or, after a buffer de-indented by [`Block::dedent`] columns (not after
    /// quote markers: such a buffer joins nothing), with each line that starts in it
    /// de-indented as the blocks' own lines are, so the message is its source de-indented
    /// throughout. (The gap is whitespace: its lines never lower the columns in force.)
    fn seam_shown<'g>(&self, gap: &'g str) -> std::borrow::Cow<'g, str> {
        let cols = self.buffer_dedent as usize;
        if self.buffer.is_none() || cols == 0 || cols >= QUOTED_END || !gap.contains('\n') {
            return gap.into();
        }
        let mut shown = String::with_capacity(gap.len());
        dedent_into(gap, cols, false, &mut shown);
        shown.into()
    }

    /// Where the line holding `block`'s start begins, when the block goes on from the
    /// buffer (de-indented, [`Block::dedent`]) by the source between them, and that source
    /// holds the line's start and part of its indentation: the block starts inside the
    /// indentation (where the limit left no room for all of it). Joined as it came, that
    /// line would show the indentation the buffer's lines lost. `None` otherwise.
    fn indent_in_gap(&self, block: &Block, meta: &BlockMeta, text: &str) -> Option<usize> {
        if self.buffer.is_none() || self.buffer_dedent == 0 {
            return None;
        }
        let t = self
            .tail
            .as_ref()
            .filter(|t| t.message == meta.message && t.lane == meta.lane)?;
        // Only where the source joins them (see `push_block`'s seam).
        if !(t.continues || (self.buffer_trail > 0 && block.fence_reopened)) {
            return None;
        }
        let start = block.source.start;
        let gap = text.get(t.end..start)?;
        let line = gap.rfind('\n')? + 1;
        let indent = &gap[line..];
        let only_ws = gap.bytes().all(is_sep_ws);
        (only_ws && !indent.is_empty() && indent.bytes().all(|b| b == b' ' || b == b'\t'))
            .then_some(t.end + line)
    }

    /// Replaces the synthetic close at the end of the buffer with `gap` (the source text
    /// before the fence's own closing line) and `closer` (that line), when the buffer ends
    /// with a synthetic close, has `meta`, and stays within `max` and the line cap. Returns
    /// whether it did.
    fn swap_in_closer(&mut self, gap: &str, closer: &str, meta: &BlockMeta) -> bool {
        let trail = self.buffer_trail as usize;
        let Some(buffer) = self
            .buffer
            .as_mut()
            .filter(|b| trail > 0 && b.meta == *meta)
        else {
            return false;
        };
        let kept = buffer.text.len() - trail;
        let mut text = String::with_capacity(kept + gap.len() + closer.len());
        text.push_str(&buffer.text[..kept]);
        text.push_str(gap);
        text.push_str(closer);
        let len = self.config.metric.len(&text);
        let breaks = line_breaks(&text);
        let too_many_lines = self.config.max_lines.is_some_and(|cap| breaks + 1 > cap);
        if len > self.config.max || too_many_lines {
            return false;
        }
        let (within, measured) = self.config.posts_within(&text, Some(len), meta.lane);
        if !within {
            return false;
        }
        buffer.text = text;
        buffer.measured = measured;
        self.bound_at = None;
        self.buffer_len = len;
        self.buffer_breaks = breaks;
        self.buffer_trail = 0;
        true
    }

    /// The text the blocks came from ended (a `TextEnd`, a tool call, media): the next
    /// block does not continue the previous one and is joined by the configured joiner.
    pub(crate) fn end_of_text(&mut self) {
        if let Some(t) = self.tail.as_mut() {
            t.continues = false;
        }
    }

    /// Adds one piece, joined to the buffer by `seam` (the source separator) or, when
    /// `None`, by the configured joiner.
    fn push_piece(
        &mut self,
        piece: Piece,
        seam: Option<&str>,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        if self.config.flush_on_enqueue {
            self.flush(out);
            self.start(piece, meta, now, out);
            self.flush(out);
            return;
        }
        if self.buffer.as_ref().is_some_and(|b| b.meta != *meta) {
            self.flush(out);
        }
        let Some(buffer) = self.buffer.as_mut() else {
            self.start(piece, meta, now, out);
            return;
        };
        let metric = self.config.metric;
        // What stays of the buffer, what goes between, and what of the piece follows.
        let (kept, joiner, incoming) = match seam {
            // The exact source: the synthetic close and reopen between the two go.
            Some(sep) => (
                buffer.text.len() - self.buffer_trail as usize,
                sep,
                &piece.text[piece.head..],
            ),
            None => {
                let kept = if self.buffer_trail > 0 {
                    buffer.text.len()
                } else {
                    trim_sep_end(&buffer.text).len()
                };
                let joiner = self.config.joiner();
                let incoming = &piece.text[piece.strip_leading(joiner.contains('\n'))..];
                let joiner = if !joiner.contains('\n')
                    && (ends_with_fence_line(&buffer.text[..kept])
                        || starts_with_fence_line(incoming))
                {
                    "\n"
                } else {
                    joiner
                };
                (kept, joiner, incoming)
            }
        };
        let kept_len = if kept == buffer.text.len() {
            self.buffer_len
        } else if metric == LengthMetric::Graphemes {
            // Whitespace may belong to the cluster before it (a Prepend character):
            // measure what stays rather than subtract.
            metric.len(&buffer.text[..kept])
        } else {
            self.buffer_len - metric.len(&buffer.text[kept..])
        };
        let joined_len = kept_len + metric.len(joiner) + metric.len(incoming);
        let joined_breaks = match self.config.max_lines {
            Some(_) => {
                self.buffer_breaks - line_breaks(&buffer.text[kept..])
                    + line_breaks(joiner)
                    + line_breaks(incoming)
            }
            None => 0,
        };
        let too_many_lines = self
            .config
            .max_lines
            .is_some_and(|cap| joined_breaks + 1 > cap);
        let mut measured = None;
        let mut keep = None;
        let over_posted = !too_many_lines
            && joined_len <= self.config.max
            && self.config.format != Format::Markdown
            && {
                let mut joined = String::with_capacity(kept + joiner.len() + incoming.len());
                joined.push_str(&buffer.text[..kept]);
                joined.push_str(joiner);
                joined.push_str(incoming);
                // The joined length is exact in every metric but graphemes (a cluster may
                // form across a seam): there it is counted again.
                let units = (metric != LengthMetric::Graphemes).then_some(joined_len);
                // The scan kept for the buffer goes on from its last line, if that line
                // is still in what stays of it.
                let resume = self.bound_at.as_deref().filter(|(at, _)| *at <= kept);
                // Kept for the next merge: the state at the last line that stays of this
                // text (its synthetic close, if any, goes).
                let upto = joined.len() - piece.trail;
                let resumed = ResumedScan {
                    from: resume,
                    keep: &mut keep,
                    upto,
                };
                let (within, render) = self
                    .config
                    .posts_within_resumed(&joined, units, meta.lane, resumed);
                measured = render;
                !within
            };
        if joined_len > self.config.max || too_many_lines || over_posted {
            self.flush(out);
            self.start(piece, meta, now, out);
            return;
        }
        buffer.text.truncate(kept);
        buffer.text.push_str(joiner);
        buffer.text.push_str(incoming);
        buffer.measured = measured;
        self.bound_at = keep.map(Box::new);
        match (seam, buffer.sources.last_mut()) {
            (Some(_), Some(last)) => last.end = piece.source.end,
            _ => buffer.sources.push(piece.source),
        }
        self.buffer_len = joined_len;
        self.buffer_breaks = joined_breaks;
        self.buffer_trail = piece.trail as u32;
        self.buffer_dedent = piece.end_cols as u32;
        if joined_len >= self.config.max {
            self.flush(out);
        } else {
            self.arm(now);
        }
    }

    /// The idle timer: when the deadline has passed, flushes a buffer of at least `min`
    /// units, or re-arms the timer `idle_ms` after `now` for a smaller one. A call before the
    /// deadline, or with no deadline armed, does nothing.
    pub(crate) fn on_timer(&mut self, now: Time, out: &mut Vec<CoalescedText>) {
        match self.deadline {
            Some(deadline) if now >= deadline => {}
            _ => return,
        }
        if self.buffer_len >= self.config.min {
            self.flush(out);
        } else {
            self.deadline = None;
            self.arm(now);
        }
    }

    /// Forced flush: pushes the buffer, if any, onto `out` and disarms the timer.
    pub(crate) fn flush(&mut self, out: &mut Vec<CoalescedText>) {
        if let Some(buffer) = self.take() {
            out.push(buffer);
        }
    }

    /// Takes the buffer out without emitting it (e.g. to use it as a media caption) and
    /// disarms the timer. Trailing separator whitespace is dropped.
    pub(crate) fn take(&mut self) -> Option<CoalescedText> {
        self.bound_at = None;
        self.buffer_len = 0;
        self.buffer_breaks = 0;
        self.deadline = None;
        let mut buffer = self.buffer.take()?;
        if self.buffer_trail == 0 {
            let kept = trim_sep_end(&buffer.text).len();
            if kept < buffer.text.len() {
                buffer.measured = None;
            }
            buffer.text.truncate(kept);
        }
        buffer.fence_closed = self.buffer_trail > 0;
        self.buffer_trail = 0;
        Some(buffer)
    }

    /// The text buffered now, if any.
    pub(crate) fn buffered(&self) -> Option<&CoalescedText> {
        self.buffer.as_ref()
    }

    /// The length of the buffered text in the metric (0 when empty). For graphemes this may
    /// be an upper bound.
    #[cfg(test)]
    pub(crate) fn buffered_len(&self) -> usize {
        self.buffer_len
    }

    /// True when nothing is buffered.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.buffer.is_none()
    }

    /// When the idle timer wants [`Coalescer::on_timer`] to be called, if armed.
    pub(crate) fn deadline(&self) -> Option<Time> {
        self.deadline
    }

    /// Starts a new buffer with `piece` (its leading separator whitespace dropped), or sends
    /// it alone when it is `max` units or more.
    fn start(&mut self, piece: Piece, meta: &BlockMeta, now: Time, out: &mut Vec<CoalescedText>) {
        let mut piece = match piece.alone {
            Some(alone) => *alone,
            None => piece,
        };
        while let Some(rest) = self.start_one(piece, meta, now, out) {
            piece = rest;
        }
    }

    /// [`Coalescer::start`] for one piece; when the piece starts among a table's rows and
    /// only its first rows fit under the table's header in a message, those go out with it,
    /// and the rest of the piece is returned to start the next message.
    fn start_one(
        &mut self,
        piece: Piece,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) -> Option<Piece> {
        self.buffer_dedent = piece.end_cols as u32;
        self.bound_at = None;
        let strip = piece.strip_leading(true);
        let mut text = piece.text;
        if strip > 0 {
            text.drain(..strip);
        }
        let mut sources = SourceRanges::new();
        let mut len = self.config.metric.len(&text);
        let mut measured = None;
        let mut rest = None;
        // A block that goes on among a table's rows without its header (with its first row
        // the header did not fit in a block) starts a message: where the message has room
        // for the header too, it shows it again, so the rows render as a table.
        if let Some(head) = piece.table_head.as_deref().filter(|_| piece.head == 0) {
            let lane = meta.lane;
            if let Some((with_head, units, render)) =
                table::with_table_head(&self.config, head, &text, lane)
            {
                (text, len, measured) = (with_head, units, render);
            } else if piece.verbatim
                && let Some((first, units, render, next)) =
                    table::rows_under_head(&self.config, head, &text, lane)
            {
                // The text shows its source byte for byte after the stripped whitespace:
                // where each byte of it stands in the source.
                let shown_from = piece.source.end - (text.len() - piece.trail);
                let end = shown_from + (first.len() - head.len());
                sources.push(piece.source.start..end);
                rest = Some(Piece {
                    text: text[next..].to_owned(),
                    source: shown_from + next..piece.source.end,
                    head: 0,
                    trail: piece.trail,
                    closed_at: 0,
                    line_start: false,
                    code_line: false,
                    end_cols: piece.end_cols,
                    alone: None,
                    table_head: piece.table_head.clone(),
                    verbatim: true,
                });
                (text, len, measured) = (first, units, render);
            }
        }
        if sources.is_empty() {
            sources.push(piece.source);
        }
        self.buffer = Some(CoalescedText {
            text,
            sources,
            meta: meta.clone(),
            fence_closed: false,
            measured,
        });
        self.buffer_trail = match rest {
            Some(_) => 0,
            None => piece.trail as u32,
        };
        if len >= self.config.max || rest.is_some() {
            self.flush(out);
            return rest;
        }
        if self.config.max_lines.is_some() {
            self.buffer_breaks = line_breaks(self.buffer.as_ref().map_or("", |b| &b.text));
        }
        self.buffer_len = len;
        self.arm(now);
        None
    }

    fn arm(&mut self, now: Time) {
        self.deadline = (self.config.idle_ms > 0).then(|| now.plus_millis(self.config.idle_ms));
    }
}

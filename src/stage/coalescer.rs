//! The coalescer (SPEC §4): merges consecutive small blocks so a chat does not fill with
//! one-line messages.
//!
//! The coalescer is pure and time-driven without reading a clock: every call that can arm
//! the idle timer takes `now`, [`Coalescer::deadline`] says when the host should call
//! [`Coalescer::on_timer`], and an early or repeated timer call does nothing.

use std::ops::Range;

use smallvec::SmallVec;

use crate::render::{BoundScan, Measured, ResumedScan};
use crate::text::block::Block;
use crate::text::chunker::BreakPreference;
use crate::text::dedent::{end_columns, redented};
pub(crate) use crate::text::markdown::is_code_indent;
use crate::text::markdown::shows_list_for;
use crate::text::markdown::{FenceMarker, is_indented_code_line};
use crate::{Format, Lane, LengthMetric, RenderOptions, ReplyTarget, Time};

/// Coalescer settings. `min` and `max` are in `metric` units.
///
/// [`ResolvedConfig::coalescer`](crate::ResolvedConfig::coalescer) builds this from a
/// resolved configuration; the defaults here are the library defaults on a generic channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoalescerConfig {
    /// The idle timer flushes only a buffer holding at least this many units.
    pub min: usize,
    /// No merged text is longer than this, unless one block alone is.
    pub max: usize,
    /// How long the buffer may sit after the last block before the idle timer fires, in ms;
    /// 0 disables the idle timer (the buffer then waits for `max`, a conflict or a flush).
    pub idle_ms: u64,
    /// Decides the joiner put between merged blocks (see [`CoalescerConfig::joiner`]).
    pub break_preference: BreakPreference,
    /// Paragraph mode (chunk mode `newline`): every block is passed on as it comes.
    pub flush_on_enqueue: bool,
    /// How lengths are counted.
    pub metric: LengthMetric,
    /// A soft cap on lines per merged text (Discord: 17): blocks are not merged when the
    /// result would have more lines (a blank line counts). A single block with more lines
    /// still goes out as it is; splitting it is the platform splitter's job.
    pub max_lines: Option<usize>,
    /// The format merged texts are posted in: with any but `markdown`, blocks are merged
    /// only while what is posted, counted as the platform counts it
    /// ([`crate::posted_len`]), stays within `max` too.
    pub format: Format,
    /// The options merged texts are rendered with (reasoning is quoted on top of these).
    pub render: RenderOptions,
}

impl Default for CoalescerConfig {
    fn default() -> Self {
        CoalescerConfig {
            min: 800,
            max: 4000,
            idle_ms: 1000,
            break_preference: BreakPreference::Paragraph,
            flush_on_enqueue: false,
            metric: LengthMetric::Chars,
            max_lines: None,
            format: Format::Markdown,
            render: RenderOptions::default(),
        }
    }
}

impl CoalescerConfig {
    /// The text put between two merged blocks: `"\n\n"` for paragraph, `"\n"` for newline,
    /// `" "` for sentence preference.
    pub fn joiner(&self) -> &'static str {
        match self.break_preference {
            BreakPreference::Paragraph => "\n\n",
            BreakPreference::Newline => "\n",
            BreakPreference::Sentence => " ",
        }
    }

    /// Whether `text`, posted on `lane` in the configured format, is within `max` as the
    /// platform counts it (always in format `markdown`: the caller counted the Markdown).
    /// With the render made to measure it, if one was needed (see [`Measured`]).
    /// `units`: the length of `text` in `metric`, when the caller knows it.
    pub(crate) fn posts_within(
        &self,
        text: &str,
        units: Option<usize>,
        lane: Lane,
    ) -> (bool, Option<Measured>) {
        if self.format == Format::Markdown {
            return (true, None);
        }
        let options = RenderOptions {
            quote: lane == Lane::Reasoning,
            ..self.render
        };
        let units = units.unwrap_or_else(|| self.metric.len(text));
        crate::render::posted_within_measured(
            text,
            units,
            self.format,
            &options,
            self.metric,
            self.max,
        )
    }

    /// [`CoalescerConfig::posts_within`] for `text` that extends the text a previous check
    /// kept a state for (see [`crate::render::posted_within_resumed`] and [`ResumedScan`]).
    pub(crate) fn posts_within_resumed(
        &self,
        text: &str,
        units: Option<usize>,
        lane: Lane,
        resumed: ResumedScan<'_>,
    ) -> (bool, Option<Measured>) {
        *resumed.keep = None;
        if self.format == Format::Markdown {
            return (true, None);
        }
        let options = RenderOptions {
            quote: lane == Lane::Reasoning,
            ..self.render
        };
        let units = units.unwrap_or_else(|| self.metric.len(text));
        crate::render::posted_within_resumed(
            text,
            units,
            self.format,
            &options,
            self.metric,
            self.max,
            resumed,
        )
    }

    /// This configuration with `min >= 1`, `max >= min` and then `min <= max` enforced.
    pub fn clamped(mut self) -> CoalescerConfig {
        self.min = self.min.max(1);
        self.max = self.max.max(1);
        self.min = self.min.min(self.max);
        self
    }
}

/// How a payload is to be delivered. Blocks whose metadata differ are never merged: a
/// different assistant message, reply target, voice flag or lane is a conflict.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct BlockMeta {
    /// The index of the assistant message (within the turn) the block came from.
    pub message: usize,
    /// The platform message the payload replies to.
    pub reply_to: Option<ReplyTarget>,
    /// Audio should be sent as a voice note.
    pub audio_as_voice: bool,
    /// Visibility class.
    pub lane: Lane,
}

/// The source ranges of the blocks merged into one [`CoalescedText`], in order.
pub(crate) type SourceRanges = SmallVec<[Range<usize>; 4]>;

/// One merged text the coalescer hands on: one or more blocks joined, with their metadata
/// and where they came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoalescedText {
    /// The merged text (see [`Coalescer`] for how blocks are joined).
    pub text: String,
    /// The source ranges the text shows, in order. Never empty. Blocks joined by their own
    /// source separator share one range (the separator is part of what was shown); a
    /// configured joiner starts a new range. The ranges index the assistant message's
    /// cleaned text (for the answer lane).
    pub sources: SourceRanges,
    /// The metadata shared by every merged block.
    pub meta: BlockMeta,
    /// `text` ends with a `"\n"` and a synthetic closing fence line (the last merged
    /// block was cut inside a fence).
    pub fence_closed: bool,
    /// `text` as rendered when it was measured against `max` (when it had to be rendered):
    /// the render the send posts, so it is not rendered again. Dropped whenever `text`
    /// changes.
    pub measured: Option<Measured>,
}

impl CoalescedText {
    /// The span of source text covered, from the start of the first merged block to the end
    /// of the last one.
    #[cfg(test)]
    pub(crate) fn covered(&self) -> Range<usize> {
        match (self.sources.first(), self.sources.last()) {
            (Some(first), Some(last)) => first.start..last.end,
            _ => 0..0,
        }
    }
}

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
        let block = match self.buffer.is_some() && self.buffer_dedent as usize != block.dedent {
            true => match source.and_then(|t| redented(&block, t, self.buffer_dedent as usize)) {
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
                let swapped = gap.is_some_and(|gap| self.swap_in_closer(&gap, closer, meta));
                if swapped {
                    self.tail_gap.clear();
                    self.tail_gap.push_str(&block.sep);
                    self.tail = Some(Tail {
                        message: meta.message,
                        lane: meta.lane,
                        end: block.source.end,
                        continues: true,
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
            Box::new(Piece {
                closed_at: match a.fence_reopened {
                    true => reopened_then_closed(&a.text, head),
                    false => 0,
                },
                end_cols: end_cols(&a, source),
                text: a.text,
                source: lead_start..a.source.end,
                head,
                trail,
                line_start,
                code_line,
                alone: None,
            })
        });
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
            },
            seam_text,
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
        });
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
        let piece = match piece.alone {
            Some(alone) => *alone,
            None => piece,
        };
        self.buffer_dedent = piece.end_cols as u32;
        self.bound_at = None;
        let strip = piece.strip_leading(true);
        let mut text = piece.text;
        if strip > 0 {
            text.drain(..strip);
        }
        let mut sources = SourceRanges::new();
        sources.push(piece.source);
        let len = self.config.metric.len(&text);
        self.buffer = Some(CoalescedText {
            text,
            sources,
            meta: meta.clone(),
            fence_closed: false,
            measured: None,
        });
        self.buffer_trail = piece.trail as u32;
        if len >= self.config.max {
            self.flush(out);
            return;
        }
        if self.config.max_lines.is_some() {
            self.buffer_breaks = line_breaks(self.buffer.as_ref().map_or("", |b| &b.text));
        }
        self.buffer_len = len;
        self.arm(now);
    }

    fn arm(&mut self, now: Time) {
        self.deadline = (self.config.idle_ms > 0).then(|| now.plus_millis(self.config.idle_ms));
    }
}

/// A block on its way into the buffer.
struct Piece {
    text: String,
    source: Range<usize>,
    /// Bytes of `text` that are its synthetic start: a reopened fence line and its `"\n"`,
    /// or the 4 spaces that continue an indented code line.
    head: usize,
    /// Bytes of `text` that are `"\n"` and a synthetic closing line.
    trail: usize,
    /// When the piece's source starts with the closing line of the fence it reopens, where
    /// that line ends (else 0): the code block was already closed at the end of the piece
    /// before, and reopening it here would show an empty one.
    closed_at: usize,
    /// The piece starts a line of its source.
    line_start: bool,
    /// An indentation at the piece's start would make indented code, as in its source
    /// (not a paragraph's lazy continuation line).
    code_line: bool,
    /// The columns of de-indentation in force at its end ([`end_cols`]).
    end_cols: usize,
    /// The piece as it starts a message, where it joins the buffer rebuilt otherwise (a
    /// de-indented block joining text de-indented by other columns).
    alone: Option<Box<Piece>>,
}

/// The columns of de-indentation in force at the end of `block` ([`end_columns`]): 0 for
/// a block shown as written; unknown without its source, and then nothing joins it.
fn end_cols(block: &Block, source: Option<&str>) -> usize {
    match (block.dedent, source) {
        (0, _) => 0,
        (_, Some(text)) => end_columns(block, text),
        (_, None) => usize::MAX,
    }
}

impl Piece {
    /// How many leading bytes are separator whitespace, dropped where the piece starts a
    /// buffer or follows a joiner: none after a synthetic reopen line (that is code), but a
    /// reopen line followed by the fence's own closing line goes with that line; then
    /// blank lines always; the rest of the run too, unless it is a code indentation (four
    /// columns or more) at the start of a line and `indent_ok` (the piece starts a message
    /// or follows a joiner that ends a line). Fewer spaces mean nothing at a message's
    /// start (" After the chart." after a removed directive line).
    fn strip_leading(&self, indent_ok: bool) -> usize {
        if self.head > 0 && self.closed_at == 0 {
            return 0;
        }
        let from = self.closed_at;
        let text = &self.text[from..];
        let run = &text[..text.len() - trim_sep_start(text).len()];
        let nl = run.rfind('\n');
        let indent = &run[nl.map_or(0, |i| i + 1)..];
        let at_line_start = nl.is_some() || (self.line_start && from == 0);
        // A fence opening line keeps its indentation (3 spaces at most): its code lines are
        // indented alike, and the fence takes that much off each of them.
        let indent_from = nl.map_or(0, |i| i + 1);
        let fence_line = || {
            let line = &text[indent_from..];
            FenceMarker::parse_open(&line[..line.find('\n').unwrap_or(line.len())]).is_some()
        };
        from + match nl {
            _ if indent_ok && at_line_start && self.code_line && is_code_indent(indent) => {
                indent_from
            }
            _ if indent_ok && at_line_start && !indent.is_empty() && fence_line() => indent_from,
            _ => run.len(),
        }
    }
}

/// Where the first source line of a block ends when it closes the fence the block's
/// synthetic reopen line (`lead` bytes) opens; 0 otherwise.
pub(crate) fn reopened_then_closed(text: &str, lead: usize) -> usize {
    // A bare marker going on with the rest of its opening line is no line of its own.
    if lead == 0 || text.as_bytes()[lead - 1] != b'\n' {
        return 0;
    }
    let reopen = &text[..lead - 1];
    let line = text[lead..].split('\n').next().unwrap_or("");
    // In a quote, the reopening line repeats the container prefix, and the fence's closing
    // line carries the same one: the fence lines are read after it.
    let prefix = reopen.len() - reopen.trim_start_matches([' ', '\t', '>']).len();
    let quoted = reopen[..prefix].contains('>') && line.starts_with(&reopen[..prefix]);
    let (reopen, first) = match quoted {
        true => (&reopen[prefix..], &line[prefix..]),
        false => (reopen, line),
    };
    match FenceMarker::parse_open(reopen) {
        Some(m) if m.is_closed_by(first) => lead + line.len(),
        _ => 0,
    }
}

/// The byte lengths of `block`'s synthetic start (a reopened fence line with its `"\n"`,
/// or the 4 spaces continuing an indented code line) and synthetic close (the `"\n"` and
/// closing line), 0 when absent: what lies outside [`Block::source_in_text`].
fn synthetic_edges(block: &Block) -> (usize, usize) {
    let shown = block.source_in_text();
    (shown.start, block.text.len() - shown.end)
}

/// Separator whitespace, as the chunker cuts at it: space, tab, `\r`, `\n`. Other
/// whitespace (an ideographic space indenting a paragraph) is text.
fn is_sep_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn trim_sep_end(text: &str) -> &str {
    text.trim_end_matches([' ', '\t', '\n', '\r'])
}

fn trim_sep_start(text: &str) -> &str {
    text.trim_start_matches([' ', '\t', '\n', '\r'])
}

fn line_breaks(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

/// Whether the last line of `text` is a fence line (an opening or closing marker line).
fn ends_with_fence_line(text: &str) -> bool {
    let last = text.rsplit('\n').next().unwrap_or("");
    FenceMarker::parse_open(last).is_some()
}

/// Whether the first line of `text` is a fence line.
fn starts_with_fence_line(text: &str) -> bool {
    let first = text.split('\n').next().unwrap_or("");
    FenceMarker::parse_open(first).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_reopen_followed_by_its_own_closer_is_seen() {
        // The reopening line and the fence's closing line carry the quote prefix (CRLF).
        let text = "   > ````\n   > ````\r\n\r\nafter";
        assert_eq!(reopened_then_closed(text, 10), 10 + "   > ````\r".len());
        assert_eq!(reopened_then_closed("```\n```\nafter", 4), 7);
        // Code after the reopening line: no closer.
        assert_eq!(reopened_then_closed("   > ````\n   > code\n", 10), 0);
        // The rest of a code line after the prefix again: no line of its own.
        assert_eq!(reopened_then_closed("> ```\n> ```", 8), 0);
    }

    fn cfg(min: usize, max: usize, pref: BreakPreference) -> CoalescerConfig {
        CoalescerConfig {
            min,
            max,
            idle_ms: 1000,
            break_preference: pref,
            flush_on_enqueue: false,
            metric: LengthMetric::Chars,
            max_lines: None,
            ..CoalescerConfig::default()
        }
    }

    fn meta(message: usize) -> BlockMeta {
        BlockMeta {
            message,
            ..BlockMeta::default()
        }
    }

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    fn texts(out: &[CoalescedText]) -> Vec<&str> {
        out.iter().map(|c| c.text.as_str()).collect()
    }

    /// The block showing `src[range]` (plain, no synthetic lines), with its separator up to
    /// `next` (the next block's start).
    fn block(src: &str, range: Range<usize>, next: usize) -> Block {
        Block {
            text: src[range.clone()].to_owned(),
            sep: src[range.end..next].to_owned(),
            source: range,
            fence_reopened: false,
            fence_closed: false,
            ..Block::default()
        }
    }

    /// Feeds blocks of `src` between consecutive `cuts` (byte offsets; each block runs to
    /// the last non-whitespace byte before the next cut, the rest is its separator).
    fn feed(c: &mut Coalescer, src: &str, cuts: &[usize], out: &mut Vec<CoalescedText>) {
        for w in cuts.windows(2) {
            let end = w[0] + src[w[0]..w[1]].trim_end().len();
            c.push_block(block(src, w[0]..end, w[1]), &meta(0), Some(src), t(0), out);
        }
    }

    /// A block known only by its text (no source to read separators from), starting a new
    /// text each time: the configured joiner joins it.
    fn loose(
        c: &mut Coalescer,
        text: &str,
        at: usize,
        m: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        c.end_of_text();
        let b = Block {
            text: text.to_owned(),
            sep: String::new(),
            source: at..at + text.len(),
            fence_reopened: false,
            fence_closed: false,
            ..Block::default()
        };
        c.push_block(b, m, None, now, out);
    }

    /// A merge the coalescer had to render to measure hands that render on with the text
    /// (the send posts it, not a second render); one it could prove without rendering (it
    /// cannot grow, or its scanned bound is within the limit), or a text changed after it
    /// was measured, hands none on.
    #[test]
    fn a_merged_text_carries_the_render_that_measured_it() {
        // 35 chars posted as 35: within 36, but a list's bound is not.
        let config = CoalescerConfig {
            format: Format::TelegramHtml,
            ..cfg(1, 36, BreakPreference::Paragraph)
        };
        let options = config.render;
        let mut c = Coalescer::new(config);
        let mut out = Vec::new();
        let src = "1. one & two\n\n2. three <four>\n\nfive\n\n";
        feed(&mut c, src, &[0, 14, 31, src.len()], &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["1. one & two\n\n2. three <four>\n\nfive"]);
        let measured = out[0]
            .measured
            .clone()
            .expect("a list is measured rendered");
        assert!(measured.renders(&out[0].text, Format::TelegramHtml, &options));
        assert_eq!(
            measured.into_rendered(),
            crate::render::render(&out[0].text, Format::TelegramHtml, &options)
        );

        // Far within the limit the list's bound proves it fits: no render, none handed on.
        let roomy = CoalescerConfig {
            format: Format::TelegramHtml,
            ..cfg(1, 400, BreakPreference::Paragraph)
        };
        let mut c = Coalescer::new(roomy);
        let mut out = Vec::new();
        feed(&mut c, src, &[0, 14, 31, src.len()], &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["1. one & two\n\n2. three <four>\n\nfive"]);
        assert_eq!(out[0].measured, None);

        // Plain paragraphs cannot grow: merged without a render, none handed on.
        let mut c = Coalescer::new(config);
        let mut out = Vec::new();
        let src = "one & two\n\nthree\n\n";
        feed(&mut c, src, &[0, 11, src.len()], &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["one & two\n\nthree"]);
        assert_eq!(out[0].measured, None);
    }

    #[test]
    fn joiners() {
        assert_eq!(cfg(1, 9, BreakPreference::Paragraph).joiner(), "\n\n");
        assert_eq!(cfg(1, 9, BreakPreference::Newline).joiner(), "\n");
        assert_eq!(cfg(1, 9, BreakPreference::Sentence).joiner(), " ");
    }

    #[test]
    fn sentence_blocks_merge_after_idle() {
        let src = "Hello world";
        let mut c = Coalescer::new(cfg(5, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push_block(block(src, 0..5, 6), &meta(0), Some(src), t(0), &mut out);
        assert_eq!(c.deadline(), Some(t(1000)));
        c.push_block(block(src, 6..11, 11), &meta(0), Some(src), t(300), &mut out);
        assert!(out.is_empty());
        assert_eq!(c.deadline(), Some(t(1300)), "re-armed on enqueue");
        c.on_timer(t(1299), &mut out);
        assert!(out.is_empty(), "early timer is a no-op");
        c.on_timer(t(1300), &mut out);
        assert_eq!(texts(&out), ["Hello world"]);
        assert_eq!(out[0].sources.len(), 1, "the separator counts as shown");
        assert_eq!(out[0].covered(), 0..11);
        assert_eq!(c.deadline(), None);
        assert!(c.is_empty());
        c.on_timer(t(5000), &mut out);
        assert_eq!(out.len(), 1, "repeated timer is a no-op");
    }

    #[test]
    fn below_min_the_timer_is_rearmed() {
        let mut c = Coalescer::new(cfg(50, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        loose(&mut c, "short", 0, &meta(0), t(10), &mut out);
        c.on_timer(t(1010), &mut out);
        assert!(out.is_empty());
        assert_eq!(c.deadline(), Some(t(2010)));
        c.on_timer(t(2500), &mut out);
        assert_eq!(c.deadline(), Some(t(3500)));
        c.flush(&mut out);
        assert_eq!(texts(&out), ["short"]);
        assert_eq!(c.deadline(), None);
    }

    #[test]
    fn idle_zero_never_arms() {
        let mut c = Coalescer::new(CoalescerConfig {
            idle_ms: 0,
            ..cfg(1, 100, BreakPreference::Paragraph)
        });
        let mut out = Vec::new();
        loose(&mut c, "a", 0, &meta(0), t(0), &mut out);
        assert_eq!(c.deadline(), None);
        c.on_timer(t(1_000_000), &mut out);
        assert!(out.is_empty());
        c.flush(&mut out);
        assert_eq!(texts(&out), ["a"]);
    }

    #[test]
    fn conflicts_flush() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        loose(&mut c, "a", 0, &meta(0), t(0), &mut out);
        let replying = BlockMeta {
            reply_to: Some(ReplyTarget::Id("42".into())),
            ..meta(0)
        };
        loose(&mut c, "b", 2, &replying, t(0), &mut out);
        assert_eq!(texts(&out), ["a"]);
        let voice = BlockMeta {
            audio_as_voice: true,
            ..replying.clone()
        };
        loose(&mut c, "c", 4, &voice, t(0), &mut out);
        let reasoning = BlockMeta {
            lane: Lane::Reasoning,
            ..voice.clone()
        };
        loose(&mut c, "d", 6, &reasoning, t(0), &mut out);
        loose(&mut c, "e", 8, &reasoning, t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["a", "b", "c", "d\n\ne"]);
        assert_eq!(out[1].meta, replying);
        assert_eq!(out[3].meta.lane, Lane::Reasoning);
        assert_eq!(
            out[3].sources.as_slice(),
            [6..7, 8..9],
            "a joiner starts a new range"
        );
    }

    #[test]
    fn never_across_messages() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        let src = "one.";
        c.push_block(block(src, 0..4, 4), &meta(0), Some(src), t(0), &mut out);
        // The same offsets in the next message: never a continuation.
        c.push_block(
            block("two.", 0..4, 4),
            &meta(1),
            Some("two."),
            t(0),
            &mut out,
        );
        c.flush(&mut out);
        assert_eq!(texts(&out), ["one.", "two."]);
        assert_eq!((out[0].meta.message, out[1].meta.message), (0, 1));
    }

    #[test]
    fn over_max_goes_alone_unsplit() {
        let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
        let mut out = Vec::new();
        loose(&mut c, "abc", 0, &meta(0), t(0), &mut out);
        loose(&mut c, "0123456789abc", 4, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["abc", "0123456789abc"]);
        assert!(c.is_empty());
        // Exactly max also goes alone.
        loose(&mut c, "0123456789", 18, &meta(0), t(0), &mut out);
        assert_eq!(out.len(), 3);
        assert!(c.is_empty());
    }

    #[test]
    fn exceeding_max_flushes_then_starts_anew() {
        let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
        let mut out = Vec::new();
        let src = "abcd efgh ij";
        feed(&mut c, src, &[0, 5, 10], &mut out);
        assert!(out.is_empty(), "9 units fit");
        c.push_block(block(src, 10..12, 12), &meta(0), Some(src), t(0), &mut out);
        assert_eq!(texts(&out), ["abcd efgh"]);
        assert_eq!(c.buffered().map(|b| b.text.as_str()), Some("ij"));
        assert_eq!(c.deadline(), Some(t(1000)));
    }

    #[test]
    fn reaching_max_flushes() {
        let mut c = Coalescer::new(cfg(1, 9, BreakPreference::Sentence));
        let mut out = Vec::new();
        feed(&mut c, "abcd efgh", &[0, 5, 9], &mut out);
        assert_eq!(texts(&out), ["abcd efgh"]);
        assert_eq!(c.deadline(), None);
    }

    #[test]
    fn paragraph_mode_passes_through() {
        let mut c = Coalescer::new(CoalescerConfig {
            flush_on_enqueue: true,
            ..cfg(500, 1000, BreakPreference::Paragraph)
        });
        let mut out = Vec::new();
        feed(&mut c, "p1\n\np2", &[0, 4, 6], &mut out);
        assert_eq!(texts(&out), ["p1", "p2"]);
        assert_eq!(c.deadline(), None);
        assert!(c.is_empty());
    }

    #[test]
    fn joiner_never_doubles_whitespace() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        loose(&mut c, "a\n\n", 0, &meta(0), t(0), &mut out);
        loose(&mut c, "\n\nb  ", 3, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["a\n\nb"]);

        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        loose(&mut c, "One. ", 0, &meta(0), t(0), &mut out);
        loose(&mut c, "  Two.", 5, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(out[1].text, "One. Two.");
        assert_eq!(c.buffered_len(), 0);
    }

    #[test]
    fn indentation_after_a_line_joiner_is_kept() {
        // "Intro:" ends one text block; the next starts with an indented code line. With the
        // sentence joiner the block lands mid-line: its indentation goes.
        let src = "Intro:\n\n    code()";
        let mut out = Vec::new();
        for pref in [BreakPreference::Paragraph, BreakPreference::Sentence] {
            let mut c = Coalescer::new(cfg(1, 100, pref));
            feed(&mut c, src, &[0, 6], &mut out);
            c.end_of_text();
            feed(&mut c, src, &[6, src.len()], &mut out);
            c.flush(&mut out);
        }
        assert_eq!(texts(&out), ["Intro:\n\n    code()", "Intro: code()"]);
    }

    #[test]
    fn whitespace_blocks_are_ignored() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        loose(&mut c, " \n ", 0, &meta(0), t(0), &mut out);
        loose(&mut c, "", 3, &meta(0), t(0), &mut out);
        assert!(c.is_empty());
        assert_eq!(c.deadline(), None);
        c.flush(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn lengths_in_the_metric() {
        // "é" is 2 bytes and 1 UTF-16 unit; "🦀" is 4 bytes and 2 units.
        let mut c = Coalescer::new(CoalescerConfig {
            metric: LengthMetric::Utf16,
            ..cfg(1, 9, BreakPreference::Sentence)
        });
        let mut out = Vec::new();
        let src = "ééé 🦀🦀 é";
        feed(&mut c, src, &[0, 7, 16], &mut out);
        assert!(out.is_empty());
        assert_eq!(c.buffered_len(), 8);
        c.push_block(block(src, 16..18, 18), &meta(0), Some(src), t(0), &mut out);
        assert_eq!(texts(&out), ["ééé 🦀🦀"]);
    }

    #[test]
    fn line_cap_stops_merging() {
        let mut c = Coalescer::new(CoalescerConfig {
            max_lines: Some(5),
            ..cfg(1, 1000, BreakPreference::Paragraph)
        });
        let mut out = Vec::new();
        let src = "l1\nl2\n\nl3\nl4\na\nb\nc\nd\ne\nf\ng";
        feed(&mut c, src, &[0, 7, 10], &mut out);
        assert!(out.is_empty(), "2 + blank + 1 = 4 lines");
        feed(&mut c, src, &[10, 13], &mut out);
        assert!(out.is_empty(), "joined by its line break: 5 lines");
        feed(&mut c, src, &[13, 25], &mut out);
        assert_eq!(texts(&out), ["l1\nl2\n\nl3\nl4"]);
        // A block over the cap alone stays whole; nothing joins it.
        feed(&mut c, src, &[25, src.len()], &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["l1\nl2\n\nl3\nl4", "a\nb\nc\nd\ne\nf", "g"]);
    }

    #[test]
    fn take_hands_over_the_buffer() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        loose(&mut c, "caption  ", 0, &meta(0), t(0), &mut out);
        let taken = c.take().map(|b| b.text);
        assert_eq!(taken.as_deref(), Some("caption"), "no trailing separator");
        assert_eq!(c.deadline(), None);
        assert!(c.take().is_none());
    }

    #[test]
    fn config_is_clamped() {
        let c = Coalescer::new(CoalescerConfig {
            min: 0,
            max: 0,
            ..CoalescerConfig::default()
        });
        assert_eq!((c.config().min, c.config().max), (1, 1));
        let c = Coalescer::new(CoalescerConfig {
            min: 50,
            max: 10,
            ..CoalescerConfig::default()
        });
        assert_eq!((c.config().min, c.config().max), (10, 10));
    }

    #[test]
    fn contiguous_blocks_join_with_their_source_separator() {
        // Paragraph preference: the joiner would be a blank line, but these blocks were cut
        // at a sentence end, a hard cut, a line break and a CJK full stop.
        let src = "One two. Threefour.\n- tight\n句子。消息";
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        feed(&mut c, src, &[0, 9, 14, 20, 28, 37, src.len()], &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), [src]);
        assert_eq!(out[0].sources.len(), 1);
        assert_eq!(out[0].covered(), 0..src.len());
    }

    #[test]
    fn separators_come_from_the_blocks_without_a_source_text() {
        let src = "One two. Three\nfour";
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        for (range, next) in [(0..8, 9), (9..14, 15), (15..19, 19)] {
            c.push_block(block(src, range, next), &meta(0), None, t(0), &mut out);
        }
        // A gap the separators do not account for: the joiner.
        let late = Block {
            text: "Later.".into(),
            source: 40..46,
            ..Block::default()
        };
        c.push_block(late, &meta(0), None, t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["One two. Three\nfour\n\nLater."]);
    }

    /// A fence cut in two at a line break, as the chunker cuts it: the first half ends with
    /// a synthetic close, the second reopens.
    const SPLIT_FENCE: &str = "```py\na = 1\nb = 2\n```";

    fn split_fence_halves() -> [Block; 2] {
        let src = SPLIT_FENCE;
        [
            Block {
                text: "```py\na = 1\n```".into(),
                sep: "\n".into(),
                source: 0..11,
                fence_reopened: false,
                fence_closed: true,
                tail_len: 4,
                ..Block::default()
            },
            Block {
                text: "```py\nb = 2\n```".into(),
                sep: String::new(),
                source: 12..src.len(),
                fence_reopened: true,
                fence_closed: false,
                head_len: 6,
                ..Block::default()
            },
        ]
    }

    #[test]
    fn a_fence_cut_in_two_is_one_code_block_in_one_message() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        for b in split_fence_halves() {
            c.push_block(b, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
        }
        c.flush(&mut out);
        assert_eq!(texts(&out), [SPLIT_FENCE]);

        // A hard cut inside one long code line: no separator at all.
        let src = "```\nxxxxyyyy\n```";
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        let parts = [
            ("```\nxxxx\n```", 0..8, true, false),
            ("```\nyyyy\n```", 8..src.len(), false, true),
        ];
        for (text, source, closed, reopened) in parts {
            let b = Block {
                text: text.into(),
                sep: String::new(),
                source,
                fence_reopened: reopened,
                fence_closed: closed,
                head_len: if reopened { 4 } else { 0 },
                tail_len: if closed { 4 } else { 0 },
                ..Block::default()
            };
            c.push_block(b, &meta(0), Some(src), t(0), &mut out);
        }
        c.flush(&mut out);
        assert_eq!(texts(&out)[1], src);
    }

    #[test]
    fn a_split_fence_keeps_its_edges_when_the_buffer_flushes_between() {
        let mut c = Coalescer::new(cfg(1, 12, BreakPreference::Paragraph));
        let mut out = Vec::new();
        for b in split_fence_halves() {
            c.push_block(b, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
        }
        c.flush(&mut out);
        assert_eq!(texts(&out), ["```py\na = 1\n```", "```py\nb = 2\n```"]);
    }

    #[test]
    fn a_fence_spanning_a_text_boundary_is_joined_by_the_source() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        let [first, second] = split_fence_halves();
        c.push_block(first, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
        c.end_of_text();
        c.push_block(second, &meta(0), Some(SPLIT_FENCE), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), [SPLIT_FENCE], "no joiner inside code");
    }

    #[test]
    fn the_sentence_joiner_never_shares_a_line_with_a_fence() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        loose(&mut c, "Intro.", 0, &meta(0), t(0), &mut out);
        loose(&mut c, "```python\nx = 1\n```", 6, &meta(0), t(0), &mut out);
        loose(&mut c, "After.", 25, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["Intro.\n```python\nx = 1\n```\nAfter."]);
    }

    #[test]
    fn no_send_starts_with_a_separator() {
        // After media or a tool (a new text), " B" starts mid-line: the space was the
        // separator around what was removed.
        let src = "A B\n\n    code";
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        c.push_block(block(src, 0..1, 1), &meta(0), Some(src), t(0), &mut out);
        c.flush(&mut out);
        c.end_of_text();
        c.push_block(block(src, 1..3, 5), &meta(0), Some(src), t(0), &mut out);
        c.flush(&mut out);
        // A code line's indentation is not a separator.
        c.push_block(
            block(src, 5..src.len(), src.len()),
            &meta(0),
            Some(src),
            t(0),
            &mut out,
        );
        c.flush(&mut out);
        assert_eq!(texts(&out), ["A", "B", "    code"]);
        assert_eq!(out[1].sources.len(), 1);
        assert_eq!(out[1].covered(), 1..3, "the separator counts as shown");
    }

    #[test]
    fn a_lazy_continuation_line_loses_its_indentation_at_a_send_start() {
        // Indented by 4 right after a paragraph line: the paragraph goes on (CommonMark),
        // so at the start of a send the spaces would turn it into a code block.
        let src = "A paragraph\n     goes on";
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        c.push_block(block(src, 0..11, 12), &meta(0), Some(src), t(0), &mut out);
        c.flush(&mut out);
        c.push_block(
            block(src, 12..src.len(), src.len()),
            &meta(0),
            Some(src),
            t(0),
            &mut out,
        );
        c.flush(&mut out);
        assert_eq!(texts(&out), ["A paragraph", "goes on"]);
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// One block of the source: a word run and the separator after it; `boundary` ends a
    /// text block there (the joiner may follow).
    #[derive(Clone, Debug)]
    struct Part {
        words: String,
        sep: &'static str,
        boundary: bool,
    }

    #[derive(Clone, Debug)]
    enum Step {
        Block(Part),
        Timer(u64),
        Flush,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => ("[a-zé🦀]{1,6}(-[a-zé🦀\u{301}]{1,5}){0,4}",
                  prop::sample::select(vec!["", " ", "\n", "\n\n", "  \n", " \n\n  "]),
                  prop::bool::weighted(0.2))
                .prop_map(|(words, sep, boundary)| Step::Block(Part { words, sep, boundary })),
            2 => (0u64..3000).prop_map(Step::Timer),
            1 => Just(Step::Flush),
        ]
    }

    fn preference() -> impl Strategy<Value = BreakPreference> {
        prop_oneof![
            Just(BreakPreference::Paragraph),
            Just(BreakPreference::Newline),
            Just(BreakPreference::Sentence),
        ]
    }

    fn metric() -> impl Strategy<Value = LengthMetric> {
        prop::sample::select(LengthMetric::ALL.to_vec())
    }

    proptest! {
        #[test]
        fn bounded_and_exact(
            steps in prop::collection::vec(step(), 0..60),
            min in 1usize..40,
            max in 1usize..60,
            idle in 0u64..2000,
            pref in preference(),
            metric in metric(),
            paragraph in any::<bool>(),
            max_lines in prop::option::of(1usize..8),
        ) {
            let config = CoalescerConfig {
                min, max, idle_ms: idle, break_preference: pref,
                flush_on_enqueue: paragraph, metric, max_lines,
                ..CoalescerConfig::default()
            };
            let mut c = Coalescer::new(config);
            let max = c.config().max;
            let joiner = c.config().joiner();
            // The whole source first, so blocks can index it.
            let mut src = String::new();
            let mut ranges = Vec::new();
            for s in &steps {
                if let Step::Block(p) = s {
                    ranges.push((src.len()..src.len() + p.words.len(), p.boundary));
                    src.push_str(&p.words);
                    src.push_str(p.sep);
                }
            }
            let mut out = Vec::new();
            let mut now = 0u64;
            let mut next = 0;
            let mut boundaries = Vec::new();
            for s in steps {
                match s {
                    Step::Block(p) => {
                        let (range, boundary) = ranges[next].clone();
                        next += 1;
                        let b = Block {
                            text: p.words.clone(),
                            sep: p.sep.to_owned(),
                            source: range.clone(),
                            ..Block::default()
                        };
                        c.push_block(b, &BlockMeta::default(), Some(&src), Time::from_millis(now), &mut out);
                        if boundary {
                            c.end_of_text();
                            boundaries.push(range.end);
                        }
                    }
                    Step::Timer(dt) => {
                        now += dt;
                        c.on_timer(Time::from_millis(now), &mut out);
                    }
                    Step::Flush => c.flush(&mut out),
                }
                if let Some(d) = c.deadline() {
                    prop_assert!(idle > 0 && d.as_millis() > now);
                }
                prop_assert!(c.buffered_len() < max);
            }
            c.flush(&mut out);

            let mut covered = 0usize;
            for merged in &out {
                let first = merged.sources[0].start;
                prop_assert!(first >= covered, "in order: {:?}", merged);
                prop_assert!(src[covered..first].trim().is_empty(), "nothing skipped");
                // Never above max unless one block alone is at least max.
                if metric.len(&merged.text) > max {
                    prop_assert_eq!(merged.sources.len(), 1, "over max only alone: {:?}", merged);
                }
                if let Some(cap) = max_lines && merged.sources.len() > 1 {
                    prop_assert!(merged.text.split('\n').count() <= cap, "line cap: {:?}", merged);
                }
                // Exactly the source per range; the joiner between ranges, only at a
                // text boundary; no separator at either end.
                let mut want = String::new();
                for (i, r) in merged.sources.iter().enumerate() {
                    if i > 0 {
                        prop_assert!(boundaries.iter().any(|&q| q >= merged.sources[i - 1].end && q <= r.start));
                        want.push_str(joiner);
                    }
                    want.push_str(&src[r.clone()]);
                }
                prop_assert_eq!(&merged.text, want.trim());
                if paragraph {
                    prop_assert_eq!(merged.sources.len(), 1);
                }
                covered = merged.sources.last().unwrap().end;
            }
            prop_assert!(src[covered..].trim().is_empty(), "nothing lost");
        }
    }
}

//! The coalescer (SPEC §4): merges consecutive small blocks so a chat does not fill with
//! one-line messages.
//!
//! The coalescer is pure and time-driven without reading a clock: every call that can arm
//! the idle timer takes `now`, [`Coalescer::deadline`] says when the host should call
//! [`Coalescer::on_timer`], and an early or repeated timer call does nothing.

use std::ops::Range;

use smallvec::SmallVec;

use crate::text::block::Block;
use crate::text::chunker::BreakPreference;
use crate::{Lane, LengthMetric, ReplyTarget, Time};

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
    /// The merged text: the blocks joined by the configured joiner.
    pub text: String,
    /// The source range of each merged block, as given to [`Coalescer::push`], in order.
    /// Never empty. The ranges index the assistant message's cleaned text; the text between
    /// two ranges was a separator, replaced by the joiner.
    pub sources: SourceRanges,
    /// The metadata shared by every merged block.
    pub meta: BlockMeta,
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

/// Merges consecutive small blocks into larger texts (SPEC §4).
///
/// Blocks go in with [`Coalescer::push`]; merged texts come out into a caller-supplied
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
/// When joining, trailing whitespace of the buffer is dropped before the joiner, and leading
/// line breaks of the incoming block are dropped after it (all leading whitespace with the
/// `" "` joiner), so separators are never doubled while the indentation of a first line is
/// kept. A block that is empty or only whitespace is ignored.
#[derive(Debug)]
pub(crate) struct Coalescer {
    config: CoalescerConfig,
    buffer: Option<CoalescedText>,
    /// The buffer's length in `metric` units (for graphemes an upper bound: joining may only
    /// merge clusters across a seam, never split one).
    buffer_len: usize,
    /// The number of line breaks in the buffer (kept only with a line cap).
    buffer_breaks: usize,
    deadline: Option<Time>,
    /// The separator that followed the last block given to [`Coalescer::push_block`], and
    /// where it ended in the source: a block starting there continues the text, and the real
    /// separator joins it instead of the configured joiner.
    last_sep: String,
    last_sep_end: Option<(usize, usize)>,
}

impl Coalescer {
    /// A coalescer with `config`, clamped (see [`CoalescerConfig::clamped`]).
    pub(crate) fn new(config: CoalescerConfig) -> Coalescer {
        Coalescer {
            config: config.clamped(),
            buffer: None,
            buffer_len: 0,
            buffer_breaks: 0,
            deadline: None,
            last_sep: String::new(),
            last_sep_end: None,
        }
    }

    /// The effective (clamped) configuration.
    #[cfg(test)]
    pub(crate) fn config(&self) -> &CoalescerConfig {
        &self.config
    }

    /// Offers one block: its display text, the source range it came from and its metadata.
    /// Pushes every merged text that is now due onto `out`, in order, and moves the idle
    /// deadline to `now + idle_ms` when something stays buffered.
    pub(crate) fn push(
        &mut self,
        text: String,
        source: Range<usize>,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        self.last_sep_end = None;
        self.push_joined(text, source, meta, now, out, None);
    }

    /// Pushes a block from the chunker. When it continues the previous block in the source
    /// (same message, starting right after that block's separator) and neither side carries
    /// a synthetic fence line, the separator that stood between them in the source joins
    /// them, so merged text reads exactly as the model wrote it: a sentence cut is joined by
    /// its space, not by a paragraph break. Otherwise the configured joiner is used.
    pub(crate) fn push_block(
        &mut self,
        block: Block,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        let continues = self.last_sep_end == Some((meta.message, block.source.start))
            && !block.fence_reopened
            && self.buffer.as_ref().is_some_and(|b| {
                b.sources
                    .last()
                    .is_some_and(|r| r.end + self.last_sep.len() == block.source.start)
            });
        let prev_sep = std::mem::take(&mut self.last_sep);
        let next_end =
            (!block.fence_closed).then_some((meta.message, block.source.end + block.sep.len()));
        let joiner = continues.then_some(prev_sep.as_str());
        self.push_joined(block.text, block.source, meta, now, out, joiner);
        self.last_sep = block.sep;
        self.last_sep_end = next_end;
    }

    /// The text the blocks came from ended (a `TextEnd`, a tool call, media): the next
    /// block does not continue the previous one and is joined by the configured joiner.
    pub(crate) fn end_of_text(&mut self) {
        self.last_sep_end = None;
    }

    fn push_joined(
        &mut self,
        text: String,
        source: Range<usize>,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
        source_joiner: Option<&str>,
    ) {
        if text.trim().is_empty() {
            return;
        }
        if self.config.flush_on_enqueue {
            self.flush(out);
            out.push(single(text, source, meta));
            return;
        }
        if self.buffer.as_ref().is_some_and(|b| b.meta != *meta) {
            self.flush(out);
        }
        let metric = self.config.metric;
        let max = self.config.max;
        let joiner = source_joiner.unwrap_or(self.config.joiner());
        let Some(buffer) = self.buffer.as_mut() else {
            self.start(text, source, meta, now, out);
            return;
        };

        // With the source's own separator nothing is trimmed: the block's text has no
        // trailing separator and the next one starts right after it.
        let kept = if source_joiner.is_some() {
            buffer.text.len()
        } else {
            buffer.text.trim_end().len()
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
        let incoming = match source_joiner {
            Some(_) => text.as_str(),
            None => strip_leading_break(&text, joiner),
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
        if joined_len > max || too_many_lines {
            self.flush(out);
            self.start(text, source, meta, now, out);
            return;
        }
        buffer.text.truncate(kept);
        buffer.text.push_str(joiner);
        buffer.text.push_str(incoming);
        buffer.sources.push(source);
        self.buffer_len = joined_len;
        self.buffer_breaks = joined_breaks;
        if joined_len >= max {
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
    /// disarms the timer.
    pub(crate) fn take(&mut self) -> Option<CoalescedText> {
        self.buffer_len = 0;
        self.buffer_breaks = 0;
        self.deadline = None;
        self.buffer.take()
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

    /// Starts a new buffer with `text`, or sends it alone when it is `max` units or more.
    fn start(
        &mut self,
        text: String,
        source: Range<usize>,
        meta: &BlockMeta,
        now: Time,
        out: &mut Vec<CoalescedText>,
    ) {
        let len = self.config.metric.len(&text);
        if len >= self.config.max {
            out.push(single(text, source, meta));
            return;
        }
        if self.config.max_lines.is_some() {
            self.buffer_breaks = line_breaks(&text);
        }
        self.buffer = Some(single(text, source, meta));
        self.buffer_len = len;
        self.arm(now);
    }

    fn arm(&mut self, now: Time) {
        self.deadline = (self.config.idle_ms > 0).then(|| now.plus_millis(self.config.idle_ms));
    }
}

fn line_breaks(text: &str) -> usize {
    memchr::memchr_iter(b'\n', text.as_bytes()).count()
}

fn single(text: String, source: Range<usize>, meta: &BlockMeta) -> CoalescedText {
    let mut sources = SourceRanges::new();
    sources.push(source);
    CoalescedText {
        text,
        sources,
        meta: meta.clone(),
    }
}

/// The part of `text` kept after a joiner: with `" "` all leading whitespace goes; with a
/// line-break joiner, the leading whitespace up to and including its last line break goes,
/// so the first line's indentation stays.
fn strip_leading_break<'t>(text: &'t str, joiner: &str) -> &'t str {
    let rest = text.trim_start();
    if !joiner.contains('\n') {
        return rest;
    }
    let lead = &text[..text.len() - rest.len()];
    match lead.rfind('\n') {
        Some(nl) => &text[nl + 1..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min: usize, max: usize, pref: BreakPreference) -> CoalescerConfig {
        CoalescerConfig {
            min,
            max,
            idle_ms: 1000,
            break_preference: pref,
            flush_on_enqueue: false,
            metric: LengthMetric::Chars,
            max_lines: None,
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

    #[test]
    fn joiners() {
        assert_eq!(cfg(1, 9, BreakPreference::Paragraph).joiner(), "\n\n");
        assert_eq!(cfg(1, 9, BreakPreference::Newline).joiner(), "\n");
        assert_eq!(cfg(1, 9, BreakPreference::Sentence).joiner(), " ");
    }

    #[test]
    fn sentence_blocks_merge_after_idle() {
        let mut c = Coalescer::new(cfg(5, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push("Hello".into(), 0..5, &meta(0), t(0), &mut out);
        assert_eq!(c.deadline(), Some(t(1000)));
        c.push("world".into(), 6..11, &meta(0), t(300), &mut out);
        assert!(out.is_empty());
        assert_eq!(c.deadline(), Some(t(1300)), "re-armed on enqueue");
        c.on_timer(t(1299), &mut out);
        assert!(out.is_empty(), "early timer is a no-op");
        c.on_timer(t(1300), &mut out);
        assert_eq!(texts(&out), ["Hello world"]);
        assert_eq!(out[0].sources.as_slice(), [0..5, 6..11]);
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
        c.push("short".into(), 0..5, &meta(0), t(10), &mut out);
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
        c.push("a".into(), 0..1, &meta(0), t(0), &mut out);
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
        c.push("a".into(), 0..1, &meta(0), t(0), &mut out);
        let replying = BlockMeta {
            reply_to: Some(ReplyTarget::Id("42".into())),
            ..meta(0)
        };
        c.push("b".into(), 2..3, &replying, t(0), &mut out);
        assert_eq!(texts(&out), ["a"]);
        let voice = BlockMeta {
            audio_as_voice: true,
            ..replying.clone()
        };
        c.push("c".into(), 4..5, &voice, t(0), &mut out);
        let reasoning = BlockMeta {
            lane: Lane::Reasoning,
            ..voice.clone()
        };
        c.push("d".into(), 6..7, &reasoning, t(0), &mut out);
        c.push("e".into(), 8..9, &reasoning, t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["a", "b", "c", "d\n\ne"]);
        assert_eq!(out[1].meta, replying);
        assert_eq!(out[3].meta.lane, Lane::Reasoning);
    }

    #[test]
    fn never_across_messages() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push("one.".into(), 0..4, &meta(0), t(0), &mut out);
        c.push("two.".into(), 0..4, &meta(1), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["one.", "two."]);
        assert_eq!((out[0].meta.message, out[1].meta.message), (0, 1));
    }

    #[test]
    fn over_max_goes_alone_unsplit() {
        let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push("abc".into(), 0..3, &meta(0), t(0), &mut out);
        c.push("0123456789abc".into(), 4..17, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["abc", "0123456789abc"]);
        assert!(c.is_empty());
        // Exactly max also goes alone.
        c.push("0123456789".into(), 18..28, &meta(0), t(0), &mut out);
        assert_eq!(out.len(), 3);
        assert!(c.is_empty());
    }

    #[test]
    fn exceeding_max_flushes_then_starts_anew() {
        let mut c = Coalescer::new(cfg(1, 10, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push("abcd".into(), 0..4, &meta(0), t(0), &mut out);
        c.push("efgh".into(), 5..9, &meta(0), t(0), &mut out);
        assert!(out.is_empty(), "9 units fit");
        c.push("ij".into(), 10..12, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["abcd efgh"]);
        assert_eq!(c.buffered().map(|b| b.text.as_str()), Some("ij"));
        assert_eq!(c.deadline(), Some(t(1000)));
    }

    #[test]
    fn reaching_max_flushes() {
        let mut c = Coalescer::new(cfg(1, 9, BreakPreference::Sentence));
        let mut out = Vec::new();
        c.push("abcd".into(), 0..4, &meta(0), t(0), &mut out);
        c.push("efgh".into(), 5..9, &meta(0), t(0), &mut out);
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
        c.push("p1".into(), 0..2, &meta(0), t(0), &mut out);
        c.push("p2".into(), 4..6, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["p1", "p2"]);
        assert_eq!(c.deadline(), None);
        assert!(c.is_empty());
    }

    #[test]
    fn joiner_never_doubles_whitespace() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        c.push("a\n\n".into(), 0..3, &meta(0), t(0), &mut out);
        c.push("\n\nb  ".into(), 3..8, &meta(0), t(0), &mut out);
        c.push("    code".into(), 8..16, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out), ["a\n\nb\n\n    code"]);

        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Sentence));
        c.push("One. ".into(), 0..5, &meta(0), t(0), &mut out);
        c.push("  Two.".into(), 5..11, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(out[1].text, "One. Two.");
        assert_eq!(c.buffered_len(), 0);
    }

    #[test]
    fn whitespace_blocks_are_ignored() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        c.push(" \n ".into(), 0..3, &meta(0), t(0), &mut out);
        c.push(String::new(), 3..3, &meta(0), t(0), &mut out);
        assert!(c.is_empty());
        assert_eq!(c.deadline(), None);
        c.flush(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn lengths_in_the_metric() {
        // "é" is 2 bytes and 1 char; with chars, 4 of them plus a space fit in 9.
        let mut c = Coalescer::new(CoalescerConfig {
            metric: LengthMetric::Utf16,
            ..cfg(1, 9, BreakPreference::Sentence)
        });
        let mut out = Vec::new();
        c.push("ééé".into(), 0..6, &meta(0), t(0), &mut out);
        c.push("🦀🦀".into(), 7..15, &meta(0), t(0), &mut out);
        assert!(out.is_empty());
        assert_eq!(c.buffered_len(), 8);
        c.push("é".into(), 16..18, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["ééé 🦀🦀"]);
    }

    #[test]
    fn line_cap_stops_merging() {
        let mut c = Coalescer::new(CoalescerConfig {
            max_lines: Some(5),
            ..cfg(1, 1000, BreakPreference::Paragraph)
        });
        let mut out = Vec::new();
        c.push("l1\nl2".into(), 0..5, &meta(0), t(0), &mut out);
        c.push("l3\n".into(), 7..10, &meta(0), t(0), &mut out);
        assert!(out.is_empty(), "2 + blank + 1 = 4 lines");
        c.push("l4".into(), 12..14, &meta(0), t(0), &mut out);
        assert_eq!(texts(&out), ["l1\nl2\n\nl3\n"]);
        c.push("a\nb\nc\nd\ne\nf".into(), 16..27, &meta(0), t(0), &mut out);
        c.push("g".into(), 28..29, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(
            texts(&out),
            ["l1\nl2\n\nl3\n", "l4", "a\nb\nc\nd\ne\nf", "g"]
        );

        // With the sentence joiner a block without line breaks adds no line.
        let mut c = Coalescer::new(CoalescerConfig {
            max_lines: Some(2),
            ..cfg(1, 1000, BreakPreference::Sentence)
        });
        c.push("a\nb".into(), 0..3, &meta(0), t(0), &mut out);
        c.push("c".into(), 4..5, &meta(0), t(0), &mut out);
        c.push("\nd\ne".into(), 5..9, &meta(0), t(0), &mut out);
        c.flush(&mut out);
        assert_eq!(texts(&out)[4..], ["a\nb c", "\nd\ne"]);
    }

    #[test]
    fn take_hands_over_the_buffer() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let mut out = Vec::new();
        c.push("caption".into(), 0..7, &meta(0), t(0), &mut out);
        let taken = c.take().map(|b| b.text);
        assert_eq!(taken.as_deref(), Some("caption"));
        assert_eq!(c.deadline(), None);
        assert!(c.take().is_none());
    }

    #[test]
    #[cfg(test)]
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
    fn push_block_joins_contiguous_blocks_with_their_source_separator() {
        let mut c = Coalescer::new(cfg(1, 100, BreakPreference::Paragraph));
        let m = meta(0);
        let mut out = Vec::new();
        let block = |text: &str, start: usize, sep: &str| Block {
            text: text.into(),
            sep: sep.into(),
            source: start..start + text.len(),
            ..Block::default()
        };
        // "One two." + " " + "Three" + "" (hard cut) + "four." in the source.
        c.push_block(block("One two.", 0, " "), &m, Time::ZERO, &mut out);
        c.push_block(block("Three", 9, ""), &m, Time::ZERO, &mut out);
        c.push_block(block("four.", 14, ""), &m, Time::ZERO, &mut out);
        // Not contiguous (a gap in the source): the configured joiner.
        c.push_block(block("Later.", 40, ""), &m, Time::ZERO, &mut out);
        c.flush(&mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].text, "One two. Threefour.\n\nLater.");
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Block(String, usize),
        Timer(u64),
        Flush,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            6 => ("[ \n]{0,2}[a-zé🦀]{1,6}(-[a-zé🦀\u{301}]{1,5}){0,4}[ \n]{0,2}", 0usize..3)
                .prop_map(|(s, m)| Step::Block(s, m)),
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
        fn bounded_and_lossless(
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
            };
            let mut c = Coalescer::new(config);
            let max = c.config().max;
            let joiner = c.config().joiner();
            let mut out = Vec::new();
            let mut blocks: Vec<(String, usize)> = Vec::new();
            let mut now = 0u64;
            for s in steps {
                match s {
                    Step::Block(text, m) => {
                        // Message indices only grow within a turn.
                        let m = m.max(blocks.last().map_or(0, |b| b.1));
                        let meta = BlockMeta { message: m, ..BlockMeta::default() };
                        let i = blocks.len();
                        blocks.push((text.clone(), m));
                        c.push(text, i..i + 1, &meta, Time::from_millis(now), &mut out);
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

            let mut next_source = 0usize;
            for merged in &out {
                // Never above max unless one block alone is at least max.
                if metric.len(&merged.text) > max {
                    prop_assert_eq!(merged.sources.len(), 1, "over max only alone: {:?}", merged);
                    prop_assert!(metric.len(&blocks[merged.sources[0].start].0) >= max);
                }
                if let Some(cap) = max_lines && merged.sources.len() > 1 {
                    prop_assert!(merged.text.split('\n').count() <= cap,
                        "line cap: {:?}", merged);
                }
                // Split at joiners, the merged text gives back its blocks, in order.
                let pieces: Vec<&str> = merged.text.trim().split(joiner).map(str::trim).collect();
                prop_assert_eq!(pieces.len(), merged.sources.len(), "{:?}", merged);
                for (piece, src) in pieces.iter().zip(&merged.sources) {
                    prop_assert_eq!(src.start, next_source);
                    next_source = src.end;
                    prop_assert_eq!(*piece, blocks[src.start].0.trim());
                    prop_assert_eq!(merged.meta.message, blocks[src.start].1);
                }
                if paragraph {
                    prop_assert_eq!(merged.sources.len(), 1);
                }
            }
            prop_assert_eq!(next_source, blocks.len());
        }
    }
}

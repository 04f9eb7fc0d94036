//! The coalescer's settings and the posted-length checks made with them.

use crate::render::{Measured, ResumedScan};
use crate::text::chunker::BreakPreference;
use crate::{Format, Lane, LengthMetric, RenderOptions};

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
        let options = self.render.on_lane(lane);
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
        let options = self.render.on_lane(lane);
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

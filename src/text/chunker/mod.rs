//! The streaming block chunker (SPEC §3).
//!
//! # Semantics
//!
//! The chunker behaves as if text arrived one char at a time and it cut as early as allowed
//! ("eager, char by char"); a delta of any size is processed exactly that way, so the blocks
//! never depend on how the text was split into deltas.
//!
//! - **Candidates.** A cut candidate is the start of a breaking whitespace run after
//!   non-whitespace (see [`super::cut`]), or the point right after a CJK sentence mark. A
//!   candidate is *decided* only once its whitespace run is followed by a non-whitespace
//!   char (more whitespace could still change the separator, or turn a line break into a
//!   paragraph break), and a sentence mark at the very end of the text is not yet a sentence
//!   end (`"3."` may become `"3.14"`). Only a forced drain treats the end of the text as the
//!   end of a run.
//! - **Eager cuts.** Once a decided candidate of an allowed class lies at a safe position
//!   (outside fences, indented code and inline code) where the block holds between `min`
//!   and `max` units, the chunker cuts at the best such candidate available at that moment
//!   (class preference, then the last one). Allowed classes: paragraph, line and sentence
//!   breaks for [`BreakPreference::Paragraph`]; line breaks (a paragraph break is one too)
//!   for [`BreakPreference::Newline`]; sentence ends for [`BreakPreference::Sentence`];
//!   `flush_on_paragraph` adds paragraph breaks to any preference. A candidate whose piece
//!   would show only fence lines is never taken, and one followed by nothing but fence lines
//!   so far *waits*: it is taken (if still best) at the moment content arrives after it, so
//!   that an empty fence at the end of a message never becomes a block of its own.
//! - **At max.** When a non-whitespace char takes the block past `max` with no such cut,
//!   the chunker plans a cut in the window (see [`super::cut::Planner::plan`]): the best safe
//!   candidate in `[min, max]` of any class, whitespace included; else, inside code, a line
//!   break of the code; else a hard cut at the largest grapheme boundary that fits. While
//!   the text's last line may still be a fence line and no cut that leaves content on both
//!   sides exists, it waits for that line's end. Whitespace alone never triggers a cut, so
//!   every separator is known in full when its cut is made.
//! - **Separators.** A cut keeps its whitespace as [`Block::sep`]: through the last `\n` of
//!   the run for a line or paragraph break (the next block keeps its indentation), the whole
//!   run otherwise, `""` for a hard cut, plus any indentation too wide to show beside the
//!   next block's first char. How much of it is too wide depends on that first cluster's
//!   width: while the cluster may still grow (it ends the text so far), the block just cut
//!   is held back until it is complete (the next char or a flush), so the cut does not
//!   depend on where the deltas fall; in a de-indented item fence, the next block keeps
//!   the code's own columns where they fit, never the items' ones. Whitespace before the first block of a message, or before the
//!   first block after a [`BlockChunker::flush`], is that block's [`Block::lead`]; a flush
//!   gives the trailing whitespace to the last block's `sep`. So `lead + original[source] +
//!   sep` over a message's blocks gives back the message exactly; only whitespace after the
//!   last block, with no block after it, is in none.
//! - **Fences.** A cut inside a fence, an indented code block or an inline code span is
//!   only made when no safe cut exists in the window. A block cut inside a fence ends with
//!   `\n` + a synthetic closing line, and the next block starts with the original opening
//!   line + `\n` (the bare marker if that line leaves no room for code). A block cut in the
//!   middle of an indented code line is continued after 4 synthetic spaces. Synthetic text
//!   counts toward `max`. A fence still open at a flush is closed in the last block.
//! - **Limits.** Every block is at most `max` units. [`BlockChunker::new`] refuses a `max`
//!   below [`super::limits::min_limit`], under which a fence could not be repaired around
//!   the widest grapheme cluster kept whole.
//!
//! # Cost
//!
//! Work per delta is proportional to the delta: units are counted as chars arrive, the
//! Markdown scanner is incremental, and break searches are bounded by one block. A `push`
//! that emits nothing does not allocate once the buffers are warm.

use super::block::Block;
use super::cut::{BreakClass, Candidate, NextStart, ReopenCost, sep_trimmed_end};
use super::markdown::MarkdownScanner;
use crate::Error;

mod candidates;
mod config;
mod emit;
mod scan;
mod synthetic;
#[cfg(test)]
mod tests;

use config::break_orders;
pub use config::{BreakPreference, ChunkerConfig};
use scan::Prev;
use synthetic::ReopenKind;

/// Cuts a stream of text deltas into blocks. One chunker per assistant message.
///
/// ```
/// use replystream::{BlockChunker, BreakPreference, ChunkerConfig, LengthMetric};
///
/// let mut chunker = BlockChunker::new(ChunkerConfig {
///     min: 20,
///     max: 60,
///     break_preference: BreakPreference::Paragraph,
///     flush_on_paragraph: false,
///     metric: LengthMetric::Chars,
/// })
/// .expect("a valid configuration"); // a max too small for fence repair is refused
/// let reply = "A short first paragraph here.\n\n```sh\necho one\necho two\n```\n\nDone.";
/// let mut blocks = Vec::new();
/// for delta in reply.split_inclusive(' ') {
///     chunker.push(delta, &mut blocks); // blocks come out as good cuts appear
/// }
/// chunker.flush(&mut blocks); // the end of the message: everything left
/// let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
/// assert_eq!(
///     texts,
///     ["A short first paragraph here.", "```sh\necho one\necho two\n```", "Done."]
/// );
/// assert_eq!(blocks[0].sep, "\n\n"); // what separated it from the next block
/// ```
// Layout: a push usually reads and writes only the fields before `scanned`: the buffer,
// the positions and unit counts, the settings, the whitespace run, the waiting candidates
// and the synthetic start's cost. `repr(C)` keeps them in the order written, first, and
// `align(64)` starts them on a cache line, so that (at 100 000 streams, where no chunker is
// cached when its next delta comes) a push touches three lines of it instead of six. What
// considering a candidate reads comes next, what cutting a block reads last.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct BlockChunker {
    /// Text from `base` on; `buffer[..start]` has been emitted (or is the next block's
    /// lead, from `lead_from`).
    buffer: String,
    /// Bytes of `buffer` processed (the current moment).
    cursor: usize,
    /// Start of the block being built.
    start: usize,
    /// Where `buffer[0]` stands in its line of the text (a compaction may drain up to the
    /// middle of one): asked only when a block is de-indented or starts among a table's
    /// rows.
    buffer_start: BufferStart,
    /// Start of the whitespace before `start` that no emitted separator holds (the next
    /// block's lead).
    lead_from: usize,
    /// Units from `buffer[0]` to `cursor`.
    units: usize,
    /// Units from `buffer[0]` to `start`.
    start_units: usize,
    config: ChunkerConfig,
    /// The whitespace run ending at `cursor`, with the units before it.
    run: Option<(usize, usize)>,
    prev: Prev,
    /// The block holds only whitespace so far (from `lead_from`).
    leading: bool,
    /// Where the block starts showing waits for its first cluster, which may still grow:
    /// the indentation from `lead_from` (its line's start) that it keeps depends on how
    /// wide that cluster is (see [`BlockChunker::settle_start`]).
    start_waits: bool,
    /// How many regional indicators end at `cursor` (graphemes metric).
    ri_run: usize,
    /// Eligible candidates with no content after them yet (only fence lines or an
    /// undecided line): they join `fresh` at the moment content arrives.
    waiting: Vec<(Candidate, usize)>,
    /// A candidate decided while the next piece would start, mid-line, with one or two
    /// backticks or tildes at the end of the text: it is considered again (with its units)
    /// once that run ends, as a third would make the next piece start like a fence line.
    recheck: Option<(usize, usize)>,
    /// What `reopen` costs (zero without one), kept because it is asked for at every char.
    reopen_cost: ReopenCost,
    // ---- read when a candidate is considered (a whitespace run or a sentence end ends) ----
    /// Up to where the scanner has been fed.
    scanned: usize,
    /// Candidates that became eligible at the current moment.
    fresh: Vec<(Candidate, usize)>,
    /// Allowed classes for eager cuts, best first.
    eager: &'static [BreakClass],
    /// The first content byte of the block (see [`MarkdownScanner::first_content`]), once
    /// found; else how far the block is known to hold none.
    content: Result<usize, usize>,
    /// The start of the last line that began before `line_scan` (found lazily, when a
    /// candidate in the middle of a line needs it: each byte is looked at once).
    line_start: usize,
    /// How far `line_start` has been searched.
    line_scan: usize,
    scanner: MarkdownScanner,
    // ---- read when a block is cut, a fence is reopened or the buffer is compacted ----
    /// The synthetic start of the block being built.
    reopen: Option<ReopenKind>,
    /// Message offset of `buffer[0]`.
    base: usize,
    /// All classes for cuts at max and forced drains, best first.
    forced: &'static [BreakClass],
    /// The opening line of the fence open at the block start, once it may have left the
    /// buffer (for reopening it).
    reopen_line: String,
    /// The header and delimiter rows of the table the block starts in, once they may have
    /// left the buffer (for repeating them).
    reopen_table: String,
    /// A cut at max waits for the line starting here to be decided (and, in a quote, for
    /// the line after a quoted one to be read: see `wait_key`).
    max_wait: Option<(usize, bool)>,
    /// Room for candidates being re-checked (kept to reuse its capacity).
    scratch: Vec<(Candidate, usize)>,
    /// The block emitted last, held back while the next one's start waits for its first
    /// cluster (`start_waits`): the indentation that the next block does not show goes to
    /// its separator then. (Boxed: it is rare, and a stream's memory has no room for a
    /// block inline.)
    held: Option<Box<Block>>,
}

/// Where the chunker's buffer starts in its line of the text, once a compaction drained
/// what came before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BufferStart {
    /// At a line's start.
    Line,
    /// After only spaces and tabs on its line (a list item's indentation).
    Indented,
    /// After other text on its line.
    Inside,
}

impl BlockChunker {
    /// A chunker with `config`, clamped to `min >= 1` and `max >= min`.
    ///
    /// Errors with [`Error::InvalidConfig`] when `max` is below the smallest limit under
    /// which a fence can be closed and reopened around the widest grapheme cluster kept
    /// whole ([`LengthMetric::min_limit`](crate::LengthMetric::min_limit): 24 chars, 29
    /// UTF-16 units, 49 bytes, 15 graphemes).
    pub fn new(config: ChunkerConfig) -> Result<Self, Error> {
        Ok(Self::from_checked(config.checked()?))
    }

    /// A chunker with a configuration that [`ChunkerConfig::checked`] returned.
    pub(crate) fn from_checked(config: ChunkerConfig) -> Self {
        let (eager, forced) = break_orders(config.break_preference, config.flush_on_paragraph);
        BlockChunker {
            config,
            eager,
            forced,
            buffer: String::new(),
            base: 0,
            buffer_start: BufferStart::Line,
            start: 0,
            lead_from: 0,
            cursor: 0,
            units: 0,
            start_units: 0,
            line_start: 0,
            line_scan: 0,
            run: None,
            prev: Prev::Space,
            leading: true,
            start_waits: false,
            ri_run: 0,
            scanner: MarkdownScanner::new(),
            scanned: 0,
            content: Err(0),
            reopen: None,
            reopen_cost: ReopenCost::default(),
            reopen_line: String::new(),
            reopen_table: String::new(),
            fresh: Vec::new(),
            waiting: Vec::new(),
            max_wait: None,
            scratch: Vec::new(),
            recheck: None,
            held: None,
        }
    }

    /// The effective (clamped) configuration.
    pub fn config(&self) -> &ChunkerConfig {
        &self.config
    }

    /// Appends `delta` and pushes every block that is now due onto `out`.
    pub fn push(&mut self, delta: &str, out: &mut Vec<Block>) {
        self.compact();
        self.buffer.push_str(delta);
        while self.cursor < self.buffer.len() {
            if !self.waiting.is_empty()
                || self.recheck.is_some()
                || self.start_waits
                || (!self.skip_short() && !self.skip_fence() && !self.skip_plain())
            {
                self.step(out);
            }
        }
    }

    /// Forced drain: emits everything buffered, in as few blocks as `max` allows; the
    /// trailing whitespace becomes the last block's separator. A fence still open is closed
    /// in the last block (and reopened if more text follows). Whitespace alone is kept: it
    /// becomes the lead of the next block, if one comes.
    pub fn flush(&mut self, out: &mut Vec<Block>) {
        let len = self.buffer.len();
        // The chars not yet processed (none: `push` processes all) are taken as they are.
        debug_assert_eq!(self.cursor, len);
        self.scanner.finish(&self.buffer);
        self.scanned = len;
        let _ = self.scanner.take_newly_safe();
        self.fresh.clear();
        self.waiting.clear();
        self.max_wait = None;
        self.recheck = None;
        if self.start_waits {
            self.settle_start(len, true, out);
        }
        if self.leading {
            return;
        }
        loop {
            let end = sep_trimmed_end(&self.buffer, self.start, len);
            if end <= self.start {
                break;
            }
            let reopen = self.reopen_cost();
            let close = self.scanner.fence_at(end).map(|f| f.marker);
            let close_cost = close.map_or(0, |m| m.close_len() + 1);
            if self
                .limits()
                .fits(&self.buffer, self.start, end, reopen.units + close_cost, 0)
            {
                let close = close.filter(|_| self.closable());
                let next = match close {
                    Some(_) => NextStart::Fence { bare: false },
                    None => NextStart::Plain,
                };
                self.emit_before_list_items(end, len, true, out);
                self.emit(end, len, close, next, out);
                break;
            }
            let planned = self
                .planner(len, true)
                .plan(self.start, reopen, self.config.min, true)
                .expect("a forced plan always has a cut");
            self.emit_before_list_items(planned.cut.end, len, true, out);
            self.emit_planned(&planned, out);
            self.begin_block(planned.cut.sep_end, len, true, out);
        }
        self.start = len;
        self.lead_from = len;
        self.start_units = self.units;
        self.leading = true;
        self.run = None;
        self.prev = Prev::Space;
        self.content = Err(len);
    }

    /// Forgets everything (a new assistant message begins).
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.base = 0;
        self.buffer_start = BufferStart::Line;
        self.start = 0;
        self.lead_from = 0;
        self.cursor = 0;
        self.units = 0;
        self.start_units = 0;
        self.line_start = 0;
        self.line_scan = 0;
        self.run = None;
        self.prev = Prev::Space;
        self.leading = true;
        self.start_waits = false;
        self.held = None;
        self.ri_run = 0;
        self.scanner.reset();
        self.scanned = 0;
        self.content = Err(0);
        self.clear_reopen();
        self.reopen_line.clear();
        self.reopen_table.clear();
        self.fresh.clear();
        self.waiting.clear();
        self.max_wait = None;
        self.recheck = None;
    }

    /// The text received but not yet emitted.
    pub fn buffered(&self) -> &str {
        &self.buffer[self.lead_from..]
    }
}

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
//!   next block's first char. Whitespace before the first block of a message, or before the
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
use super::cut::{
    BreakClass, Candidate, NextStart, Planned, Planner, Reopen, ReopenCost, build_piece,
    candidate_at, is_tail_char, is_ws, joined_ws, line_continues, may_be_candidate,
    may_break_beyond_whitespace, partial_fence_at_end, quoted_after, shown_start,
};
use super::dedent::{build_dedented_piece, item_dedent};
use super::limits::{Limits, check_limit};
use super::markdown::inline::SpanDelims;
use super::markdown::{FenceMarker, MarkdownScanner};
use super::metric::{LengthMetric, is_grapheme_boundary};
use crate::Error;

/// Where the chunker prefers to cut, in order of preference.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BreakPreference {
    /// Paragraph break, then line break, then sentence end.
    #[default]
    Paragraph,
    /// Line break only (no sentence ends); waits for a line break until `max`.
    Newline,
    /// Sentence end (paragraph and line breaks are not preferred).
    Sentence,
}

/// Chunker settings. `min` and `max` are in `metric` units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkerConfig {
    /// No block is emitted (unless forced) before the buffer holds this many units.
    pub min: usize,
    /// No block is ever longer than this (synthetic fence lines included).
    pub max: usize,
    /// Where to cut.
    pub break_preference: BreakPreference,
    /// Emit each paragraph as soon as its blank line arrives (respecting `min`).
    pub flush_on_paragraph: bool,
    /// How lengths are counted.
    pub metric: LengthMetric,
}

impl Default for ChunkerConfig {
    fn default() -> Self {
        ChunkerConfig {
            min: 800,
            max: 1200,
            break_preference: BreakPreference::Paragraph,
            flush_on_paragraph: false,
            metric: LengthMetric::Chars,
        }
    }
}

impl ChunkerConfig {
    /// The effective settings: `min >= 1`, `max >= min`; an error when `max` is below the
    /// smallest limit that works in the metric ([`super::limits::min_limit`]).
    pub(crate) fn checked(self) -> Result<ChunkerConfig, Error> {
        let mut config = self;
        config.min = config.min.max(1);
        config.max = config.max.max(config.min);
        check_limit("chunk max", config.max, config.metric)?;
        Ok(config)
    }
}

/// What the previous char was, for deciding candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prev {
    /// ASCII, not whitespace, not a sentence mark or closer: nothing is pending.
    Plain,
    /// Whitespace (a run may be pending).
    Space,
    /// A sentence mark or a closer.
    Tail,
    /// Anything else.
    Other,
}

/// The synthetic start of the block being built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReopenKind {
    /// A fence reopened with its saved opening line, or with its bare marker.
    Fence {
        marker: FenceMarker,
        bare: bool,
        /// The quote prefix follows the line ([`Reopen::Fence`]).
        quoted: bool,
    },
    /// A fence whose opening line was cut: its bare marker, the rest of the line after it.
    Marker(FenceMarker, bool),
    /// An indented code line continued after 4 spaces.
    Indent,
    /// A table's header and delimiter rows (saved in `reopen_table`) repeated.
    Table,
    /// Inline delimiters (a code span's backtick run, emphasis) open again.
    Delims(SpanDelims),
}

/// The bytes [`BlockChunker::skip_plain`] passes over: ASCII, not whitespace, not a sentence
/// mark or closer (one lookup per byte rather than a chain of compares).
static PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 0x80 {
        let c = b as u8 as char;
        t[b] = !matches!(
            c,
            ' ' | '\t' | '\n' | '\r' | '.' | '!' | '?' | ')' | ']' | '"' | '\''
        );
        b += 1;
    }
    t
};

/// The break classes a chunker cuts at, best first: those allowed for eager cuts (the
/// preference's, with a paragraph break first under `flush_on_paragraph`), and those for cuts
/// at max and forced drains (the eager ones, then the other text classes in
/// [`BreakClass::TEXT`] order). Shared tables rather than two small vectors per chunker: the
/// eager list is read at every candidate, and a heap buffer of its own was one more cache
/// line to miss per push at scale.
fn break_orders(
    preference: BreakPreference,
    flush_on_paragraph: bool,
) -> (&'static [BreakClass], &'static [BreakClass]) {
    use BreakClass::{Line, Paragraph, Sentence, Whitespace};
    match (preference, flush_on_paragraph) {
        (BreakPreference::Paragraph, _) => (
            &[Paragraph, Line, Sentence],
            &[Paragraph, Line, Sentence, Whitespace],
        ),
        (BreakPreference::Newline, _) => {
            (&[Paragraph, Line], &[Paragraph, Line, Sentence, Whitespace])
        }
        (BreakPreference::Sentence, false) => {
            (&[Sentence], &[Sentence, Paragraph, Line, Whitespace])
        }
        (BreakPreference::Sentence, true) => (
            &[Paragraph, Sentence],
            &[Paragraph, Sentence, Line, Whitespace],
        ),
    }
}

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
    /// Whether `buffer[0]` starts a line of the text (a compaction may drain up to the
    /// middle of one): asked only when a block is de-indented.
    buffer_starts_line: bool,
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
    /// A cut at max waits for the line starting here to be decided.
    max_wait: Option<usize>,
    /// Room for candidates being re-checked (kept to reuse its capacity).
    scratch: Vec<(Candidate, usize)>,
}

impl BlockChunker {
    /// A chunker with `config`, clamped to `min >= 1` and `max >= min`.
    ///
    /// Errors with [`Error::InvalidConfig`] when `max` is below the smallest limit under
    /// which a fence can be closed and reopened around the widest grapheme cluster kept
    /// whole ([`LengthMetric::min_limit`]: 24 chars, 29 UTF-16 units, 49 bytes, 15
    /// graphemes).
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
            buffer_starts_line: true,
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
        if self.leading {
            return;
        }
        loop {
            let bytes = self.buffer.as_bytes();
            let mut end = len;
            while end > self.start && is_ws(bytes[end - 1]) && !joined_ws(&self.buffer, end - 1) {
                end -= 1;
            }
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
        self.buffer_starts_line = true;
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

    fn limits(&self) -> Limits {
        Limits {
            metric: self.config.metric,
            max: self.config.max,
            max_lines: None,
        }
    }

    fn current_reopen(&self) -> Option<Reopen<'_>> {
        self.reopen.map(|kind| match kind {
            ReopenKind::Fence {
                marker,
                bare,
                quoted,
            } => Reopen::Fence {
                marker,
                line: (!bare).then_some(self.reopen_line.as_str()),
                quoted,
            },
            ReopenKind::Marker(marker, space) => Reopen::Marker { marker, space },
            ReopenKind::Indent => Reopen::Indent,
            ReopenKind::Table => Reopen::Table {
                head: &self.reopen_table,
                blank: 0,
            },
            ReopenKind::Delims(d) => Reopen::Delims(d),
        })
    }

    fn reopen_cost(&self) -> ReopenCost {
        self.reopen_cost
    }

    /// Sets the synthetic start of the block being built, computing its cost.
    fn set_reopen(&mut self, kind: ReopenKind) {
        self.reopen = Some(kind);
        self.reopen_cost = ReopenCost::of(self.current_reopen(), self.config.metric);
    }

    /// The block being built has no synthetic start.
    fn clear_reopen(&mut self) {
        self.reopen = None;
        self.reopen_cost = ReopenCost::default();
    }

    /// Units of the block so far, its synthetic start included.
    fn display_units(&self) -> usize {
        self.reopen_cost().units + self.units - self.start_units
    }

    /// Whether a fence open at the end of the text can be closed within the limits.
    fn closable(&self) -> bool {
        match self.scanner.open_fence() {
            Some(f) => self.planner(self.buffer.len(), true).repair(f).is_some(),
            None => false,
        }
    }

    /// The planner over the text through moment `t`; `complete` at a flush.
    fn planner(&self, t: usize, complete: bool) -> Planner<'_> {
        Planner {
            text: &self.buffer[..t],
            scanner: &self.scanner,
            limits: self.limits(),
            order: self.forced,
            complete,
            continued_line: Some(&self.reopen_line),
            continued_table: Some(&self.reopen_table),
            breaks_only: false,
        }
    }

    /// Drops emitted text from the front of the buffer when that is cheap relative to what
    /// stays (amortised: each byte is moved a bounded number of times).
    ///
    /// Text the scanner still needs is kept: the current line (a fence line is judged
    /// whole), so the blocks never depend on when compaction happens. The opening line of
    /// the fence the block starts in is saved before it goes.
    fn compact(&mut self) {
        let keep_from = self.lead_from.min(self.start);
        if keep_from == 0 || (keep_from < 4096 && keep_from < self.buffer.len() - keep_from) {
            return;
        }
        // The scanner must have seen what it forgets. Cuts it reports as newly safe stay
        // reported, for the next moment that collects them (compaction happens between
        // deltas, so it must not change what any moment sees).
        if self.scanned < self.cursor {
            self.scanner.scan(&self.buffer[..self.cursor]);
            self.scanned = self.cursor;
        }
        // A line that may turn out to be a table's header row stays too (it is one line).
        let n = self.scanner.drain_limit(
            keep_from
                .min(self.scanner.line_start())
                .min(self.scanner.pending_table_head().unwrap_or(usize::MAX)),
        );
        if n == 0 {
            return;
        }
        // Likewise the header and delimiter rows of the table the block starts in.
        if let Some(t) = self
            .scanner
            .table_at(self.start)
            .or(self.scanner.open_table())
            .copied()
            && !t.continued
            && t.start < n
        {
            self.save_table_head(&t);
        }
        // The fence the block starts in (open or not) may be reopened or repaired later:
        // keep its opening line. (A fence whose opening line goes lies around `start`, as
        // `n <= start`; any other fence before `start` is never asked about again.)
        if let Some(f) = self
            .scanner
            .fence_at(self.start)
            .or(self.scanner.open_fence())
            .copied()
            && !f.continued
            && f.start < n
        {
            self.save_fence_line(f.start, f.open_end);
        }
        self.buffer_starts_line = self.buffer.as_bytes()[n - 1] == b'\n';
        self.buffer.drain(..n);
        self.scanner.drain(n);
        self.base += n;
        self.start -= n;
        self.lead_from -= n;
        self.cursor -= n;
        self.scanned -= n;
        self.line_start = self.line_start.saturating_sub(n);
        self.line_scan = self.line_scan.saturating_sub(n);
        self.content = match self.content {
            Ok(x) => Ok(x - n),
            Err(x) => Err(x.saturating_sub(n)),
        };
        self.run = self.run.map(|(p, u)| (p - n, u));
        for (c, _) in &mut self.waiting {
            c.end -= n;
            c.sep_end -= n;
        }
        self.max_wait = self.max_wait.map(|p| p.saturating_sub(n));
        self.recheck = self.recheck.map(|(p, u)| (p - n, u));
    }

    /// Fast path: consumes, in bulk, the text that keeps the block below `min`.
    ///
    /// Below `min` the char-by-char moments do nothing but bookkeeping: a candidate
    /// decided there is too short to cut at (see [`BlockChunker::consider`]), a line break
    /// does not feed the scanner, and `max` cannot be reached. So the units are counted in
    /// one go and only the state at the last char is rebuilt (see [`BlockChunker::advance`]).
    /// Returns whether it moved.
    fn skip_short(&mut self) -> bool {
        if self.leading {
            return false;
        }
        // Units that may still arrive with the block staying below `min`.
        let Some(room) = self
            .config
            .min
            .checked_sub(self.display_units() + 1)
            .filter(|&r| r > 0)
        else {
            return false;
        };
        self.advance(self.buffer.len(), room)
    }

    /// Fast path: consumes, in bulk, code inside a fence whose closing line has not arrived,
    /// while the block stays within `max`. Returns whether it moved.
    ///
    /// Why this is exactly char-by-char processing. Let the fence be open at the cursor and
    /// take the stretch that [`MarkdownScanner::fence_stretch`] allows, cut to the units that
    /// keep the block within `max`. At each char of it, [`BlockChunker::step`] would:
    /// - decide at most one candidate `p`. Here `p` is inside the fence: a whitespace run
    ///   reaching the cursor starts after the opening line's marker (or the opening line
    ///   has left the buffer), a sentence mark lies at or after the cursor, and the fence
    ///   is open (so it holds every position after its start) at every moment of the
    ///   stretch, as no line in it can close it. So
    ///   [`MarkdownScanner::is_safe_cut`] rejects `p` and nothing is added to `fresh`;
    /// - maybe feed the scanner ([`BlockChunker::sync_scanner`]). The stretch only ends
    ///   lines that leave the fence open, so no cut turns safe there; and no earlier cut is
    ///   waiting to be reported, since the scanner is brought to the cursor first and the
    ///   fast path is not taken when it reports one. Feeding the scanner ahead of a sync
    ///   does not change what it knows at any later moment (its scan does not depend on how
    ///   the text is split) nor what the sync reports (the lowest newly safe position, over
    ///   all the text scanned since the previous report);
    /// - not cut: `fresh` stays empty and the block stays within `max`.
    ///
    /// What is left is the bookkeeping that [`BlockChunker::advance`] does in one go. The
    /// char that takes the block past `max` and the line that may close the fence are
    /// left to `step` (the cut at max looks for the last code line break in its window then).
    #[inline(always)]
    fn skip_fence(&mut self) -> bool {
        // The cheap test first: this runs before every char that `step` processes.
        !self.leading && self.scanner.open_fence().is_some() && self.skip_fence_stretch()
    }

    /// [`BlockChunker::skip_fence`] once a fence is open.
    #[inline(never)]
    fn skip_fence_stretch(&mut self) -> bool {
        let room = self.config.max.saturating_sub(self.display_units());
        if room == 0 {
            return false;
        }
        if self.scanned < self.cursor {
            self.scanner.scan(&self.buffer[..self.cursor]);
            self.scanned = self.cursor;
        }
        if self.scanner.has_newly_safe() {
            return false;
        }
        // At most the text that fits in `room`: in graphemes, a char adds at most one unit,
        // so `room` chars always fit (the walk in `advance` then counts exactly).
        let rest = &self.buffer[self.cursor..];
        let fit = if rest.len() <= room {
            rest.len()
        } else if self.config.metric == LengthMetric::Graphemes {
            LengthMetric::Chars.floor_index(rest, room)
        } else {
            self.config.metric.floor_index(rest, room)
        };
        let limit = self.cursor + fit;
        match self.scanner.fence_stretch(&self.buffer[..limit]) {
            Some(end) => self.advance(end, room),
            None => false,
        }
    }

    /// Consumes `buffer[cursor..end]`, or its longest prefix that adds at most `room` units,
    /// with the state updates [`BlockChunker::step`] makes when the chars decide nothing
    /// that is taken, feed nothing to the scanner that matters and reach no cut: the units
    /// are counted in one go and only the state at the last char is rebuilt, the whitespace
    /// run reaching it and the class of that char. The block must hold a non-whitespace
    /// char. Returns whether it moved.
    #[inline(always)]
    fn advance(&mut self, end: usize, room: usize) -> bool {
        let from = self.cursor;
        if self.config.metric == LengthMetric::Graphemes {
            return self.advance_graphemes(end, room);
        }
        let metric = self.config.metric;
        let rest = &self.buffer[from..end];
        // A char has at most one unit per byte in these metrics: text no longer than
        // `room` bytes fits whole.
        // ASCII (the usual case) is one unit per byte in these metrics: `room` ASCII bytes
        // are the longest prefix that fits (each byte is looked at once).
        let (len, added) = if rest.len() > room && rest.as_bytes()[..room].is_ascii() {
            (room, room)
        } else {
            let len = if rest.len() <= room {
                rest.len()
            } else {
                metric.floor_index(rest, room)
            };
            let seg = &rest[..len];
            (len, if seg.is_ascii() { len } else { metric.len(seg) })
        };
        if len == 0 {
            return false;
        }
        let seg = &rest[..len];
        // The whitespace at the end of the segment: the run still open at its last char.
        // Whitespace is ASCII, one unit per byte in these metrics.
        let bytes = seg.as_bytes();
        let mut ws = bytes.iter().rev().take_while(|&&b| is_ws(b)).count();
        let units_before = self.units;
        self.units += added;
        self.cursor = from + len;
        if ws > 0 && joined_ws(&self.buffer[..self.cursor], self.cursor - ws) {
            // The run's first char belongs to the cluster before it (a prepended char).
            ws -= 1;
        }
        if ws == len {
            if self.run.is_none() {
                self.run = Some((from, units_before));
            }
            self.prev = Prev::Space;
        } else if ws > 0 {
            self.run = Some((self.cursor - ws, self.units - ws));
            self.prev = Prev::Space;
        } else {
            self.run = None;
            let last = seg.chars().next_back().expect("non-empty segment");
            self.prev = prev_of(last);
        }
        true
    }

    /// [`BlockChunker::advance`] in the graphemes metric: a char's units depend on the
    /// chars before it, so the chars are walked, with the same state updates as
    /// [`BlockChunker::step`].
    fn advance_graphemes(&mut self, end: usize, room: usize) -> bool {
        let from = self.cursor;
        let limit = self.units + room;
        let mut i = from;
        while i < end {
            // `i > start >= 0`: the block holds a non-whitespace char before the cursor.
            let (b, before) = (self.buffer.as_bytes()[i], self.buffer.as_bytes()[i - 1]);
            if b < 0x80 && before < 0x80 && self.units < limit {
                // An ASCII char after an ASCII char: a cluster of its own unless it is the
                // LF of a CR LF (what `char_units` says, without its other cases).
                let u = usize::from(!(b == b'\n' && before == b'\r'));
                if is_ws(b) {
                    if self.run.is_none() {
                        self.run = Some((i, self.units));
                    }
                    self.prev = Prev::Space;
                } else {
                    self.run = None;
                    self.prev = prev_of(b as char);
                }
                self.ri_run = 0;
                self.units += u;
                i += 1;
                continue;
            }
            let (c, n) = if b < 0x80 {
                (b as char, 1)
            } else {
                let c = self.buffer[i..].chars().next().expect("char boundary");
                (c, c.len_utf8())
            };
            let ri_run = self.ri_run;
            let u = self.char_units(i, c);
            if self.units + u > limit {
                // Not this char: undo the regional-indicator count it made.
                self.ri_run = ri_run;
                break;
            }
            if is_ws_char(c) && (u == 1 || c == '\n') {
                if self.run.is_none() {
                    self.run = Some((i, self.units));
                }
                self.prev = Prev::Space;
            } else {
                self.run = None;
                self.prev = prev_of(c);
            }
            self.units += u;
            i += n;
        }
        self.cursor = i;
        i > from
    }

    /// Fast path: consumes ASCII bytes that can decide nothing (no pending run or sentence
    /// mark, not whitespace, not a mark) and do not reach `max`. Returns whether it moved.
    fn skip_plain(&mut self) -> bool {
        if self.leading || self.prev != Prev::Plain {
            return false;
        }
        let room = self.config.max.saturating_sub(self.display_units());
        let bytes = &self.buffer.as_bytes()[self.cursor..];
        let n = bytes
            .iter()
            .take(room)
            .take_while(|&&b| PLAIN[usize::from(b)])
            .count();
        self.cursor += n;
        self.units += n;
        self.ri_run = 0;
        n > 0
    }

    /// Processes one char: the moment it arrives.
    fn step(&mut self, out: &mut Vec<Block>) {
        let i = self.cursor;
        let Some(c) = self.buffer[i..].chars().next() else {
            return;
        };
        let t = i + c.len_utf8();
        let units_before = self.units;
        self.units += self.char_units(i, c);
        self.cursor = t;
        // Whitespace that is part of the cluster before it (after a prepended char) does
        // not break; one that carries a combining mark is found when the mark arrives.
        let ws = is_ws_char(c)
            && !(i > 0
                && self.buffer.as_bytes()[i - 1] >= 0x80
                && !is_grapheme_boundary(&self.buffer[..t], i));
        if let Some((p, p_units)) = self.recheck
            && !self.partial_fence_after(p, t)
        {
            self.recheck = None;
            self.consider(p, p_units, t);
        }
        if self.leading {
            if ws {
                self.prev = Prev::Space;
                return;
            }
            self.begin_shown(i, t);
        }
        if ws {
            if self.run.is_none() {
                self.run = Some((i, units_before));
            }
            self.prev = Prev::Space;
            if c == '\n' && self.display_units() >= self.config.min {
                self.sync_scanner(t, true);
            }
        } else {
            let decided = match self.run.take() {
                Some(run) => Some(run),
                None if self.prev == Prev::Tail && !is_tail_char(c) => Some((i, units_before)),
                None => None,
            };
            self.prev = prev_of(c);
            if let Some((p, p_units)) = decided {
                self.consider(p, p_units, t);
            }
        }
        if !self.waiting.is_empty() {
            self.promote_waiting(t);
        }
        if !self.fresh.is_empty() {
            self.cut_fresh(t, out);
        }
        if !ws {
            while self.display_units() > self.config.max && self.cut_at_max(t, out) {}
        }
    }

    /// The units `c` at byte `i` adds. In the graphemes metric: 1 if `c` starts a cluster.
    /// A cluster boundary depends only on the text before it and the char after it, so it
    /// is decided as the char arrives.
    fn char_units(&mut self, i: usize, c: char) -> usize {
        if self.config.metric != LengthMetric::Graphemes {
            return self.config.metric.char_len(c);
        }
        let is_ri = ('\u{1F1E6}'..='\u{1F1FF}').contains(&c);
        let bytes = self.buffer.as_bytes();
        let boundary = if i == 0 || i == self.start {
            true
        } else if is_ri && self.ri_run > 0 {
            // Regional indicators pair up (walking back through a long run would be slow).
            self.ri_run.is_multiple_of(2)
        } else if c.is_ascii() && bytes[i - 1] < 0x80 {
            !(c == '\n' && bytes[i - 1] == b'\r')
        } else {
            let from = self.start.min(i);
            is_grapheme_boundary(&self.buffer[from..i + c.len_utf8()], i - from)
        };
        self.ri_run = if is_ri { self.ri_run + 1 } else { 0 };
        usize::from(boundary)
    }

    /// The first non-whitespace char of a block (at `i`, arrived at moment `t`) after only
    /// whitespace since `lead_from`: the whitespace becomes the block's lead (its indentation
    /// stays, as far as it fits).
    fn begin_shown(&mut self, i: usize, t: usize) {
        let s = shown_start(
            &self.buffer[..t],
            self.lead_from,
            &self.limits(),
            self.current_reopen(),
            false,
        );
        self.start = s.min(i);
        self.start_units = self.units - self.config.metric.len(&self.buffer[self.start..t]);
        self.leading = false;
        self.content = Err(self.start);
    }

    /// The first content byte of the block before `to` (the scanner must have seen it).
    fn block_content(&mut self, to: usize) -> Option<usize> {
        match self.content {
            Ok(x) => Some(x),
            Err(from) => match self
                .scanner
                .first_content(&self.buffer, from.max(self.start), to)
            {
                Ok(x) => {
                    self.content = Ok(x);
                    Some(x)
                }
                Err(resume) => {
                    self.content = Err(resume);
                    None
                }
            },
        }
    }

    /// Whether the next piece after a cut at `p` would start, mid-line, with one or two
    /// backticks or tildes that end the text at moment `t` (see [`BlockChunker::recheck`]).
    fn partial_fence_after(&self, p: usize, t: usize) -> bool {
        let bytes = &self.buffer.as_bytes()[p..t];
        let ws = bytes.iter().take_while(|&&b| is_ws(b)).count();
        !bytes[..ws].contains(&b'\n') && partial_fence_at_end(&bytes[ws..])
    }

    /// A candidate at `p` (with `p_units` units before it) was decided at moment `t`.
    fn consider(&mut self, p: usize, p_units: usize, t: usize) {
        if p <= self.start {
            return;
        }
        let display = self.reopen_cost().units + p_units - self.start_units;
        if display < self.config.min || display > self.config.max {
            return;
        }
        if self.partial_fence_after(p, t) {
            self.recheck = Some((p, p_units));
            return;
        }
        self.sync_scanner(t, true);
        if self.may_be_eager(p)
            && let Some(c) = candidate_at(&self.buffer[..t], p, false)
            && c.rank(self.eager).is_some()
            && self.scanner.is_safe_cut(p)
            && display + self.scanner.emphasis_at(p).len() <= self.config.max
        {
            self.accept(c, p_units, t, None);
        }
    }

    /// Whether a candidate at `p` may be of an eager class: eager classes never include
    /// plain whitespace, so most candidates (a space between words) are ruled out without
    /// reading them in full.
    #[inline]
    fn may_be_eager(&self, p: usize) -> bool {
        self.eager.contains(&BreakClass::Whitespace)
            || may_break_beyond_whitespace(self.buffer.as_bytes(), p)
    }

    /// The start of the line that moment `t` is on.
    fn line_start_at(&mut self, t: usize) -> usize {
        if self.line_scan < t {
            if let Some(i) = memchr::memrchr(b'\n', &self.buffer.as_bytes()[self.line_scan..t]) {
                self.line_start = self.line_scan + i + 1;
            }
            self.line_scan = t;
        }
        self.line_start
    }

    /// An eligible candidate `c` (with `units` before it) at moment `t`, on a line starting
    /// at `line_start` (by default, the line of moment `t`) if it splits a line: it goes to `fresh` if its piece shows content
    /// and the text after it holds some, to `waiting` if only the latter is missing; it is
    /// dropped if its piece would show only fence lines or end with a line cut into a fence
    /// look-alike.
    fn accept(&mut self, c: Candidate, units: usize, t: usize, line_start: Option<usize>) {
        if self.block_content(t).is_none_or(|x| x >= c.end) {
            return;
        }
        if line_continues(&self.buffer.as_bytes()[..t], c.end) {
            // The line that `c` splits starts at `line_start` (by default the line of moment
            // `t`) unless a line ended since.
            let line_start = match line_start {
                Some(ls) => ls,
                None => self.line_start_at(t),
            };
            let ls = if line_start <= c.end {
                line_start.max(self.start)
            } else {
                memchr::memrchr(b'\n', &self.buffer.as_bytes()[self.start..c.end])
                    .map_or(self.start, |i| self.start + i + 1)
            };
            if FenceMarker::parse_open(&self.buffer[ls..c.end]).is_some() {
                return;
            }
        }
        if self
            .scanner
            .first_content(&self.buffer, c.sep_end, t)
            .is_ok()
        {
            if !self.before_crowded_fence(c, t) {
                self.fresh.push((c, units));
            }
        } else {
            self.waiting.push((c, units));
        }
    }

    /// Whether the next block after `c` would start with a fence whose opening line leaves
    /// no room for code: such a cut is not made (the block takes the head of that line
    /// instead, see [`Planner::crowded_fence_at`]).
    fn before_crowded_fence(&self, c: Candidate, t: usize) -> bool {
        self.scanner.fence_at(c.sep_end + 1).is_some()
            && self.planner(t, false).crowded_fence_at(c.sep_end).is_some()
    }

    /// Moves the waiting candidates that now have content after them to `fresh`.
    fn promote_waiting(&mut self, t: usize) {
        self.sync_scanner(t, true);
        let mut k = 0;
        while k < self.waiting.len() {
            let (c, u) = self.waiting[k];
            if c.end <= self.start {
                self.waiting.swap_remove(k);
            } else if self
                .scanner
                .first_content(&self.buffer, c.sep_end, t)
                .is_ok()
            {
                self.waiting.swap_remove(k);
                if !self.before_crowded_fence(c, t) {
                    self.fresh.push((c, u));
                }
            } else {
                k += 1;
            }
        }
    }

    /// Feeds the scanner through moment `t`. When cuts turned safe, collects the decided
    /// candidates among them (if `collect`).
    fn sync_scanner(&mut self, t: usize, collect: bool) {
        if self.scanned < t {
            self.scanner.scan(&self.buffer[..t]);
            self.scanned = t;
        }
        let Some(from) = self.scanner.take_newly_safe() else {
            return;
        };
        if !collect {
            return;
        }
        let first = self.fresh.len();
        {
            let lo = self.collect_from(from, t);
            let text = &self.buffer[..t];
            let bytes = text.as_bytes();
            let beyond_ws = !self.eager.contains(&BreakClass::Whitespace);
            for j in lo..t {
                // A plain byte after a plain byte (inside a word) is no candidate: one lookup
                // each rules out most positions.
                if j > 0 && PLAIN[usize::from(bytes[j - 1])] && PLAIN[usize::from(bytes[j])] {
                    continue;
                }
                if may_be_candidate(bytes, j)
                    && (!beyond_ws || may_break_beyond_whitespace(bytes, j))
                    && let Some(c) = candidate_at(text, j, false)
                    && c.rank(self.eager).is_some()
                    && self.scanner.is_safe_cut(j)
                {
                    self.fresh.push((c, 0));
                }
            }
        }
        // Units before each candidate, walking back from the moment's total.
        let metric = self.config.metric;
        let (mut pos, mut units) = (t, self.units);
        for k in (first..self.fresh.len()).rev() {
            let (c, u) = &mut self.fresh[k];
            units -= metric.len(&self.buffer[c.end..pos]);
            pos = c.end;
            *u = units;
        }
        // Each one must pass the checks of `accept`: take them out and put them back.
        let mut collected = std::mem::take(&mut self.scratch);
        collected.extend(self.fresh.drain(first..));
        let (mut ls, mut seen) = (self.start, self.start);
        for &(c, u) in &collected {
            if let Some(i) = memchr::memrchr(b'\n', &self.buffer.as_bytes()[seen..c.end]) {
                ls = seen + i + 1;
            }
            seen = c.end;
            self.accept(c, u, t, Some(ls));
        }
        collected.clear();
        self.scratch = collected;
    }

    /// Where [`BlockChunker::sync_scanner`] starts re-collecting candidates that turned
    /// safe at or after `from`, at moment `t`: the first position whose candidate could
    /// still be cut at.
    ///
    /// A candidate `p` shows `reopen + units(start..p)` units, and no char has more units
    /// than bytes in the chars, UTF-16 and bytes metrics, so one before `start + min -
    /// reopen` shows fewer than `min`: [`BlockChunker::cut_fresh`] never takes it, and a cut
    /// it makes at a later candidate leaves it behind the next block's start. It is skipped
    /// only when it would go to `fresh` (and so be dropped this moment): when content lies
    /// after it before `t` (content is not whitespace, so it lies after the candidate's
    /// separator too). A `waiting` one could outlive a cut at max below `min` and count
    /// again from a later start with another synthetic start, so then the walk starts
    /// where it did. In graphemes, units are counted with context, so the walk does too.
    fn collect_from(&mut self, from: usize, t: usize) -> usize {
        let lo = from.max(self.start + 1);
        if self.config.metric == LengthMetric::Graphemes {
            return lo;
        }
        let shown = self.config.min.saturating_sub(self.reopen_cost().units);
        let bound = self.start.saturating_add(shown).min(t);
        if bound <= lo {
            return lo;
        }
        match self.scanner.first_content(&self.buffer, bound, t) {
            Ok(_) => bound,
            Err(_) => lo,
        }
    }

    /// Cuts at the best eligible fresh candidate, again and again in what remains.
    fn cut_fresh(&mut self, t: usize, out: &mut Vec<Block>) {
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
            let widest = super::limits::widest_char(self.config.metric);
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

    /// The block exceeds `max` at moment `t`: cut it. Returns false when the cut must wait
    /// for the last line to be decided.
    fn cut_at_max(&mut self, t: usize, out: &mut Vec<Block>) -> bool {
        self.sync_scanner(t, false);
        let text = &self.buffer[..t];
        if self.max_wait == Some(self.scanner.line_start())
            && self.scanner.last_line_undecided(text)
        {
            return false;
        }
        self.max_wait = None;
        let planned =
            self.planner(t, false)
                .plan(self.start, self.reopen_cost(), self.config.min, false);
        let Some(planned) = planned else {
            self.max_wait = Some(self.scanner.line_start());
            return false;
        };
        self.emit_before_list_items(planned.cut.end, t, false, out);
        self.emit_planned(&planned, out);
        self.begin_block(planned.cut.sep_end, t, false, out);
        true
    }

    /// Before the block that is to end at `end` (at moment `t`; `complete` when no more text
    /// comes): where it starts inside a list item and holds a later item of that list that
    /// its paragraph text would swallow (see `MarkdownScanner::list_cut`), the text before
    /// that item goes out as a block of its own, whatever its size, and the block starts at
    /// the item. Cost: a lookup, unless such an item lies in the block.
    fn emit_before_list_items(
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

    fn emit_planned(&mut self, planned: &Planned, out: &mut Vec<Block>) {
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
    fn emit(
        &mut self,
        end: usize,
        sep_end: usize,
        close: Option<FenceMarker>,
        next: NextStart,
        out: &mut Vec<Block>,
    ) {
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
        let line_start = match self.start {
            0 => self.buffer_starts_line,
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
        let mut head_len = reopen.map_or(0, |r| r.cost(LengthMetric::Bytes));
        let mut tail_len = close.map_or(0, |m| m.close_len() + 1);
        if dedent == 0 {
            build_piece(source, reopen, close, &mut text);
        } else {
            (head_len, tail_len) =
                build_dedented_piece(source, line_start, reopen, close, dedent, &mut text);
        }
        let delims = match next {
            NextStart::Delims(d) => d,
            _ => SpanDelims::NONE,
        };
        delims.push_close(&mut text);
        out.push(Block {
            text,
            lead: self.buffer[self.lead_from..self.start].to_owned(),
            sep: self.buffer[end..sep_end].to_owned(),
            source: self.base + self.start..self.base + end,
            fence_reopened: matches!(reopen, Some(Reopen::Fence { .. } | Reopen::Marker { .. })),
            indent_reopened: matches!(reopen, Some(Reopen::Indent)),
            fence_closed: close.is_some(),
            table_header_repeated: matches!(reopen, Some(Reopen::Table { .. })),
            head_len,
            tail_len: tail_len + delims.len(),
            spans_reopened: matches!(reopen, Some(Reopen::Delims(_))),
            spans_closed: !delims.is_empty(),
            dedent,
            continues_list: reopen.is_none() && self.scanner.continues_list_at(self.start),
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
            NextStart::Indent => self.set_reopen(ReopenKind::Indent),
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

    /// Keeps the opening line `buffer[start..end]` of the fence open at the block start.
    fn save_fence_line(&mut self, start: usize, end: usize) {
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
    fn save_table_head(&mut self, t: &super::markdown::TableSpan) {
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
    fn begin_block(&mut self, q: usize, t: usize, complete: bool, out: &mut [Block]) {
        let metric = self.config.metric;
        let s = shown_start(
            &self.buffer[..t],
            q,
            &self.limits(),
            self.current_reopen(),
            complete,
        );
        if s > q
            && let Some(last) = out.last_mut()
        {
            last.sep.push_str(&self.buffer[q..s]);
        }
        self.start = s;
        self.lead_from = s;
        self.start_units = self.units - metric.len(&self.buffer[s..t]);
        self.content = Err(s);
        self.leading = s == t;
        if self.leading || self.run.is_some_and(|(p, _)| p < self.start) {
            self.run = None;
        }
        self.waiting.retain(|(c, _)| c.end > s);
    }
}

/// The class of a non-whitespace char, for deciding the next candidate.
#[inline]
fn prev_of(c: char) -> Prev {
    if is_tail_char(c) {
        Prev::Tail
    } else if c.is_ascii() {
        Prev::Plain
    } else {
        Prev::Other
    }
}

/// ASCII whitespace as a char.
#[inline]
fn is_ws_char(c: char) -> bool {
    c.is_ascii() && is_ws(c as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_byte_table_agrees_with_the_char_classes() {
        for b in 0..=255u8 {
            let plain = b < 0x80 && !is_ws(b) && !is_tail_char(b as char);
            assert_eq!(PLAIN[usize::from(b)], plain, "byte {b:#04x}");
        }
    }

    fn cfg(min: usize, max: usize) -> ChunkerConfig {
        ChunkerConfig {
            min,
            max,
            ..ChunkerConfig::default()
        }
    }

    fn chunk(config: ChunkerConfig, deltas: &[&str]) -> Vec<Block> {
        let mut c = BlockChunker::new(config).unwrap();
        let mut out = Vec::new();
        for d in deltas {
            c.push(d, &mut out);
        }
        c.flush(&mut out);
        out
    }

    fn texts(blocks: &[Block]) -> Vec<&str> {
        blocks.iter().map(|b| b.text.as_str()).collect()
    }

    #[test]
    fn break_order_tables_follow_the_rule() {
        use BreakClass::{Line, Paragraph, Sentence};
        for preference in [
            BreakPreference::Paragraph,
            BreakPreference::Newline,
            BreakPreference::Sentence,
        ] {
            for flush in [false, true] {
                let mut eager = match preference {
                    BreakPreference::Paragraph => vec![Paragraph, Line, Sentence],
                    BreakPreference::Newline => vec![Paragraph, Line],
                    BreakPreference::Sentence => vec![Sentence],
                };
                if flush && !eager.contains(&Paragraph) {
                    eager.insert(0, Paragraph);
                }
                let mut forced = eager.clone();
                forced.extend(BreakClass::TEXT.iter().filter(|c| !eager.contains(c)));
                let (e, f) = break_orders(preference, flush);
                assert_eq!((e, f), (&eager[..], &forced[..]), "{preference:?} {flush}");
            }
        }
    }

    #[test]
    fn fence_stays_whole_between_paragraphs() {
        let text = "Intro\n\n~~~sh\nline1\nline2\n~~~\n\nOutro";
        let blocks = chunk(cfg(5, 25), &[text]);
        assert_eq!(
            texts(&blocks),
            ["Intro", "~~~sh\nline1\nline2\n~~~", "Outro"]
        );
        assert_eq!(blocks[0].sep, "\n\n");
    }

    fn by_chars(config: ChunkerConfig, text: &str) -> Vec<Block> {
        let deltas: Vec<String> = text.chars().map(String::from).collect();
        let deltas: Vec<&str> = deltas.iter().map(String::as_str).collect();
        chunk(config, &deltas)
    }

    #[test]
    fn long_fence_is_closed_and_reopened_with_its_info_string() {
        let text = format!("```txt\n{}\n```", "a".repeat(80));
        let blocks = chunk(cfg(10, 30), &[&text]);
        assert!(blocks.len() > 3);
        for b in &blocks {
            assert!(b.text.starts_with("```txt\n"), "{:?}", b.text);
            assert!(b.text.ends_with("\n```"), "{:?}", b.text);
            assert!(b.text.chars().count() <= 30);
        }
        assert_eq!(blocks, by_chars(cfg(10, 30), &text));
    }

    #[test]
    fn four_backtick_fence_with_inner_fence_stays_whole() {
        let text = "Before.\n\n````md\n```\ninner\n```\n````\n\nAfter.";
        let blocks = chunk(cfg(5, 40), &[text]);
        assert_eq!(
            texts(&blocks),
            ["Before.", "````md\n```\ninner\n```\n````", "After."]
        );
    }

    #[test]
    fn indented_fence_stays_intact() {
        let text = "Text here.\n\n  ```\n  code\n  ```\n\nMore text.";
        let blocks = chunk(cfg(5, 30), &[text]);
        assert_eq!(
            texts(&blocks),
            ["Text here.", "  ```\n  code\n  ```", "More text."]
        );
    }

    #[test]
    fn blank_lines_inside_a_fence_are_not_paragraph_breaks() {
        let text = "```\nfn a() {}\n\nfn b() {}\n```\n\ntail";
        let blocks = chunk(cfg(3, 40), &[text]);
        assert_eq!(texts(&blocks), ["```\nfn a() {}\n\nfn b() {}\n```", "tail"]);
    }

    #[test]
    fn a_sentence_mark_at_the_end_waits() {
        let config = ChunkerConfig {
            break_preference: BreakPreference::Sentence,
            ..cfg(3, 100)
        };
        let mut c = BlockChunker::new(config).unwrap();
        let mut out = Vec::new();
        c.push("Pi is 3.", &mut out);
        assert!(out.is_empty(), "3. may become 3.14");
        c.push("14 exactly. Next", &mut out);
        assert_eq!(texts(&out), ["Pi is 3.14 exactly."]);
        assert_eq!(out[0].sep, " ");
    }

    #[test]
    fn cjk_sentences_cut_without_spaces() {
        let config = ChunkerConfig {
            break_preference: BreakPreference::Sentence,
            ..cfg(3, 100)
        };
        let blocks = chunk(config, &["今日は晴れです。明日は雨でしょう！そうですか？"]);
        assert_eq!(
            texts(&blocks),
            ["今日は晴れです。", "明日は雨でしょう！", "そうですか？"]
        );
        assert!(blocks.iter().all(|b| b.sep.is_empty()));
    }

    #[test]
    fn newline_preference_waits_for_a_line_break_until_max() {
        let config = ChunkerConfig {
            break_preference: BreakPreference::Newline,
            ..cfg(5, 30)
        };
        let mut c = BlockChunker::new(config).unwrap();
        let mut out = Vec::new();
        c.push("One sentence. Two sentences. Three", &mut out);
        assert_eq!(
            texts(&out),
            ["One sentence. Two sentences."],
            "cut at max only"
        );
        out.clear();
        c.push(" more\nNext", &mut out);
        assert_eq!(texts(&out), ["Three more"]);
        assert_eq!(out[0].sep, "\n");
    }

    #[test]
    fn hard_cuts_never_split_graphemes() {
        let family = "👨\u{200d}👩\u{200d}👧\u{200d}👦";
        let text = format!("{family}{family}🇫🇷🇩🇪🇯🇵e\u{301}{family}").repeat(3);
        for metric in LengthMetric::ALL {
            let max = metric.min_limit();
            let config = ChunkerConfig {
                metric,
                ..cfg(1, max)
            };
            let blocks = chunk(config, &[&text]);
            let mut at = 0;
            for b in &blocks {
                assert!(metric.len(&b.text) <= max);
                assert!(
                    crate::text::metric::is_grapheme_boundary(&text, b.source.end),
                    "{metric} {:?}",
                    b.text
                );
                at = b.source.end;
            }
            assert_eq!(at, text.len());
            assert_eq!(blocks, by_chars(config, &text), "{metric}");
        }
    }

    #[test]
    fn separators_and_sources_rebuild_the_text() {
        let text = "\n\nFirst line.\n  indented second\n\n\nThird para here.   Fourth.  \n";
        let blocks = chunk(cfg(5, 24), &[text]);
        let rebuilt: String = blocks
            .iter()
            .map(|b| format!("{}{}{}", b.lead, &text[b.source.clone()], b.sep))
            .collect();
        assert_eq!(rebuilt, text);
        assert_eq!(blocks[0].lead, "\n\n");
        assert!(blocks.iter().any(|b| b.text.starts_with("  indented")));
    }

    #[test]
    fn long_fences_cut_the_same_for_any_deltas() {
        // Code lines that start with the marker char, a CR LF line, a line that looks like a
        // closer but is not, and the real closer: the bulk path must stop before each line
        // that might close the fence and leave the cut at max to the char-by-char path.
        let mut code = String::new();
        for i in 0..40 {
            code.push_str(&format!("    let v{i} = f({i}); // step {i}.\n"));
            if i % 7 == 0 {
                code.push_str("```` not a closer\r\n  `x` 👨\u{200d}👩 e\u{301}\n\n");
            }
        }
        let text = format!("Intro text. More.\n\n````rust\n{code}  ````  \n\nOutro. End.");
        for metric in LengthMetric::ALL {
            for (min, max) in [(20, 60), (100, 300), (250, 260)] {
                let config = ChunkerConfig {
                    metric,
                    ..cfg(min, max)
                };
                let whole = chunk(config, &[&text]);
                assert_eq!(whole, by_chars(config, &text), "{metric} {min} {max}");
                let sized: Vec<&str> = text.split_inclusive([';', '`']).collect();
                assert_eq!(whole, chunk(config, &sized), "{metric} {min} {max}");
                assert!(whole.iter().any(|b| b.fence_reopened));
            }
        }
    }

    #[test]
    fn open_fence_is_closed_at_flush() {
        let blocks = chunk(cfg(20, 100), &["Look:\n```py\nprint(1)\n"]);
        assert_eq!(texts(&blocks), ["Look:\n```py\nprint(1)\n```"]);
        assert!(blocks[0].fence_closed);
    }
}

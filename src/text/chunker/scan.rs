//! Scanning: advancing through arrived text char by char, with the fast paths that skip
//! what decides nothing.

use crate::text::block::Block;
use crate::text::cut::{is_tail_char, is_ws, joined_ws, shown_start};
use crate::text::metric::{LengthMetric, all_ascii, is_grapheme_boundary};

use super::*;

/// What the previous char was, for deciding candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Prev {
    /// ASCII, not whitespace, not a sentence mark or closer: nothing is pending.
    Plain,
    /// Whitespace (a run may be pending).
    Space,
    /// A sentence mark or a closer.
    Tail,
    /// Anything else.
    Other,
}

/// The bytes [`BlockChunker::skip_plain`] passes over: ASCII, not whitespace, not a sentence
/// mark or closer (one lookup per byte rather than a chain of compares).
pub(super) static PLAIN: [bool; 256] = {
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

impl BlockChunker {
    /// Drops emitted text from the front of the buffer when that is cheap relative to what
    /// stays (amortised: each byte is moved a bounded number of times).
    ///
    /// Text the scanner still needs is kept: the current line (a fence line is judged
    /// whole), so the blocks never depend on when compaction happens. The opening line of
    /// the fence the block starts in is saved before it goes.
    pub(super) fn compact(&mut self) {
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
        // A line that may turn out to be a table's header row stays too (it is one line),
        // and the opening run of the code span the block starts in (a cut inside the span
        // is planned from where its code begins).
        let code_start = self
            .scanner
            .code_at(self.start)
            .map_or(usize::MAX, |c| c.start);
        // So do the sentence marks and closers right before it: a sentence end in the block
        // is read back over them (`…` after `！` ends a CJK sentence, whatever follows it;
        // `…` alone needs whitespace after it).
        let mut keep_from = keep_from;
        while let Some(c) = self.buffer[..keep_from].chars().next_back()
            && is_tail_char(c)
        {
            keep_from -= c.len_utf8();
        }
        let n = self.scanner.drain_limit(
            keep_from
                .min(self.scanner.line_start())
                .min(self.scanner.pending_table_head().unwrap_or(usize::MAX))
                .min(code_start),
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
        let drained = &self.buffer.as_bytes()[..n];
        let blank = drained
            .iter()
            .rev()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        self.buffer_start = match (blank, drained[..n - blank].last()) {
            (0, Some(b'\n')) => BufferStart::Line,
            (_, Some(b'\n')) => BufferStart::Indented,
            (_, None) if self.buffer_start != BufferStart::Inside => BufferStart::Indented,
            _ => BufferStart::Inside,
        };
        self.buffer.drain(..n);
        self.scanner.drain(n);
        self.scanner
            .set_text_starts_line(self.buffer_start != BufferStart::Inside);
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
        self.max_wait = self.max_wait.map(|(p, q)| (p.saturating_sub(n), q));
        self.recheck = self.recheck.map(|(p, u)| (p - n, u));
    }

    /// Fast path: consumes, in bulk, the text that keeps the block below `min`.
    ///
    /// Below `min` the char-by-char moments do nothing but bookkeeping: a candidate
    /// decided there is too short to cut at (see [`BlockChunker::consider`]), a line break
    /// does not feed the scanner, and `max` cannot be reached. So the units are counted in
    /// one go and only the state at the last char is rebuilt (see [`BlockChunker::advance`]).
    /// Returns whether it moved.
    pub(super) fn skip_short(&mut self) -> bool {
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
        self.advance(self.buffer.len(), room, false)
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
    pub(super) fn skip_fence(&mut self) -> bool {
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
        // `room` ASCII bytes (the usual case) fit in every metric (what `floor_index`
        // answers first): then `advance` need not look at them again.
        let rest = &self.buffer[self.cursor..];
        let (fit, ascii) = if rest.len() <= room {
            (rest.len(), false)
        } else if all_ascii(&rest.as_bytes()[..room]) {
            (room, true)
        } else if self.config.metric == LengthMetric::Graphemes {
            (LengthMetric::Chars.floor_index(rest, room), false)
        } else {
            (self.config.metric.floor_index(rest, room), false)
        };
        let limit = self.cursor + fit;
        match self.scanner.fence_stretch(&self.buffer[..limit]) {
            Some(end) => self.advance(end, room, ascii),
            None => false,
        }
    }

    /// Consumes `buffer[cursor..end]`, or its longest prefix that adds at most `room` units,
    /// with the state updates [`BlockChunker::step`] makes when the chars decide nothing
    /// that is taken, feed nothing to the scanner that matters and reach no cut: the units
    /// are counted in one go and only the state at the last char is rebuilt, the whitespace
    /// run reaching it and the class of that char. The block must hold a non-whitespace
    /// char. Returns whether it moved. With `ascii`, the caller found `buffer[cursor..end]`
    /// to be ASCII already.
    #[inline(always)]
    fn advance(&mut self, end: usize, room: usize, ascii: bool) -> bool {
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
        let (len, added) = if rest.len() > room && all_ascii(&rest.as_bytes()[..room]) {
            (room, room)
        } else {
            let len = if rest.len() <= room {
                rest.len()
            } else {
                metric.floor_index(rest, room)
            };
            let seg = &rest[..len];
            (
                len,
                if ascii || seg.is_ascii() {
                    len
                } else {
                    metric.len(seg)
                },
            )
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
    pub(super) fn skip_plain(&mut self) -> bool {
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
    pub(super) fn step(&mut self, out: &mut Vec<Block>) {
        let i = self.cursor;
        let Some(c) = self.buffer[i..].chars().next() else {
            return;
        };
        let t = i + c.len_utf8();
        let units_before = self.units;
        self.units += self.char_units(i, c);
        self.cursor = t;
        if self.start_waits {
            self.settle_start(t, false, out);
        }
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
            while self.display_units() > self.config.max && self.cut_at_max(t, out) {
                if !self.fresh.is_empty() {
                    self.cut_fresh(t, out);
                }
            }
        }
    }

    /// The units `c` at byte `i` adds. In the graphemes metric: 1 if `c` starts a cluster.
    /// A cluster boundary depends only on the text before it and the char after it, so it
    /// is decided as the char arrives.
    // Inlined: in the other metrics it is a lookup (the graphemes walk is a call).
    #[inline(always)]
    fn char_units(&mut self, i: usize, c: char) -> usize {
        if self.config.metric != LengthMetric::Graphemes {
            return self.config.metric.char_len(c);
        }
        self.grapheme_units(i, c)
    }

    /// [`BlockChunker::char_units`] in the graphemes metric.
    #[inline(never)]
    fn grapheme_units(&mut self, i: usize, c: char) -> usize {
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
        self.start_waits = self.waiting_start(self.lead_from, t, self.start).is_some();
        self.start_units = self.units - self.config.metric.len(&self.buffer[self.start..t]);
        self.leading = false;
        self.content = Err(self.start);
    }

    /// The first content byte of the block before `to` (the scanner must have seen it).
    pub(super) fn block_content(&mut self, to: usize) -> Option<usize> {
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

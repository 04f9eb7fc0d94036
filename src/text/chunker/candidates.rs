//! Candidates: judging the breaks the scan decides, keeping those a block may end at, and
//! feeding the Markdown scanner.

use crate::text::cut::{
    BreakClass, Candidate, candidate_at, is_ws, line_continues, may_be_candidate,
    may_break_beyond_whitespace, may_end_tail, partial_fence_at_end,
};
use crate::text::markdown::{FenceMarker, find_in};
use crate::text::metric::LengthMetric;

use super::scan::*;
use super::*;

/// The bytes a candidate of a class beyond whitespace lies right after or in the run of
/// (see [`may_break_beyond_whitespace`]): a byte that may end a sentence mark or a closer,
/// and a line break.
static BREAK_HINT: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = b == b'\n' as usize || may_end_tail(b as u8);
        b += 1;
    }
    t
};

/// The first byte of `bytes[from..to]` that [`BREAK_HINT`] holds. Searched for by groups of
/// sixteen (see [`find_in`]) among the ASCII ones and all non-ASCII bytes, a superset: a
/// byte found that is not a hint (a UTF-8 lead byte) is passed over.
#[inline]
fn next_break_hint(bytes: &[u8], mut from: usize, to: usize) -> Option<usize> {
    loop {
        let q = find_in(
            bytes,
            from,
            to,
            [b'\n', b'.', b'!', b'?', b')', b']', b'"', b'\''],
            true,
        )?;
        if BREAK_HINT[usize::from(bytes[q])] {
            return Some(q);
        }
        from = q + 1;
    }
}

impl BlockChunker {
    /// Whether the next piece after a cut at `p` would start, mid-line, with one or two
    /// backticks or tildes that end the text at moment `t` (see [`BlockChunker::recheck`]).
    // Inlined for its first test (the compiler left the call, about 20 instructions a
    // candidate), the rest outlined.
    #[inline(always)]
    pub(super) fn partial_fence_after(&self, p: usize, t: usize) -> bool {
        // Most moments: the text does not end with a backtick or tilde.
        p < t
            && matches!(self.buffer.as_bytes()[t - 1], b'`' | b'~')
            && self.partial_fence_run_after(p, t)
    }

    /// [`BlockChunker::partial_fence_after`] once the text ends with a backtick or tilde.
    #[inline(never)]
    fn partial_fence_run_after(&self, p: usize, t: usize) -> bool {
        let bytes = &self.buffer.as_bytes()[p..t];
        let ws = bytes.iter().take_while(|&&b| is_ws(b)).count();
        !bytes[..ws].contains(&b'\n') && partial_fence_at_end(&bytes[ws..])
    }

    /// A candidate at `p` (with `p_units` units before it) was decided at moment `t`.
    pub(super) fn consider(&mut self, p: usize, p_units: usize, t: usize) {
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
    /// instead, see [`Planner::crowded_fence_at`](crate::text::cut::Planner::crowded_fence_at)).
    fn before_crowded_fence(&self, c: Candidate, t: usize) -> bool {
        self.scanner.fence_at(c.sep_end + 1).is_some()
            && self.planner(t, false).crowded_fence_at(c.sep_end).is_some()
    }

    /// Moves the waiting candidates that now have content after them to `fresh`.
    pub(super) fn promote_waiting(&mut self, t: usize) {
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
    pub(super) fn sync_scanner(&mut self, t: usize, collect: bool) {
        if self.scanned < t {
            self.scanner.scan(&self.buffer[..t]);
            self.scanned = t;
        }
        let Some(from) = self.scanner.take_newly_safe() else {
            return;
        };
        if collect {
            self.collect_safe(from, t);
        }
    }

    /// Collects the decided candidates from `from` (or the first that could still be cut
    /// at) to moment `t` that are safe now, with the checks of `accept`.
    pub(super) fn collect_safe(&mut self, from: usize, t: usize) {
        let first = self.fresh.len();
        {
            let lo = self.collect_from(from, t);
            let text = &self.buffer[..t];
            let bytes = text.as_bytes();
            let beyond_ws = !self.eager.contains(&BreakClass::Whitespace);
            let mut next = lo;
            while next < t {
                let mut j = next;
                if beyond_ws {
                    // Only a position right after a byte that may end a sentence mark or a
                    // closer, or in a whitespace run that holds a line break, passes the
                    // filters below: the positions before the first of them from `j` on
                    // (the one after the next such byte, or the run of the next line break)
                    // are passed over in one go. (`j >= lo > start >= 0`.)
                    let Some(q) = next_break_hint(bytes, j - 1, t) else {
                        break;
                    };
                    j = match bytes[q] {
                        b'\n' => {
                            let run = bytes[..q].iter().rev().take_while(|&&b| is_ws(b)).count();
                            j.max(q - run)
                        }
                        _ => q + 1,
                    };
                    if j >= t {
                        break;
                    }
                    next = j + 1;
                } else {
                    next += 1;
                    // A plain byte after a plain byte (inside a word) is no candidate: the
                    // positions up to the next byte that is not plain are passed over in one
                    // go (each of them is a plain byte after a plain one).
                    if j > 0 && PLAIN[usize::from(bytes[j - 1])] && PLAIN[usize::from(bytes[j])] {
                        next = bytes[next..t]
                            .iter()
                            .position(|&b| !PLAIN[usize::from(b)])
                            .map_or(t, |k| next + k);
                        continue;
                    }
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
}

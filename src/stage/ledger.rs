//! The delivery ledger: which model text the host confirmed delivered (SPEC §6).
//!
//! Blocks are identified by where they came from — an assistant message and a byte range of
//! that message's cleaned text — never by their text, so legitimate repeats are delivered.
//! At the end of a turn the ledger answers "what did the user not get?", and exactly that is
//! sent as the final.
//!
//! **Cost.** Each message keeps its delivered ranges disjoint and merged in an ordered map
//! keyed by range start. Recording a span is one ordered-map search plus the removal of the
//! ranges it swallows, each of which was inserted once: `O(log n)` amortized per record for
//! `n` ranges, whatever order the acks come in (acks usually arrive in source order, and then
//! a span merges into the last range and the map never grows). Answering "what is missing"
//! walks the ranges once.

use std::collections::BTreeMap;
use std::ops::Range;

/// A byte range of one assistant message's cleaned text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SourceSpan {
    /// The assistant message's index in the turn (0-based).
    pub message: u32,
    /// Byte range in that message's cleaned text.
    pub range: Range<usize>,
    /// The send shows a synthetic closing fence line right after this range (it was cut
    /// inside a fence it could repair). The fence's own closing line, if it comes next in
    /// the source, was then shown by it, and a final starting there leaves that line out.
    pub closes_fence: bool,
}

/// Confirmed-delivered ranges per assistant message.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeliveryLedger {
    /// Per message: disjoint, non-adjacent ranges, `start → end`.
    delivered: Vec<BTreeMap<usize, usize>>,
    /// Where a delivered send ended with a synthetic closing fence line: message and byte
    /// (few: only sends cut inside a fence).
    closed_ends: Vec<(u32, usize)>,
}

impl DeliveryLedger {
    /// An empty ledger.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records `span` as delivered, merging it with the ranges it touches or overlaps.
    pub(crate) fn record(&mut self, span: &SourceSpan) {
        if span.range.is_empty() {
            return;
        }
        if span.closes_fence {
            self.closed_ends.push((span.message, span.range.end));
        }
        let m = span.message as usize;
        if self.delivered.len() <= m {
            self.delivered.resize_with(m + 1, BTreeMap::new);
        }
        let ranges = &mut self.delivered[m];
        let (mut start, mut end) = (span.range.start, span.range.end);
        // The range starting at or before `start` may reach it: extend that one.
        if let Some((&s, &e)) = ranges.range(..=start).next_back()
            && e >= start
        {
            if e >= end {
                return;
            }
            start = s;
        }
        // Every range starting inside `start..=end` is swallowed (each is removed once).
        while let Some((&s, &e)) = ranges.range(start..=end).next() {
            ranges.remove(&s);
            end = end.max(e);
        }
        ranges.insert(start, end);
    }

    /// Whether any part of `span` was delivered.
    pub(crate) fn overlaps(&self, span: &SourceSpan) -> bool {
        !span.range.is_empty()
            && self
                .delivered
                .get(span.message as usize)
                .and_then(|r| r.range(..span.range.end).next_back())
                .is_some_and(|(_, &e)| e > span.range.start)
    }

    /// Whether delivered text of message `message` ends at byte `at`, and if so whether a
    /// delivered send ended there with a synthetic closing fence line.
    pub(crate) fn end_at(&self, message: u32, at: usize) -> Option<bool> {
        let (_, &e) = self
            .delivered
            .get(message as usize)?
            .range(..at)
            .next_back()?;
        (e == at).then(|| self.closed_ends.contains(&(message, at)))
    }

    /// Whether anything of message `message` was delivered.
    #[cfg(test)]
    pub(crate) fn any_delivered(&self, message: u32) -> bool {
        self.delivered
            .get(message as usize)
            .is_some_and(|r| !r.is_empty())
    }

    /// The parts of `0..len` of message `message` not confirmed delivered, in order.
    pub(crate) fn undelivered(&self, message: u32, len: usize) -> Vec<Range<usize>> {
        let mut gaps = Vec::new();
        let mut at = 0;
        if let Some(ranges) = self.delivered.get(message as usize) {
            for (&s, &e) in ranges {
                if s >= len {
                    break;
                }
                if s > at {
                    gaps.push(at..s);
                }
                at = at.max(e);
            }
        }
        if at < len {
            gaps.push(at..len);
        }
        gaps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn span(message: u32, range: Range<usize>) -> SourceSpan {
        SourceSpan {
            message,
            range,
            closes_fence: false,
        }
    }

    #[test]
    fn gaps_are_the_complement() {
        let mut l = DeliveryLedger::new();
        l.record(&span(0, 10..20));
        l.record(&span(0, 0..5));
        l.record(&span(0, 18..25));
        assert_eq!(l.undelivered(0, 30), vec![5..10, 25..30]);
        assert_eq!(l.undelivered(1, 4), vec![0..4]);
        assert!(l.any_delivered(0));
        assert!(!l.any_delivered(1));
        assert!(l.overlaps(&span(0, 4..6)));
        assert!(l.overlaps(&span(0, 24..40)));
        assert!(!l.overlaps(&span(0, 5..10)));
        assert!(!l.overlaps(&span(0, 25..30)));
        assert!(!l.overlaps(&span(1, 0..9)));
    }

    #[test]
    fn adjacent_and_swallowed_ranges_merge() {
        let mut l = DeliveryLedger::new();
        for r in [20..30, 40..50, 60..70, 30..40, 0..100, 5..6] {
            l.record(&span(0, r));
        }
        assert_eq!(l.undelivered(0, 120), vec![100..120]);
        assert_eq!(l.delivered[0].len(), 1);
        assert!(l.undelivered(0, 50).is_empty(), "a length inside a range");
    }

    #[test]
    fn in_order_acks_keep_one_range() {
        let mut l = DeliveryLedger::new();
        for i in 0..10_000 {
            l.record(&span(0, i * 10..i * 10 + 10));
        }
        assert_eq!(l.delivered[0].len(), 1);
        assert!(l.undelivered(0, 100_000).is_empty());
    }

    proptest! {
        /// The ledger agrees with a plain bitmap over any set of ranges in any order.
        #[test]
        fn matches_a_bitmap(ranges in prop::collection::vec((0usize..200, 0usize..40), 0..60)) {
            let mut l = DeliveryLedger::new();
            let mut bits = [false; 240];
            for &(s, n) in &ranges {
                l.record(&span(0, s..s + n));
                for b in &mut bits[s..s + n] {
                    *b = true;
                }
            }
            let mut gaps: Vec<Range<usize>> = Vec::new();
            for (i, &b) in bits.iter().enumerate() {
                if b {
                    continue;
                }
                match gaps.last_mut() {
                    Some(g) if g.end == i => g.end += 1,
                    _ => gaps.push(i..i + 1),
                }
            }
            prop_assert_eq!(l.undelivered(0, 240), gaps);
            // Stored ranges are disjoint and never touch.
            let stored: Vec<(usize, usize)> = l.delivered.first().map(|m| m.iter().map(|(&s, &e)| (s, e)).collect()).unwrap_or_default();
            for w in stored.windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
        }
    }
}

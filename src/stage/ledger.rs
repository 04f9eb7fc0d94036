//! The delivery ledger: which model text the host confirmed delivered (SPEC §6).
//!
//! Blocks are identified by where they came from — an assistant message and a byte range of
//! that message's cleaned text — never by their text, so legitimate repeats are delivered.
//! At the end of a turn the ledger answers "what did the user not get?", and exactly that is
//! sent as the final.

use std::ops::Range;

/// A byte range of one assistant message's cleaned text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SourceSpan {
    /// The assistant message's index in the turn (0-based).
    pub message: u32,
    /// Byte range in that message's cleaned text.
    pub range: Range<usize>,
}

/// Confirmed-delivered ranges per assistant message.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeliveryLedger {
    /// Per message: disjoint, sorted, merged ranges.
    delivered: Vec<Vec<Range<usize>>>,
}

impl DeliveryLedger {
    /// An empty ledger.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Records `span` as delivered.
    pub(crate) fn record(&mut self, span: &SourceSpan) {
        if span.range.is_empty() {
            return;
        }
        let m = span.message as usize;
        if self.delivered.len() <= m {
            self.delivered.resize_with(m + 1, Vec::new);
        }
        let ranges = &mut self.delivered[m];
        ranges.push(span.range.clone());
        ranges.sort_by_key(|r| r.start);
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
        for r in ranges.drain(..) {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        *ranges = merged;
    }

    /// Whether anything of message `message` was delivered.
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
            for r in ranges {
                if r.start > at {
                    gaps.push(at..r.start.min(len));
                }
                at = at.max(r.end);
            }
        }
        if at < len {
            gaps.push(at..len);
        }
        gaps.retain(|g| !g.is_empty());
        gaps
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_the_complement() {
        let mut l = DeliveryLedger::new();
        l.record(&SourceSpan {
            message: 0,
            range: 10..20,
        });
        l.record(&SourceSpan {
            message: 0,
            range: 0..5,
        });
        l.record(&SourceSpan {
            message: 0,
            range: 18..25,
        });
        assert_eq!(l.undelivered(0, 30), vec![5..10, 25..30]);
        assert_eq!(l.undelivered(1, 4), vec![0..4]);
        assert!(l.any_delivered(0));
        assert!(!l.any_delivered(1));
    }
}

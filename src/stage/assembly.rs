//! Delta assembly and sequence numbers (SPEC §1).
//!
//! Providers deliver assistant text as incremental deltas, as cumulative snapshots, or as a
//! mix (deltas while streaming, then the full content again at `text_end`). The
//! [`DeltaAssembler`] turns all of these into one monotonic stream of new text, so that a
//! resend never duplicates the reply. The [`SequenceFilter`] drops events whose optional
//! sequence number is repeated or older than one already seen.

use memchr::memmem;

/// Keeps the text of the current assistant message accepted so far and derives, from each
/// delta or snapshot, the part that is new.
///
/// The accepted text is the provider's own view of the message: the concatenation of the
/// deltas, replaced by the snapshot when a snapshot diverges. A snapshot is compared
/// against it:
///
/// - it **extends** the accepted text (starts with it): the new suffix is returned and
///   appended;
/// - it is **contained in** the accepted text (a prefix of it, equal to it, or any
///   contiguous substring of it, such as a resend of the last text content block of a
///   message that had several): nothing is returned and the snapshot is counted as a
///   resend; the accepted text stays as it was;
/// - otherwise it **diverges**: only the part after the longest common prefix (rounded down
///   to a char boundary) is returned, a divergence is counted, and the snapshot becomes the
///   accepted text, so that later snapshots extending it are recognised.
///
/// Text already returned is never returned again because of a resend. After a divergence
/// the output is the old accepted text followed by the snapshot's differing tail; the
/// replaced part cannot be recalled.
///
/// Cost: a snapshot that extends the accepted text costs one `memcmp` over the accepted
/// length plus appending the new part; the accepted text is kept, its buffer reused across
/// messages. A contained snapshot costs a linear substring search. Deltas cost their length.
#[derive(Debug, Default)]
pub(crate) struct DeltaAssembler {
    accepted: String,
    divergences: u64,
    resends: u64,
}

impl DeltaAssembler {
    /// An empty assembler.
    pub(crate) fn new() -> DeltaAssembler {
        DeltaAssembler::default()
    }

    /// An empty assembler whose accepted-text buffer can hold `bytes` bytes before it grows,
    /// so that accepting deltas of a message of up to that size never allocates.
    #[cfg(test)]
    pub(crate) fn with_capacity(bytes: usize) -> DeltaAssembler {
        DeltaAssembler {
            accepted: String::with_capacity(bytes),
            ..DeltaAssembler::default()
        }
    }

    /// Accepts an incremental piece of text and returns it (all of it is new).
    #[inline]
    pub(crate) fn delta<'t>(&mut self, text: &'t str) -> &'t str {
        self.accepted.push_str(text);
        text
    }

    /// Accepts a cumulative snapshot of the message text and returns the part of it that is
    /// new (possibly empty). See the type's documentation for the rules.
    pub(crate) fn snapshot<'t>(&mut self, full: &'t str) -> &'t str {
        let accepted = self.accepted.as_bytes();
        let bytes = full.as_bytes();
        if bytes.len() >= accepted.len() && &bytes[..accepted.len()] == accepted {
            let new = &full[accepted.len()..];
            if new.is_empty() {
                self.resends += 1;
            }
            self.accepted.push_str(new);
            return new;
        }
        if bytes.len() <= accepted.len()
            && (accepted.starts_with(bytes) || memmem::find(accepted, bytes).is_some())
        {
            self.resends += 1;
            return "";
        }
        let common = common_prefix_len(accepted, bytes);
        // Round down to a char boundary of `full` (and so of the accepted text, since the
        // bytes before it are equal).
        let common = (0..=common)
            .rev()
            .find(|&i| full.is_char_boundary(i))
            .unwrap_or(0);
        self.divergences += 1;
        self.accepted.clear();
        self.accepted.push_str(full);
        &full[common..]
    }

    /// Forgets the accepted text (a new assistant message begins). Counters are kept.
    pub(crate) fn reset(&mut self) {
        self.accepted.clear();
    }

    /// The text accepted so far in the current message.
    #[cfg(test)]
    pub(crate) fn accepted(&self) -> &str {
        &self.accepted
    }

    /// How many snapshots diverged from the accepted text.
    pub(crate) fn divergences(&self) -> u64 {
        self.divergences
    }

    /// How many snapshots added nothing because they were contained in the accepted text
    /// (snapshots equal to the accepted text included).
    #[cfg(test)]
    pub(crate) fn resends(&self) -> u64 {
        self.resends
    }
}

/// The length of the longest common prefix of `a` and `b`, in bytes.
fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    const WORD: usize = 16;
    let n = a.len().min(b.len());
    let mut i = 0;
    // Compare in blocks first (the compiler turns the block compare into wide loads).
    while i + WORD <= n && a[i..i + WORD] == b[i..i + WORD] {
        i += WORD;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// Filters events by their optional sequence numbers.
///
/// The first number seen is accepted whatever it is. After that, a number greater than the
/// last accepted one is accepted (a jump of more than one is counted as a gap and processing
/// continues; cumulative snapshots heal gaps); a repeated or older number is rejected and
/// counted as stale. An event without a number is always accepted and changes nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SequenceFilter {
    last: Option<u64>,
    stale: u64,
    gaps: u64,
    missing: u64,
}

impl SequenceFilter {
    /// A filter that has seen nothing.
    pub(crate) fn new() -> SequenceFilter {
        SequenceFilter::default()
    }

    /// Whether the event numbered `seq` should be processed.
    pub(crate) fn accept(&mut self, seq: Option<u64>) -> bool {
        let Some(seq) = seq else {
            return true;
        };
        match self.last {
            Some(last) if seq <= last => {
                self.stale += 1;
                false
            }
            Some(last) => {
                if seq - last > 1 {
                    self.gaps += 1;
                    self.missing += seq - last - 1;
                }
                self.last = Some(seq);
                true
            }
            None => {
                self.last = Some(seq);
                true
            }
        }
    }

    /// The last number accepted, if any.
    #[cfg(test)]
    pub(crate) fn last(&self) -> Option<u64> {
        self.last
    }

    /// How many events were rejected as repeated or older.
    pub(crate) fn stale(&self) -> u64 {
        self.stale
    }

    /// How many times the numbers jumped by more than one.
    pub(crate) fn gaps(&self) -> u64 {
        self.gaps
    }

    /// How many numbers the gaps skipped in total.
    #[cfg(test)]
    pub(crate) fn missing(&self) -> u64 {
        self.missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deltas_accumulate() {
        let mut a = DeltaAssembler::with_capacity(64);
        assert_eq!(a.delta("Hel"), "Hel");
        assert_eq!(a.delta("lo"), "lo");
        assert_eq!(a.accepted(), "Hello");
    }

    #[test]
    fn snapshots_yield_suffixes() {
        let mut a = DeltaAssembler::new();
        assert_eq!(a.snapshot("He"), "He");
        assert_eq!(a.snapshot("Hello"), "llo");
        assert_eq!(a.snapshot("Hello"), "");
        assert_eq!(a.snapshot("Hello, world"), ", world");
        assert_eq!(a.divergences(), 0);
        assert_eq!(a.resends(), 1);
    }

    #[test]
    fn full_resend_after_deltas_adds_nothing() {
        let mut a = DeltaAssembler::new();
        a.delta("The answer ");
        a.delta("is 42.");
        assert_eq!(a.snapshot("The answer is 42."), "");
        assert_eq!(a.snapshot("The answer"), "", "a prefix adds nothing");
        assert_eq!(a.snapshot("is 42"), "", "contained adds nothing");
        assert_eq!(a.snapshot(""), "");
        assert_eq!(a.resends(), 4);
        assert_eq!(a.divergences(), 0);
        assert_eq!(a.accepted(), "The answer is 42.");
        assert_eq!(a.snapshot("The answer is 42. Done."), " Done.");
    }

    #[test]
    fn divergence_appends_after_common_prefix() {
        let mut a = DeltaAssembler::new();
        a.snapshot("Hello world");
        assert_eq!(a.snapshot("Hello there!"), "there!");
        assert_eq!(a.divergences(), 1);
        assert_eq!(a.accepted(), "Hello there!");
        // Later snapshots extend the new view, not the old one.
        assert_eq!(a.snapshot("Hello there! More."), " More.");
        assert_eq!(a.divergences(), 1);
        // A longer diverging snapshot.
        assert_eq!(a.snapshot("Hallo"), "allo");
        assert_eq!(a.snapshot("xyz"), "xyz");
        assert_eq!(a.divergences(), 3);
    }

    #[test]
    fn divergence_respects_char_boundaries() {
        let mut a = DeltaAssembler::new();
        a.snapshot("caf\u{e9}"); // é = C3 A9
        // è = C3 A8: the common byte C3 is not a whole char.
        assert_eq!(a.snapshot("caf\u{e8}!"), "\u{e8}!");
        let mut a = DeltaAssembler::new();
        a.delta("🦀a");
        assert_eq!(a.snapshot("🦁b"), "🦁b");
    }

    #[test]
    fn reset_starts_a_new_message() {
        let mut a = DeltaAssembler::new();
        a.snapshot("first message");
        a.reset();
        assert_eq!(a.accepted(), "");
        assert_eq!(a.snapshot("first"), "first");
    }

    #[test]
    fn common_prefix() {
        assert_eq!(common_prefix_len(b"", b"abc"), 0);
        assert_eq!(common_prefix_len(b"abc", b"abd"), 2);
        let long_a = [b'x'; 40];
        let mut long_b = [b'x'; 40];
        long_b[33] = b'y';
        assert_eq!(common_prefix_len(&long_a, &long_b), 33);
        assert_eq!(common_prefix_len(&long_a, &long_a[..20]), 20);
    }

    #[test]
    fn sequence_numbers() {
        let mut f = SequenceFilter::new();
        assert!(f.accept(Some(5)));
        assert!(f.accept(Some(6)));
        assert!(!f.accept(Some(6)), "repeat");
        assert!(!f.accept(Some(2)), "older");
        assert!(f.accept(None));
        assert!(f.accept(Some(9)), "gap continues");
        assert_eq!((f.stale(), f.gaps(), f.missing()), (2, 1, 2));
        assert_eq!(f.last(), Some(9));
        assert!(f.accept(Some(u64::MAX)));
        assert!(!f.accept(Some(u64::MAX)));
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Growing snapshots, each possibly followed by a resend of an earlier one, emit the
        /// final text exactly once.
        #[test]
        fn growing_snapshots_emit_text_once(
            text in "[a-cé🦀 ]{0,40}",
            cuts in prop::collection::vec((0usize..50, any::<bool>()), 0..10),
        ) {
            let mut ends: Vec<usize> = cuts.iter()
                .map(|(c, _)| (*c).min(text.len()))
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            ends.sort_unstable();
            ends.push(text.len());
            let mut a = DeltaAssembler::new();
            let mut emitted = String::new();
            let mut prev = 0;
            for (k, &end) in ends.iter().enumerate() {
                emitted.push_str(a.snapshot(&text[..end]));
                if cuts.get(k).is_some_and(|c| c.1) {
                    emitted.push_str(a.snapshot(&text[..prev]));
                }
                prev = end;
            }
            emitted.push_str(a.snapshot(&text));
            prop_assert_eq!(&emitted, &text);
            prop_assert_eq!(a.divergences(), 0);
        }
    }
}

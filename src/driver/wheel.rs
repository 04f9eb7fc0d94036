//! The driver's deadlines: a hashed timing wheel of 1 ms slots, one lap of
//! [`SPAN`] milliseconds, with a heap for the deadlines beyond it.
//!
//! A deadline within the lap is filed in the slot of its millisecond (an append, O(1)); a
//! later one waits in the heap until the lap reaches it. [`TimerWheel::take_due`] moves out
//! every entry whose millisecond has passed, in time order. There is no cancel: the caller
//! keeps, per stream, the time of its one live entry, and an entry whose time no longer
//! matches is stale and skipped when it comes due (see the worker). The wheel never reads a
//! clock: the caller says which millisecond has passed.
//!
//! Why not a binary heap of every arming: an engine re-arms its idle timer on nearly every
//! delta, so the heap held one stale entry per delta for the idle time (some 600 000 at
//! 100 000 streams), and every pop walked a tree far larger than the caches.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Time;

/// Milliseconds in one lap of the wheel (a power of two).
pub(super) const SPAN: u64 = 4096;
const WORDS: usize = (SPAN / 64) as usize;

/// What a wheel entry names: a stream's slot and the generation it had when armed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct TimerKey {
    pub(super) slot: u32,
    pub(super) generation: u32,
}

pub(super) struct TimerWheel {
    /// Entries per millisecond slot (`t % SPAN`), for `t` in `[cursor, cursor + SPAN)`.
    slots: Box<[Vec<TimerKey>]>,
    /// Which slots hold entries, one bit each.
    occupied: Box<[u64; WORDS]>,
    /// The first millisecond not yet taken out: every slot before it is empty.
    cursor: u64,
    /// Entries filed for a millisecond already taken out (a deadline in the past).
    overdue: Vec<(Time, TimerKey)>,
    /// Entries at or beyond `cursor + SPAN`.
    far: BinaryHeap<Reverse<(Time, TimerKey)>>,
    /// Entries in `slots`.
    filed: usize,
    /// The earliest deadline filed, if known (`None` until looked for again): the driver
    /// asks for it every time it goes to sleep, and finding it scans the slots.
    earliest: Option<Option<Time>>,
}

impl TimerWheel {
    pub(super) fn new() -> TimerWheel {
        TimerWheel {
            slots: (0..SPAN).map(|_| Vec::new()).collect(),
            occupied: Box::new([0; WORDS]),
            cursor: 0,
            overdue: Vec::new(),
            far: BinaryHeap::new(),
            filed: 0,
            earliest: Some(None),
        }
    }

    /// Files `key` for deadline `t`.
    pub(super) fn insert(&mut self, t: Time, key: TimerKey) {
        if let Some(earliest) = &mut self.earliest {
            *earliest = Some(earliest.map_or(t, |e| e.min(t)));
        }
        self.file(t, key);
    }

    fn file(&mut self, t: Time, key: TimerKey) {
        let ms = t.as_millis();
        if ms < self.cursor {
            self.overdue.push((t, key));
        } else if ms - self.cursor < SPAN {
            let i = (ms % SPAN) as usize;
            self.slots[i].push(key);
            self.occupied[i / 64] |= 1 << (i % 64);
            self.filed += 1;
        } else {
            self.far.push(Reverse((t, key)));
        }
    }

    /// Moves every entry due at or before millisecond `now` into `out`, in time order
    /// (entries of one millisecond in the order they were filed).
    pub(super) fn take_due(&mut self, now: Time, out: &mut Vec<(Time, TimerKey)>) {
        let before = out.len();
        self.take_due_into(now, out);
        if out.len() > before {
            // What was the earliest may have gone; nothing that stays was due, so while
            // nothing comes out, the earliest stays what it was.
            self.earliest = None;
        }
    }

    fn take_due_into(&mut self, now: Time, out: &mut Vec<(Time, TimerKey)>) {
        if !self.overdue.is_empty() {
            self.overdue.sort_by_key(|(t, _)| *t);
            out.append(&mut self.overdue);
        }
        let end = now.as_millis().saturating_add(1);
        while self.cursor < end {
            if self.filed == 0 {
                // An empty lap: jump to the end, or to the first far entry.
                let far = self
                    .far
                    .peek()
                    .map_or(u64::MAX, |Reverse((t, _))| t.as_millis());
                self.cursor = end.min(far.max(self.cursor));
                self.refill();
                continue;
            }
            let stop = end.min(self.cursor.saturating_add(SPAN));
            let mut at = self.cursor;
            while let Some(ms) = self.next_occupied(at, stop) {
                let i = (ms % SPAN) as usize;
                self.occupied[i / 64] &= !(1 << (i % 64));
                self.filed -= self.slots[i].len();
                out.extend(
                    self.slots[i]
                        .drain(..)
                        .map(|key| (Time::from_millis(ms), key)),
                );
                at = ms + 1;
            }
            self.cursor = stop;
            self.refill();
        }
    }

    /// The earliest deadline filed (overdue ones first), if any.
    pub(super) fn next_deadline(&mut self) -> Option<Time> {
        if let Some(known) = self.earliest {
            return known;
        }
        let earliest = self.find_earliest();
        self.earliest = Some(earliest);
        earliest
    }

    fn find_earliest(&self) -> Option<Time> {
        if let Some(t) = self.overdue.iter().map(|(t, _)| *t).min() {
            return Some(t);
        }
        let limit = self.cursor.saturating_add(SPAN);
        if let Some(ms) = self.next_occupied(self.cursor, limit) {
            return Some(Time::from_millis(ms));
        }
        self.far.peek().map(|Reverse((t, _))| *t)
    }

    /// Moves the far entries that the lap now covers into their slots.
    fn refill(&mut self) {
        let limit = self.cursor.saturating_add(SPAN);
        while let Some(Reverse((t, _))) = self.far.peek() {
            if t.as_millis() >= limit {
                break;
            }
            let Reverse((t, key)) = self.far.pop().expect("peeked");
            self.file(t, key);
        }
    }

    /// The first occupied millisecond in `[from, to)`, where `to - from <= SPAN`.
    fn next_occupied(&self, from: u64, to: u64) -> Option<u64> {
        let mut ms = from;
        while ms < to {
            let i = (ms % SPAN) as usize;
            let bits = self.occupied[i / 64] >> (i % 64);
            if bits != 0 {
                let found = ms + u64::from(bits.trailing_zeros());
                return (found < to).then_some(found);
            }
            // Nothing in the rest of this word: on to the next one.
            ms = ms.saturating_add(64 - (i % 64) as u64);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(slot: u32) -> TimerKey {
        TimerKey {
            slot,
            generation: 0,
        }
    }

    fn due(wheel: &mut TimerWheel, now: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        wheel.take_due(Time::from_millis(now), &mut out);
        out.into_iter()
            .map(|(t, k)| (t.as_millis(), k.slot))
            .collect()
    }

    #[test]
    fn nothing_comes_out_before_its_millisecond() {
        let mut wheel = TimerWheel::new();
        wheel.insert(Time::from_millis(10), key(1));
        wheel.insert(Time::from_millis(5), key(2));
        wheel.insert(Time::from_millis(10), key(3));
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(5)));
        assert_eq!(due(&mut wheel, 4), vec![]);
        assert_eq!(due(&mut wheel, 5), vec![(5, 2)]);
        assert_eq!(due(&mut wheel, 9), vec![]);
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(10)));
        assert_eq!(due(&mut wheel, 10), vec![(10, 1), (10, 3)]);
        assert_eq!(wheel.next_deadline(), None);
    }

    #[test]
    fn a_deadline_already_past_comes_out_at_the_next_look() {
        let mut wheel = TimerWheel::new();
        assert_eq!(due(&mut wheel, 100), vec![]);
        wheel.insert(Time::from_millis(40), key(1));
        wheel.insert(Time::from_millis(100), key(2));
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(40)));
        assert_eq!(due(&mut wheel, 100), vec![(40, 1), (100, 2)]);
    }

    #[test]
    fn far_deadlines_wait_in_the_heap_and_come_out_on_time() {
        let mut wheel = TimerWheel::new();
        let far = 3 * SPAN + 17;
        wheel.insert(Time::from_millis(far), key(1));
        wheel.insert(Time::from_millis(SPAN + 1), key(2));
        wheel.insert(Time::from_millis(SPAN - 1), key(3));
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(SPAN - 1)));
        assert_eq!(due(&mut wheel, SPAN - 2), vec![]);
        assert_eq!(due(&mut wheel, SPAN), vec![(SPAN - 1, 3)]);
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(SPAN + 1)));
        assert_eq!(due(&mut wheel, SPAN + 1), vec![(SPAN + 1, 2)]);
        // One step across several laps at once.
        assert_eq!(due(&mut wheel, far - 1), vec![]);
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(far)));
        assert_eq!(due(&mut wheel, far + 5 * SPAN), vec![(far, 1)]);
    }

    #[test]
    fn the_latest_time_never_comes() {
        let mut wheel = TimerWheel::new();
        wheel.insert(Time::MAX, key(1));
        wheel.insert(Time::from_millis(u64::MAX - 1), key(2));
        assert_eq!(due(&mut wheel, 1 << 40), vec![]);
        assert_eq!(wheel.next_deadline(), Some(Time::from_millis(u64::MAX - 1)));
        // Even the last representable millisecond only releases what is due by then.
        assert_eq!(due(&mut wheel, u64::MAX - 1), vec![(u64::MAX - 1, 2)]);
        assert_eq!(wheel.next_deadline(), Some(Time::MAX));
    }

    /// Random deadlines and random looks: every entry comes out exactly once, never before
    /// its millisecond, and at the first look at or after it.
    #[test]
    fn random_deadlines_come_out_once_and_never_early() {
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..50 {
            let mut wheel = TimerWheel::new();
            let mut now = 0u64;
            let mut pending: Vec<(u64, u32)> = Vec::new();
            let mut next_key = 0u32;
            for _ in 0..400 {
                if rng.bool() {
                    let ahead = match rng.u8(0..4) {
                        0 => rng.u64(0..10),
                        1 => rng.u64(0..SPAN),
                        2 => rng.u64(SPAN..4 * SPAN),
                        _ => rng.u64(0..100) + now.min(50),
                    };
                    // Some deadlines are in the past (`ahead` counted from before `now`).
                    let t = if rng.u8(0..8) == 0 {
                        now.saturating_sub(ahead)
                    } else {
                        now + ahead
                    };
                    wheel.insert(Time::from_millis(t), key(next_key));
                    pending.push((t, next_key));
                    next_key += 1;
                    if rng.bool() {
                        // The earliest is known between looks too (cached as entries come).
                        let next = pending.iter().map(|(t, _)| *t).min();
                        assert_eq!(wheel.next_deadline().map(Time::as_millis), next);
                    }
                } else {
                    now += match rng.u8(0..3) {
                        0 => 1,
                        1 => rng.u64(0..50),
                        _ => rng.u64(0..3 * SPAN),
                    };
                    let out = due(&mut wheel, now);
                    let mut expected: Vec<(u64, u32)> =
                        pending.iter().copied().filter(|(t, _)| *t <= now).collect();
                    pending.retain(|(t, _)| *t > now);
                    assert!(out.iter().all(|(t, _)| *t <= now), "early: {out:?}");
                    let mut got = out.clone();
                    got.sort();
                    expected.sort();
                    assert_eq!(got, expected);
                    assert!(
                        out.windows(2).all(|w| w[0].0 <= w[1].0),
                        "in time order: {out:?}"
                    );
                    let next = pending.iter().map(|(t, _)| *t).min();
                    assert_eq!(wheel.next_deadline().map(Time::as_millis), next);
                }
            }
        }
    }
}

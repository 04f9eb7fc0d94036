//! How late timers fire: a fixed histogram, so recording costs no allocation and the memory
//! is bounded however long the driver runs.

use std::time::Duration;

use super::Lateness;

/// Timer lateness in 100 µs buckets up to 100 ms, plus one overflow bucket.
pub(super) struct LatenessHistogram {
    buckets: Box<[u64; LATENESS_BUCKETS + 1]>,
    count: u64,
    max_us: u64,
}

const LATENESS_BUCKETS: usize = 1000;
const LATENESS_BUCKET_US: u64 = 100;

impl LatenessHistogram {
    pub(super) fn new() -> Self {
        LatenessHistogram {
            buckets: Box::new([0; LATENESS_BUCKETS + 1]),
            count: 0,
            max_us: 0,
        }
    }

    pub(super) fn record(&mut self, late: Duration) {
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        let i = ((us / LATENESS_BUCKET_US) as usize).min(LATENESS_BUCKETS);
        self.buckets[i] += 1;
        self.count += 1;
        self.max_us = self.max_us.max(us);
    }

    /// The upper edge of the bucket holding the `p` quantile, never above the maximum seen.
    fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i as u64 + 1) * LATENESS_BUCKET_US).min(self.max_us);
            }
        }
        self.max_us
    }

    pub(super) fn summary(&self) -> Lateness {
        Lateness {
            count: self.count,
            p50_us: self.percentile(0.50),
            p99_us: self.percentile(0.99),
            max_us: self.max_us,
        }
    }
}

//! Time as the core sees it: milliseconds on the host's monotonic clock.
//!
//! The core never reads a clock. Every input comes with `now`, a [`Time`] the host took from
//! its own monotonic clock (the thread driver uses milliseconds since it started; a C host
//! passes `now_ms`; tests use a virtual clock). Deadlines the core asks for are [`Time`]s on
//! the same clock. Milliseconds are the resolution every timer in the spec is written in.

/// A point on the host's monotonic clock, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(u64);

impl Time {
    /// The clock's origin.
    pub const ZERO: Time = Time(0);
    /// The latest representable time. Arithmetic saturates here, so a deadline far in the
    /// future is still a deadline (there is no sentinel: "no deadline" is `None`).
    pub const MAX: Time = Time(u64::MAX);

    /// The time `ms` milliseconds after the origin.
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms)
    }

    /// Milliseconds since the origin.
    pub const fn as_millis(self) -> u64 {
        self.0
    }

    /// This time plus `ms` milliseconds, saturating at [`Time::MAX`].
    pub const fn plus_millis(self, ms: u64) -> Time {
        Time(self.0.saturating_add(ms))
    }

    /// Milliseconds from `earlier` to `self` (0 if `earlier` is later).
    pub const fn millis_since(self, earlier: Time) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl std::fmt::Display for Time {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

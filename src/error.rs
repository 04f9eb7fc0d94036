//! Errors for caller misuse: an invalid configuration or an unusable input.
//!
//! Domain outcomes (a delivery timeout, a cancelled turn) are actions, not errors; broken
//! invariants are bugs and panic, and no input may cause one.

use std::borrow::Cow;

/// What went wrong, for the caller to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is out of range or contradicts another one. The text names the
    /// field and the reason, e.g. `"text limit must be at least 1"`.
    InvalidConfig(Cow<'static, str>),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidConfig(why) => write!(f, "invalid configuration: {why}"),
        }
    }
}

impl std::error::Error for Error {}

//! Errors for caller misuse: an invalid configuration or an unusable input.
//!
//! Domain outcomes (a delivery timeout, a cancelled turn) are actions, not errors; broken
//! invariants are bugs and panic, and no input may cause one.

use std::borrow::Cow;

use crate::input::SendId;

/// What went wrong, for the caller to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value is out of range or contradicts another one. The text names the
    /// field and the reason, e.g. `"text limit must be at least 1"`.
    InvalidConfig(Cow<'static, str>),
    /// An ack named a send the engine is not waiting for: never sent, already acknowledged,
    /// or from another engine. Nothing changed.
    UnknownSend(SendId),
    /// A model event arrived after the turn finished, failed or was cancelled. It was
    /// ignored; acks and timers are still welcome.
    TurnEnded(&'static str),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::InvalidConfig(why) => write!(f, "invalid configuration: {why}"),
            Error::UnknownSend(id) => write!(f, "ack for unknown send {id}"),
            Error::TurnEnded(input) => write!(f, "{input} after the turn ended"),
        }
    }
}

impl std::error::Error for Error {}

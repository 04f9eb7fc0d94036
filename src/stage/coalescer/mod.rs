//! The coalescer (SPEC §4): merges consecutive small blocks so a chat does not fill with
//! one-line messages.
//!
//! The coalescer is pure and time-driven without reading a clock: every call that can arm
//! the idle timer takes `now`, [`Coalescer::deadline`] says when the host should call
//! [`Coalescer::on_timer`], and an early or repeated timer call does nothing.

mod config;
mod merge;
mod output;
mod piece;
#[cfg(test)]
mod proptests;
mod table;
#[cfg(test)]
mod tests;

pub(crate) use config::CoalescerConfig;
pub(crate) use merge::Coalescer;
pub(crate) use output::{BlockMeta, CoalescedText, SourceRanges};
pub(crate) use piece::reopened_then_closed;

pub(crate) use crate::text::markdown::is_code_indent;

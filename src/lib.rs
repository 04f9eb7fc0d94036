//! replystream turns a streaming LLM reply into well-formed, well-paced chat messages.
//!
//! The text core cuts a reply into chat-sized pieces that never break Markdown fences or
//! inline code, never split a grapheme cluster, never exceed a platform's limit in that
//! platform's own length unit, and never lose or duplicate text.
#![warn(missing_docs)]

mod error;
mod payload;
pub mod text;
mod time;

pub use error::Error;
pub use payload::{Lane, Payload, ReplyTarget};
pub use text::block::Block;
pub use text::chunker::{BlockChunker, BreakPreference, ChunkerConfig};
pub use text::markdown::{CodeSpan, FenceMarker, FenceSpan, MarkdownScanner};
pub use text::metric::LengthMetric;
pub use text::splitter::{PlatformSplitter, SplitConfig, SplitMode};
pub use time::Time;

/// The README's Rust example, compiled and run as a doc test so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

//! replystream turns a streaming LLM reply into well-formed, well-paced chat messages.
//!
//! The text core cuts a reply into chat-sized pieces that never break Markdown fences or
//! inline code, never split a grapheme cluster, never exceed a platform's limit in that
//! platform's own length unit, and never lose or duplicate text.
#![warn(missing_docs)]

mod error;
mod payload;
pub mod stage;
pub mod text;
mod time;

pub use error::Error;
pub use payload::{Lane, Payload, ReplyTarget};
pub use stage::{
    DirectiveEvent, DirectiveOutput, DirectiveParser, TagEvents, TagFilter, TokenConfig, TokenGate,
    is_silent, normalize_text,
};
pub use text::block::Block;
pub use text::chunker::{BlockChunker, BreakPreference, ChunkerConfig};
pub use text::markdown::{CodeSpan, FenceMarker, FenceSpan, MarkdownScanner};
pub use text::metric::LengthMetric;
pub use text::splitter::{PlatformSplitter, SplitConfig, SplitMode};
pub use time::Time;

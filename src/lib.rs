//! replystream turns a streaming LLM reply into well-formed, well-paced chat messages.
//!
//! The text core cuts a reply into chat-sized pieces that never break Markdown fences or
//! inline code, never split a grapheme cluster, never exceed a platform's limit in that
//! platform's own length unit, and never lose or duplicate text.
#![warn(missing_docs)]

mod action;
mod config;
pub mod driver;
mod engine;
mod error;
mod input;
mod payload;
pub mod sim;
pub mod stage;
pub mod text;
mod time;

pub use action::{AbortReason, Action, MessageKey, Send, SendKind, SendOp};
pub use config::{
    BreakMode, ChannelProfile, ChunkMode, Config, ConfigOverrides, HumanDelay, MAX_IDLE_MS,
    MAX_PREVIEW_THROTTLE_MS, MIN_MAX_LINES, MIN_PREVIEW_THROTTLE_MS, MIN_TEXT_LIMIT, PreviewMode,
    ReasoningMode, ResolvedConfig,
};
pub use engine::{Actions, Engine, Stats};
pub use error::Error;
pub use input::{Input, OwnedInput, SendId};
pub use payload::{Lane, Payload, ReplyTarget};
pub use stage::assembly::{DeltaAssembler, SequenceFilter};
pub use stage::coalescer::{BlockMeta, CoalescedText, Coalescer, CoalescerConfig, SourceRanges};
pub use stage::prefix::{
    PrefixContext, apply_prefix, prefix_cost, render_prefix, short_model_name,
};
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

/// The README's Rust example, compiled and run as a doc test so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

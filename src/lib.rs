//! replystream turns a streaming LLM reply into well-formed, well-paced chat messages.
//!
//! The text core cuts a reply into chat-sized pieces that never break Markdown fences or
//! inline code, never split a grapheme cluster, never exceed a platform's limit in that
//! platform's own length unit, and never lose or duplicate text.
//!
//! The public surface is the flat list of re-exports below, plus two modules: [`driver`] (run
//! engines on a thread) and [`sim`] (drive an engine on a virtual clock). Everything else is
//! private, so the pipeline's stages can change without breaking callers.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]

mod action;
mod config;
pub mod driver;
mod engine;
mod error;
mod input;
mod payload;
pub mod sim;
mod stage;
mod text;
mod time;

#[cfg(test)]
mod test_alloc;

pub use action::{AbortReason, Action, MessageKey, SendKind, SendOp, SendRequest};
pub use config::{
    BreakMode, ChannelProfile, ChunkMode, Config, ConfigOverrides, HumanDelay, MAX_IDLE_MS,
    MAX_PREVIEW_THROTTLE_MS, MIN_MAX_LINES, MIN_PREVIEW_THROTTLE_MS, MIN_TEXT_LIMIT, PreviewMode,
    PreviewTransport, ReasoningMode, ResolvedConfig,
};
pub use engine::{Actions, Engine, Stats};
pub use error::Error;
pub use input::{Input, OwnedInput, SendId};
pub use payload::{Lane, Payload, ReplyTarget};
pub use stage::dispatch::DispatchStats;
pub use stage::prefix::{PrefixContext, render_prefix, short_model_name};
pub use text::block::Block;
pub use text::chunker::{BlockChunker, BreakPreference, ChunkerConfig};
pub use text::markdown::FenceMarker;
pub use text::metric::LengthMetric;
pub use text::splitter::{PlatformSplitter, SplitConfig, SplitMode};
pub use time::Time;

/// The README's Rust example, compiled and run as a doc test so it stays true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
